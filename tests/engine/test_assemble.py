"""Assembling a trip's facts: its pings include the terminal dwell on both ends."""

import datetime as dt
from pathlib import Path

import numpy as np
import pytest
import shapely

from engine.assemble import trip_facts
from engine.values import Context
from geofences import build_geofences
from gtfs import load_feed
from gtfs.schedule import service_day
from kernel.fleet import Vehicle
from kernel.policy import load_policy
from rules.packs import pack_of
from trips import Fix, detect_trips
from trips.matching import match_service_day_full
from trips.memo import TrackMemo, measured

FEED = load_feed(Path(__file__).parents[1] / "gtfs" / "fixtures" / "tiny")
POLICY = load_policy()
CONTEXT = Context(FEED, build_geofences(FEED, POLICY), POLICY, {"v": Vehicle("v", "AAA0A00", "OP1")},
                  pack_of(POLICY))
DAY = service_day(FEED, dt.date(2026, 12, 1))
LINE = FEED.shapes["L"].line


def track(start: float):
    """Stand 60 s at A, drive shape L at 10 m/s, stand 60 s at C; a ping every 10 s.

    At 10 m/s the ping 10 s after leaving lies 100 m from A: on the zone's edge."""
    t = np.arange(0.0, 60 + LINE.length / 10 + 60, 10.0)
    progress = np.clip((t - 60) * 10, 0, LINE.length)
    points = shapely.line_interpolate_point(LINE, progress)
    return [Fix(start + ti, float(p.x), float(p.y), 10.0, "T", f"v/{i}") for i, (ti, p) in enumerate(zip(t, points))]


def test_trip_facts_given_the_track_s_measures_carry_their_own_pings_measures():
    # 40 min standing at A before the run (the window keeps 30 of them: in_service_terminal_s)
    # and pings after the stay at C: the facts' pings are a slice from inside the track
    start = DAY.start_epoch + 6 * 3600 - 60
    standing = [Fix(start - 2400 + 10 * i, *_xy(0.0), 0.0, "T", f"v/s{i}") for i in range(240)]
    run = track(start)
    later = [Fix(run[-1].t + 600 + 10 * i, *_xy(LINE.length - 500), 0.0, "T", f"v/l{i}") for i in range(5)]
    fixes = standing + run + later
    detected = detect_trips("v", fixes, CONTEXT.geofences, POLICY.trips)
    [match] = match_service_day_full(detected, DAY, FEED.timezone, POLICY.trips)
    itinerary = CONTEXT.geofences.itineraries["T:0:L"]
    along = measured(fixes, CONTEXT.geofences, TrackMemo(CONTEXT.geofences)).along(itinerary)
    for stay in (True, False):
        facts = trip_facts(match, fixes, CONTEXT, DAY, stay=stay, along=along)
        assert facts == trip_facts(match, fixes, CONTEXT, DAY, stay=stay)  # the same pings
        assert facts.fixes[0] is not fixes[0] and facts.fixes[-1] is not fixes[-1]
        x, y = np.array([f.x for f in facts.fixes]), np.array([f.y for f in facts.fixes])
        np.testing.assert_array_equal(facts.measured.t, [f.t for f in facts.fixes])
        np.testing.assert_array_equal(facts.measured.x, x)
        np.testing.assert_array_equal(facts.progress(), itinerary.locate(x, y))
        np.testing.assert_array_equal(facts.distance(), itinerary.distance(x, y))


def _xy(progress: float) -> tuple[float, float]:
    point = shapely.line_interpolate_point(LINE, progress)
    return float(point.x), float(point.y)


def test_trip_facts_start_with_the_dwell_at_origin_and_end_with_the_stay_at_destination():
    fixes = track(DAY.start_epoch + 6 * 3600 - 60)  # leaves A at 06:00:00
    detected = detect_trips("v", fixes, CONTEXT.geofences, POLICY.trips)
    [match] = match_service_day_full(detected, DAY, FEED.timezone, POLICY.trips)
    facts = trip_facts(match, fixes, CONTEXT, DAY)
    # 7 pings standing at A (0..60 s) come first; the last 6 stand at C (the shape
    # measures 7000.0008 m, so the ping at 760 s is the first at C's stop)
    assert facts.fixes[0] is fixes[0]
    assert facts.fixes[-1] is fixes[-1]
    assert len(facts.fixes) == len(fixes)



def passed_through():
    """The tiny feed's context with T:0:L's origin and destination zones (100 m) around
    points 200 m and 6800 m along L, not at its ends: the shape runs through them
    (100-300 m, 6700-6900 m). A bus stands 50 m along, outside the origin's zone, then
    drives on: pings every 60 s at 10 m/s, none inside either zone, 600 m apart (50, 50,
    650, ..., 6650, 7250 → the end, 7000 m, then standing there)."""
    import dataclasses

    from geofences import CircleZone, Geofences

    itinerary = CONTEXT.geofences.itineraries["T:0:L"]
    centres = {name: LINE.interpolate(m) for name, m in (("origin", 200.0), ("destination", 6800.0))}
    fences = Geofences(itineraries={"T:0:L": dataclasses.replace(
        itinerary, **{name: CircleZone(name, p.x, p.y, 100.0) for name, p in centres.items()})},
        speed_zones=(), default_speed_limit_kmh=60.0)
    start = DAY.start_epoch + 6 * 3600 - 120
    progress = [50.0, 50.0, *np.arange(650.0, LINE.length, 600.0), LINE.length, LINE.length]
    fixes = [Fix(start + 60 * k, *LINE.interpolate(p).coords[0], 10.0, "T", f"v/{k}") for k, p in enumerate(progress)]
    return dataclasses.replace(CONTEXT, geofences=fences), fixes


def test_a_trip_read_from_zones_passed_between_fixes_holds_the_pings_from_its_exit_to_its_arrival():
    context, fixes = passed_through()
    detected = detect_trips("v", fixes, context.geofences, POLICY.trips)
    [match] = match_service_day_full(detected, DAY, FEED.timezone, POLICY.trips)
    facts = trip_facts(match, fixes, context, DAY)
    # from the last fix before the origin's stretch (v/1, 50 m along) to the first past
    # the destination's (v/13, 7000 m): neither the fix standing before it nor the one
    # standing after, which no zone holds
    assert (facts.fixes[0].msg_id, facts.fixes[-1].msg_id) == ("v/1", "v/13")


def test_the_trip_running_after_a_zone_passed_between_fixes_departed_where_it_will_have_departed():
    # what the vehicle stage tells the operator stage while the trip runs (D-12, D-13,
    # D-22) is the departure the detected trip will carry: engine.status.open_trip reads
    # the same exit, and departure_time the same moment
    from engine.status import open_trip
    from trips.detection import departure_time

    context, fixes = passed_through()
    [trip] = detect_trips("v", fixes, context.geofences, POLICY.trips)
    running = fixes[:5]  # standing, then 3 fixes on the way
    itinerary, exit_index = open_trip(running, context)
    assert (itinerary.pattern.key, running[exit_index].msg_id) == ("T:0:L", trip.exit_msg_ids[0]) == ("T:0:L", "v/1")
    t, x, y = (np.array([getattr(f, n) for f in running]) for n in "txy")
    # 50 m along at 60 s, 650 m at 120 s: the stretch ends 300 m along, 5/12 of the way: 85 s
    assert departure_time(itinerary, t, x, y, exit_index) == trip.departed_at == pytest.approx(fixes[1].t + 25, abs=1e-4)
