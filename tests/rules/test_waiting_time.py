"""art. 10 § 5º (Canarana, Lei 179/1991) — mean waiting time per line and period.

Feed: tests/gtfs/fixtures/tiny (UTC-3). On Tuesday 2026-12-01 route F (operator OP1,
dir 0) is headway service: [06:00, 07:00) every 900 s and [07:00, 07:50) every 1200 s, so
its approved departures are 06:00, 06:15, 06:30, 06:45, 07:00, 07:20, 07:40. The policy is
Canarana's (limit 1800 s = 30 min) with the periods each test names. The mean wait of a
period [S, E) cut by the departures into stretches h is Σh² / (2 Σh), Σh = E - S.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import msgspec
import pytest
from tiny_day import at, detected, insufficient, pings, unfollowed

from kernel.policy import WaitingPeriod, load_policy
from rules import waiting_time
from rules.model import CONFIRMED, Infraction

CODE = "art. 10 § 5º"
RULE = waiting_time.rule(CODE)
CANARANA = load_policy(Path(waiting_time.__file__).parents[1] / "kernel" / "policies" / "canarana.toml")


def policy(start: tuple[int, int], end: tuple[int, int], name: str = "pico"):
    period = WaitingPeriod(name=name, start=dt.time(*start), end=dt.time(*end))
    return msgspec.structs.replace(
        CANARANA, waiting_time=msgspec.structs.replace(CANARANA.waiting_time, periods=(period,)))


def route_f(*departures: tuple[int, int]):
    return [detected(f"F{i}", "F", 0, at(*hm)) for i, hm in enumerate(departures)]


def on_f(findings):
    return [f for f in findings if f.route_id == "F"]


def infractions(findings) -> list[Infraction]:
    return [f for f in on_f(findings) if isinstance(f, Infraction)]


# --- infractions ------------------------------------------------------------------------


def test_long_headway_yields_infraction(tiny):
    # [06:00, 07:20) = 80 min; departures 06:00, 06:10: stretches 10, 70 (06:00 is S itself)
    # E[h²] = (100 + 4900) / 2 = 2500, E[h] = 40: 2500 / 80 = 31.25 min > 30
    # approved: 06:00 .. 07:00 every 15, then 20 to 07:20: (4 × 225 + 400) / 160 = 8.1 min
    findings = RULE.detect(tiny.facts(route_f((6, 0), (6, 10))), policy((6, 0), (7, 20)))
    [record] = infractions(findings)
    assert record.evidence["mean_wait_s"] == 1875.0  # 31.25 min
    assert record.evidence["headways_s"] == [600.0, 4200.0]
    assert record.evidence["formula"] == "Σh² / (2 Σh) = (600² + 4200²) / (2 × 4800) = 1875.0 s"
    assert record.evidence["departures"] == ["2026-12-01T06:00:00-03:00", "2026-12-01T06:10:00-03:00"]
    assert record.evidence["window"] == ["2026-12-01T06:00:00-03:00", "2026-12-01T07:20:00-03:00"]
    assert record.evidence["scheduled_departures"] == 5
    assert record.evidence["scheduled_mean_wait_s"] == 487.5  # (4 × 900² + 1200²) / (2 × 4800)
    assert record.evidence["interval_epoch"] == [at(6, 0), at(7, 20)]
    assert (record.code, record.operator_id, record.route_id, record.direction_id) == (CODE, "OP1", "F", 0)
    assert record.trip_id is None and record.vehicle_id is None
    assert record.status == CONFIRMED
    assert record.fine_ufir == 100  # the policy's [fines] table, in VR (art. 39 § único)
    assert record.group == "multa"
    assert "art. 10, § 5º" in record.legal_basis and "tempo médio de espera" in record.legal_basis
    assert record.description == ("Linha F (sentido 0), período \u201cpico\u201d 06:00–07:20: tempo médio de "
                                  "espera de 31,2 min pelas 2 partidas realizadas, acima de 30 min")
    assert record.occurred_at.isoformat() == "2026-12-01T06:00:00-03:00"


def test_bunched_departures_yield_infraction(tiny):
    # five departures, as many as the approved 06:00–07:00, but bunched at 06:00–06:04 in
    # [06:00, 07:20): stretches 1, 1, 1, 1, 76 min: (4 × 1 + 5776) / (2 × 80) = 36.1 min > 30
    facts = tiny.facts(route_f((6, 0), (6, 1), (6, 2), (6, 3), (6, 4)))
    [record] = infractions(RULE.detect(facts, policy((6, 0), (7, 20))))
    assert record.evidence["mean_wait_s"] == 2167.5  # (4 × 60² + 4560²) / 9600


def test_no_departure_with_the_fleet_on_the_air_yields_infraction(tiny):
    # nothing ran in [06:00, 07:20): one stretch of 80 min, 80² / (2 × 80) = 40 min > 30 —
    # the least wait of anyone arriving then; the fleet reported every 5 min: a fact
    [record] = infractions(RULE.detect(tiny.facts([]), policy((6, 0), (7, 20))))
    assert record.evidence["departures"] == [] and record.evidence["mean_wait_s"] == 2400.0


def test_same_period_yields_infraction_with_same_id(tiny):
    once = infractions(RULE.detect(tiny.facts(route_f((6, 0), (6, 10))), policy((6, 0), (7, 20))))[0]
    again = infractions(RULE.detect(tiny.facts(route_f((6, 5))), policy((6, 0), (7, 20))))[0]
    assert once.infraction_id == again.infraction_id  # (date, route, direction, period start)


# --- nothing ----------------------------------------------------------------------------


def test_headways_20_and_40_yield_nothing(tiny):
    # [06:00, 07:00); departures 06:00, 06:20: stretches 20, 40
    # E[h²] = (400 + 1600) / 2 = 1000, E[h] = 30: 1000 / 60 = 16.7 min <= 30
    assert on_f(RULE.detect(tiny.facts(route_f((6, 0), (6, 20))), policy((6, 0), (7, 0)))) == []


def test_a_wait_of_exactly_the_limit_yields_nothing(tiny):
    # no departure in [06:00, 07:00): 60² / (2 × 60) = 30 min, not above 30
    assert on_f(RULE.detect(tiny.facts([]), policy((6, 0), (7, 0)))) == []


def test_the_timetable_run_as_approved_yields_nothing(tiny):
    # 06:00, 06:15, 06:30, 06:45, 07:00, 07:20, 07:40 in [06:00, 07:50):
    # (4 × 15² + 2 × 20² + 10²) / (2 × 110) = 1800 / 220 = 8.2 min
    facts = tiny.facts(route_f((6, 0), (6, 15), (6, 30), (6, 45), (7, 0), (7, 20), (7, 40)))
    assert on_f(RULE.detect(facts, policy((6, 0), (7, 50)))) == []


def test_a_period_the_line_has_no_approved_service_in_yields_nothing(tiny):
    # F runs 06:00–07:50 only: [12:00, 14:00) has no approved departure, nothing to judge
    assert on_f(RULE.detect(tiny.facts([]), policy((12, 0), (14, 0)))) == []


def test_a_policy_without_waiting_time_yields_nothing(tiny):
    assert RULE.detect(tiny.facts([]), tiny.policy) == []  # João Neiva's: no [waiting_time]


def test_departures_of_another_line_do_not_count_yields_infraction(tiny):
    # T dir 0 leaves the same terminal at 06:00; F ran nothing: F's wait is 40 min
    facts = tiny.facts([detected("V1", "T", 0, at(6, 0))])
    [record] = infractions(RULE.detect(facts, policy((6, 0), (7, 20))))
    assert record.evidence["departures"] == []


# --- insufficient evidence, sensor faults -----------------------------------------------


def test_fleet_silent_in_the_period_yields_insufficient_evidence(tiny):
    # OP1 reports only from 08:00: 0 departures would read as a 40-min wait
    facts = tiny.facts([], reporting=pings(at(8, 0), at(12, 0), 60))
    findings = on_f(RULE.detect(facts, policy((6, 0), (7, 20))))
    [record] = insufficient(findings)
    assert record.evidence["fleet_silence"] == ["2026-12-01T06:00:00-03:00", "2026-12-01T07:20:00-03:00"]
    assert infractions(findings) == []


def test_a_device_clock_fault_does_not_fake_a_long_wait_yields_insufficient_evidence(tiny):
    # the fleet's messages of 06:20–07:00 were rejected (a clock that jumped ahead, `future`):
    # the 06:30 and 06:50 departures went unseen. From 06:00 alone the wait would read
    # 80² / 160 = 40 min; the 40-min silence (> 300 s) may hide departures: no accusation
    reporting = pings(at(0, 0), at(6, 20), 60) + pings(at(7, 0), at(23, 0), 60)
    findings = on_f(RULE.detect(tiny.facts(route_f((6, 0)), reporting=reporting), policy((6, 0), (7, 20))))
    [record] = insufficient(findings)
    assert record.evidence["fleet_silence"] == ["2026-12-01T06:20:00-03:00", "2026-12-01T07:00:00-03:00"]
    assert infractions(findings) == []


def test_short_silences_of_the_fleet_do_not_excuse_yields_infraction(tiny):
    # reports every 5 min (silences of 300 s, not above max_fleet_silence_s = 300)
    facts = tiny.facts(route_f((6, 0)), reporting=pings(at(0, 0), at(23, 0), 300))
    assert len(infractions(RULE.detect(facts, policy((6, 0), (7, 20))))) == 1  # 40 min > 30


def test_a_vehicle_whose_telemetry_broke_off_yields_insufficient_evidence(tiny):
    # F9 seen on the line at 06:40 after a silence since 06:10: it may have left in [06:00, 07:20)
    facts = tiny.facts(route_f((6, 0)), unfollowed=[unfollowed("F9", "F", 0, at(6, 10), at(6, 40))])
    [record] = insufficient(on_f(RULE.detect(facts, policy((6, 0), (7, 20)))))
    assert [p["vehicle_id"] for p in record.evidence["unfollowed"]] == ["F9"]


def test_a_timetable_that_breaks_the_limit_itself_yields_insufficient_evidence(tiny):
    # T dir 0's approved departures: 06:00 and 23:50. In [05:30, 08:30) = 180 min the
    # timetable alone gives (30² + 150²) / (2 × 180) = 65 min: the Prefeitura's timetable,
    # not the operator, misses § 5º; run as approved, the operator is not accused
    facts = tiny.facts([detected("V1", "T", 0, at(6, 0))])
    findings = [f for f in RULE.detect(facts, policy((5, 30), (8, 30))) if (f.route_id, f.evidence["direction_id"]) == ("T", 0)]
    [record] = findings
    assert record.evidence["scheduled_mean_wait_s"] == 3900.0  # 65 min
    assert record.reason.startswith("o próprio quadro de horários aprovado")


@pytest.mark.parametrize("departures, minutes", [
    ([], 30.0),  # [06:00, 07:00) uncut: 60² / (2 × 60) = 30
    ([(6, 30)], 15.0),  # (30² + 30²) / 120 = 15
    ([(6, 0), (6, 30)], 15.0),  # a departure at S cuts nothing: the same 15
    ([(6, 15), (6, 45)], 11.25),  # (15² + 30² + 15²) / 120 = 11.25
    ([(6, 50), (7, 10)], 2600 / 120),  # 07:10 is past E; stretches 50, 10: (50² + 10²) / 120 = 21.7
])
def test_mean_wait_formula(departures, minutes):
    wait, stretches = waiting_time.mean_wait(at(6, 0), at(7, 0), [at(*hm) for hm in departures])
    assert sum(stretches) == 3600  # the stretches tile the period
    assert wait / 60 == pytest.approx(minutes)
