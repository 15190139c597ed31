"""Matching realized trips to the schedule (DESIGN.md, "Trips").

Feed: tests/gtfs/fixtures/tiny (America/Sao_Paulo, UTC-3 all year, no DST). On Tuesday
2026-12-01 service WD runs:
  route T dir 0: T-0600 06:00 (block B1), T-2350 23:50 (B1);  dir 1: T-0700 07:00 (B1)
  route F dir 0: headway (exact_times=0) [06:00, 07:00) every 900 s and [07:00, 07:50) every 1200 s
  route E dir 1: exact_times=1 [10:00, 11:00) every 1800 s -> departures 10:00 (36000 s), 10:30 (37800 s)
Match window (shipped policy): 1800 s.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gtfs import load_feed
from gtfs.model import FrequencyWindow, ScheduledTrip
from gtfs.schedule import ServiceDay, service_day
from kernel.policy import load_policy
from trips.matching import LiveSchedule, _align, live_matches, live_schedule, match_service_day, service_date_for
from trips.model import Departure, DetectedTrip, Match

TINY = Path(__file__).parent.parent / "gtfs" / "fixtures" / "tiny"
SAO_PAULO = ZoneInfo("America/Sao_Paulo")
TUESDAY = dt.date(2026, 12, 1)
WEDNESDAY = dt.date(2026, 12, 2)
WINDOW = 1800.0
SHAPES = {("T", 0): "L", ("T", 1): "R", ("F", 0): "L", ("E", 1): "R"}


@pytest.fixture(scope="module")
def tiny():
    return load_feed(TINY)


@pytest.fixture(scope="module")
def rules():
    return load_policy().trips


def local(hh: int, mm: int, ss: int = 0, date: dt.date = TUESDAY) -> dt.datetime:
    return dt.datetime(date.year, date.month, date.day, hh, mm, ss, tzinfo=SAO_PAULO)


def trip(vehicle: str, route: str, direction: int, departed: dt.datetime, minutes: int = 25) -> DetectedTrip:
    start = departed.timestamp()
    return DetectedTrip(
        vehicle_id=vehicle,
        route_id=route,
        direction_id=direction,
        shape_id=SHAPES[(route, direction)],
        departed_at=start,
        arrived_at=start + minutes * 60,
        coverage=0.95,
        first_msg_id=f"{vehicle}/{departed.isoformat()}/first",
        last_msg_id=f"{vehicle}/{departed.isoformat()}/last",
    )


def by_departure(realized):
    """Realized trips keyed by (vehicle, local departure)."""
    return {(r.vehicle_id, r.departed_at): r for r in realized}


# --- _align ------------------------------------------------------------------------


def test_align_greedy_nearest_would_lose_a_pair_maximizes_pairs():
    realized = [1700.0, 1900.0]
    scheduled = [0.0, 1800.0]
    # Greedy nearest: 1700 takes 1800 (|1700-1800| = 100), then 1900 is 1900 s from 0 > 1800: one pair.
    # Optimum: 1700->0 (1700) and 1900->1800 (100): two pairs, total 1800.
    assert _align(realized, scheduled, WINDOW) == [(0, 0), (1, 1)]


def test_align_same_number_of_pairs_picks_least_total_deviation():
    realized = [0.0, 1000.0]
    scheduled = [0.0, 900.0, 1000.0]
    # Two pairs either way: (0->0, 1000->900) costs 0 + 100 = 100; (0->0, 1000->1000) costs 0 + 0 = 0.
    assert _align(realized, scheduled, WINDOW) == [(0, 0), (1, 2)]


def test_align_single_trip_between_two_scheduled_takes_nearer():
    # |100 - 0| = 100 > |100 - 50| = 50 -> scheduled index 1
    assert _align([100.0], [0.0, 50.0], WINDOW) == [(0, 1)]


def test_align_exactly_window_apart_pairs():
    # |1800 - 0| = 1800 <= 1800
    assert _align([0.0], [1800.0], WINDOW) == [(0, 0)]
    assert _align([1800.0], [0.0], WINDOW) == [(0, 0)]


def test_align_one_second_beyond_window_does_not_pair():
    # |1801 - 0| = 1801 > 1800, early or late
    assert _align([0.0], [1801.0], WINDOW) == []
    assert _align([1801.0], [0.0], WINDOW) == []


def test_align_unsorted_inputs_pairs_in_order_without_crossing():
    realized = [3000.0, 0.0, 1000.0, 2000.0]
    scheduled = [2100.0, 100.0, 900.0, 5000.0]
    # Sorted realized 0(1), 1000(2), 2000(3), 3000(0); sorted scheduled 100(1), 900(2), 2100(0), 5000(3).
    # 0->100, 1000->900, 2000->2100: 3 pairs, 100 + 100 + 100 = 300; 3000 is 2000 s from 5000 > 1800.
    # (The crossing-free alternative 1000->100, 2000->900, 3000->2100 also has 3 pairs but costs 2900.)
    pairs = _align(realized, scheduled, WINDOW)
    assert pairs == [(1, 1), (2, 2), (3, 0)]
    for (r1, s1), (r2, s2) in zip(pairs, pairs[1:]):
        assert realized[r1] < realized[r2] and scheduled[s1] < scheduled[s2]


def test_align_empty_lists_give_no_pairs():
    assert _align([], [0.0], WINDOW) == []
    assert _align([0.0], [], WINDOW) == []
    assert _align([], [], WINDOW) == []


# --- match_service_day: timetabled trips -------------------------------------------


def test_realized_trips_near_their_schedule_match_own_trip_ids(tiny, rules):
    day = service_day(tiny, TUESDAY)
    detected = [
        trip("V1", "T", 0, local(6, 2, 30)),
        trip("V1", "T", 1, local(6, 58)),
        trip("V1", "T", 0, local(0, 10, date=WEDNESDAY)),  # GTFS 24:10:00 of Tuesday
    ]
    got = by_departure(match_service_day(detected, day, SAO_PAULO, rules))
    first, second, third = got[("V1", local(6, 2, 30))], got[("V1", local(6, 58))], got[("V1", local(0, 10, date=WEDNESDAY))]
    assert (first.trip_id, first.departure_deviation_s) == ("T-0600", 150.0)  # 06:02:30 - 06:00:00
    assert (second.trip_id, second.departure_deviation_s) == ("T-0700", -120.0)  # 06:58:00 - 07:00:00
    assert (third.trip_id, third.departure_deviation_s) == ("T-2350", 1200.0)  # 24:10:00 - 23:50:00
    assert {r.service_date for r in got.values()} == {TUESDAY}
    assert first.scheduled_key == "T-0600"
    assert first.departed_at == local(6, 2, 30) and first.arrived_at == local(6, 27, 30)  # departed + 25 min


def test_realized_trip_far_from_any_schedule_is_unmatched(tiny, rules):
    day = service_day(tiny, TUESDAY)
    # Nearest T dir 0 departures 06:00 and 23:50 are 6 h and 11 h 50 min from 12:00, > 1800 s.
    [realized] = match_service_day([trip("V1", "T", 0, local(12, 0))], day, SAO_PAULO, rules)
    assert realized.trip_id is None
    assert realized.departure_deviation_s is None
    assert realized.scheduled_key is None
    assert realized.service_date == TUESDAY


def test_two_realized_trips_near_one_scheduled_trip_only_nearer_matches(tiny, rules):
    day = service_day(tiny, TUESDAY)
    detected = [trip("V1", "T", 0, local(6, 1)), trip("V2", "T", 0, local(6, 3))]
    got = by_departure(match_service_day(detected, day, SAO_PAULO, rules))
    # One-to-one: 06:01 is 60 s from T-0600, 06:03 is 180 s; 23:50 is out of both windows.
    assert got[("V1", local(6, 1))].trip_id == "T-0600"
    assert got[("V1", local(6, 1))].departure_deviation_s == 60.0  # 06:01 - 06:00
    assert got[("V2", local(6, 3))].trip_id is None


def test_vehicle_on_block_b1_keeps_block_trip_over_closer_trip_of_another_vehicle(tiny, rules):
    # V1's first trip matches T-0600 (block B1). V2's first trip (05:00, 3600 s before 06:00) matches
    # nothing, so V2 holds no block. For T-0700 (B1), V2's 07:01 is closer (60 s) than V1's 07:20
    # (1200 s): plain matching would give it to V2; the block rule gives it to V1.
    day = service_day(tiny, TUESDAY)
    detected = [
        trip("V1", "T", 0, local(6, 2)),
        trip("V2", "T", 0, local(5, 0)),
        trip("V2", "T", 1, local(7, 1)),
        trip("V1", "T", 1, local(7, 20)),
    ]
    got = by_departure(match_service_day(detected, day, SAO_PAULO, rules))
    assert got[("V1", local(6, 2))].trip_id == "T-0600"
    assert got[("V2", local(5, 0))].trip_id is None
    assert got[("V1", local(7, 20))].trip_id == "T-0700"
    assert got[("V1", local(7, 20))].departure_deviation_s == 1200.0  # 07:20 - 07:00
    assert got[("V2", local(7, 1))].trip_id is None


def _tiny_with_non_block_trip(directory: Path) -> Path:
    """The tiny feed plus T-0705: route T, dir 1, 07:05 C -> A, no block."""
    feed = directory / "tiny-plus"
    shutil.copytree(TINY, feed)
    with open(feed / "trips.txt", "a") as handle:
        handle.write("T,WD,T-0705,1,R,\n")
    with open(feed / "stop_times.txt", "a") as handle:
        handle.write("T-0705,07:05:00,07:05:00,C,1,1\nT-0705,,,B,2,0\nT-0705,07:33:00,07:33:00,A,3,1\n")
    return feed


def test_vehicle_on_block_prefers_block_trip_over_nearer_non_block_trip(tmp_path, rules):
    feed = load_feed(_tiny_with_non_block_trip(tmp_path))
    day = service_day(feed, TUESDAY)
    detected = [trip("V1", "T", 0, local(6, 2)), trip("V1", "T", 1, local(7, 6))]
    got = by_departure(match_service_day(detected, day, SAO_PAULO, rules))
    # 07:06 is 60 s from T-0705 but 360 s from T-0700; V1 runs block B1 (T-0600), so T-0700.
    later = got[("V1", local(7, 6))]
    assert later.trip_id == "T-0700"
    assert later.departure_deviation_s == 360.0  # 07:06 - 07:00


def test_vehicle_on_block_with_block_exhausted_falls_back_to_other_trips(tmp_path, rules):
    feed = load_feed(_tiny_with_non_block_trip(tmp_path))
    day = service_day(feed, TUESDAY)
    detected = [trip("V1", "T", 0, local(6, 2)), trip("V1", "T", 1, local(7, 6)), trip("V1", "T", 1, local(7, 30))]
    got = by_departure(match_service_day(detected, day, SAO_PAULO, rules))
    # B1 dir 1 has only T-0700: 07:06 (360 s) beats 07:30 (1800 s). 07:30 then takes T-0705.
    assert got[("V1", local(7, 6))].trip_id == "T-0700"
    assert got[("V1", local(7, 30))].trip_id == "T-0705"
    assert got[("V1", local(7, 30))].departure_deviation_s == 1500.0  # 07:30 - 07:05


def test_vehicle_without_block_gets_nearest_trip(tmp_path, rules):
    feed = load_feed(_tiny_with_non_block_trip(tmp_path))
    day = service_day(feed, TUESDAY)
    # V3's only trip is 07:06: no block claimed, so the nearer T-0705 (60 s; T-0700 is 360 s).
    [realized] = match_service_day([trip("V3", "T", 1, local(7, 6))], day, SAO_PAULO, rules)
    assert realized.trip_id == "T-0705"
    assert realized.departure_deviation_s == 60.0  # 07:06 - 07:05


# --- match_service_day: frequency-based trips --------------------------------------


def test_headway_route_trips_take_template_of_their_window_without_deviation(tiny, rules):
    day = service_day(tiny, TUESDAY)
    departures = {
        local(6, 10): "F-TPL",  # in [06:00, 07:00)
        local(7, 0): "F-TPL",  # start of [07:00, 07:50) (half-open)
        local(7, 49, 59): "F-TPL",  # last second of [07:00, 07:50)
        local(7, 50): None,  # end of the last window: outside (half-open)
        local(5, 59, 59): None,  # before the first window
    }
    detected = [trip("V3", "F", 0, when) for when in departures]
    got = by_departure(match_service_day(detected, day, SAO_PAULO, rules))
    assert {when: got[("V3", when)].trip_id for when in departures} == departures
    assert all(r.departure_deviation_s is None and r.scheduled_key is None for r in got.values())


def test_exact_times_frequency_departures_match_with_distinct_scheduled_keys(tiny, rules):
    day = service_day(tiny, TUESDAY)
    detected = [trip("V4", "E", 1, local(10, 1)), trip("V4", "E", 1, local(10, 29))]
    got = by_departure(match_service_day(detected, day, SAO_PAULO, rules))
    early, late = got[("V4", local(10, 1))], got[("V4", local(10, 29))]
    assert early.trip_id == late.trip_id == "E-TPL"
    assert early.scheduled_key == "E-TPL@36000"  # 10:00 = 10 * 3600 s
    assert late.scheduled_key == "E-TPL@37800"  # 10:30 = 10 * 3600 + 30 * 60 s
    assert early.departure_deviation_s == 60.0  # 10:01 - 10:00
    assert late.departure_deviation_s == -60.0  # 10:29 - 10:30


# --- service_date_for -------------------------------------------------------------


@pytest.fixture(scope="module")
def two_days(tiny):
    return {date: service_day(tiny, date) for date in (TUESDAY, WEDNESDAY)}


def test_departure_after_midnight_near_last_trip_belongs_to_previous_day(two_days):
    # 00:05 Wed = GTFS 24:05 of Tue; Tue's T dir 0 span 06:00..23:50 widened by 1800 s ends at 24:20.
    # Wed's span starts at 06:00 - 30 min = 05:30, after 00:05.
    detected = trip("V1", "T", 0, local(0, 5, date=WEDNESDAY))
    assert service_date_for(detected, two_days, SAO_PAULO, WINDOW) == TUESDAY


def test_a_departure_after_midnight_is_dated_as_its_trip_would_be(two_days):
    # the same 00:05 Wed as a departure (a running trip, a pass): Tue, as its trip
    departure = Departure("V1", "T", 0, "L", local(0, 5, date=WEDNESDAY).timestamp())
    assert service_date_for(departure, two_days, SAO_PAULO, WINDOW) == TUESDAY
    assert service_date_for(departure.trip(), two_days, SAO_PAULO, WINDOW) == TUESDAY


def test_departure_at_noon_belongs_to_its_calendar_day(two_days):
    # 12:00 Wed is inside Wed's span 06:00..23:50; Tue's widened span ended at 00:20 Wed.
    detected = trip("V1", "T", 0, local(12, 0, date=WEDNESDAY))
    assert service_date_for(detected, two_days, SAO_PAULO, WINDOW) == WEDNESDAY


def test_departure_exactly_window_after_last_trip_belongs_to_previous_day(two_days):
    # 00:20:00 Wed = 23:50 Tue + 1800 s: still inside the widened span.
    detected = trip("V1", "T", 0, local(0, 20, 0, date=WEDNESDAY))
    assert service_date_for(detected, two_days, SAO_PAULO, WINDOW) == TUESDAY


def test_departure_one_second_past_widened_span_falls_back_to_calendar_day(two_days):
    # 00:20:01 Wed = 23:50 Tue + 1801 s > 1800; Wed's span starts at 05:30: calendar date.
    detected = trip("V1", "T", 0, local(0, 20, 1, date=WEDNESDAY))
    assert service_date_for(detected, two_days, SAO_PAULO, WINDOW) == WEDNESDAY


# --- live_matches with a LiveSchedule ----------------------------------------------
# Random days on a coarse grid (every 5 min from 06:00, the match window 30 min), so
# that equal departures, trips exactly a window apart and departures halfway between
# two scheduled ones (ties) come up often. Line "H" runs by headway.

START = dt.datetime(2026, 12, 1, tzinfo=SAO_PAULO).timestamp()
GRID = [6 * 3600 + 300 * k for k in range(37)]  # 06:00 .. 09:00
LINES = [("A", 0), ("A", 1), ("B", 0), ("H", 0)]

scheduled_trips = st.lists(st.tuples(st.sampled_from(LINES[:3]), st.sampled_from(GRID),
                                     st.sampled_from([None, "b1", "b2"])), max_size=25)
detected_trips = st.lists(st.tuples(st.sampled_from(["v1", "v2", "v3"]), st.sampled_from(LINES),
                                    st.sampled_from(GRID), st.sampled_from([0.0, 0.5, -0.25, 150.0, 1e-7])),
                          max_size=12)


def random_day(entries) -> ServiceDay:
    trips = tuple(ScheduledTrip(f"s{k}", route, direction, TUESDAY, "L", block, departure, departure + 1500, (), 0.0)
                  for k, ((route, direction), departure, block) in enumerate(entries))
    window = FrequencyWindow("h", "H", 0, TUESDAY, "L", 6 * 3600, 9 * 3600, 900, False, 0.0)
    return ServiceDay(TUESDAY, START, trips, (window,))


def random_trips(entries) -> list[DetectedTrip]:
    return [DetectedTrip(vehicle, route, direction, "L", START + departure + offset, START + departure + 1500, 0.9,
                         f"{vehicle}/{k}/first", f"{vehicle}/{k}/last")
            for k, (vehicle, (route, direction), departure, offset) in enumerate(entries)]


def scanned_live_matches(detected, day, rules) -> list[Match]:
    """live_matches as it was before the LiveSchedule: every trip scans the whole day."""
    from trips.matching import _realized, unmatched_realization
    headway_keys = {(w.route_id, w.direction_id) for w in day.windows}
    result = []
    for vehicle in sorted({d.vehicle_id for d in detected}):
        block, after = None, float("-inf")
        for d in sorted([d for d in detected if d.vehicle_id == vehicle], key=lambda d: d.departed_at):
            mine = [s for s in day.trips if (s.route_id, s.direction_id) == (d.route_id, d.direction_id)
                    and abs(d.departed_at - day.departure_epoch(s)) <= rules.match_window_s]
            in_block = [s for s in mine if block is not None and s.block_id == block and day.departure_epoch(s) > after]
            best = min(in_block[:1] or mine, key=lambda s: abs(d.departed_at - day.departure_epoch(s)), default=None)
            if (d.route_id, d.direction_id) in headway_keys or best is None:
                result.append(Match(d, unmatched_realization(d, day.date, SAO_PAULO), None, None))
                continue
            result.append(Match(d, _realized(d, day, SAO_PAULO, best, d.departed_at - day.departure_epoch(best)), best, None))
            block, after = best.block_id, day.departure_epoch(best)
    return result


@settings(max_examples=300, deadline=None)
@given(schedule=scheduled_trips, detected=detected_trips)
def test_live_matches_are_those_of_scanning_the_whole_day_for_each_trip(schedule, detected, rules):
    day = random_day(schedule)
    trips = random_trips(detected)
    assert live_matches(trips, day, SAO_PAULO, rules) == scanned_live_matches(trips, day, rules)


@settings(max_examples=300, deadline=None)
@given(schedule=scheduled_trips, detected=detected_trips)
def test_live_matches_are_each_vehicles_own_in_the_order_of_their_ids(schedule, detected, rules):
    # what lets the operator stage match again only the vehicles whose trips changed
    day = random_day(schedule)
    trips = random_trips(detected)
    alone = [m for vehicle in sorted({t.vehicle_id for t in trips})
             for m in live_matches([t for t in trips if t.vehicle_id == vehicle], day, SAO_PAULO, rules)]
    assert live_matches(trips, day, SAO_PAULO, rules) == alone


@settings(max_examples=300, deadline=None)
@given(schedule=scheduled_trips, departure=st.sampled_from(GRID), offset=st.floats(-3600, 3600))
def test_a_live_schedule_finds_the_trips_within_the_window_in_the_days_order(schedule, departure, offset, rules):
    day = random_day(schedule)
    departed = START + departure + offset
    scan = [s for s in day.trips if (s.route_id, s.direction_id) == ("A", 0)
            and abs(departed - day.departure_epoch(s)) <= WINDOW]
    assert LiveSchedule(day).near("A", 0, departed, WINDOW) == scan


def test_two_scheduled_trips_equally_near_go_to_the_first_of_the_day(rules):
    # 07:00 and 07:20, listed 07:20 first: a departure at 07:10 is 10 min from each
    day = random_day([(("A", 0), 7 * 3600 + 1200, None), (("A", 0), 7 * 3600, None)])
    [departure] = random_trips([("v1", ("A", 0), 7 * 3600 + 600, 0.0)])
    [match] = live_matches([departure], day, SAO_PAULO, rules)
    assert match.scheduled.trip_id == "s0"


def test_a_days_live_schedule_is_built_once_and_never_serves_another_day():
    day, other = random_day([(("A", 0), 7 * 3600, None)]), random_day([(("A", 0), 8 * 3600, None)])
    assert live_schedule(day) is live_schedule(day)
    assert live_schedule(other).day is other
    assert live_schedule(other).near("A", 0, START + 8 * 3600, WINDOW) == list(other.trips)


def test_a_day_asked_often_keeps_its_live_schedule_among_many_other_days():
    # a worker's stages each build their own days: the one asked at every beat is not
    # built again because dozens of others were asked in between (least recent goes first)
    busy = random_day([(("A", 0), 7 * 3600, None)])
    kept = live_schedule(busy)
    others = [random_day([(("A", 0), 8 * 3600, None)]) for _ in range(100)]
    for other in others:
        assert live_schedule(other).day is other
        assert live_schedule(busy) is kept
