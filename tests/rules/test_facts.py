"""When a vehicle is in service (DESIGN.md, "Trips"): while it runs a trip, and while it
stands in the destination terminal zone less than 30 min (trips.in_service_terminal_s =
1800 s) after arriving; standing is proven by pings.

Tracks are hand-made over the tiny fixture feed: shape L runs from stop A (UTM 356000,
7815000) 3000 m east then 4000 m north to stop C (359000, 7819000), shape R back; the
terminal zones are 100 m around A and C. Trips come from `detect_trips` and are matched
to the schedule of Tuesday 2026-12-01 (T-0600 from A at 06:00, T-0700 from C at 07:00,
both in block B1). The vehicle drives at 10 m/s with a ping every 10 s.
"""

import datetime as dt
from functools import cache
from pathlib import Path

import pytest
import shapely

from gtfs.schedule import service_day
from kernel.policy import load_policy
from rules.facts import SensorRuns, TripFacts, in_service_intervals, merge_runs, overlaps, runs_of, within
from trips import detect_trips
from trips.matching import match_service_day_full
from trips.model import Fix

POLICY = load_policy()
TERMINAL_S = POLICY.trips.in_service_terminal_s  # 1800 s
DATE = dt.date(2026, 12, 1)
TINY = Path(__file__).parents[1] / "gtfs" / "fixtures" / "tiny"


@cache
def world():
    from geofences import build_geofences
    from gtfs import load_feed

    feed = load_feed(TINY)
    return feed, build_geofences(feed, POLICY), service_day(feed, DATE)


def at(hh, mm, ss=0):
    feed, _, _ = world()
    return dt.datetime(2026, 12, 1, hh, mm, ss, tzinfo=feed.timezone).timestamp()


def drive(shape_id, start):
    """Pings along the shape at 10 m/s, at progress 0 m at `start`, one every 10 s, to its end."""
    feed, _, _ = world()
    line = feed.shapes[shape_id].line
    steps = int(line.length // 100) + 1  # 0, 100, ..., 7000 m
    fixes = []
    for k in range(steps):
        p = shapely.line_interpolate_point(line, min(k * 100.0, line.length))
        fixes.append(Fix(start + 10 * k, p.x, p.y, 36.0, "T", ""))
    return fixes


def stand(x, y, start, end):
    """Pings standing still at (x, y) every 10 s from start to end inclusive."""
    return [Fix(start + 10 * k, x, y, 0.0, "T", "") for k in range(int(round((end - start) / 10)) + 1)]


def numbered(fixes):
    return [Fix(f.t, f.x, f.y, f.speed_kmh, f.route_id, f"V1/{i}") for i, f in enumerate(sorted(fixes, key=lambda f: f.t))]


def A():
    feed, _, _ = world()
    return feed.shapes["L"].line.coords[0]


def C():
    feed, _, _ = world()
    return feed.shapes["L"].line.coords[-1]


def trip_facts(fixes):
    """Real TripFacts: detected in the track and matched to the schedule of the day."""
    feed, geofences, day = world()
    detected = detect_trips("V1", fixes, geofences, POLICY.trips)
    matches = sorted(match_service_day_full(detected, day, feed.timezone, POLICY.trips),
                     key=lambda m: m.detected.departed_at)
    result = []
    for m in matches:
        d = m.detected
        first = max(i for i, f in enumerate(fixes) if f.t <= d.departed_at)
        last = min(i for i, f in enumerate(fixes) if f.t >= d.arrived_at)
        result.append(TripFacts(m, itinerary=geofences.itinerary(d.route_id, d.direction_id, d.shape_id),
                                operator_id="OP1", fixes=tuple(fixes[first:last + 1]), tz=feed.timezone,
                                day_start=day.start_epoch))
    return result


def first_trip():
    """Standing at A from 05:58:50, driving L from 05:59:50: it crosses A's zone edge 100 m
    out at 06:00:00 and C's zone edge (6900 m) at 06:11:20; the ping at 06:11:30 is at C
    (7000 m), the first one inside."""
    a = A()
    start = at(5, 59, 50)
    return stand(a[0], a[1], start - 60, start - 10) + drive("L", start)


def test_driving_shape_l_from_0600_yields_matched_trip():
    trips = trip_facts(numbered(first_trip()))
    assert len(trips) == 1
    assert trips[0].scheduled.trip_id == "T-0600"  # departed 06:00:00, scheduled 06:00:00
    assert trips[0].departed_at == pytest.approx(at(6, 0))  # 05:59:50 + 100 m / 10 m/s
    assert trips[0].arrived_at == pytest.approx(at(6, 11, 20), abs=1e-3)  # 05:59:50 + 6900 m / 10 m/s


# --- standing in the destination zone -------------------------------------------------

def test_standing_20_min_in_destination_zone_yields_interval_to_last_ping_inside():
    c = C()
    fixes = numbered(first_trip() + stand(c[0], c[1], at(6, 11, 40), at(6, 31, 30)))  # at C until 06:31:30
    trips = trip_facts(fixes)
    (interval,) = in_service_intervals(trips, fixes, TERMINAL_S)
    assert interval[0] == trips[0].departed_at  # 06:00:00
    # last ping 06:31:30 = arrival 06:11:20 + 1210 s < arrival + 1800 s
    assert interval[1] == at(6, 31, 30)


def test_standing_40_min_in_destination_zone_yields_interval_capped_at_30_min():
    c = C()
    fixes = numbered(first_trip() + stand(c[0], c[1], at(6, 11, 40), at(6, 51, 30)))  # at C until 06:51:30
    trips = trip_facts(fixes)
    (interval,) = in_service_intervals(trips, fixes, TERMINAL_S)
    assert interval[0] == trips[0].departed_at
    # arrival 06:11:20 + 1800 s = 06:41:20 (the ping at 06:41:20 is 0.00008 s before the cap)
    assert interval[1] == pytest.approx(trips[0].arrived_at + 1800, abs=1e-3)
    assert interval[1] <= trips[0].arrived_at + 1800


def test_leaving_destination_zone_after_5_min_yields_interval_to_last_ping_inside():
    c = C()
    away = [Fix(at(6, 16, 40) + 10 * k, c[0] + 150 + 100 * k, c[1], 36.0, "T", "") for k in range(30)]
    fixes = numbered(first_trip() + stand(c[0], c[1], at(6, 11, 40), at(6, 16, 30)) + away)
    trips = trip_facts(fixes)
    (interval,) = in_service_intervals(trips, fixes, TERMINAL_S)
    # last ping inside 06:16:30 (the next is 150 m > 100 m from C): arrival 06:11:20 + 310 s
    assert interval == (trips[0].departed_at, at(6, 16, 30))


def test_returning_to_destination_zone_after_leaving_yields_interval_to_first_exit():
    c = C()
    away = [Fix(at(6, 16, 40) + 10 * k, c[0] + 500, c[1], 0.0, "T", "") for k in range(30)]  # 500 m away 5 min
    back = stand(c[0], c[1], at(6, 21, 40), at(6, 35))  # back at C 06:21:40 .. 06:35, < arrival + 1800 s
    fixes = numbered(first_trip() + stand(c[0], c[1], at(6, 11, 40), at(6, 16, 30)) + away + back)
    trips = trip_facts(fixes)
    (interval,) = in_service_intervals(trips, fixes, TERMINAL_S)
    assert interval[1] == at(6, 16, 30)  # standing ended when it left; coming back is not arriving from a trip


def test_arrival_ping_as_last_ping_yields_interval_to_it():
    fixes = numbered(first_trip())  # ends at 06:11:30, the first ping inside C's zone
    trips = trip_facts(fixes)
    assert in_service_intervals(trips, fixes, TERMINAL_S) == ((trips[0].departed_at, at(6, 11, 30)),)


def test_no_ping_after_arrival_yields_interval_ending_at_arrival():
    fixes = numbered(first_trip())
    trips = trip_facts(fixes)
    # the archive stops before the arrival: nothing proves standing (no accusation on missing data)
    before = [f for f in fixes if f.t < trips[0].arrived_at]
    assert in_service_intervals(trips, before, TERMINAL_S) == ((trips[0].departed_at, trips[0].arrived_at),)


def test_no_trips_yields_nothing():
    c = C()
    assert in_service_intervals([], stand(c[0], c[1], at(6, 0), at(7, 0)), TERMINAL_S) == ()  # never in service


# --- two trips ------------------------------------------------------------------------

def _two_trips(second_departure):
    """Trip 1 (T-0600, A -> C), standing at C, then trip 2 (R, C -> A) crossing C's zone
    edge at `second_departure`, then standing at A for 60 s."""
    a, c = A(), C()
    back = second_departure - 10  # at C (0 m) 10 s before crossing the edge 100 m out
    fixes = first_trip() + stand(c[0], c[1], at(6, 11, 40), back - 10) + drive("R", back)
    end = fixes[-1].t  # at A
    fixes += stand(a[0], a[1], end + 10, end + 60)
    return numbered(fixes)


def test_two_trips_back_to_back_yields_one_merged_interval():
    fixes = _two_trips(at(6, 35))  # standing at C 06:11:30 .. 06:34:50: 23 min < 30 min
    trips = trip_facts(fixes)
    assert [t.scheduled.trip_id for t in trips] == ["T-0600", "T-0700"]  # block B1
    assert trips[1].departed_at == pytest.approx(at(6, 35))
    # trip 2 reaches A (7000 m) at 06:34:50 + 700 s = 06:46:30 and stands there until 06:47:30.
    # Trip 1 stands in C's zone from its arrival until trip 2 leaves it: the last ping inside is
    # 06:34:50 and the zone edge is crossed at 06:35:00, so the vehicle never left service:
    # [06:00:00, 06:47:30], one interval (not [06:00:00, 06:34:50] and [06:35:00, 06:47:30])
    assert in_service_intervals(trips, fixes, TERMINAL_S) == ((trips[0].departed_at, at(6, 47, 30)),)


def test_two_trips_with_long_layover_yields_two_intervals():
    fixes = _two_trips(at(6, 55))  # standing at C 06:11:30 .. 06:54:50: longer than 30 min
    trips = trip_facts(fixes)
    assert [t.scheduled.trip_id for t in trips] == ["T-0600", "T-0700"]
    first, second = in_service_intervals(trips, fixes, TERMINAL_S)
    assert first[1] == pytest.approx(trips[0].arrived_at + 1800, abs=1e-3)  # 06:11:20 + 1800 s = 06:41:20
    # trip 2 reaches A (7000 m) at 06:54:50 + 700 s = 07:06:30 and stands there until 07:07:30
    assert second == (trips[1].departed_at, at(7, 7, 30))


def test_trips_given_out_of_order_yields_same_intervals():
    fixes = _two_trips(at(6, 55))
    trips = trip_facts(fixes)
    assert in_service_intervals(trips[::-1], fixes, TERMINAL_S) == in_service_intervals(trips, fixes, TERMINAL_S)


# --- within / overlaps ------------------------------------------------------------------

def test_instants_at_interval_ends_yields_within():
    intervals = ((100.0, 200.0), (300.0, 400.0))
    assert within(intervals, 100.0) and within(intervals, 200.0)  # both ends included
    assert not within(intervals, 250.0)  # between the intervals
    assert not within(intervals, 99.9) and not within(intervals, 400.1)
    assert not within((), 150.0)


def test_touching_or_covering_span_yields_overlap():
    intervals = ((100.0, 200.0),)
    assert overlaps(intervals, 200.0, 300.0)  # touches at 200
    assert overlaps(intervals, 120.0, 130.0)  # inside
    assert overlaps(intervals, 0.0, 500.0)  # covers it
    assert not overlaps(intervals, 200.1, 300.0)
    assert not overlaps((), 0.0, 1e12)


# --- sensor runs: a heartbeat's few runs added to a day of them ---------------------------


def test_runs_told_beat_by_beat_are_the_runs_of_every_reading_at_once():
    # readings every 60 s with silences of 301 s and 900 s (gap 300 s), told in beats of
    # 7 readings, some told twice and one beat late (a redelivery, a lagging partition):
    # merging each beat into the runs so far (which leaves alone the runs ended more than
    # 300 s before the beat's first reading) gives the runs of all the readings at once
    gap = 300.0
    times = [60.0 * k for k in range(40)] + [2340.0 + 301 + 60 * k for k in range(30)] \
        + [2340.0 + 301 + 1740 + 900 + 60 * k for k in range(30)]
    beats = [times[k:k + 7] for k in range(0, len(times), 7)]
    beats.insert(9, beats[2])  # told again, after later ones: a run long kept is merged again
    beats.append(beats[-1])
    runs = SensorRuns()
    for beat in beats:
        runs = runs.merged(SensorRuns(tachograph=runs_of(beat, gap)), gap)
    assert runs.tachograph == runs_of(sorted(times), gap) == ((0.0, 2340.0), (2641.0, 4381.0), (5281.0, 7021.0))
    assert merge_runs(runs.tachograph, (), gap) is runs.tachograph  # nothing told: nothing merged


def test_instants_in_time_order_make_the_runs_merging_them_makes():
    # gap 300 s: 0, 60, 360 (300 after 60: joins), 661 (301 after: a new run), 661 again
    # (the same instant told twice joins), 950 (289 after: joins), 1251 (301 after: a new
    # run); the same instants out of order, one alone, and none
    gap = 300.0
    times = [0.0, 60.0, 360.0, 661.0, 661.0, 950.0, 1251.0]
    runs = ((0.0, 360.0), (661.0, 950.0), (1251.0, 1251.0))
    assert runs_of(times, gap) == runs == merge_runs((), tuple((t, t) for t in times), gap)
    assert runs_of([661.0, 1251.0, 0.0, 950.0, 360.0, 60.0], gap) == runs
    assert runs_of([5.0], gap) == ((5.0, 5.0),)
    assert runs_of([], gap) == ()
