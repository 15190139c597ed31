"""Trip detection on hand-made tracks over the tiny fixture feed.

Shape L runs 3000 m east then 4000 m north from stop A (UTM 356000, 7815000) to
stop C; terminal zones are 100 m around A and C; the corridor is 50 m wide.
Routes T and F share shape L (and T, E shape R), so the tracks carry the console's
route_id "T" unless a test says otherwise: without it the two lines are
indistinguishable and the tie goes to the smaller route_id.
"""

from pathlib import Path

import msgspec
import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from geofences import build_geofences
from gtfs import load_feed
from kernel.policy import load_policy
from trips import Fix, advance_track, detect_trips, new_track
from trips.detection import _arrives_from, _may_any_arrive_from, _may_arrive_from, destination_fixes, origin_fixes, tachograph_distance
from trips.memo import TrackMemo, measured
from trips.unfollowed import unfollowed_passes

FEED = load_feed(Path(__file__).parents[1] / "gtfs" / "fixtures" / "tiny")
POLICY = load_policy()
GEOFENCES = build_geofences(FEED, POLICY)
RULES = POLICY.trips
LINE_L = FEED.shapes["L"].line
T0 = 1_764_576_000.0  # 2026-12-01 05:00 local, an arbitrary epoch origin


def drive(line=LINE_L, *, speed=10.0, every=10.0, stand=60.0, start=T0, side=None, route="T", after=60.0):
    """Stand at the start `stand` s, drive the line at `speed` m/s, stand `after` s; a ping every `every` s.

    `side(progress) -> metres` pushes positions to the right of the line."""
    duration = stand + line.length / speed + after
    t = np.arange(0.0, duration + 1e-9, every)
    progress = np.clip((t - stand) * speed, 0, line.length)
    pts = shapely.line_interpolate_point(line, progress)
    x, y = shapely.get_x(pts), shapely.get_y(pts)
    if side is not None:
        # Shape L goes east then north; its right-hand side is south, then east.
        shift = side(progress)
        east = progress < 3000
        y = np.where(east, y - shift, y)
        x = np.where(east, x, x + shift)
    return [Fix(start + ti, xi, yi, speed, route, f"v/{i}") for i, (ti, xi, yi) in enumerate(zip(t, x, y))]


def trips_on(route: str, fixes):
    return [t for t in detect_trips("v", fixes, GEOFENCES, RULES) if t.route_id == route]


def test_drive_along_whole_shape_yields_trip_departing_at_zone_exit():
    trips = trips_on("T", drive())
    assert len(trips) == 1
    trip = trips[0]
    # leaves A at 60 s; 100 m at 10 m/s later it crosses the zone boundary: 60 + 10 = 70 s
    assert abs(trip.departed_at - (T0 + 70)) < 1e-6
    # enters C's zone at 7000 - 100 = 6900 m: 60 + 690 = 750 s (the shape measures
    # 7000.0008 m in UTM, so the crossing is 0.0008 m = 0.00008 s later)
    assert abs(trip.arrived_at - (T0 + 750)) < 1e-3
    assert (trip.direction_id, trip.shape_id) == (0, "L")
    # the ping at 750 s is 100.0008 m from C, just outside; the first inside is at
    # 760 s at the end of the shape, so all of it is covered
    assert trip.coverage == 1.0


def test_drive_in_reverse_direction_yields_no_trip_on_that_direction():
    fixes = drive(FEED.shapes["R"].line)
    assert [(t.route_id, t.direction_id) for t in trips_on("T", fixes)] == [("T", 1)]


def test_leaving_corridor_for_a_third_of_the_shape_yields_nothing():
    # 80 m off the shape from 2000 m to 4500 m: only 7000 - 2500 - (zone ends) < 80 % is covered
    fixes = drive(side=lambda p: np.where((p > 2000) & (p < 4500), 80.0, 0.0))
    assert trips_on("T", fixes) == []


def test_short_excursion_within_corridor_yields_trip():
    # 40 m to the side stays inside the 50 m corridor
    fixes = drive(side=lambda p: np.where((p > 2000) & (p < 4500), 40.0, 0.0))
    assert len(trips_on("T", fixes)) == 1


def test_returning_to_origin_departs_at_the_last_exit():
    # drive 300 m out and back, stand, then run the whole trip: departure is the second exit
    out_and_back = [Fix(T0 + i * 10, 356000 + d, 7815000, 10, "T", f"a/{i}")
                    for i, d in enumerate([0, 100, 200, 300, 200, 100, 0, 0])]
    whole = drive(start=T0 + 80)
    trips = trips_on("T", out_and_back + whole)
    assert len(trips) == 1
    # the whole run leaves A at T0 + 80 + 60 and crosses 100 m 10 s later
    assert abs(trips[0].departed_at - (T0 + 150)) < 1e-6


def test_sparse_pings_every_60_s_still_yield_trip():
    trips = trips_on("T", drive(every=60.0))
    assert len(trips) == 1
    # pings at 60 s (0 m) and 120 s (600 m): boundary 100 m is 1/6 of the way: 60 + 10 = 70 s
    assert abs(trips[0].departed_at - (T0 + 70)) < 1e-6


def test_gap_longer_than_coverage_limit_yields_nothing():
    fixes = drive()
    # drop every ping between 1000 m and 5000 m: a 400 s gap > 300 s, 4000 m uncovered
    fixes = [f for f in fixes if not (T0 + 60 + 100 < f.t < T0 + 60 + 500)]
    assert trips_on("T", fixes) == []


def test_console_route_of_another_line_yields_nothing_on_this_line():
    fixes = drive(route="F")
    assert trips_on("T", fixes) == []
    assert len(trips_on("F", fixes)) == 1


def test_gps_jump_does_not_count_as_coverage():
    fixes = drive()
    # one ping teleports 5 km ahead along the shape: the steps to and from it are implausible
    i = 20
    jumped = Fix(fixes[i].t, 359000, 7819000 - 100, 10, "T", "jump")
    trips = trips_on("T", fixes[:i] + [jumped] + fixes[i + 1:])
    assert len(trips) == 1
    # the two 100 m steps around the jump are no longer credited: 1 - 200 / 7000 = 0.9714
    assert trips[0].coverage == 0.9714


def test_trip_longer_than_max_duration_yields_nothing():
    # 7000 m at 0.45 m/s takes 15 556 s > 14 400 s
    fixes = drive(speed=0.45, every=60.0)
    assert trips_on("T", fixes) == []


def test_two_consecutive_trips_yield_two_trips_without_overlap():
    first = drive()
    back = drive(FEED.shapes["R"].line, start=first[-1].t + 10)
    trips = detect_trips("v", first + back, GEOFENCES, RULES)
    on_t = [t for t in trips if t.route_id == "T"]
    assert [t.direction_id for t in on_t] == [0, 1]
    assert on_t[0].arrived_at <= on_t[1].departed_at


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=60), min_size=1, max_size=12))
def test_batches_of_any_size_yield_the_same_trips_as_one_batch(sizes):
    fixes = drive() + drive(FEED.shapes["R"].line, start=T0 + 900)
    _, whole = advance_track(new_track("v"), fixes, GEOFENCES, RULES)
    track, found, i, k = new_track("v"), [], 0, 0
    while i < len(fixes):
        size = sizes[k % len(sizes)]
        track, trips = advance_track(track, fixes[i : i + size], GEOFENCES, RULES)
        found += trips
        i, k = i + size, k + 1
    assert found == whole
    assert len(whole) >= 2


def test_shared_itinerary_without_console_route_goes_to_the_smaller_route_id():
    # T and F both run shape L from A to C: same arrival, same coverage; "F" < "T"
    trips = detect_trips("v", drive(route=None), GEOFENCES, RULES)
    assert [(t.route_id, t.direction_id) for t in trips] == [("F", 0)]


def test_two_fixes_off_the_corridor_in_a_row_are_noise_coverage_reads_past():
    # a fix every 60 s at 10 m/s: 600 m a step. The fixes at 1200 m and 1800 m along lie
    # 60 m south (corridor 50 m): read as a path, 3 steps (1800 m) of 7000 m are lost,
    # 74 % < 80 %; as noise (trips.max_noise_pings = 2) the step 600 -> 2400 m covers them
    def noisy(progress):
        return np.where((progress > 1100) & (progress < 1900), 60.0, 0.0)

    assert len(trips_on("T", drive(every=60.0, side=noisy))) == 1


def test_three_fixes_off_the_corridor_in_a_row_are_a_path_coverage_does_not_read_past():
    # 1200, 1800 and 2400 m along, 60 m south: a path held (d11.min_consecutive_pings = 3),
    # 4 steps (2400 m) lost: 4600 / 7000 = 66 % < 80 %, no trip
    def held(progress):
        return np.where((progress > 1100) & (progress < 2500), 60.0, 0.0)

    assert trips_on("T", drive(every=60.0, side=held)) == []


def test_tachograph_distance_takes_each_interval_at_its_higher_speed():
    # 0 -> 36 km/h (10 m/s) over 10 s: at most 100 m; then 36 km/h for 20 s: 200 m; then
    # 36 -> 18 km/h over 5 s: at most 50 m
    t = np.array([0.0, 10.0, 30.0, 35.0])
    speeds = np.array([0.0, 36.0, 36.0, 18.0])
    assert tachograph_distance(t, speeds).tolist() == [0.0, 100.0, 300.0, 350.0]


def round_trip(excursion_m: float, *, stand_s: float = 60.0, every: float = 10.0, parked=None) -> list[Fix]:
    """L from A to C (arriving at 750 s, standing to 820 s), then, when `excursion_m` > 0,
    50 s `excursion_m` east of C (out of its 100 m zone) from 830 s, back at C from 880 s
    (at `parked(t)` metres east of it, else at it) for `stand_s` s, pinging every
    `every` s, and R from C to A after that."""
    first = drive(after=70.0)
    cx, cy = LINE_L.coords[-1]
    away = [Fix(T0 + s, cx + excursion_m, cy, 5.0, None, f"x/{s}") for s in range(830, 880, 10)]
    back = [Fix(T0 + s, cx + (parked(s) if parked else 0.0), cy, 0.0, None, f"b/{s:g}")
            for s in np.arange(880, 880 + stand_s, every)]
    second = [Fix(f.t, f.x, f.y, f.speed_kmh, f.route_id, f"r/{i}")
              for i, f in enumerate(drive(FEED.shapes["R"].line, start=T0 + 880 + stand_s))]
    return first + (away if excursion_m else []) + back + second


def test_a_bus_seen_leaving_the_terminal_after_arriving_stood_there_since_it_came_back():
    trips = detect_trips("v", round_trip(400.0), GEOFENCES, RULES)
    assert [(t.route_id, t.direction_id) for t in trips] == [("T", 0), ("T", 1)]
    # the last ping outside C's zone at 870 s (400 m east), back inside at 880 s
    assert trips[1].at_origin_since == T0 + 880
    assert trips[0].at_origin_since is None  # no arrival before it: nothing to have left


def test_a_bus_standing_at_the_terminal_was_never_seen_away():
    trips = detect_trips("v", round_trip(0.0), GEOFENCES, RULES)
    assert [t.at_origin_since for t in trips] == [None, None]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 250), min_size=1, max_size=6))
def test_where_a_bus_stood_does_not_depend_on_how_its_pings_were_split(cuts):
    fixes = round_trip(400.0)
    track, found, start = new_track("v"), [], 0
    for cut in sorted(set(cuts)) + [len(fixes)]:
        track, trips = advance_track(track, fixes[start:cut], GEOFENCES, RULES)
        found += trips
        start = max(start, cut)
    assert [t.at_origin_since for t in found] == [None, T0 + 880]


def test_one_fix_thrown_out_of_the_zone_is_not_the_bus_going_away():
    # parked 90 m from C for an hour, one fix at 110 m (outside the 100 m zone) at 3000 s:
    # 1 <= 2 consecutive fixes (trips.max_noise_pings) is GPS noise at the zone's edge
    fixes = round_trip(0.0, stand_s=3600.0, parked=lambda s: 110.0 if s == 3000 else 90.0)
    assert [t.at_origin_since for t in detect_trips("v", fixes, GEOFENCES, RULES)] == [None, None]
    # three in a row (3000-3020 s) are the bus away: back at 3030 s
    fixes = round_trip(0.0, stand_s=3600.0, parked=lambda s: 110.0 if 3000 <= s <= 3020 else 90.0)
    assert [t.at_origin_since for t in detect_trips("v", fixes, GEOFENCES, RULES)] == [None, T0 + 3030]


def test_an_excursion_older_than_the_longest_trip_is_read_alike_whatever_the_batches():
    # away 830-870 s, then 5 h at C pinging every 60 s, then R: the excursion is more than
    # max_trip_duration_s + max_coverage_gap_s (4 h 05 min) before R's arrival, older than
    # what the tracker keeps when fed ping by ping. Read from neither: the stay counts from
    # the arrival, in one batch as ping by ping (the replay's and the worker's answer agree)
    fixes = round_trip(400.0, stand_s=5 * 3600.0, every=60.0)
    whole = [t.at_origin_since for t in detect_trips("v", fixes, GEOFENCES, RULES)]
    track, found = new_track("v"), []
    for fix in fixes:
        track, trips = advance_track(track, [fix], GEOFENCES, RULES)
        found += trips
    assert whole == [t.at_origin_since for t in found] == [None, None]


# --- a terminal zone passed between two fixes outside it (DESIGN.md, "Trips") -----------


def at(progress: float, right: float = 0.0) -> tuple[float, float]:
    """The point `progress` m along shape L, `right` m to its right (south on the east leg)."""
    point = LINE_L.interpolate(progress)
    return (point.x, point.y - right) if progress < 3000 else (point.x + right, point.y)


def zones_along_l(origin_m: float | None = None, destination_m: float | None = None):
    """The tiny feed's geofences with itinerary T:0:L's origin or destination zone (100 m)
    around a point that far along shape L rather than its end: a stop point the shape
    passes by (a terminal loop, a shape that starts in the garage), so the shape runs in
    and out of the zone."""
    import dataclasses

    from geofences import CircleZone, Geofences

    itinerary = GEOFENCES.itineraries["T:0:L"]
    changes = {}
    for name, along in (("origin", origin_m), ("destination", destination_m)):
        if along is not None:
            centre = LINE_L.interpolate(along)
            changes[name] = CircleZone(name, centre.x, centre.y, 100.0)
    return Geofences(itineraries={"T:0:L": dataclasses.replace(itinerary, **changes)}, speed_zones=(),
                     default_speed_limit_kmh=60.0)


PASSED_BY = zones_along_l(origin_m=200.0)  # the shape is in the origin zone from 100 m to 300 m


def through_the_origin(moving_from: float):
    """Standing 50 m along L (150 m from the origin's centre: outside its zone, on the
    shape), pings at 0, 30, 60 s; then driving from `moving_from` s at 650 m along, 600 m a
    minute to C, where it stands."""
    standing = [Fix(T0 + s, *at(50.0), 0.0, "T", f"s/{s}") for s in (0, 30, 60)]
    progress = [*np.arange(650.0, LINE_L.length, 600.0), LINE_L.length, LINE_L.length]
    moving = [Fix(T0 + moving_from + 60 * k, *at(p), 36.0, "T", f"m/{k}") for k, p in enumerate(progress)]
    return standing + moving


def test_a_zone_passed_between_two_fixes_outside_it_yields_a_departure_at_the_interpolated_time():
    fixes = through_the_origin(moving_from=120.0)
    origin = PASSED_BY.itineraries["T:0:L"].origin
    assert not origin.contains(*np.array([(f.x, f.y) for f in fixes]).T).any()  # no fix inside it
    [trip] = detect_trips("v", fixes, PASSED_BY, RULES)
    # 50 m along at 60 s, 650 m along at 120 s: the shape leaves the zone 300 m along,
    # (300 − 50) / (650 − 50) = 5/12 of the way: 60 + 60 × 5 / 12 = 85 s (to 0.1 ms: the
    # shape measured in UTM is not exactly 3000 + 4000 m)
    assert trip.departed_at == pytest.approx(T0 + 85, abs=1e-4)
    assert trip.exit_msg_ids == ("s/60", "m/0")
    assert trip.departure_gap_s == 60.0


def test_a_departure_read_from_the_progress_is_the_same_whatever_the_batches():
    fixes = through_the_origin(moving_from=120.0)
    track, found = new_track("v"), []
    for fix in fixes:
        track, trips = advance_track(track, [fix], PASSED_BY, RULES)
        found += trips
    assert found == detect_trips("v", fixes, PASSED_BY, RULES)
    assert [t.departed_at for t in found] == [pytest.approx(T0 + 85, abs=1e-4)]


def test_two_fixes_around_the_zone_further_apart_than_the_coverage_gap_yield_no_departure():
    # the same, but the first moving fix max_coverage_gap_s + 1 s (301 s) after the last
    # standing one: the bus may have done anything in between
    fixes = through_the_origin(moving_from=60.0 + RULES.max_coverage_gap_s + 1)
    assert detect_trips("v", fixes, PASSED_BY, RULES) == []
    assert not origin_fixes(measured(fixes, PASSED_BY, None), PASSED_BY.itineraries["T:0:L"], RULES).any()


def test_two_fixes_stepping_backwards_around_the_zone_yield_no_departure():
    # coming in from 650 m along L to 50 m along: the progress passes the zone (100-300 m)
    # backwards, which is no leaving it
    fixes = [Fix(T0, *at(650.0), 36.0, "T", "in/0"), Fix(T0 + 60, *at(50.0), 0.0, "T", "in/1"),
             Fix(T0 + 90, *at(50.0), 0.0, "T", "in/2")]
    assert not origin_fixes(measured(fixes, PASSED_BY, None), PASSED_BY.itineraries["T:0:L"], RULES).any()


def test_a_fix_beside_the_zone_short_of_its_edge_is_no_second_departure():
    # inside A's zone (its stop point, L's start), then 92 m along and 45 m to the side,
    # hypot(92, 45) = 102.4 m from A: out of the zone, GPS noise short of the shape's exit
    # from it (100 m along), then 692 m along. The bus left the zone between the first two
    # fixes, where the straight line between them crosses its edge; the progress passing
    # 100 m afterwards is no zone passed through between two fixes outside it
    fixes = ([Fix(T0 + s, *at(0.0), 0.0, "T", f"a/{s}") for s in (0, 30)]
             + [Fix(T0 + 40, *at(92.0, 45.0), 36.0, "T", "noise")]
             + [Fix(T0 + 100 + 60 * k, *at(p), 36.0, "T", f"m/{k}")
                for k, p in enumerate([*np.arange(692.0, LINE_L.length, 600.0), LINE_L.length])])
    [trip] = trips_on("T", fixes)
    assert trip.exit_msg_ids == ("a/30", "noise")
    # from A at 30 s to (92, −45) at 40 s: |A + s (92, −45)| = 100 at s = 100 / 102.4 = 0.9764
    assert trip.departed_at == pytest.approx(T0 + 30 + 10 * 100 / np.hypot(92, 45), abs=1e-3)


def test_a_zone_passed_between_two_fixes_yields_an_arrival_at_the_interpolated_time():
    # the destination's zone around a point 6800 m along L, not at its end (a terminal
    # loop whose stop point the shape passes by, as São Paulo's 58290b): the shape is in
    # it from 6700 m to 6900 m. Pings every 30 s at 10 m/s from 50 m along (inside A's
    # zone), the last two 6650 m and 6950 m along, both outside it, then nothing more
    fences = zones_along_l(destination_m=6800.0)
    fixes = [Fix(T0 + 30 * k, *at(50.0 + 300 * k), 36.0, "T", f"p/{k}") for k in range(24)]
    [trip] = detect_trips("v", fixes, fences, RULES)
    # 6650 m at 22 × 30 = 660 s, 6950 m at 690 s: (6700 − 6650) / 300 = 1/6 of 30 s: 665 s
    assert trip.arrived_at == pytest.approx(T0 + 665, abs=1e-4)
    assert trip.last_msg_id == "p/23"
    # A's zone left between 50 m (0 s) and 350 m (30 s), at 100 m: 30 × 50 / 300 = 5 s
    assert trip.departed_at == pytest.approx(T0 + 5, abs=1e-4)


def test_a_fix_beside_the_zone_past_its_edge_is_no_earlier_arrival():
    # C's zone at L's end, entered 6900 m along: a fix 6905 m along and 45 m to the side,
    # hypot(95, 45) = 105.1 m from C, is out of the zone though past the shape's entry; the
    # next, 6995 m along, is inside. The arrival is there, not at 6900 m between the fixes
    # at 6805 m and 6905 m (the zone is not passed through between them)
    fixes = ([Fix(T0 + s, *at(0.0), 0.0, "T", f"a/{s}") for s in (0, 30)]
             + [Fix(T0 + 60 + 60 * k, *at(205.0 + 600 * k), 36.0, "T", f"m/{k}") for k in range(12)]
             + [Fix(T0 + 780, *at(6905.0, 45.0), 36.0, "T", "noise"), Fix(T0 + 789, *at(6995.0), 36.0, "T", "in")])
    assert [f.msg_id for f in fixes[-3:]] == ["m/11", "noise", "in"]  # m/11: 205 + 6600 = 6805 m
    [trip] = trips_on("T", fixes)
    assert trip.last_msg_id == "in"
    assert trip.arrived_at > T0 + 780


def test_the_zone_flags_kept_in_the_memo_are_those_read_afresh_however_the_track_grew_was_cut_or_ended():
    # origin_fixes and destination_fixes are kept in the track's memo, a fix's flag read
    # once its next fix is known (a zone passed between the two sets the first for a
    # departure, the second for an arrival): at every step of a track that grows fix by
    # fix, is cut at the front, and is read again ending earlier (an undone beat), each is
    # what a fresh memo gives (a cut just after a zone passed between two fixes too). The
    # zones are passed between fixes outside them (PASSED_BY's
    # origin between s/60 and m/0; the destination 6700-6900 m along between p/22 and p/23)
    passing_origin = through_the_origin(moving_from=120.0)
    passing_destination = [Fix(T0 + 30 * k, *at(50.0 + 300 * k), 36.0, "T", f"p/{k}") for k in range(24)]
    flagged = {"origin": 0, "destination": 0}
    for fences, fixes in ((PASSED_BY, passing_origin), (zones_along_l(destination_m=6800.0), passing_destination)):
        itinerary = fences.itineraries["T:0:L"]
        n = len(fixes)
        # (fixes[n - 1:] starts right after the destination's crossing pair: its first fix
        # has no fix before it any more, and only being inside counts)
        views = ([fixes[:k] for k in range(1, n + 1)] + [fixes[n - 1:], fixes[2:], fixes[2:n - 1], fixes[3:n - 3],
                                                         fixes[3:]]
                 + [fixes[:5], fixes[:3], fixes[:4], fixes[n - 4:], fixes[n - 4:n - 1]])
        memo = TrackMemo(fences)
        for view in views:
            kept, afresh = measured(view, fences, memo), measured(view, fences, None)
            for name, flags in (("origin", origin_fixes), ("destination", destination_fixes)):
                expected = flags(afresh, itinerary, RULES)
                np.testing.assert_array_equal(flags(kept, itinerary, RULES), expected, err_msg=f"{name} {len(view)}")
                flagged[name] += int(expected.any() and not (afresh.inside(getattr(itinerary, name)) == expected).all())
    # the flags read zones passed between fixes, not only fixes inside them
    assert flagged["origin"] > 0 and flagged["destination"] > 0


def _stored_under_rules_no_trip_meets(fixes):
    """The drive of L but its last fix, tracked fix by fix under rules asking a coverage no
    trip reaches (a policy since changed): the track and the memo that read it."""
    never = msgspec.structs.replace(RULES, min_coverage=1.5)
    track, memo = new_track("v"), TrackMemo(GEOFENCES)
    for fix in fixes[:-1]:
        track, trips = advance_track(track, [fix], GEOFENCES, never, memo)
        assert trips == []
    assert len(track.fixes) == len(fixes) - 1  # nothing cut: the drive is shorter than the longest trip
    return track, memo


def test_a_track_stored_under_other_rules_is_read_whole_by_a_process_that_did_not_read_it():
    # The gate (detect_trips' new_from) trusts that the call which made the track found
    # nothing more in it: true in the process that read it, not in one restarted with
    # another policy or feed. Restarted under the real rules (a fresh memo), the track's
    # next fix finds the trip its stored fixes hold, as a look at all of them does
    fixes = drive()
    track, _ = _stored_under_rules_no_trip_meets(fixes)
    _, trips = advance_track(track, fixes[-1:], GEOFENCES, RULES, TrackMemo(GEOFENCES))
    assert trips == detect_trips("v", fixes, GEOFENCES, RULES) and len(trips) == 1


def test_a_stored_track_another_reader_measured_first_is_still_read_whole():
    # a worker keeps a partition's memos from batch to batch: restarted under the real
    # rules, a vehicle fallen silent has its stored track measured by the unfollowed passes
    # (trips.unfollowed) before its next fix comes; that is no trip detection under these
    # rules, so the next fix still finds the trip the stored fixes hold (review finding)
    fixes = drive()
    track, memo = _stored_under_rules_no_trip_meets(fixes)
    restarted = TrackMemo(GEOFENCES)
    unfollowed_passes("v", track.fixes, GEOFENCES, RULES, True, restarted)
    _, trips = advance_track(track, fixes[-1:], GEOFENCES, RULES, restarted)
    assert trips == detect_trips("v", fixes, GEOFENCES, RULES) and len(trips) == 1
    # the memo that read it under the other rules reads it whole under these
    _, trips = advance_track(track, fixes[-1:], GEOFENCES, RULES, memo)
    assert len(trips) == 1


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=10))
def test_batches_with_the_memo_read_only_the_new_fixes_and_yield_the_trips_of_one_read(sizes):
    # with a memo, detect_trips reads an itinerary only when a new fix can arrive there (a fix
    # in its destination zone, or a step along its corridor that may pass through the zone):
    # the gate must never miss an arrival, read from a fix inside the zone (two trips on L
    # and R) or from the progress between two fixes outside it (a zone the shape passes by)
    passed_by = zones_along_l(destination_m=6800.0)
    cases = [(GEOFENCES, drive() + drive(FEED.shapes["R"].line, start=T0 + 900)),
             (passed_by, [Fix(T0 + 30 * k, *at(50.0 + 300 * k), 36.0, "T", f"p/{k}") for k in range(24)])]
    for fences, fixes in cases:
        whole = detect_trips("v", fixes, fences, RULES)
        track, memo, found, i, k = new_track("v"), TrackMemo(fences), [], 0, 0
        while i < len(fixes):
            size = sizes[k % len(sizes)]
            track, trips = advance_track(track, fixes[i : i + size], fences, RULES, memo)
            found += trips
            i, k = i + size, k + 1
        assert found == whole and whole


def test_the_arrival_gate_rules_out_only_itineraries_the_full_read_finds_no_arrival_on():
    # _may_arrive_from reads the fixes from `first` on (and the one before) alone: where it
    # says no, the destination column read whole holds no arrival from `first` on; where
    # the column holds one it says yes, an arrival read from a fix inside the zone (the
    # drives of L and R) or from the progress between two fixes outside it (the zone L
    # passes by 6700-6900 m along, between p/22 and p/23). And it rules out steps along
    # the corridor that cross no entered span (most beats of a bus on its way), which the
    # mere test of a step on the corridor let through, and fixes in the zone after a fix
    # in it (a bus standing at its destination)
    passed_by = zones_along_l(destination_m=6800.0)
    cases = [(GEOFENCES, drive() + drive(FEED.shapes["R"].line, start=T0 + 900)),
             (passed_by, [Fix(T0 + 30 * k, *at(50.0 + 300 * k), 36.0, "T", f"p/{k}") for k in range(24)])]
    rng = np.random.default_rng(5)  # and drives pushed up to 120 m either side, in and out of zones and corridors
    cases += [(fences, drive(every=20.0, side=lambda progress: rng.uniform(-120, 120, len(progress))))
              for fences in (GEOFENCES, passed_by, zones_along_l(destination_m=3500.0)) for _ in range(3)]
    arrivals, ruled_out_on_the_corridor, between_fixes_outside, standing_inside = 0, 0, 0, 0
    for fences, fixes in cases:
        memo = measured(fixes, fences, None)
        for itinerary in fences.itineraries.values():
            held = destination_fixes(memo, itinerary, RULES)
            inside = memo.inside(itinerary.destination)
            on_corridor = memo.corridors().get(itinerary.pattern.key, (np.zeros(len(fixes), bool),))[0]
            for first in range(len(fixes)):
                # the full read: a fix from `first` on that starts a run held in the zone
                starts = held & ~np.concatenate(([False], held[:-1])) if first == 0 else \
                    np.concatenate(([False], held[1:] & ~held[:-1]))
                arrives = bool(starts[first:].any())
                may = _may_arrive_from(memo, itinerary, first)
                assert may or not arrives, (itinerary.pattern.key, first)
                assert _arrives_from(memo, itinerary, RULES, first) == arrives
                arrivals += arrives
                between_fixes_outside += arrives and not inside[first:].any()
                steps = on_corridor[max(first - 1, 0):]
                ruled_out_on_the_corridor += not may and bool((steps[:-1] & steps[1:]).any())
                standing_inside += not may and bool(inside[first:].any())
    assert arrivals and between_fixes_outside and ruled_out_on_the_corridor and standing_inside


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=8),
       st.lists(st.integers(min_value=0, max_value=6), min_size=1, max_size=8))
def test_the_beat_gate_rules_out_only_beats_where_no_itinerary_arrives_at_a_fix_read_anew(seed, sizes, cuts):
    # _may_any_arrive_from reads the fixes from `first` on (and the one before) for every
    # itinerary at once, with the spans it read kept in the memo's `grown`: at every beat of
    # a track grown in random batches and cut at the front (first: the last fix of the beat
    # before), it answers as on a fresh memo, and where it says no, no itinerary of the
    # geofences has an arrival from `first` on: one read from a fix inside the zone (the
    # drives of L and R), from the progress between two fixes outside it (the zones L passes
    # by 6700-6900 m and 3400-3600 m along: the second crossed mid-track, between p/11 and
    # p/12, so a beat may end at p/12 and the next read it again), or in drives pushed in
    # and out of the zones and corridors
    rng = np.random.default_rng(seed)
    passed_by = zones_along_l(destination_m=6800.0)
    passing = [Fix(T0 + 30 * k, *at(50.0 + 300 * k), 36.0, "T", f"p/{k}") for k in range(24)]
    cases = [(GEOFENCES, drive() + drive(FEED.shapes["R"].line, start=T0 + 900)), (passed_by, passing),
             (zones_along_l(destination_m=3500.0), passing)]
    cases += [(fences, drive(every=20.0, side=lambda progress: rng.uniform(-120, 120, len(progress))))
              for fences in (GEOFENCES, passed_by, zones_along_l(destination_m=3500.0))]
    ruled_out, let_through = 0, 0
    for fences, fixes in cases:
        memo, start, end, beat = TrackMemo(fences), 0, 0, 0
        while end < len(fixes):
            read_before = end
            end = min(end + sizes[beat % len(sizes)], len(fixes))
            start = min(start + cuts[beat % len(cuts)] * (beat % 3 == 2), read_before)  # now and then a cut
            beat += 1
            view = fixes[start:end]
            if len(view) < 2:
                continue
            first = max(read_before - start - 1, 0)
            kept, afresh = measured(view, fences, memo), measured(view, fences, None)
            may = _may_any_arrive_from(kept, first)
            assert may == _may_any_arrive_from(afresh, first), (start, end, first)
            arrives = any(_arrives_from(afresh, itinerary, RULES, first) for itinerary in fences.itineraries.values())
            assert may or not arrives, (start, end, first)
            ruled_out += not may
            let_through += arrives
    assert ruled_out and let_through
