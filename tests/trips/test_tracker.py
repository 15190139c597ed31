"""The tracker's trim of a vehicle standing at a terminal reads the memo's zones exactly
as it tests the fixes itself."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.trips.test_detection import GEOFENCES, RULES, round_trip
from trips import advance_track, new_track
from trips.memo import TrackMemo


def _tracks(fixes, cuts, memo):
    """The track after each batch, the pings cut at `cuts`."""
    track, tracks, start = new_track("v"), [], 0
    for cut in sorted(set(cuts)) + [len(fixes)]:
        if cut <= start:
            continue
        track, _ = advance_track(track, fixes[start:cut], GEOFENCES, RULES, memo)
        tracks.append(track)
        start = cut
    return tracks


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 400), max_size=8), st.integers(0, 2))
def test_a_standing_bus_is_trimmed_alike_with_the_memo_s_zones_or_without(cuts, outside_at):
    # at C for 3 h pinging every 60 s (a fix or a few 110 m out, beyond its 100 m zone, at
    # `outside_at` places: noise that keeps the stay, or not), then R back to A. The
    # stay is longer than in_service_terminal_s + max_coverage_gap_s, so the track is
    # trimmed to its last stretch, the first fix kept (the one before the stay) may be
    # outside: the memo's masks from the offset + 1 on, as the fixes' own test
    out = {0: (), 1: (5380,), 2: (5380, 5440, 5500)}[outside_at]
    fixes = round_trip(0.0, stand_s=3 * 3600.0, every=60.0, parked=lambda s: 110.0 if s in out else 0.0)
    with_memo = _tracks(fixes, cuts, TrackMemo(GEOFENCES))
    without = _tracks(fixes, cuts, None)
    assert [t.fixes for t in with_memo] == [t.fixes for t in without]
    # the trim happened (the test reads the branch it is about): ping by ping the track at
    # C's stay is shorter than all the pings since the arrival
    assert min(len(t.fixes) for t in _tracks(fixes, range(1, len(fixes)), TrackMemo(GEOFENCES))[100:200]) < 100


def test_the_trim_reads_the_memo_s_masks_from_the_kept_fixes_on():
    # every suffix of a long stay at C with one fix out of the zone: the suffix whose
    # second fix is that one is not standing (the first fix may be outside, no other),
    # the next suffix is; the memo's masks over the whole track, from the suffix's offset
    from trips.tracker import _trim_standing
    fixes = tuple(f for f in round_trip(0.0, stand_s=3 * 3600.0, every=60.0,
                                        parked=lambda s: 110.0 if s == 5380 else 0.0) if not f.msg_id.startswith("r/"))
    memo = TrackMemo(GEOFENCES).over(fixes)
    zones = memo.inside_terminals()
    out = next(i for i, f in enumerate(fixes) if f.msg_id == "b/5380")
    answers = []
    for offset in range(out - 3, out + 3):
        answer = _trim_standing(fixes[offset:], GEOFENCES, RULES, zones, offset)
        assert answer == _trim_standing(fixes[offset:], GEOFENCES, RULES)
        answers.append(len(answer) < len(fixes) - offset)
    assert answers == [False, False, False, True, True, True]


def test_a_memo_of_other_geofences_is_not_read_for_the_trim():
    # the same feed built again (equal values, new zone objects): detection measures the
    # track with a fresh memo of its own, and the caller's memo, positioned on this very
    # tuple before, holds masks keyed by the other zones' ids (the review's finding)
    from tests.trips.test_detection import FEED, POLICY
    from geofences import build_geofences
    from trips.model import Track
    other = build_geofences(FEED, POLICY)
    fixes = tuple(f for f in round_trip(0.0, stand_s=3 * 3600.0, every=60.0) if not f.msg_id.startswith("r/"))
    track = Track("v", fixes, None)
    memo = TrackMemo(GEOFENCES)
    memo.over(track.fixes)
    with_memo, _ = advance_track(track, [], other, RULES, memo)
    afresh, _ = advance_track(track, [], other, RULES, None)
    assert with_memo.fixes == afresh.fixes and len(afresh.fixes) < len(fixes)
