"""The track memo (trips.memo): every measure it gives is the one taken afresh.

The tiny fixture feed's itineraries run along shape L (3000 m east, then 4000 m north)
with terminal zones of 100 m; the tracks below wander across it, so some fixes are in
the zones and on the corridors, others not.
"""

import dataclasses
from pathlib import Path

import numpy as np
import shapely
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from geofences import build_geofences
from gtfs import load_feed
from kernel.policy import load_policy
from trips import Fix
from geofences.zones import Geofences, PolygonZone, SpeedZone
from trips.detection import destination_fixes, origin_fixes
from trips.memo import Along, TakeGeometry, TrackMemo, _Rows, measured

FEED = load_feed(Path(__file__).parents[1] / "gtfs" / "fixtures" / "tiny")
GEOFENCES = build_geofences(FEED, load_policy())
ITINERARIES = list(GEOFENCES.itineraries.values())
T0 = 1_764_576_000.0


def wander(n: int, seed: int) -> list[Fix]:
    """n fixes 10 s apart along shape L from stop A to stop C, up to 120 m off it either side."""
    rng = np.random.default_rng(seed)
    line = FEED.shapes["L"].line
    points = shapely.line_interpolate_point(line, np.linspace(0, line.length, n))
    x = shapely.get_x(points) + rng.uniform(-120, 120, n)
    y = shapely.get_y(points) + rng.uniform(-120, 120, n)
    return [Fix(T0 + 10 * i, float(a), float(b), 30.0, None, f"v/{i}") for i, (a, b) in enumerate(zip(x, y))]


def fresh(fixes) -> dict:
    x = np.array([f.x for f in fixes])
    y = np.array([f.y for f in fixes])
    out = {}
    for it in ITINERARIES:
        out[("origin", it.pattern.key)] = it.origin.contains(x, y)
        out[("destination", it.pattern.key)] = it.destination.contains(x, y)
        out[("distance", it.pattern.key)] = it.distance(x, y)
        out[("progress", it.pattern.key)] = it.locate(x, y)
    return out


def remembered(memo: TrackMemo) -> dict:
    out = {}
    for it in ITINERARIES:
        out[("origin", it.pattern.key)] = memo.inside(it.origin)
        out[("destination", it.pattern.key)] = memo.inside(it.destination)
        out[("distance", it.pattern.key)] = memo.distance(it)
        out[("progress", it.pattern.key)] = memo.progress(it)
    return out


def test_the_memo_measures_as_a_fresh_look_at_the_track_however_it_grew_or_was_cut():
    track = wander(120, seed=3)
    elsewhere = [Fix(f.t, f.x + 900, f.y - 700, f.speed_kmh, f.route_id, f.msg_id) for f in track]
    copies = [Fix(f.t, f.x, f.y, f.speed_kmh, f.route_id, f.msg_id) for f in track]
    # growing, cut at the front, grown again, the same times elsewhere, equal copies
    calls = [track[:10], track[:11], track[:40], track[15:40], track[15:90], elsewhere[15:90], track[20:95],
             copies[20:100], track[60:], track[:30]]
    memo = TrackMemo(GEOFENCES)
    entered, on_corridor = 0, 0
    for fixes in calls:
        expected = fresh(fixes)
        got = remembered(measured(fixes, GEOFENCES, memo))
        for key, values in expected.items():
            np.testing.assert_array_equal(got[key], values, err_msg=str(key))
        entered += sum(int(v.any()) for k, v in expected.items() if k[0] in ("origin", "destination"))
        on_corridor += sum(int((v <= 50).any() and (v > 50).any()) for k, v in expected.items() if k[0] == "distance")
    # the tracks enter terminal zones and go on and off corridors: every measure was put to the test
    assert entered >= 5 and on_corridor >= 5


def test_a_list_the_caller_cut_and_grew_in_place_is_measured_as_it_is_now():
    # the memo last read the list L; the caller then cut its first fix and appended one,
    # in place: the memo holds the same list object, so only the times tell where its
    # track starts now (the first-fix shortcut is taken from a tuple only: the review's finding)
    track = wander(40, 5)
    fixes = list(track[:20])
    memo = TrackMemo(GEOFENCES)
    memo.over(fixes).corridors()
    del fixes[0]
    fixes.append(track[20])
    memo.over(fixes)
    afresh = TrackMemo(GEOFENCES).over(fixes)
    assert np.array_equal(memo.t, afresh.t) and np.array_equal(memo.x, afresh.x)
    assert all(np.array_equal(memo.corridors()[k][0], afresh.corridors()[k][0]) for k in afresh.corridors())


def test_a_memo_given_other_geofences_starts_afresh():
    other = build_geofences(FEED, load_policy())
    memo = measured(wander(30, seed=5), GEOFENCES, None)
    again = measured(wander(30, seed=5), other, memo)
    assert again is not memo and again.geofences is other


def test_the_measures_it_shares_cannot_be_written_to():
    memo = measured(wander(30, seed=7), GEOFENCES, None)
    progress = memo.progress(ITINERARIES[0])
    try:
        progress[0] = -1.0
    except ValueError:
        pass
    else:
        raise AssertionError("a reader could change what every other reader of the track sees")


def test_along_an_itinerary_is_every_fix_measured_as_afresh_and_slices_as_one():
    track = wander(60, seed=11)
    memo = measured(track[:25], GEOFENCES, None)
    memo.along(ITINERARIES[0])
    memo = measured(track, GEOFENCES, memo)  # grown: only the new fixes measured
    for itinerary in ITINERARIES:
        along = memo.along(itinerary)
        expected = fresh(track)
        np.testing.assert_array_equal(along.t, [f.t for f in track])
        np.testing.assert_array_equal(along.progress, expected[("progress", itinerary.pattern.key)])
        np.testing.assert_array_equal(along.distance, expected[("distance", itinerary.pattern.key)])
        # a slice or a mask of it is the same fixes' measures in every field
        mask = along.distance <= itinerary.corridor_m
        assert 0 < mask.sum() < len(track)
        for part, fixes in ((along[7:31], track[7:31]), (along[mask], [f for f, m in zip(track, mask) if m])):
            assert isinstance(part, Along) and len(part) == len(fixes)
            again = fresh(fixes)
            np.testing.assert_array_equal(part.x, [f.x for f in fixes])
            np.testing.assert_array_equal(part.y, [f.y for f in fixes])
            np.testing.assert_array_equal(part.progress, again[("progress", itinerary.pattern.key)])
            np.testing.assert_array_equal(part.distance, again[("distance", itinerary.pattern.key)])


def test_corridors_and_progress_read_each_other_s_locates_in_either_order_and_match_a_fresh_look():
    # a fix on a corridor is located once: by `corridors` or by a progress column, whichever
    # reads it first; the other takes the number it found. Either order gives the numbers a
    # fresh look gives, however the track grew or was cut
    track = wander(90, seed=13)
    calls = [track[:12], track[:30], track[5:31], track[5:60], track[20:90]]
    for progress_first in (True, False):
        memo = TrackMemo(GEOFENCES)
        for k, fixes in enumerate(calls):
            memo = measured(fixes, GEOFENCES, memo)
            if progress_first == (k % 2 == 0):
                progress = {it.pattern.key: memo.progress(it) for it in ITINERARIES}
                corridors = memo.corridors()
            else:
                corridors = memo.corridors()
                progress = {it.pattern.key: memo.progress(it) for it in ITINERARIES}
            expected = fresh(fixes)
            x, y = np.array([f.x for f in fixes]), np.array([f.y for f in fixes])
            on = {it.pattern.key: mask for it, mask in GEOFENCES.on_corridors(x, y)}
            assert set(corridors) == set(on) and on
            for it in ITINERARIES:
                key = it.pattern.key
                np.testing.assert_array_equal(progress[key], expected[("progress", key)])
                if key in on:
                    np.testing.assert_array_equal(corridors[key][0], on[key])
                    np.testing.assert_array_equal(corridors[key][1],
                                                  np.where(on[key], expected[("progress", key)], np.nan))


def _counted(monkeypatch, name: str) -> list[int]:
    """Calls of a Geofences query, counted (the query itself still runs)."""
    calls = []
    query = getattr(Geofences, name)

    def counting(self, *args, **kwargs):
        calls.append(1)
        return query(self, *args, **kwargs)
    monkeypatch.setattr(Geofences, name, counting)
    return calls


def test_a_take_measures_every_vehicle_s_new_fixes_in_one_query_each_and_answers_as_their_own(monkeypatch):
    # three vehicles' tracks, grown by a release whose fixes interleave theirs; each memo
    # given the take finds its new fixes' answers there: the same, to the bit, as a memo
    # querying its own fixes, with one query of each kind for all three
    tracks = [wander(50, seed=seed) for seed in (21, 22, 23)]
    tracks[1] = [Fix(f.t, f.x + 35, f.y - 20, f.speed_kmh, f.route_id, f.msg_id) for f in tracks[1]]
    before, grown = [track[:30] for track in tracks], tracks
    released = [fix for step in zip(*(track[30:] for track in tracks)) for fix in step]
    alone = [measured(fixes, GEOFENCES, None) for fixes in before]
    together = [measured(fixes, GEOFENCES, None) for fixes in before]
    for memo in alone + together:
        memo.corridors(), memo.inside_terminals()
    corridor_queries = _counted(monkeypatch, "near_shapes")  # (the query near_corridors makes)
    zone_queries = _counted(monkeypatch, "in_terminal_zones")
    take = TakeGeometry(GEOFENCES, released)
    for memo, fixes in zip(together, grown):
        memo.take = take
        measured(fixes, GEOFENCES, memo)
        memo.corridors(), memo.inside_terminals()
    assert (len(corridor_queries), len(zone_queries)) == (1, 1)
    for memo, fixes in zip(alone, grown):
        measured(fixes, GEOFENCES, memo)
        memo.corridors(), memo.inside_terminals()
    assert (len(corridor_queries), len(zone_queries)) == (4, 4)
    entered = 0
    for by_take, by_itself in zip(together, alone):
        assert by_take.corridors().keys() == by_itself.corridors().keys() and by_take.corridors()
        for key, (on, progress) in by_itself.corridors().items():
            np.testing.assert_array_equal(by_take.corridors()[key][0], on)
            np.testing.assert_array_equal(by_take.corridors()[key][1], progress)
        assert by_take.inside_terminals().keys() == by_itself.inside_terminals().keys()
        for zone, inside in by_itself.inside_terminals().items():
            np.testing.assert_array_equal(by_take.inside_terminals()[zone], inside)
            entered += int(inside[30:].any())
    assert entered  # some new fix is in a terminal zone: that answer was put to the test


def test_beats_of_a_fix_or_two_taken_from_the_take_give_every_answer_a_fresh_memo_gives(monkeypatch):
    # at live pace a beat brings each vehicle a fix or two, consecutive rows of the take: the
    # memo writes their slots from Python values (`TrackMemo._take_run`), the track's times
    # and positions into a buffer with room to grow, and the arrival gate reads the new
    # slots as Python values (`terminal_entered_from`, `corridor_tails`). After every beat
    # of three vehicles, every answer is a fresh memo's, to the bit
    rng = np.random.default_rng(5)
    tracks = [wander(90, seed=seed) for seed in (41, 42, 43)]
    memos = [TrackMemo(GEOFENCES) for _ in tracks]
    taken: list[tuple] = [() for _ in tracks]
    python_beats = []
    real = TakeGeometry.corridor_pairs
    monkeypatch.setattr(TakeGeometry, "corridor_pairs",
                        lambda self, first, count: python_beats.append(count) or real(self, first, count))
    entered = 0
    while any(len(fixes) < len(track) for fixes, track in zip(taken, tracks)):
        grown = [track[len(fixes):len(fixes) + int(rng.integers(1, 4))] for fixes, track in zip(taken, tracks)]
        take = TakeGeometry(GEOFENCES, [fix for new in grown for fix in new])  # each vehicle's rows together
        for k, (memo, new) in enumerate(zip(memos, grown)):
            before, taken[k] = taken[k], taken[k] + tuple(new)
            memo.take = take
            memo.extended(before, taken[k])  # as the tracker positions it (trips.tracker.grown_track)
            first = max(len(before) - 1, 0)
            gate = ([memo.terminal_entered_from(i) for i in range(first, len(taken[k]))],
                    memo.corridor_tails(first))
            got = _every_answer(memo)
            memo.take = None
            alone = measured(taken[k], GEOFENCES, None)
            want = _every_answer(alone)
            assert got.keys() == want.keys()
            for key, value in want.items():
                np.testing.assert_array_equal(got[key], value, err_msg=str(key))
                assert got[key].dtype == value.dtype, key
            views = alone.corridors()
            # (compared as text: NaN, off a corridor, is not equal to itself; repr is exact for the others)
            masks = list(alone.inside_terminals().values())
            assert repr(gate) == repr(([_entered_from(masks, i) for i in range(first, len(taken[k]))],
                                       [(key, on[first:].tolist(), along[first:].tolist())
                                        for key, (on, along) in views.items()]))
            entered += sum(gate[0])
    assert len(python_beats) > 60 and max(python_beats) <= 3  # the beats took the Python path
    assert entered  # a fix entered a terminal zone at a beat: that reading was put to the test


def _entered_from(masks: list[np.ndarray], first: int) -> bool:
    """`TrackMemo.terminal_entered_from` from the zones' masks: a fix from `first` on inside a
    zone the fix before is not inside (from 0, any fix inside one)."""
    if first == 0:
        return any(bool(mask.any()) for mask in masks)
    return any(bool((mask[first:] & ~mask[first - 1:-1]).any()) for mask in masks)


def test_a_take_s_speed_limits_and_a_fix_it_holds_twice_are_each_fix_s_own():
    # speed zones over part of the track (two overlapping, the lowest limit wins): the take's
    # limits are `Geofences.speed_limit`'s for any subset of its rows; a fix the call both
    # received and released is in the take twice: found at its last row, every answer the same
    fixes = wander(40, seed=33)
    xs = [f.x for f in fixes]
    zones = (SpeedZone(PolygonZone("slow", shapely.box(min(xs), -1e9, np.median(xs), 1e9)), 20.0),
             SpeedZone(PolygonZone("slower", shapely.box(np.percentile(xs, 25), -1e9, np.percentile(xs, 60), 1e9)),
                       10.0))
    fences = dataclasses.replace(GEOFENCES, speed_zones=zones)
    take = TakeGeometry(fences, fixes + fixes[5:12])  # (the arrived pings, then the released fixes)
    assert take.run(fixes[5:12]) == 40 and take.run(fixes[12:15]) == 12 and take.run(fixes[11:13]) is None
    limits = set()
    for subset in (fixes, fixes[5:12], fixes[::3], [fixes[30], fixes[2]], fixes[:1]):
        rows = take.rows(subset)
        x, y = np.array([f.x for f in subset]), np.array([f.y for f in subset])
        want = fences.speed_limit(x, y)
        np.testing.assert_array_equal(take.speed_limits(rows), want)
        limits |= set(want.tolist())
        np.testing.assert_array_equal(take.near_corridors(rows)[3], fences.near_corridors(x, y)[3])
        zones_of = take.zones_of(rows.tolist())
        assert [sorted(z) for z in zones_of] == [sorted(zone for zone, mask in fences.in_terminal_zones(x, y) if mask[i])
                                                 for i in range(len(subset))]
    assert limits == {10.0, 20.0, fences.default_speed_limit_kmh}  # every zone and none was met


def test_a_take_answers_for_any_of_its_fixes_in_any_order_and_for_none_it_lacks():
    fixes = wander(40, seed=31)
    take = TakeGeometry(GEOFENCES, fixes)
    metres = load_policy().trips.max_network_distance_m
    # runs of rows (a vehicle's fixes, one fix at live pace) are read as one slice: the
    # first, the last, a run, the same run reversed, rows apart, out of order
    for subset in (fixes[3:9], fixes[::7], [fixes[12], fixes[2], fixes[30]], fixes[:1], fixes[-1:], fixes[8:2:-1],
                   fixes[20:22]):
        rows = take.rows(subset)
        x, y = np.array([f.x for f in subset]), np.array([f.y for f in subset])
        expected = GEOFENCES.near_corridors(x, y)
        got = take.near_corridors(rows)
        assert got[0] == expected[0]
        for column, want in zip(got[1:], expected[1:]):
            np.testing.assert_array_equal(column, want)
            assert column.dtype == want.dtype
        np.testing.assert_array_equal(take.near_any_itinerary(rows, metres),
                                      GEOFENCES.near_any_itinerary(x, y, metres))
        want_zones = GEOFENCES.in_terminal_zones(x, y)
        got_zones = take.in_terminal_zones(rows)
        assert [zone for zone, _ in got_zones] == [zone for zone, _ in want_zones]
        for (_, got_mask), (_, want_mask) in zip(got_zones, want_zones):
            np.testing.assert_array_equal(got_mask, want_mask)
    # an equal copy is not the fix the take measured: the memo queries it itself
    copy = Fix(fixes[5].t, fixes[5].x, fixes[5].y, fixes[5].speed_kmh, fixes[5].route_id, fixes[5].msg_id)
    assert take.rows([fixes[4], copy]) is None


def _every_answer(memo: TrackMemo) -> dict:
    """Every measure the memo gives of its track (the trip rules' settled columns too)."""
    rules = load_policy().trips
    out = remembered(memo)
    for it in ITINERARIES:
        out[("origin_fixes", it.pattern.key)] = origin_fixes(memo, it, rules)
        out[("destination_fixes", it.pattern.key)] = destination_fixes(memo, it, rules)
    for key, (on, progress) in memo.corridors().items():
        out[("on_corridor", key)], out[("along", key)] = on, progress
    for zone, inside in memo.inside_terminals().items():
        out[("terminal", zone)] = inside
    for it in ITINERARIES:
        for zone in (it.origin, it.destination):
            out[("last_inside", id(zone))] = np.asarray(memo.last_inside(zone))
    out["t"], out["x"], out["y"] = memo.t, memo.x, memo.y
    return out


def test_a_track_fed_in_random_beats_is_measured_as_one_fresh_read_and_no_answer_given_changes_later():
    # the engine's beats: the open track grown by a batch, read again as a list of the same
    # fixes, then cut at the front (a trip closed, a horizon passed) or, now and then, cut
    # short at its end; each position's every answer is a fresh memo's, and every array
    # handed out earlier still holds what it held
    rng = np.random.default_rng(41)
    track = wander(400, seed=43)
    memo = TrackMemo(GEOFENCES)
    given = []  # (array handed out, a copy of it then)
    begin, end, cuts, shortened = 0, 0, 0, 0
    while end < len(track):
        end = min(len(track), end + int(rng.integers(1, 9)))
        positions = [tuple(track[begin:end]), list(track[begin:end])]
        if rng.random() < 0.3 and end - begin > 3:
            begin += int(rng.integers(1, (end - begin) // 2 + 1))
            cuts += 1
            positions.append(tuple(track[begin:end]))
        if rng.random() < 0.1 and end - begin > 3:
            positions.append(tuple(track[begin:end - 2]))
            shortened += 1
        for fixes in positions:
            got = _every_answer(measured(fixes, GEOFENCES, memo))
            expected = _every_answer(TrackMemo(GEOFENCES).over(fixes))
            assert got.keys() == expected.keys()
            for key, values in expected.items():
                np.testing.assert_array_equal(got[key], values, err_msg=str(key))
            given += [(values, values.copy()) for values in got.values()]
    assert cuts >= 10 and shortened >= 3
    for values, then in given:
        np.testing.assert_array_equal(values, then)



@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=10_000),
       beats=st.lists(st.tuples(st.integers(min_value=1, max_value=12), st.integers(min_value=0, max_value=6)),
                      min_size=1, max_size=40))
def test_a_track_in_random_batch_splits_reads_at_every_beat_as_one_whole_read_and_no_view_changes(seed, beats):
    # the corridors and the terminal zones are kept in growable buffers, a beat writing only
    # its new fixes' slots: at every beat (a batch appended, now and then a cut at the
    # front) each answer is a fresh memo's, and every view handed out at an earlier beat
    # still holds what it held then (a buffer slot written again under a view would not)
    track = wander(160, seed=seed)
    rules = load_policy().trips
    memo = TrackMemo(GEOFENCES)
    given_then = []  # (view handed out, a copy of it then)
    begin = end = 0
    for grown, cut in beats:
        end = min(len(track), end + grown)
        begin = min(begin + cut, end - 1) if cut else begin
        fixes = track[begin:end]
        got, afresh = measured(fixes, GEOFENCES, memo), TrackMemo(GEOFENCES).over(fixes)
        corridors, want = got.corridors(), afresh.corridors()
        # a key whose fixes were all cut off may stay, with no fix on its corridor
        assert set(want) <= set(corridors)
        for key, (on, progress) in corridors.items():
            want_on, want_progress = want.get(key, (np.zeros(len(fixes), bool), np.full(len(fixes), np.nan)))
            assert on.dtype == bool and progress.dtype == float and not on.flags.writeable
            np.testing.assert_array_equal(on, want_on, err_msg=key)
            np.testing.assert_array_equal(progress, want_progress, err_msg=key)
            given_then += [(on, on.copy()), (progress, progress.copy())]
        zones = got.inside_terminals()
        assert zones.keys() == afresh.inside_terminals().keys() == got.zones_entered == afresh.zones_entered
        for zone, inside in zones.items():
            assert inside.dtype == bool and not inside.flags.writeable
            np.testing.assert_array_equal(inside, afresh.inside_terminals()[zone])
            given_then.append((inside, inside.copy()))
        for itinerary in ITINERARIES:  # the last fix in each terminal zone, kept as the fixes came
            for zone in (itinerary.origin, itinerary.destination):
                assert got.last_inside(zone) == afresh.last_inside(zone)
        for itinerary in ITINERARIES:
            for flags in (origin_fixes, destination_fixes):
                kept = flags(got, itinerary, rules)
                np.testing.assert_array_equal(kept, flags(afresh, itinerary, rules))
                given_then.append((kept, kept.copy()))
    for view, then in given_then:
        np.testing.assert_array_equal(view, then)


def test_the_row_views_are_kept_per_length_and_made_again_at_a_new_row_a_new_length_or_a_cut():
    # `_Rows.views(n)` hands out one dict per length, kept while nothing changed: a row
    # added at the same length (a key met again at the beat's fixes), a longer read and a
    # cut at the front each give views of what the buffers hold now, never the old dict
    rows = _Rows((False, np.nan), capacity=2)
    rows.grow(3)
    a = rows.row("a")
    rows.buffers[0][a, :3] = [True, False, True]
    rows.buffers[1][a, :3] = [10.0, np.nan, 30.0]
    first = rows.views(3)
    assert rows.views(3) is first  # nothing changed: the same dict
    assert list(first) == ["a"]
    b = rows.row("b")  # a new row at the same length
    rows.buffers[0][b, 1] = True
    rows.buffers[1][b, 1] = 20.0
    again = rows.views(3)
    assert list(again) == ["a", "b"]
    np.testing.assert_array_equal(again["b"][0], [False, True, False])
    np.testing.assert_array_equal(again["b"][1], [np.nan, 20.0, np.nan])
    rows.grow(5)  # a longer track: the capacity doubles, the rows copied
    rows.buffers[0][a, 3:5] = [True, True]
    rows.buffers[1][a, 3:5] = [40.0, 50.0]
    longer = rows.views(5)
    np.testing.assert_array_equal(longer["a"][0], [True, False, True, True, True])
    np.testing.assert_array_equal(longer["a"][1], [10.0, np.nan, 30.0, 40.0, 50.0])
    np.testing.assert_array_equal(first["a"][0], [True, False, True])  # what was handed out stays
    cut = rows.cut(2, 3, keep=lambda columns: bool(columns[0].any()))
    after = cut.views(3)
    assert list(after) == ["a"]  # b had no fix on its corridor from slot 2 on
    np.testing.assert_array_equal(after["a"][0], [True, True, True])
    np.testing.assert_array_equal(after["a"][1], [30.0, 40.0, 50.0])
    assert not after["a"][0].flags.writeable and not after["a"][1].flags.writeable
