"""D-12 — headway service with fewer realized departures than ceil(window / headway) (DESIGN.md).

Feed: tests/gtfs/fixtures/tiny (America/Sao_Paulo, UTC-3). On Tuesday 2026-12-01 route F
(operator OP1, dir 0, exact_times=0, template F-TPL) has two half-open windows:
  [06:00, 07:00) every 900 s:  ceil(3600 / 900)  = 4 departures expected
  [07:00, 07:50) every 1200 s: ceil(3000 / 1200) = 3 departures expected (2.5 rounded up)
Route E has exact_times=1: scheduled trips, not windows; D-12 never looks at it.
"""

from __future__ import annotations

import datetime as dt

from tiny_day import at, detected, insufficient, pings

from rules import d12
from rules.facts import SensorRuns
from rules.model import CONFIRMED, Infraction, interval_of
from trips.model import DetectedTrip


def windows(findings) -> dict[str, Infraction]:
    """D-12 infractions by local window start (HH:MM)."""
    return {f.occurred_at.strftime("%H:%M"): f for f in findings if isinstance(f, Infraction)}


def route_f(*departures: tuple[int, int, int] | tuple[int, int]) -> list[DetectedTrip]:
    return [detected(f"F{i}", "F", 0, at(*hm)) for i, hm in enumerate(departures)]


FULL_SECOND_WINDOW = [(7, 0), (7, 20), (7, 40)]  # 3 of ceil(3000 / 1200) = 3


# --- infractions ------------------------------------------------------------------------


def test_window_with_fewer_departures_than_required_yields_infraction(tiny):
    facts = tiny.facts(route_f((6, 0), (6, 15), (6, 30), *FULL_SECOND_WINDOW))  # 06:45 missing
    findings = d12.detect(facts, tiny.policy)
    assert list(windows(findings)) == ["06:00"]  # one record for [06:00, 07:00); [07:00, 07:50) has 3 of 3
    record = windows(findings)["06:00"]
    assert record.evidence["expected_departures"] == 4  # ceil(3600 / 900) = 4
    assert record.evidence["realized_departures"] == 3  # 06:00, 06:15, 06:30
    assert record.evidence["expected_formula"] == "ceil(3600 / 900) = 4"
    assert record.evidence["headway_s"] == 900
    assert record.evidence["window_start"] == "2026-12-01T06:00:00-03:00"
    assert record.evidence["window_end"] == "2026-12-01T07:00:00-03:00"
    assert record.evidence["departures"] == [
        "2026-12-01T06:00:00-03:00", "2026-12-01T06:15:00-03:00", "2026-12-01T06:30:00-03:00"]
    assert record.evidence["template_trip_id"] == "F-TPL"
    assert record.evidence["interval_epoch"] == [at(6, 0), at(7, 0)]
    assert interval_of(record).end == at(7, 0)  # the engine judges it live at the window's end
    assert record.fine_ufir == 200  # group D
    assert record.status == CONFIRMED
    assert (record.code, record.operator_id, record.route_id, record.direction_id) == ("D-12", "OP1", "F", 0)
    assert record.trip_id is None and record.vehicle_id is None  # per window, not per trip
    assert (record.lat, record.lon) == (-19.7554172, -40.3743914)  # terminal A, origin of F dir 0


def test_window_needing_rounded_up_count_with_two_departures_yields_infraction(tiny):
    # 3000 / 1200 = 2.5: two departures are not enough, ceil(2.5) = 3
    facts = tiny.facts(route_f((6, 0), (6, 15), (6, 30), (6, 45), (7, 0), (7, 25)))
    record = windows(d12.detect(facts, tiny.policy))["07:00"]
    assert record.evidence["expected_departures"] == 3  # ceil(3000 / 1200) = ceil(2.5) = 3
    assert record.evidence["realized_departures"] == 2  # 07:00, 07:25
    assert record.evidence["expected_formula"] == "ceil(3000 / 1200) = 3"


def test_window_with_no_departure_but_telemetry_yields_infraction(tiny):
    facts = tiny.facts(route_f(*FULL_SECOND_WINDOW))
    record = windows(d12.detect(facts, tiny.policy))["06:00"]
    assert record.evidence["realized_departures"] == 0  # 0 < 4
    assert record.evidence["departures"] == []


def test_both_windows_short_yield_one_infraction_each(tiny):
    facts = tiny.facts(route_f((6, 0), (7, 0)))
    found = windows(d12.detect(facts, tiny.policy))
    assert sorted(found) == ["06:00", "07:00"]  # 1 < 4 and 1 < 3
    assert found["06:00"].infraction_id != found["07:00"].infraction_id  # identity has the window start


def test_same_window_short_again_yields_infraction_with_same_id(tiny):
    once = windows(d12.detect(tiny.facts(route_f((6, 0), *FULL_SECOND_WINDOW)), tiny.policy))["06:00"]
    again = windows(d12.detect(tiny.facts(route_f((6, 10), (6, 40), *FULL_SECOND_WINDOW)), tiny.policy))["06:00"]
    assert once.infraction_id == again.infraction_id  # (date, route, direction, window start)


def test_departures_of_another_route_do_not_count_yields_infraction(tiny):
    # route T dir 0 leaves A at 06:00 like F: it is not F's service
    trips = route_f((6, 0), (6, 15), (6, 30), *FULL_SECOND_WINDOW) + [detected("V1", "T", 0, at(6, 45))]
    record = windows(d12.detect(tiny.facts(trips), tiny.policy))["06:00"]
    assert record.evidence["realized_departures"] == 3  # T's 06:45 is not counted: still 3 < 4


# --- half-open windows -------------------------------------------------------------------


def test_departure_at_window_end_counts_for_next_window_yields_infraction(tiny):
    # 07:00 = end of [06:00, 07:00) and start of [07:00, 07:50): it belongs to the second
    facts = tiny.facts(route_f((6, 0), (6, 15), (6, 30), (7, 0), (7, 20), (7, 40)))
    found = windows(d12.detect(facts, tiny.policy))
    assert list(found) == ["06:00"]  # [06:00, 07:00): 06:00, 06:15, 06:30 = 3 < 4
    assert found["06:00"].evidence["realized_departures"] == 3
    # [07:00, 07:50): 07:00, 07:20, 07:40 = 3 >= 3: nothing


def test_departure_at_window_start_counts_yields_nothing(tiny):
    facts = tiny.facts(route_f((6, 0), (6, 15), (6, 30), (6, 59, 59), *FULL_SECOND_WINDOW))
    assert d12.detect(facts, tiny.policy) == []  # 06:00 (start, closed end) .. 06:59:59: 4 >= 4


def test_departure_at_last_window_end_counts_for_no_window_yields_infraction(tiny):
    facts = tiny.facts(route_f((6, 0), (6, 15), (6, 30), (6, 45), (7, 0), (7, 20), (7, 50)))
    record = windows(d12.detect(facts, tiny.policy))["07:00"]
    assert record.evidence["realized_departures"] == 2  # 07:50 is outside [07:00, 07:50): 2 < 3


# --- nothing ----------------------------------------------------------------------------


def test_exactly_enough_departures_yields_nothing(tiny):
    facts = tiny.facts(route_f((6, 0), (6, 15), (6, 30), (6, 45), *FULL_SECOND_WINDOW))
    assert d12.detect(facts, tiny.policy) == []  # 4 >= 4 and 3 >= 3


def test_more_departures_than_required_yields_nothing(tiny):
    facts = tiny.facts(route_f((6, 0), (6, 10), (6, 20), (6, 30), (6, 40), (6, 50), *FULL_SECOND_WINDOW))
    assert d12.detect(facts, tiny.policy) == []  # 6 >= 4


def test_enough_departures_bunched_together_yields_nothing(tiny):
    # the code counts departures, not gaps: 4 departures in 3 minutes still meet ceil(3600 / 900) = 4
    facts = tiny.facts(route_f((6, 0), (6, 1), (6, 2), (6, 3), *FULL_SECOND_WINDOW))
    assert d12.detect(facts, tiny.policy) == []


def test_holiday_without_headway_service_yields_nothing(tiny):
    # 2026-12-08: WD (which carries F) is removed; no windows that day
    assert d12.detect(tiny.facts([], date=dt.date(2026, 12, 8)), tiny.policy) == []


# --- insufficient evidence --------------------------------------------------------------


def test_no_telemetry_in_window_yields_insufficient_evidence(tiny):
    # OP1 reports only from 07:10 on: nothing in [06:00, 07:00]
    facts = tiny.facts(route_f(*FULL_SECOND_WINDOW), reporting=pings(at(7, 10), at(9, 0), 60))
    findings = d12.detect(facts, tiny.policy)
    (uncertain,) = insufficient(findings)
    assert (uncertain.code, uncertain.route_id, uncertain.trip_id, uncertain.vehicle_id) == ("D-12", "F", None, None)
    assert uncertain.evidence == {"window": ["2026-12-01T06:00:00-03:00", "2026-12-01T07:00:00-03:00"],
                                  "expected": 4}  # ceil(3600 / 900)
    assert windows(findings) == {}  # [07:00, 07:50) has 3 of 3


def test_no_telemetry_and_no_departure_yields_insufficient_evidence_for_each_window(tiny):
    facts = tiny.facts([], reporting=())
    findings = d12.detect(facts, tiny.policy)
    assert [f.evidence["expected"] for f in insufficient(findings)] == [4, 3]  # both windows, in order
    assert windows(findings) == {}


def test_telemetry_only_before_window_yields_insufficient_evidence(tiny):
    facts = tiny.facts([], reporting=pings(at(5, 0), at(5, 59, 59), 60))  # last ping 1 s before 06:00
    findings = d12.detect(facts, tiny.policy)
    assert len(insufficient(findings)) == 2  # neither [06:00, 07:00) nor [07:00, 07:50) has a ping


def test_one_ping_inside_window_yields_infraction(tiny):
    facts = tiny.facts([], reporting=(at(6, 30),))  # one ping at 06:30, inside [06:00, 07:00)
    findings = d12.detect(facts, tiny.policy)
    assert list(windows(findings)) == ["06:00"]  # 0 < 4 with telemetry: infraction
    assert [f.evidence["expected"] for f in insufficient(findings)] == [3]  # [07:00, 07:50): no ping


def test_a_departure_read_just_before_the_window_from_sparse_fixes_yields_insufficient_evidence(tiny):
    # [07:00, 07:50) needs 3 (ceil(3000 / 1200)); 07:20 and 07:40 are in it. The third left
    # between a fix inside the terminal zone at 06:59:30 and one outside at 07:00:30
    # (60 s apart): its crossing, read as 06:59:56, may as well be 07:00:10. Before this:
    # a D-12 for 2 of 3 departures.
    import msgspec

    uncertain = msgspec.structs.replace(detected("F9", "F", 0, at(6, 59, 56), gap_s=60.0), left_at=at(7, 0, 30))
    facts = tiny.facts([*route_f((6, 0), (6, 15), (6, 30), (6, 45), (7, 20), (7, 40)), uncertain])
    findings = d12.detect(facts, tiny.policy)
    assert windows(findings) == {}
    [record] = insufficient(findings)
    assert record.evidence["uncertain_departures"] == ["2026-12-01T06:59:56-03:00"]
    assert (record.evidence["realized_departures"], record.evidence["expected"]) == (2, 3)
    # the same departure known to the second (fixes 10 s apart, 06:59:50-07:00:00) is not
    # in the window: the D-12 stands
    exact = msgspec.structs.replace(uncertain, departure_gap_s=10.0, left_at=at(7, 0, 0) - 1)
    facts = tiny.facts([*route_f((6, 0), (6, 15), (6, 30), (6, 45), (7, 20), (7, 40)), exact])
    assert list(windows(d12.detect(facts, tiny.policy))) == ["07:00"]


def test_a_vehicle_on_the_line_whose_telemetry_broke_off_yields_insufficient_evidence(tiny):
    # [07:00, 07:50) needs 3; 07:20 and 07:40 left. F9 was seen on the line at 07:25 after a
    # silence since 06:55: it may have left at any moment of [06:55, 07:25], inside the window
    from tiny_day import unfollowed

    departures = route_f((6, 0), (6, 15), (6, 30), (6, 45), (7, 20), (7, 40))
    facts = tiny.facts(departures, unfollowed=[unfollowed("F9", "F", 0, at(6, 55), at(7, 25))])
    findings = d12.detect(facts, tiny.policy)
    assert windows(findings) == {}
    [record] = insufficient(findings)
    assert [p["vehicle_id"] for p in record.evidence["unfollowed"]] == ["F9"]
    # the same vehicle seen first at 06:50 after a silence since 06:20: [06:20, 06:50]
    # ends before 07:00, it cannot be a departure of the window: the D-12 for 2 of 3 stands
    facts = tiny.facts(departures, unfollowed=[unfollowed("F9", "F", 0, at(6, 20), at(6, 50))])
    assert list(windows(d12.detect(facts, tiny.policy))) == ["07:00"]


# --- the line's vehicles seen (ServiceDayFacts.unobserved_window) ----------------------------

DAY_START, DAY_END = at(0, 0), at(0, 0) + 26 * 3600  # the tiny fixture's telemetry span


def by_v1(*departures: tuple[int, int]) -> list[DetectedTrip]:
    return [detected("V1", "F", 0, at(*hm)) for hm in departures]


def test_the_line_vehicle_seen_throughout_a_short_window_yields_infraction(tiny):
    # V1 made 06:00, 06:15, 06:30 and [07:00, 07:50)'s three; seen all day: [06:00, 07:00)
    # has 3 of ceil(3600 / 900) = 4, and nothing hid the fourth
    facts = tiny.facts(by_v1((6, 0), (6, 15), (6, 30), *FULL_SECOND_WINDOW),
                       coverage={"V1": SensorRuns(tachograph=((DAY_START, DAY_END),))})
    assert list(windows(d12.detect(facts, tiny.policy))) == ["06:00"]


def test_the_line_vehicle_silent_with_its_catraca_counting_yields_insufficient_evidence(tiny):
    # V1's tachograph silent 06:35-07:05 (1,800 s > max_coverage_gap_s 300 s) while its catraca
    # counted boardings 06:40-07:00: the missing departure of [06:00, 07:00) may be one it made
    # unseen (service seen by any sensor is service)
    runs = SensorRuns(tachograph=((DAY_START, at(6, 35)), (at(7, 5), DAY_END)), boarding=((at(6, 40), at(7, 0)),))
    facts = tiny.facts(by_v1((6, 0), (6, 15), (6, 30), *FULL_SECOND_WINDOW), coverage={"V1": runs})
    findings = d12.detect(facts, tiny.policy)
    assert windows(findings) == {}
    [record] = insufficient(findings)
    assert record.vehicle_id == "V1"
    assert record.evidence["vehicles"] == [{"vehicle_id": "V1", "block_id": None, "silences": [
        {"silence": ["2026-12-01T06:35:00-03:00", "2026-12-01T07:00:00-03:00"],
         "catraca_boardings": [["2026-12-01T06:40:00-03:00", "2026-12-01T07:00:00-03:00"]]}]}]


def test_the_line_vehicle_silent_between_fixes_yields_insufficient_evidence(tiny):
    # both sensors silent 06:35-07:05 with V1 seen before and after: as above, without the catraca
    runs = SensorRuns(tachograph=((DAY_START, at(6, 35)), (at(7, 5), DAY_END)))
    facts = tiny.facts(by_v1((6, 0), (6, 15), (6, 30), *FULL_SECOND_WINDOW), coverage={"V1": runs})
    assert windows(d12.detect(facts, tiny.policy)) == {}


def test_the_line_vehicle_silent_for_less_than_a_trip_yields_infraction(tiny):
    # V1 silent 06:35-06:41 (360 s > max_coverage_gap_s 300 s) with fixes on both sides, but F's
    # quickest trip that day took 1,200 s: no trip hid in it (one it cut into would show on the
    # line around it, an unfollowed pass). A modem switched off for minutes erases no D-12
    runs = SensorRuns(tachograph=((DAY_START, at(6, 35)), (at(6, 41), DAY_END)))
    facts = tiny.facts(by_v1((6, 0), (6, 15), (6, 30), *FULL_SECOND_WINDOW), coverage={"V1": runs})
    assert list(windows(d12.detect(facts, tiny.policy))) == ["06:00"]


def test_the_line_vehicle_switched_off_after_its_last_departure_yields_infraction(tiny):
    # V1 made 06:00-06:45 and was seen until 06:55, nothing more that day, no boarding:
    # [07:00, 07:50) has 0 of ceil(3000 / 1200) = 3; a vehicle done for the day hides nothing
    runs = SensorRuns(tachograph=((at(5, 50), at(6, 55)),))
    facts = tiny.facts(by_v1((6, 0), (6, 15), (6, 30), (6, 45)), coverage={"V1": runs})
    assert list(windows(d12.detect(facts, tiny.policy))) == ["07:00"]


def test_the_line_vehicle_whose_unit_died_mid_run_yields_insufficient_evidence(tiny):
    # as above, but V1's telemetry broke off on the line at 06:50, 500-2000 m along F's
    # shape, and never came back (an unfollowed pass still silent): a unit that died while
    # the bus ran, not a bus switched off; the 3 departures [07:00, 07:50) asks may have
    # been made unseen
    from tiny_day import unfollowed

    runs = SensorRuns(tachograph=((at(5, 50), at(6, 50)),))
    died = unfollowed("V1", "F", 0, at(6, 40), at(6, 45))  # seen 06:45-06:50, silent after
    facts = tiny.facts(by_v1((6, 0), (6, 15), (6, 30), (6, 45)), coverage={"V1": runs}, unfollowed=[died])
    findings = d12.detect(facts, tiny.policy)
    assert windows(findings) == {}
    assert [r.vehicle_id for r in insufficient(findings) if r.evidence.get("vehicles")] == ["V1"]


def test_no_vehicle_ran_the_line_and_one_of_the_operator_unseen_yields_insufficient_evidence(tiny):
    # nobody ran F that day: any of OP1's vehicles could have; V2 seen only 06:00-06:05 (a bus
    # powered up for minutes): 0 of 4 in [06:00, 07:00) is not shown, V1 seen all day or not
    facts = tiny.facts([], coverage={"V1": SensorRuns(tachograph=((DAY_START, DAY_END),)),
                                     "V2": SensorRuns(tachograph=((at(6, 0), at(6, 5)),))})
    findings = d12.detect(facts, tiny.policy)
    assert windows(findings) == {}
    assert {r.evidence["vehicles"][0]["vehicle_id"] for r in insufficient(findings)} == {"V2"}


def test_a_bus_whose_clock_was_faulty_in_the_window_may_have_left_any_number_of_times(tiny):
    # [07:00, 07:50) needs 3; only 07:40 left: 2 short, more than one unfollowed pass makes
    # up. V2 (OP1's) had its messages of [07:05, 07:45] dated by a faulty clock and rejected
    # (engine.clocks): it was unseen in time, not seen once, so the shortfall is not a fact
    import msgspec
    from tiny_day import unfollowed

    departures = route_f((6, 0), (6, 15), (6, 30), (6, 45), (7, 40))
    silent = unfollowed("V2", "F", 0, at(7, 5), at(7, 45))
    assert list(windows(d12.detect(tiny.facts(departures, unfollowed=[silent]), tiny.policy))) == ["07:00"]
    unseen = msgspec.structs.replace(silent, clock_offset_s=-3602.0)
    findings = d12.detect(tiny.facts(departures, unfollowed=[unseen]), tiny.policy)
    assert windows(findings) == {}
    [record] = insufficient(findings)
    assert [p["clock_offset_s"] for p in record.evidence["unfollowed"]] == [-3602.0]


def test_a_bus_of_another_operator_whose_clock_was_faulty_yields_infraction(tiny):
    # the same stretch of a bus not of OP1's fleet (F9): a stretch a faulty clock dated was
    # seen nowhere, so it hides only service its own bus could run; [07:00, 07:50) has 1 of
    # ceil(3000 / 1200) = 3
    import msgspec
    from tiny_day import unfollowed

    departures = route_f((6, 0), (6, 15), (6, 30), (6, 45), (7, 40))
    spare = msgspec.structs.replace(unfollowed("F9", "F", 0, at(7, 5), at(7, 45)), clock_offset_s=-3602.0)
    assert list(windows(d12.detect(tiny.facts(departures, unfollowed=[spare]), tiny.policy))) == ["07:00"]
