"""Trips the telemetry could not follow (trips.unfollowed), on the tiny fixture feed.

Shape L runs 3000 m east then 4000 m north from stop A to stop C (7000 m); terminal
zones are 100 m around A and C, the corridor 50 m wide; a silence is a gap between
fixes over max_coverage_gap_s (300 s); a pass must reach 500 m along the shape
(min_unfollowed_pass_m). The console declares route T, so only T's itinerary on
shape L (T:0:L) is read.
"""

from pathlib import Path

import numpy as np
import shapely
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from geofences import build_geofences
from gtfs import load_feed
from kernel.policy import load_policy
from trips import Fix, detect_trips
from trips.memo import TrackMemo
from trips.unfollowed import UnfollowedPass, unfollowed_passes

FEED = load_feed(Path(__file__).parents[1] / "gtfs" / "fixtures" / "tiny")
POLICY = load_policy()
GEOFENCES = build_geofences(FEED, POLICY)
RULES = POLICY.trips
LINE_L = FEED.shapes["L"].line
T0 = 1_764_576_000.0


def along(progress_by_time: list[tuple[float, float]], every: float = 10.0, off: float = 0.0) -> list[Fix]:
    """Fixes every `every` s along shape L, progress interpolated between (t, metres)
    knots; `off` pushes them that far south/east of the line (off the corridor)."""
    knots_t, knots_m = zip(*progress_by_time)
    t = np.arange(knots_t[0], knots_t[-1] + 1e-9, every)
    metres = np.interp(t, knots_t, knots_m)
    points = shapely.line_interpolate_point(LINE_L, metres)
    x, y = shapely.get_x(points), shapely.get_y(points)
    x, y = np.where(metres < 3000, x, x + off), np.where(metres < 3000, y - off, y)
    return [Fix(T0 + ti, xi, yi, 36.0, "T", f"v/{ti:.0f}") for ti, xi, yi in zip(t, x, y)]


def cut(fixes: list[Fix], start: float, end: float) -> list[Fix]:
    """The fixes without those from `start` to `end` s after T0: a silence."""
    return [f for f in fixes if not start <= f.t - T0 <= end]


def passes(fixes, silent_after=True):
    return unfollowed_passes("v", fixes, GEOFENCES, RULES, silent_after)


# a whole trip: 60 s standing at A, 7000 m at 10 m/s (700 s), 60 s standing at C
WHOLE = along([(0, 0), (60, 0), (760, 7000), (820, 7000)])


def test_a_trip_whose_telemetry_breaks_off_mid_way_yields_an_unfollowed_pass():
    # silent from 400 s (3400 m along) to the end: left A (seen), never seen at C
    fixes = cut(WHOLE, 410, 820)
    assert detect_trips("v", fixes, GEOFENCES, RULES) == []
    [found] = passes(fixes)
    # the departure was seen: the crossing of A's 100 m edge at 60 + 100 / 10 = 70 s
    assert (found.route_id, found.shape_id) == ("T", "L")
    assert found.earliest_departure == found.latest_departure == T0 + 70
    # last fix at 400 s, 340 s × 10 m/s = 3400 m along; silent after it (not heard again)
    assert (found.first_t, found.last_t, found.to_m) == (T0, T0 + 400, 3400.0)
    assert found.silences == ((T0 + 400, None),)


def test_a_vehicle_seen_again_mid_way_after_a_silence_may_have_left_during_it():
    # a silence from 100 s to 500 s (fixes at 90 s, 400 m along, and 510 s, 4500 m)
    fixes = cut(WHOLE, 95, 505)
    assert detect_trips("v", fixes, GEOFENCES, RULES) == []  # 100/7000 + 2500/7000 covered < 80 %
    [found] = passes(fixes)
    # it left A (seen, at 70 s) and the stretch crosses the silence going on where it was
    assert found.earliest_departure == T0 + 70
    assert found.silences == ((T0 + 90, T0 + 510),)


def test_a_vehicle_first_seen_mid_way_after_a_silence_reaching_the_end():
    # nothing before 510 s (4500 m along); arrives at C: when it left is only bounded
    # by the fix before the silence — here none: the longest trip before its first fix
    fixes = [f for f in WHOLE if f.t - T0 >= 510]
    [found] = passes(fixes)
    assert (found.earliest_departure, found.latest_departure) == (T0 + 510 - RULES.max_trip_duration_s, T0 + 510)
    assert found.silences == ((None, T0 + 510),)


def test_a_trip_followed_throughout_yields_nothing():
    # every fix 10 s apart, A to C: a realized trip, no silence anywhere
    assert len(detect_trips("v", WHOLE, GEOFENCES, RULES)) == 1
    assert passes(WHOLE) == []


def test_a_bus_seen_leaving_the_itinerary_yields_nothing():
    # leaves A, drives 2000 m, then 200 m off the corridor for the rest (a deadhead seen
    # throughout): it did not run the trip, and the telemetry says so
    on = along([(0, 0), (60, 0), (260, 2000)])
    off = along([(270, 2100), (760, 7000), (820, 7000)], off=200.0)
    assert passes(on + off) == []


def test_a_stretch_still_running_waits_until_the_silence_is_known():
    # 400 s of a trip, the last fix the newest one: not over yet; silent after it, a pass
    fixes = cut(WHOLE, 410, 820)
    assert passes(fixes, silent_after=False) == []
    assert len(passes(fixes, silent_after=True)) == 1


def test_a_stretch_shorter_than_the_policy_yields_nothing():
    # left A and went silent 40 s later: 40 s × 10 m/s = 400 m along < 500 m
    assert passes(cut(WHOLE, 105, 820)) == []


def test_a_vehicle_back_at_the_start_after_a_silence_is_two_stretches_not_one_trip():
    # to 6300 m (90 %), silent 40 min, then seen again 300 m along and running to C:
    # it went back unseen; the departure before the silence is not the arrival's trip
    first = along([(0, 0), (60, 0), (690, 6300)])
    second = along([(3090, 300), (3760, 7000), (3820, 7000)])
    fixes = first + second
    assert detect_trips("v", fixes, GEOFENCES, RULES) == []
    found = passes(fixes)
    assert [(p.first_t - T0, p.last_t - T0) for p in found] == [(0, 690), (3090, 3820)]
    # the second may have left between the first's last fix and its own first
    assert (found[1].earliest_departure, found[1].latest_departure) == (T0 + 690, T0 + 3090)


def test_a_memo_of_the_fixes_already_measured_changes_no_answer():
    from trips.memo import TrackMemo

    # the track as the engine passes it: growing beat by beat, silences in it, then cut at
    # its front (a trip closed) and then replaced by other positions (off the corridor),
    # as the very objects measured before and as equal copies
    track = cut(WHOLE, 410, 600)
    shifted = along([(0, 0), (60, 0), (760, 7000), (820, 7000)], off=400.0)
    # the same times 400 m away (off every corridor): a memo of these must not serve `track`
    far = [Fix(f.t, f.x + 400, f.y - 400, f.speed_kmh, f.route_id, f.msg_id) for f in track]
    copies = [Fix(f.t, f.x, f.y, f.speed_kmh, f.route_id, f.msg_id) for f in WHOLE]
    back = along([(820, 7000), (900, 7000), (1600, 0), (1660, 0)])  # C back to A on the same streets
    calls = [track[:n] for n in (5, 20, 21, 40, len(track))] + [track[10:], track[10:30], shifted[:50], shifted,
                                                                 far, track, far[:30], track[:40]]
    calls += [WHOLE[:n] for n in (30, 80, 83)] + [copies[:90], WHOLE + back[:40], copies + back, (WHOLE + back)[70:]]
    memo = TrackMemo(GEOFENCES)
    for fixes in calls:
        for silent_after in (False, True):
            remembered = unfollowed_passes("v", fixes, GEOFENCES, RULES, silent_after, memo)
            assert remembered == unfollowed_passes("v", fixes, GEOFENCES, RULES, silent_after)
        assert detect_trips("v", fixes, GEOFENCES, RULES, memo=memo) == detect_trips("v", fixes, GEOFENCES, RULES)
    assert any(unfollowed_passes("v", fixes, GEOFENCES, RULES, True) for fixes in calls)  # not all empty
    assert len(detect_trips("v", WHOLE + back, GEOFENCES, RULES, memo=memo)) == 2  # A to C, then C to A

def test_a_track_followed_so_far_has_passes_only_on_corridors_holding_its_first_fix():
    # unfollowed_passes skips an itinerary whose corridor misses the track's first fix when
    # the track has no silence and more fixes are to come (_followed_so_far): every such
    # itinerary, scanned anyway, must have no pass
    from trips.memo import TrackMemo
    from trips.unfollowed import _followed_so_far, _passes

    starts_off = along([(0, 0), (60, 0), (760, 7000), (820, 7000)], off=400.0)[:20] + WHOLE[25:]
    tracks = [WHOLE, WHOLE[30:], WHOLE[5:60], starts_off, cut(WHOLE, 300, 390), WHOLE[40:] + WHOLE[:0]]
    skipped = 0
    for fixes in tracks:
        memo = TrackMemo(GEOFENCES).over(fixes)
        if not _followed_so_far(memo, RULES, silent_after=False):
            continue
        for itinerary in GEOFENCES.itineraries.values():
            on_corridor, progress = memo.corridors().get(itinerary.pattern.key, (None, None))
            if on_corridor is None or on_corridor[0]:
                continue
            skipped += 1
            assert _passes("v", fixes, memo.t, memo.x, memo.y, itinerary, on_corridor, progress, RULES, False,
                           memo) == []
    assert skipped >= 3  # the claim was put to the test on several tracks
    # a silence anywhere, or no fix to come, and every itinerary is scanned
    assert not _followed_so_far(TrackMemo(GEOFENCES).over(cut(WHOLE, 300, 700)), RULES, silent_after=False)
    assert not _followed_so_far(TrackMemo(GEOFENCES).over(WHOLE), RULES, silent_after=True)


def test_the_chains_a_memo_keeps_change_no_answer_as_the_track_grows_a_fix_at_a_time():
    # The memo keeps each itinerary's chains and the verdicts of the closed ones while the
    # track grows at its end (trips.unfollowed._Chains). Grown a fix at a time through
    # three stretches (A to C with a silence, back to A, A to C with another silence),
    # and in between the same positions as other fixes (other message ids, another line
    # declared), cut at the front, moved off the corridor, or another vehicle's: every
    # answer equals a fresh look's.
    from trips.memo import TrackMemo

    first = cut(WHOLE, 410, 600)
    back = along([(830, 7000), (900, 7000), (1600, 0), (1660, 0)])
    again = cut(along([(1670, 0), (1730, 0), (2430, 7000), (2490, 7000)]), 2000, 2200)
    track = first + back + again
    other_ids = [Fix(f.t, f.x, f.y, f.speed_kmh, f.route_id, f.msg_id + "'") for f in track]
    other_line = [Fix(f.t, f.x, f.y, f.speed_kmh, "U", f.msg_id) for f in track]
    far = [Fix(f.t, f.x + 400, f.y - 400, f.speed_kmh, f.route_id, f.msg_id) for f in track]
    calls = []
    for n in range(2, len(track) + 1):
        calls.append(("v", track[:n]))
        if n % 37 == 0:
            # each right after the grown track, so that a memo that kept its chains would serve it
            calls += [("w", track[:n]), ("v", track[n // 3:n]), ("v", track[:n]), ("v", track[:n - 5]),
                      ("v", track[:n]), ("v", other_ids[:n]), ("v", track[:n]), ("v", other_line[:n]),
                      ("v", track[:n]), ("v", far[:n])]
    memo = TrackMemo(GEOFENCES)
    told = set()
    for vehicle, fixes in calls:
        for silent_after in (False, True):
            remembered = unfollowed_passes(vehicle, fixes, GEOFENCES, RULES, silent_after, memo)
            assert remembered == unfollowed_passes(vehicle, fixes, GEOFENCES, RULES, silent_after)
            told |= {(p.vehicle_id, p.first_msg_id, p.route_id) for p in remembered}
    assert len({first_msg_id for _, first_msg_id, _ in told}) >= 3  # several passes, each seen closed


def test_the_chains_a_memo_keeps_give_one_whole_read_s_answer_whatever_the_batch_splits():
    # The track fed to one memo in random batches (several fixes a beat, or one), each
    # beat judged both still running and fallen silent: the chains, the widest gap and the
    # cached verdict of the running chain are read a batch at a time, and every answer
    # equals a fresh look at the same fixes, read whole. Two GPS noise pings while the bus
    # stands at C each end a beat's chain that the next fix goes on (its verdict, told at that
    # beat, changes as the chain grows)
    import random

    from trips.memo import TrackMemo

    first = [Fix(f.t, f.x + 400, f.y - 400, f.speed_kmh, f.route_id, f.msg_id) if f.t in (T0 + 790, T0 + 810) else f
             for f in cut(WHOLE, 250, 600)]  # silent from 240 s to 610 s
    back = along([(830, 7000), (900, 7000), (1600, 0), (1660, 0)])
    again = cut(along([(1670, 0), (1730, 0), (2430, 7000), (2490, 7000)]), 2000, 2200)
    track = first + back + again
    told = set()
    for seed in range(4):
        rng = random.Random(seed)
        steps = (1,) if seed == 0 else (1, 1, 2, 3, 7, 20)  # the first: a fix a beat, every beat seen
        memo = TrackMemo(GEOFENCES)
        n = rng.randint(2, 6)
        while n <= len(track):
            fixes = track[:n]
            for silent_after in (False, True):
                remembered = unfollowed_passes("v", fixes, GEOFENCES, RULES, silent_after, memo)
                assert remembered == unfollowed_passes("v", fixes, GEOFENCES, RULES, silent_after)
                told |= {p.last_msg_id for p in remembered}
            n += rng.choice(steps)
    assert len(told) >= 4  # several passes, one seen ending at each noise ping


def test_a_pass_still_silent_crosses_a_topic_as_json_and_back():
    # the workers send it to the operator stage as JSON: a silence still open (to=None) or
    # open before the first fix kept (from=None) must decode, not crash the operator agent
    import msgspec

    passage = UnfollowedPass(
        vehicle_id="V1", route_id="101", direction_id=0, shape_id="S", first_t=100.0, last_t=400.0,
        first_msg_id="a", last_msg_id="b", from_m=0.0, to_m=900.0, earliest_departure=50.0, latest_departure=100.0,
        silences=((None, 100.0), (400.0, None)))
    assert msgspec.json.decode(msgspec.json.encode(passage), type=UnfollowedPass) == passage


def test_a_chain_seen_all_along_is_judged_without_reading_the_zone_flags():
    # a chain with a fix within max_coverage_gap_s before it, after it and between each two
    # of its own has no silence to hide anything (_seen_throughout): its verdict needs no
    # zone flags, so a track followed throughout, its chains closed by GPS noise off the
    # corridor, leaves the memo without the origin and destination flags of any itinerary.
    # The track begins with two fixes far off every corridor, a silence between them: every
    # itinerary near it is scanned (_followed_so_far), and the first chain has a fix before it
    def away(f: Fix) -> Fix:
        return Fix(f.t, f.x + 400, f.y - 400, f.speed_kmh, f.route_id, f.msg_id)

    lead = [away(Fix(WHOLE[0].t - dt, WHOLE[0].x, WHOLE[0].y, 36.0, "T", f"v/-{dt}")) for dt in (700, 10)]
    noisy = lead + [away(f) if i in (20, 45) else f for i, f in enumerate(WHOLE)]
    memo = TrackMemo(GEOFENCES)
    for n in range(2, len(noisy) + 1):
        assert unfollowed_passes("v", noisy[:n], GEOFENCES, RULES, False, memo) == []
    chains = [c for k, c in memo.grown.items() if k[:2] == ("unfollowed", "v")]
    assert chains and sum(len(c.closed) for c in chains) >= 2  # closed chains were judged (at the noise pings)
    assert not [key for key in memo._columns if key[0] in ("origin", "destination")]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(silences=st.lists(st.tuples(st.integers(min_value=0, max_value=330), st.integers(min_value=0, max_value=45)),
                         max_size=4),
       noise=st.sets(st.integers(min_value=0, max_value=339), max_size=12),
       beats=st.lists(st.tuples(st.integers(min_value=1, max_value=12), st.integers(min_value=0, max_value=10)),
                      min_size=10, max_size=80))
def test_every_beat_of_a_memo_s_unfollowed_passes_is_a_fresh_look_s(silences, noise, beats):
    # What the passes keep in the memo's `grown` while the track grows (each itinerary's
    # chains, their closed ones judged once and the passes among them, the running chain's
    # verdict, the widest gap, the near itineraries in the feed's order): at every beat, a
    # batch appended and now and then a cut at the front, both still running and fallen
    # silent, the answer is a fresh look's at the same fixes. The track starts far off every
    # corridor (none near yet), then runs A to C, back, A to C and back again, with silences
    # (fixes dropped) and GPS noise off every corridor where the draw puts them
    def away(f: Fix) -> Fix:
        return Fix(f.t, f.x + 400, f.y - 400, f.speed_kmh, f.route_id, f.msg_id)

    lead = [away(Fix(T0 - dt, WHOLE[0].x, WHOLE[0].y, 36.0, "T", f"v/-{dt}")) for dt in (1400, 700, 10)]
    back = along([(830, 7000), (900, 7000), (1600, 0), (1660, 0)])
    again = along([(1670, 0), (1730, 0), (2430, 7000), (2490, 7000)])
    back_again = along([(2500, 7000), (2560, 7000), (3260, 0), (3320, 0)])
    track = lead + [away(f) if i in noise else f for i, f in enumerate(WHOLE + back + again + back_again)]
    dropped = {i for start, length in silences for i in range(start, start + length)}
    track = [f for i, f in enumerate(track) if i not in dropped]
    memo = TrackMemo(GEOFENCES)
    begin = end = 0
    for grown, cut_front in beats:
        end = min(len(track), end + grown)
        begin = min(begin + 30, end - 1) if cut_front == 10 else begin  # a trip closed: 30 fixes cut
        fixes = track[begin:end]
        for silent_after in (False, True):
            remembered = unfollowed_passes("v", fixes, GEOFENCES, RULES, silent_after, memo)
            assert remembered == unfollowed_passes("v", fixes, GEOFENCES, RULES, silent_after)


def test_a_chain_a_fix_follows_is_a_pass_when_a_silence_lies_before_in_or_after_it():
    # judged once a fix follows its last (the bus turning back at C, 10 s on): joined at the
    # track's first fix, what came before unknown, it may have left A unseen; seen leaving A
    # (a fix just before), a silence mid-way may hide the way, or one after it the arrival.
    # None is seen throughout (_seen_throughout)
    back = along([(830, 7000), (900, 7000), (1600, 0), (1660, 0)])
    joined = passes(WHOLE[20:] + back[:10], silent_after=False)
    assert [(p.shape_id, p.first_t - T0, p.silences[0][0]) for p in joined] == [("L", 200.0, None)]
    before = Fix(T0 - 10, WHOLE[0].x + 400, WHOLE[0].y - 400, 36.0, "T", "v/-10")  # off every corridor
    silent = passes([before] + cut(WHOLE, 95, 505) + back[:10], silent_after=False)
    assert [(p.shape_id, p.first_t - T0, p.silences) for p in silent] == [("L", 0.0, ((T0 + 90, T0 + 510),))]
    # seen leaving A and up to 3000 m (stopped there from 360 s to 590 s), then silent for
    # 600 s and next seen off every corridor: the arrival may lie in the silence after it
    driven = along([(0, 0), (60, 0), (360, 3000), (590, 3000)])
    last = driven[-1]
    away = [Fix(last.t + 600 + 10 * k, last.x + 400, last.y - 400, 36.0, "T", f"v/away{k}") for k in range(5)]
    after = passes([before] + driven + away, silent_after=False)
    assert [(p.shape_id, p.first_t - T0, p.last_t - T0, p.silences) for p in after] == \
        [("L", 0.0, 590.0, ((T0 + 590, T0 + 1190),))]
