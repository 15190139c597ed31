"""D-22 — a scheduled timetabled trip with no realized trip matched to it (DESIGN.md).

Feed: tests/gtfs/fixtures/tiny (America/Sao_Paulo, UTC-3, no DST). On Tuesday 2026-12-01
service WD runs these timetabled trips (all of operator OP1):
  route T dir 0: T-0600 06:00 (first of T/0), T-2350 23:50;  dir 1: T-0700 07:00 (first of T/1)
  route E dir 1 (exact_times=1): E-TPL@36000 10:00 (first of E/1), E-TPL@37800 10:30
Route F is headway service (exact_times=0): D-12's business, never D-22's.
On 2026-12-08 (municipal holiday) WD is removed and SA adds T-SA-0800 at 08:00.
Match window and telemetry window (shipped policy): 1800 s.
"""

from __future__ import annotations

import datetime as dt

import pytest
from tiny_day import ALL_RUN, SAO_PAULO, TUESDAY, at, detected, insufficient, pings, unfollowed

from rules import d22
from rules.facts import SensorRuns, ServiceDayFacts, runs_of
from rules.model import PROVISIONAL, Infraction, interval_of

HOLIDAY = dt.date(2026, 12, 8)


def infractions(findings) -> dict[str, Infraction]:
    """D-22 infractions by scheduled key."""
    return {f.evidence["scheduled_key"]: f for f in findings if isinstance(f, Infraction)}


# --- infractions ---------------------------------------------------------------------


def test_day_with_no_realized_trip_yields_infraction_per_scheduled_trip(tiny):
    found = infractions(d22.detect(tiny.facts([]), tiny.policy))
    # 3 trips of T + 2 departures of E = 5; F is headway service (no scheduled trips)
    assert sorted(found) == ["E-TPL@36000", "E-TPL@37800", "T-0600", "T-0700", "T-2350"]
    assert {f.status for f in found.values()} == {PROVISIONAL}  # provisional until the month closes
    assert {f.fine_ufir for f in found.values()} == {200}  # group D = 200 UFIR (art. 3)
    assert {f.code for f in found.values()} == {"D-22"}
    assert {f.operator_id for f in found.values()} == {"OP1"}


def test_unmatched_first_trip_of_route_and_direction_yields_infraction_marked_start_of_operation(tiny):
    found = infractions(d22.detect(tiny.facts([]), tiny.policy))
    start = {key: f.evidence["start_of_operation"] for key, f in found.items()}
    assert start["T-0600"] is True  # 06:00 = 21600 s < 23:50 = 85800 s: first of T dir 0
    assert start["T-2350"] is False  # 85800 s > 21600 s
    assert start["T-0700"] is True  # the only trip of T dir 1 (25200 s)
    assert start["E-TPL@36000"] is True  # 10:00 = 36000 s < 10:30 = 37800 s: first of E dir 1
    assert start["E-TPL@37800"] is False
    assert "início da operação" in found["T-0600"].description
    assert "início da operação" not in found["T-2350"].description


def test_unmatched_first_trip_stays_start_of_operation_when_later_trips_ran_yields_infraction(tiny):
    # T-0700 and T-2350 run; T-0600 does not: it is still the first scheduled trip of T dir 0
    facts = tiny.facts([detected("V1", "T", 1, at(7, 0)), detected("V1", "T", 0, at(23, 50))])
    found = infractions(d22.detect(facts, tiny.policy))
    assert "T-0600" in found and "T-2350" not in found and "T-0700" not in found
    assert found["T-0600"].evidence["start_of_operation"] is True  # min(21600, 85800) = 21600 = T-0600


def test_unmatched_later_trip_yields_infraction_not_start_of_operation(tiny):
    facts = tiny.facts([detected("V1", "T", 0, at(6, 0)), detected("V1", "T", 1, at(7, 0))])
    found = infractions(d22.detect(facts, tiny.policy))
    assert sorted(k for k in found if k.startswith("T")) == ["T-2350"]  # only T-2350 of route T missing
    assert found["T-2350"].evidence["start_of_operation"] is False  # 85800 s is not min(21600, 85800)


def test_holiday_only_trip_unmatched_yields_infraction_start_of_operation(tiny):
    # 2026-12-08: WD removed, SA added -> T-SA-0800 (08:00) is the only trip of T dir 0
    found = infractions(d22.detect(tiny.facts([], date=HOLIDAY), tiny.policy))
    assert sorted(found) == ["T-SA-0800"]  # 1 scheduled trip, 0 realized
    assert found["T-SA-0800"].evidence["start_of_operation"] is True
    assert found["T-SA-0800"].service_date == HOLIDAY


def test_unmatched_trip_yields_infraction_with_record_fields_and_evidence(tiny):
    facts = tiny.facts([t for t in ALL_RUN if t.departed_at != at(7, 0)])
    (found,) = infractions(d22.detect(facts, tiny.policy)).values()
    assert (found.trip_id, found.route_id, found.direction_id) == ("T-0700", "T", 1)
    assert found.vehicle_id is None  # no vehicle ran it
    assert found.service_date == TUESDAY
    assert found.occurred_at == dt.datetime(2026, 12, 1, 7, 0, tzinfo=SAO_PAULO)  # the scheduled departure
    assert found.occurred_at.timestamp() == at(7, 0)
    assert (found.lat, found.lon) == (-19.7194969, -40.3454615)  # terminal C (origin of dir 1), 7 decimals
    assert found.evidence["scheduled_departure"] == "2026-12-01T07:00:00-03:00"
    assert found.evidence["block_id"] == "B1"
    assert found.evidence["programmed_m"] == pytest.approx(7000.0, abs=0.1)  # shape R, 7 km
    assert found.evidence["match_window_s"] == 1800
    assert found.evidence["interval_epoch"] == [at(7, 0), at(7, 28)]  # 07:00 + (26880 - 25200) s = 07:28
    assert interval_of(found).start == at(7, 0)  # the engine judges it live a match window after
    assert found.evidence["policy_version"] == "jn-2026.1"


def test_unmatched_trip_next_to_a_realized_trip_yields_infraction_listing_it(tiny):
    # E at 10:10 matches 10:00 (|600| < |-1200|); 10:30 stays unmatched, 1200 s <= 1800 s from 10:10
    facts = tiny.facts([detected("V2", "E", 1, at(10, 10))])
    found = infractions(d22.detect(facts, tiny.policy))
    assert "E-TPL@36000" not in found  # matched by the 10:10 trip
    assert found["E-TPL@37800"].evidence["realized_trips_within_window"] == [
        {"vehicle_id": "V2", "departed_at": "2026-12-01T10:10:00-03:00", "matched_trip_id": "E-TPL"}
    ]


def test_realized_trip_just_outside_match_window_yields_infraction(tiny):
    # 06:30:01 - 06:00 = 1801 s > 1800 s: no match, and not "within window" either
    facts = tiny.facts([detected("V1", "T", 0, at(6, 30, 1))])
    found = infractions(d22.detect(facts, tiny.policy))
    assert "T-0600" in found
    assert found["T-0600"].evidence["realized_trips_within_window"] == []  # |1801| > 1800


# --- nothing -------------------------------------------------------------------------


def test_every_scheduled_trip_matched_yields_nothing(tiny):
    facts = tiny.facts(ALL_RUN)
    assert d22.detect(facts, tiny.policy) == []  # 5 scheduled, 5 matched: 5 - 5 = 0


def test_realized_trip_at_edge_of_match_window_yields_nothing(tiny):
    # 06:30:00 - 06:00 = 1800 s <= 1800 s: matched to T-0600
    facts = tiny.facts([detected("V1", "T", 0, at(6, 30)), detected("V1", "T", 1, at(7, 30)),
                        detected("V1", "T", 0, at(23, 20))] + ALL_RUN[3:])
    assert d22.detect(facts, tiny.policy) == []  # each deviation is exactly 1800 s


def test_matched_trip_yields_nothing_for_it(tiny):
    facts = tiny.facts([detected("V1", "T", 0, at(6, 3))])  # +180 s: matched to T-0600
    found = infractions(d22.detect(facts, tiny.policy))
    assert "T-0600" not in found
    assert len(found) == 4  # 5 scheduled - 1 matched


# --- insufficient evidence -------------------------------------------------------------


def test_no_telemetry_from_operator_around_departure_yields_insufficient_evidence(tiny):
    # OP1 reports only 10:00-11:00: nothing within 07:00 ± 1800 s = [06:30, 07:30]
    facts = tiny.facts([], reporting=pings(at(10, 0), at(11, 0), 60))
    findings = d22.detect(facts, tiny.policy)
    by_trip = {f.trip_id: f for f in insufficient(findings)}
    assert set(by_trip) == {"T-0600", "T-0700", "T-2350"}  # no T departure within 1800 s of 10:00-11:00
    assert all(f.code == "D-22" for f in by_trip.values())
    assert by_trip["T-0700"].evidence == {"scheduled_departure": "2026-12-01T07:00:00-03:00", "window_s": 1800,
                                          "reporting_minutes": 0, "min_reporting_minutes": 5}
    assert sorted(infractions(findings)) == ["E-TPL@36000", "E-TPL@37800"]  # 10:00, 10:30 are covered


def test_telemetry_only_1801_s_after_departure_yields_insufficient_evidence(tiny):
    facts = tiny.facts([], reporting=(at(7, 30, 1),))  # 07:30:01 - 07:00 = 1801 s > 1800 s
    findings = d22.detect(facts, tiny.policy)
    assert "T-0700" in {f.trip_id for f in insufficient(findings)}
    assert "T-0700" not in infractions(findings)


def test_telemetry_only_1801_s_before_departure_yields_insufficient_evidence(tiny):
    facts = tiny.facts([], reporting=(at(6, 29, 59),))  # 07:00 - 06:29:59 = 1801 s > 1800 s
    findings = d22.detect(facts, tiny.policy)
    assert "T-0700" in {f.trip_id for f in insufficient(findings)}
    assert "T-0700" not in infractions(findings)


def test_telemetry_in_5_minutes_reaching_exactly_1800_s_from_departure_yields_infraction(tiny):
    # 07:00 ∓ 1800 s: the window is closed at both ends; 5 distinct minutes (policy) inside it
    for first in (at(6, 30), at(7, 26)):  # 06:30-06:34 or 07:26-07:30
        findings = d22.detect(tiny.facts([], reporting=pings(first, first + 4 * 60, 60)), tiny.policy)
        assert "T-0700" in infractions(findings)
        assert "T-0700" not in {f.trip_id for f in insufficient(findings)}


def test_telemetry_in_only_4_minutes_of_the_window_yields_insufficient_evidence(tiny):
    # 07:26:01-07:30:01: the last is 1801 s after 07:00, so 4 minutes < 5 (policy)
    findings = d22.detect(tiny.facts([], reporting=pings(at(7, 26, 1), at(7, 30, 1), 60)), tiny.policy)
    [record] = [f for f in insufficient(findings) if f.trip_id == "T-0700"]
    assert (record.evidence["reporting_minutes"], record.evidence["min_reporting_minutes"]) == (4, 5)


def test_one_stray_ping_at_the_departure_yields_insufficient_evidence(tiny):
    # one bus powered up for a minute (or a device clock jump) is not a fleet at work
    findings = d22.detect(tiny.facts([], reporting=(at(7, 0),)), tiny.policy)
    assert "T-0700" not in infractions(findings)
    assert "T-0700" in {f.trip_id for f in insufficient(findings)}


def test_telemetry_from_another_operator_only_yields_insufficient_evidence(tiny):
    facts = tiny.facts([])
    facts = ServiceDayFacts(**{**facts.__dict__, "reporting": {"OP2": facts.reporting["OP1"]}})
    findings = d22.detect(facts, tiny.policy)
    assert len(insufficient(findings)) == 5  # all 5 scheduled trips: OP1 sent nothing
    assert infractions(findings) == {}


def test_a_vehicle_on_the_route_whose_telemetry_broke_off_yields_insufficient_evidence(tiny):
    # V1 seen on T dir 1 at 07:40 after a silence since 06:50: it may have left at 07:00
    # (06:50 - 1800 s <= 07:00 <= 07:40 + 1800 s); the trip can be neither confirmed nor excluded
    facts = tiny.facts([], unfollowed=[unfollowed("V1", "T", 1, at(6, 50), at(7, 40))])
    findings = d22.detect(facts, tiny.policy)
    assert "T-0700" not in infractions(findings)
    [record] = [f for f in insufficient(findings) if f.trip_id == "T-0700"]
    assert "telemetria interrompida" in record.reason
    assert record.evidence["unfollowed"][0]["vehicle_id"] == "V1"
    assert record.evidence["unfollowed"][0]["may_have_departed"] == ["2026-12-01T06:50:00-03:00",
                                                                    "2026-12-01T07:40:00-03:00"]


def test_a_vehicle_whose_telemetry_broke_off_on_another_route_or_too_far_yields_infraction(tiny):
    # T dir 0 (the other direction), and T dir 1 first seen at 08:10 after a silence from
    # 07:40:01: 07:00 < 07:40:01 - 1800 s = 07:10:01, it cannot have been that departure
    passes = [unfollowed("V1", "T", 0, at(6, 50), at(7, 40)), unfollowed("V1", "T", 1, at(7, 40, 1), at(8, 10))]
    findings = d22.detect(tiny.facts([], unfollowed=passes), tiny.policy)
    assert "T-0700" in infractions(findings)


# --- identity --------------------------------------------------------------------------


def test_same_facts_twice_yields_infraction_with_same_id(tiny):
    first = infractions(d22.detect(tiny.facts([]), tiny.policy))
    # other telemetry, same facts (which scheduled trip, which date): same id
    again = infractions(d22.detect(tiny.facts([], reporting=pings(at(0, 0), at(23, 59), 60)), tiny.policy))
    assert {k: f.infraction_id for k, f in first.items()} == {k: f.infraction_id for k, f in again.items()}
    assert len({f.infraction_id for f in first.values()}) == 5  # 5 trips, 5 distinct ids


def test_same_trip_on_another_date_yields_infraction_with_other_id(tiny):
    tuesday = infractions(d22.detect(tiny.facts([]), tiny.policy))
    wednesday = infractions(d22.detect(tiny.facts([], date=dt.date(2026, 12, 2)), tiny.policy))
    assert tuesday["T-0600"].infraction_id != wednesday["T-0600"].infraction_id  # (date, key) differ in date


# --- per vehicle and per block: the telemetry of the vehicles that could have run it ----
# Block B1 holds T-0600, T-0700 and T-2350. Window of T-0700: 07:00 ± 1800 s = [06:30, 07:30].
# A silence is a stretch of more than max_coverage_gap_s = 300 s without a fix.

DAY_START, DAY_END = at(0, 0), at(0, 0) + 26 * 3600  # the tiny fixture's telemetry span


def seen(*runs, boarding=()) -> SensorRuns:
    return SensorRuns(tachograph=tuple(runs), boarding=tuple(boarding))


def test_block_vehicle_seen_throughout_the_window_yields_infraction(tiny):
    # V1 ran T-0600 and T-2350 of B1, so T-0700 is its; its fixes every 300 s all day are one
    # run (300 s <= max_coverage_gap_s = 300 s): seen throughout [06:30, 07:30], not running it
    fixes = runs_of(list(pings(DAY_START, DAY_END, 300)), tiny.policy.trips.max_coverage_gap_s)
    facts = tiny.facts([detected("V1", "T", 0, at(6, 0)), detected("V1", "T", 0, at(23, 50))],
                       coverage={"V1": SensorRuns(tachograph=fixes), "V2": seen()})
    assert fixes == ((DAY_START, DAY_END),)
    assert "T-0700" in infractions(d22.detect(facts, tiny.policy))  # V2, silent all day, was not B1's


def test_block_vehicle_silent_301_s_inside_the_window_yields_infraction(tiny):
    # V1's fixes every 300 s, but none between 07:00 and 07:05:01: 301 s > 300 s, a silence
    # inside [06:30, 07:30], but shorter than T-0700 takes (1,680 s scheduled): a whole
    # trip cannot hide in it, and one it cut into would show on the itinerary around it (an
    # unfollowed pass). A modem off for minutes erases no D-22
    times = [t for t in pings(DAY_START, DAY_END, 300) if not at(7, 0) < t <= at(7, 5)] + [at(7, 5, 1)]
    fixes = runs_of(sorted(times), tiny.policy.trips.max_coverage_gap_s)
    facts = tiny.facts([detected("V1", "T", 0, at(6, 0)), detected("V1", "T", 0, at(23, 50))],
                       coverage={"V1": SensorRuns(tachograph=fixes), "V2": seen((DAY_START, DAY_END))})
    assert "T-0700" in infractions(d22.detect(facts, tiny.policy))


def test_block_vehicle_silent_longer_than_a_trip_inside_the_window_yields_insufficient_evidence(tiny):
    # none between 07:00 and 07:28:01: 1,681 s, longer than T-0700 itself takes (1,680 s
    # scheduled; no T trip of its direction ran that day), with fixes before and after it:
    # T-0700 may have been run unseen
    times = [t for t in pings(DAY_START, DAY_END, 300) if not at(7, 0) < t <= at(7, 28)] + [at(7, 28, 1)]
    fixes = runs_of(sorted(times), tiny.policy.trips.max_coverage_gap_s)
    facts = tiny.facts([detected("V1", "T", 0, at(6, 0)), detected("V1", "T", 0, at(23, 50))],
                       coverage={"V1": SensorRuns(tachograph=fixes), "V2": seen((DAY_START, DAY_END))})
    findings = d22.detect(facts, tiny.policy)
    assert "T-0700" not in infractions(findings)
    [record] = [f for f in insufficient(findings) if f.trip_id == "T-0700"]
    assert record.vehicle_id == "V1"
    assert record.evidence["vehicles"] == [{"vehicle_id": "V1", "block_id": "B1", "silences": [
        {"silence": ["2026-12-01T07:00:00-03:00", "2026-12-01T07:28:01-03:00"], "catraca_boardings": []}]}]


def test_block_vehicle_silent_90_min_with_its_catraca_counting_yields_insufficient_evidence(tiny):
    # V1's tachograph silent 06:40-08:10 (seen before and after), its catraca counting
    # boardings 06:45-08:05: in service, unseen, during [06:30, 07:30]
    facts = tiny.facts([detected("V1", "T", 0, at(6, 0)), detected("V1", "T", 0, at(23, 50))],
                       coverage={"V1": seen((DAY_START, at(6, 40)), (at(8, 10), DAY_END),
                                            boarding=[(at(6, 45), at(8, 5))]),
                                 "V2": seen((DAY_START, DAY_END))})
    findings = d22.detect(facts, tiny.policy)
    assert "T-0700" not in infractions(findings)
    [record] = [f for f in insufficient(findings) if f.trip_id == "T-0700"]
    assert "catraca contou embarques" in record.reason
    [silence] = record.evidence["vehicles"][0]["silences"]
    assert silence == {"silence": ["2026-12-01T06:40:00-03:00", "2026-12-01T07:30:00-03:00"],
                       "catraca_boardings": [["2026-12-01T06:45:00-03:00", "2026-12-01T08:05:00-03:00"]]}


def test_block_vehicle_switched_off_after_its_last_trip_yields_infraction(tiny):
    # V1 ran T-0600 and T-0700, stood at the terminal until 07:40 and sent nothing more that
    # day, its catraca counting no boarding: T-2350 ([23:20, 00:20]) was not run by B1's vehicle
    facts = tiny.facts([detected("V1", "T", 0, at(6, 0)), detected("V1", "T", 1, at(7, 0))],
                       coverage={"V1": seen((at(5, 50), at(7, 40))), "V2": seen((DAY_START, DAY_END))})
    assert "T-2350" in infractions(d22.detect(facts, tiny.policy))


def test_block_vehicle_silent_after_its_last_trip_with_its_catraca_counting_yields_insufficient_evidence(tiny):
    # the same, but the catraca counted boardings 23:00-23:59 ([23:20, 00:20] overlaps): the
    # vehicle was in service with its tachograph silent (service seen by any sensor is service)
    facts = tiny.facts([detected("V1", "T", 0, at(6, 0)), detected("V1", "T", 1, at(7, 0))],
                       coverage={"V1": seen((at(5, 50), at(7, 40)), boarding=[(at(23, 0), at(23, 59))]),
                                 "V2": seen((DAY_START, DAY_END))})
    findings = d22.detect(facts, tiny.policy)
    assert "T-2350" not in infractions(findings)
    assert "T-2350" in {f.trip_id for f in insufficient(findings)}


def test_trip_without_block_and_one_vehicle_of_the_operator_silent_yields_insufficient_evidence(tiny):
    # E has no block: V1 or V2 could have run E-TPL@37800 (10:30, window [10:00, 11:00]); V1 is
    # silent 09:00-12:00: it may have run it unseen
    ran = [t for t in ALL_RUN if t.departed_at != at(10, 30)]
    facts = tiny.facts(ran, coverage={"V1": seen((DAY_START, at(9, 0)), (at(12, 0), DAY_END)),
                                      "V2": seen((DAY_START, DAY_END))})
    findings = d22.detect(facts, tiny.policy)
    assert "E-TPL@37800" not in infractions(findings)
    [record] = [f for f in insufficient(findings) if f.trip_id == "E-TPL"]  # the 10:30 departure of E-TPL
    assert record.evidence["scheduled_departure"] == "2026-12-01T10:30:00-03:00"
    assert [v["vehicle_id"] for v in record.evidence["vehicles"]] == ["V1"]


def test_trip_without_block_and_every_vehicle_of_the_operator_seen_yields_infraction(tiny):
    # both V1 and V2 seen throughout [10:00, 11:00]: neither ran E-TPL@37800
    ran = [t for t in ALL_RUN if t.departed_at != at(10, 30)]
    facts = tiny.facts(ran, coverage={"V1": seen((at(9, 0), at(12, 0))), "V2": seen((DAY_START, DAY_END))})
    assert "E-TPL@37800" in infractions(d22.detect(facts, tiny.policy))


def test_a_parked_bus_reporting_5_minutes_on_a_silent_day_yields_nothing(tiny):
    # nothing run, so no block has a known vehicle: any of OP1's could have run each trip. V1
    # reports 06:58-07:03 (5 minutes: the fleet "reported" around T-0700), V2 nothing: no
    # window of 3600 s is covered by 5 minutes of one vehicle
    facts = tiny.facts([], reporting=pings(at(6, 58), at(7, 3), 60), coverage={"V1": seen((at(6, 58), at(7, 3)))})
    findings = d22.detect(facts, tiny.policy)
    assert infractions(findings) == {}
    assert "T-0700" in {f.trip_id for f in insufficient(findings)}


# --- judged live (Live.DEPARTURE_DUE) ----------------------------------------------------


def test_judged_live_yields_only_the_trips_whose_match_window_has_passed_each_as_at_day_close(tiny):
    # nothing run: judged at 10:30 (due_by), a trip is due at its departure + 1800 s:
    # T-0600 06:30, T-0700 07:30, E-TPL@36000 10:30 (at the moment itself) are due;
    # E-TPL@37800 (11:00) and T-2350 (00:20 next day) are not judged yet
    facts = tiny.facts([])
    closed = infractions(d22.detect(facts, tiny.policy))
    live = infractions(d22.detect(facts, tiny.policy, due_by=at(10, 30)))
    assert sorted(live) == ["E-TPL@36000", "T-0600", "T-0700"]
    assert live == {key: closed[key] for key in live}  # the same records, ids and evidence


def test_judged_live_a_second_before_a_match_window_ends_leaves_that_trip_out(tiny):
    facts = tiny.facts([])
    live = infractions(d22.detect(facts, tiny.policy, due_by=at(10, 29, 59)))  # E-TPL@36000 due at 10:30:00
    assert sorted(live) == ["T-0600", "T-0700"]


def test_judged_live_a_trip_not_due_yet_is_not_asked_about_the_telemetry(tiny, monkeypatch):
    # the cost a live judgment saves: the vehicles' silences are read for the due trips only
    asked = []
    unobserved = ServiceDayFacts.unobserved
    monkeypatch.setattr(ServiceDayFacts, "unobserved",
                        lambda self, trip, policy: asked.append(trip.key) or unobserved(self, trip, policy))
    d22.detect(tiny.facts([]), tiny.policy, due_by=at(7, 30))
    assert sorted(asked) == ["T-0600", "T-0700"]
