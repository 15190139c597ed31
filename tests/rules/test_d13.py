"""D-13 — realized timetabled trips departing the origin terminal more than 60 s early or
more than 300 s late; one record per route and service day, escalated fine (DESIGN.md).

Feed: tests/gtfs/fixtures/tiny (America/Sao_Paulo, UTC-3). On Tuesday 2026-12-01:
  route T: T-0600 06:00 (dir 0), T-0700 07:00 (dir 1), T-2350 23:50 (dir 0)
  route E (exact_times=1, dir 1): 10:00, 10:30
Shipped policy: max_early_s 60, max_late_s 300, escalation_step_pct 10,
max_departure_gap_s 120. fine = 200 × (1 + floor(pct / 10)), pct = 100 × off / realized.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tiny_day import SAO_PAULO, at, detected, insufficient

from kernel.policy import load_policy
from rules import d13
from rules.d13 import escalated_fine
from rules.model import CONFIRMED, Infraction
from telemetry import Occurrence, decode_occurrence

STEP_PCT = load_policy().d13.escalation_step_pct  # 10


def records(findings) -> dict[str, Infraction]:
    """D-13 infractions by route."""
    return {f.route_id: f for f in findings if isinstance(f, Infraction)}


def occurrence(**fields) -> Occurrence:
    decoded = decode_occurrence(json.dumps(fields))
    assert isinstance(decoded, Occurrence), decoded
    return decoded


def route_t(dev_0600: float = 0, dev_0700: float = 0, dev_2350: float = 0, *, gap_0700: float = 20.0):
    """The three trips of route T, each departing `dev` seconds from its schedule."""
    return [
        detected("V1", "T", 0, at(6, 0) + dev_0600),
        detected("V1", "T", 1, at(7, 0) + dev_0700, gap_s=gap_0700),
        detected("V1", "T", 0, at(23, 50) + dev_2350),
    ]


# --- the escalation formula ---------------------------------------------------------------


@given(st.integers(min_value=1, max_value=100_000).flatmap(
    lambda realized: st.tuples(st.integers(min_value=0, max_value=realized), st.just(realized))))
def test_any_share_off_schedule_yields_fine_by_integer_formula(case):
    off, realized = case
    # floor(pct / 10) = floor((100 * off / realized) / 10) = floor(10 * off / realized): integers only
    assert escalated_fine(200, off, realized, STEP_PCT) == 200 * (1 + (10 * off) // realized)


@pytest.mark.parametrize(("off", "realized", "fine"), [
    (1, 20, 200),  # 5 %: floor(5 / 10) = 0 -> 200 × 1 = 200
    (1, 10, 400),  # 10 %: floor(10 / 10) = 1 -> 200 × 2 = 400
    (1, 4, 600),  # 25 %: floor(25 / 10) = 2 -> 200 × 3 = 600
    (999, 10_000, 200),  # 9.99 %: floor(9.99 / 10) = 0 -> 200
    (3, 3, 2200),  # 100 %: floor(100 / 10) = 10 -> 200 × 11 = 2200
    (1, 3, 800),  # 33.3 %: floor(3.33) = 3 -> 200 × 4 = 800
    (3, 10, 800),  # 30 %: exactly 3 (no float 29.999...) -> 200 × 4 = 800
    (7, 10, 1600),  # 70 %: 100 × 7 / 10 = 70, floor(7) = 7 -> 200 × 8 = 1600 (float 0.7*100 = 70.00000000000001)
    (0, 5, 200),  # 0 %: floor(0) = 0 -> 200 (never reached by detect: no off trip, no record)
])
def test_design_share_off_schedule_yields_escalated_fine(off, realized, fine):
    assert escalated_fine(200, off, realized, STEP_PCT) == fine


# --- infractions ------------------------------------------------------------------------


def test_trip_61_s_early_yields_infraction(tiny):
    facts = tiny.facts(route_t(dev_0600=-61))  # 05:58:59: 61 s > 60 s early
    findings = d13.detect(facts, tiny.policy)
    assert list(records(findings)) == ["T"]
    record = records(findings)["T"]
    assert record.evidence["realized_trips"] == 3  # T-0600, T-0700, T-2350
    assert record.evidence["off_schedule_trips"] == 1
    assert record.evidence["pct_off_schedule"] == 33.33  # 100 × 1 / 3
    assert record.fine_ufir == 800  # 200 × (1 + floor(33.33 / 10)) = 200 × 4
    assert record.evidence["fine_formula"] == "200 × (1 + floor(33.33 / 10)) = 800"
    assert record.evidence["trips"][0]["deviation_s"] == -61.0
    assert record.status == CONFIRMED
    assert (record.code, record.route_id, record.trip_id, record.direction_id) == ("D-13", "T", None, None)


def test_trip_301_s_late_yields_infraction(tiny):
    facts = tiny.facts(route_t(dev_0700=301))  # 07:05:01: 301 s > 300 s late
    record = records(d13.detect(facts, tiny.policy))["T"]
    assert record.evidence["off_schedule_trips"] == 1  # 1 of 3
    assert record.fine_ufir == 800  # 100 × 1 / 3 = 33.3 % -> 200 × (1 + 3)
    (trip,) = record.evidence["trips"]
    assert trip == {
        "trip_id": "T-0700", "vehicle_id": "V1", "direction_id": 1,
        "scheduled_departure": "2026-12-01T07:00:00-03:00",
        "departed_at": "2026-12-01T07:05:01-03:00",
        "deviation_s": 301.0,  # 07:05:01 - 07:00:00
        "departure_pings": [f"V1@{at(7, 5, 1) - 10:.0f}", f"V1@{at(7, 5, 1) + 10:.0f}"],  # pings at ∓10 s
    }
    assert record.occurred_at == dt.datetime(2026, 12, 1, 7, 5, 1, tzinfo=SAO_PAULO)  # first off departure
    assert (record.lat, record.lon) == (-19.7194969, -40.3454615)  # terminal C, origin of T dir 1


def test_several_off_trips_of_a_route_yield_one_infraction_per_route_and_day(tiny):
    facts = tiny.facts(route_t(dev_0600=-61, dev_0700=301) + [
        detected("V2", "E", 1, at(10, 0) + 400),  # 400 s > 300 s late
        detected("V2", "E", 1, at(10, 30)),
    ])
    found = records(d13.detect(facts, tiny.policy))
    assert sorted(found) == ["E", "T"]  # one record per route
    assert found["T"].evidence["off_schedule_trips"] == 2  # T-0600 (-61 s), T-0700 (+301 s)
    assert found["T"].fine_ufir == 1400  # 100 × 2 / 3 = 66.7 % -> 200 × (1 + 6)
    assert [t["trip_id"] for t in found["T"].evidence["trips"]] == ["T-0600", "T-0700"]  # by departure
    assert found["T"].evidence["interval_epoch"] == [at(6, 0) - 61, at(7, 0) + 301]
    assert found["E"].evidence["realized_trips"] == 2
    assert found["E"].fine_ufir == 1200  # 100 × 1 / 2 = 50 % -> 200 × (1 + 5)
    assert found["T"].infraction_id != found["E"].infraction_id  # identity (date, route)


def test_every_trip_off_schedule_yields_infraction_with_fine_2200(tiny):
    facts = tiny.facts(route_t(dev_0600=-120, dev_0700=600, dev_2350=900))
    record = records(d13.detect(facts, tiny.policy))["T"]
    assert record.evidence["pct_off_schedule"] == 100.0  # 3 of 3
    assert record.fine_ufir == 2200  # 200 × (1 + floor(100 / 10)) = 200 × 11


def test_same_facts_twice_yields_infraction_with_same_id(tiny):
    first = records(d13.detect(tiny.facts(route_t(dev_0700=301)), tiny.policy))["T"]
    again = records(d13.detect(tiny.facts(route_t(dev_0700=400, dev_0600=-90)), tiny.policy))["T"]
    assert first.infraction_id == again.infraction_id  # one record per (route, service day)


# --- nothing ----------------------------------------------------------------------------


def test_trip_60_s_early_yields_nothing(tiny):
    facts = tiny.facts(route_t(dev_0600=-60))  # -60 s is not < -60 s
    assert d13.detect(facts, tiny.policy) == []


def test_trip_300_s_late_yields_nothing(tiny):
    facts = tiny.facts(route_t(dev_0700=300))  # 300 s is not > 300 s
    assert d13.detect(facts, tiny.policy) == []


def test_trips_on_time_yield_nothing(tiny):
    facts = tiny.facts(route_t(dev_0600=-59, dev_0700=299, dev_2350=0))
    assert d13.detect(facts, tiny.policy) == []  # all within [-60, +300]


def test_unmatched_trip_yields_nothing(tiny):
    # 06:40 is 2400 s > 1800 s from 06:00 and far from 23:50: no scheduled trip, no deviation
    facts = tiny.facts([detected("V1", "T", 0, at(6, 40))])
    assert d13.detect(facts, tiny.policy) == []


def test_headway_route_yields_nothing(tiny):
    # route F is headway service: trips are not paired with a schedule (D-12's business)
    facts = tiny.facts([detected("V3", "F", 0, at(6, 7)), detected("V3", "F", 0, at(6, 51))])
    assert d13.detect(facts, tiny.policy) == []


# --- insufficient evidence --------------------------------------------------------------


def test_departure_gap_over_120_s_yields_insufficient_evidence(tiny):
    facts = tiny.facts(route_t(dev_0700=400, gap_0700=121))  # 121 s > 120 s between the exit pings
    findings = d13.detect(facts, tiny.policy)
    (uncertain,) = insufficient(findings)
    assert (uncertain.code, uncertain.trip_id, uncertain.vehicle_id) == ("D-13", "T-0700", "V1")
    assert uncertain.evidence == {"departure_gap_s": 121.0, "limit_s": 120.0}
    assert records(findings) == {}  # the only off trip is uncertain: not counted either way


def test_departure_gap_over_120_s_excludes_trip_from_realized_yields_infraction(tiny):
    facts = tiny.facts(route_t(dev_0600=-61, dev_0700=400, gap_0700=121))
    findings = d13.detect(facts, tiny.policy)
    record = records(findings)["T"]
    assert record.evidence["realized_trips"] == 2  # 3 realized - 1 uncertain
    assert record.evidence["off_schedule_trips"] == 1  # T-0600 only
    assert record.fine_ufir == 1200  # 100 × 1 / 2 = 50 % -> 200 × 6 (not 1 / 3 -> 800)
    assert [f.trip_id for f in insufficient(findings)] == ["T-0700"]


def test_departure_gap_of_120_s_yields_infraction(tiny):
    facts = tiny.facts(route_t(dev_0700=400, gap_0700=120))  # 120 s is not > 120 s: counted
    findings = d13.detect(facts, tiny.policy)
    assert insufficient(findings) == []
    assert records(findings)["T"].fine_ufir == 800  # 1 of 3 = 33.3 % -> 200 × 4


# --- occurrences (motivo justificado) ------------------------------------------------------


def test_road_closure_covering_late_trip_removes_it_from_count_yields_infraction(tiny):
    closure = occurrence(id="OC-1", kind="road_closure", route_id="T",
                         start="2026-12-01T06:50:00-03:00", end="2026-12-01T07:10:00-03:00", note="obra")
    facts = tiny.facts(route_t(dev_0600=-61, dev_0700=400), occurrences=[closure])
    record = records(d13.detect(facts, tiny.policy))["T"]
    assert record.evidence["off_schedule_trips"] == 1  # T-0600; T-0700 (+400 s) is justified
    assert record.evidence["realized_trips"] == 3  # the justified trip was still realized
    assert record.fine_ufir == 800  # 1 of 3 = 33.3 % -> 200 × 4 (not 2 of 3 -> 1400)
    (justified,) = record.evidence["justified_trips"]
    assert (justified["trip_id"], justified["occurrences"]) == ("T-0700", ["OC-1"])
    assert [t["trip_id"] for t in record.evidence["trips"]] == ["T-0600"]


def test_road_closure_on_other_route_yields_infraction_counting_the_late_trip(tiny):
    closure = occurrence(id="OC-1", kind="road_closure", route_id="E",
                         start="2026-12-01T06:50:00-03:00", end="2026-12-01T07:10:00-03:00")
    facts = tiny.facts(route_t(dev_0600=-61, dev_0700=400), occurrences=[closure])
    record = records(d13.detect(facts, tiny.policy))["T"]
    assert record.evidence["off_schedule_trips"] == 2  # route E != T: nothing justified
    assert record.evidence["justified_trips"] == []
    assert record.fine_ufir == 1400  # 2 of 3 = 66.7 % -> 200 × 7


def test_road_closure_ended_before_scheduled_departure_yields_infraction_counting_the_late_trip(tiny):
    closure = occurrence(id="OC-1", kind="road_closure", route_id="T",
                         start="2026-12-01T06:00:00-03:00", end="2026-12-01T06:59:59-03:00")
    facts = tiny.facts(route_t(dev_0700=400), occurrences=[closure])
    record = records(d13.detect(facts, tiny.policy))["T"]
    assert record.evidence["off_schedule_trips"] == 1  # [07:00, 07:06:40] starts 1 s after 06:59:59
    assert record.fine_ufir == 800  # 1 of 3 -> 200 × 4


def test_authorized_detour_does_not_justify_late_trip_yields_infraction(tiny):
    # D-13 is justified by road_closure, accident, breakdown, other -- not authorized_detour
    detour = occurrence(id="OC-1", kind="authorized_detour", route_id="T",
                        start="2026-12-01T06:50:00-03:00", end="2026-12-01T07:10:00-03:00")
    facts = tiny.facts(route_t(dev_0700=400), occurrences=[detour])
    assert records(d13.detect(facts, tiny.policy))["T"].evidence["off_schedule_trips"] == 1


def test_occurrence_over_all_late_trips_yields_nothing(tiny):
    accident = occurrence(id="OC-2", kind="accident", start="2026-12-01T06:55:00-03:00",
                          end="2026-12-01T07:30:00-03:00")  # network-wide (no route)
    facts = tiny.facts(route_t(dev_0700=400), occurrences=[accident])
    assert records(d13.detect(facts, tiny.policy)) == {}  # 0 unjustified off-schedule trips


def test_occurrence_between_early_departure_and_schedule_justifies_it_yields_nothing(tiny):
    # T-0600 leaves at 05:58:59 (61 s early): the facts span [05:58:59, 06:00:00]. A road
    # closure from 05:59:30 to 06:10 overlaps that span, as it overlaps [07:00, 07:06:40] of a
    # trip 400 s late in the test above. (The detector looks at [departed - 61, departed] =
    # [05:57:58, 05:58:59] instead, which ends before 05:59:30.)
    closure = occurrence(id="OC-3", kind="road_closure", route_id="T",
                         start="2026-12-01T05:59:30-03:00", end="2026-12-01T06:10:00-03:00")
    facts = tiny.facts(route_t(dev_0600=-61), occurrences=[closure])
    assert records(d13.detect(facts, tiny.policy)) == {}  # 1 off trip - 1 justified = 0


def test_occurrence_ended_before_early_departure_yields_infraction(tiny):
    # T-0600 leaves at 05:58:59 (61 s early): the facts span [05:58:59, 06:00:00]. A road
    # closure from 05:57:00 to 05:58:30 was over before the bus left and before its schedule,
    # so it cannot justify the early departure. (The detector's span [05:57:58, 05:58:59]
    # overlaps it and counts the trip as justified.)
    closure = occurrence(id="OC-4", kind="road_closure", route_id="T",
                         start="2026-12-01T05:57:00-03:00", end="2026-12-01T05:58:30-03:00")
    facts = tiny.facts(route_t(dev_0600=-61), occurrences=[closure])
    record = records(d13.detect(facts, tiny.policy)).get("T")
    assert record is not None  # 05:58:30 < 05:58:59: no overlap, 1 unjustified off trip
    assert record.fine_ufir == 800  # 1 of 3 = 33.3 % -> 200 × 4
    assert record.evidence["justified_trips"] == []
