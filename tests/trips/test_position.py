"""The GPS position screen (trips.position) on hand-made tracks.

A bus drives east at 10 m/s, a ping every 10 s (100 m apart). The policy's ceiling is
120 km/h = 33.3 m/s and a fix's noise allowance 2 x 50 m: in 10 s a bus reaches
333 + 100 = 433 m.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from kernel.policy import load_policy
from trips.model import Fix
from trips.position import PositionScreen, screen_positions

RULES = load_policy().trips
T0 = 1_764_576_000.0


def track(n: int, *, start: int = 0, every: float = 10.0, speed: float = 10.0) -> list[Fix]:
    return [Fix(T0 + k * every, 356_000.0 + k * every * speed, 7_815_000.0, 36.0, None, f"p{k}")
            for k in range(start, start + n)]


def thrown(fixes: list[Fix], first: int, count: int, dx: float) -> list[Fix]:
    """`count` fixes from `first` thrown `dx` metres north (they hold together there)."""
    return [Fix(f.t, f.x, f.y + dx, f.speed_kmh, f.route_id, f.msg_id) if first <= k < first + count else f
            for k, f in enumerate(fixes)]


def screened(fixes, screen=PositionScreen(), near=None):
    screen, kept, faults = screen_positions(screen, fixes, near or [True] * len(fixes), RULES)
    return [f.msg_id for f in kept], [f.fix.msg_id for f in faults]


def test_a_clean_track_is_all_taken():
    kept, faults = screened(track(60))
    assert faults == [] and len(kept) == 60


def test_six_fixes_three_km_off_mid_trip_are_position_faults():
    # 3,000 m in 10-60 s after the last fix taken: at most 433-2,100 m drivable
    kept, faults = screened(thrown(track(60), 30, 6, 3_000.0))
    assert faults == [f"p{k}" for k in range(30, 36)]
    assert len(kept) == 54


def test_thirty_fixes_fifty_km_off_are_position_faults():
    # 50 km in 300 s would be 600 km/h
    _, faults = screened(thrown(track(100), 30, 30, 50_000.0))
    assert faults == [f"p{k}" for k in range(30, 60)]


def test_a_fault_run_stuck_long_enough_to_be_drivable_stays_a_fault():
    # 3,000 m off for 25 fixes (250 s, under trips.max_coverage_gap_s 300 s) after 80 taken:
    # from the fix 90 s before, 3,100 m would be drivable (33.3 x 90 + 100 = 3,100 m), but the
    # run never drove there: it jumped
    kept, faults = screened(thrown(track(200), 80, 25, 3_000.0))
    assert faults == [f"p{k}" for k in range(80, 105)]
    assert "p105" in kept
    # the detail says why a fix within reach is a fault all the same
    _, _, found = screen_positions(PositionScreen(), thrown(track(200), 80, 25, 3_000.0), [True] * 200, RULES)
    assert "beyond the 433 m a bus can drive" in found[0].detail  # 3,000 m in 10 s
    assert "continues the run of fixes that jumped" in found[-1].detail  # 3,000 m in 250 s: 8,433 m reachable


def test_a_run_holding_together_longer_than_a_coverage_gap_is_the_bus():
    # a unit drifted 3 km off over 100 fixes (30 m a ping: within reach), then snapped back:
    # the true fixes after the snap are out of reach of the drifted ones, but once they hold
    # together for more than 300 s (trips.max_coverage_gap_s) they are followed again
    fixes = track(300)
    drifted = [Fix(f.t, f.x, f.y + 30.0 * min(k, 100), f.speed_kmh, None, f.msg_id) if k < 100 else f
               for k, f in enumerate(fixes)]
    kept, faults = screened(drifted)
    # the snap back at p100; 300 s later, p131 is more than 300 s after the run's first fix
    assert faults == [f"p{k}" for k in range(100, 131)]
    assert kept[-1] == "p299"


def test_a_cold_start_fix_before_the_real_track_is_outvoted_after_a_few_fixes():
    # the first fix of the day 50 km off, then the real track: the real run holds together
    # for more than the one bad fix and more than max_noise_pings (2), so from its third fix
    # it is the bus
    fixes = thrown(track(20), 0, 1, 50_000.0)
    kept, faults = screened(fixes)
    assert faults == ["p1", "p2"]
    assert kept == ["p0", *[f"p{k}" for k in range(3, 20)]]


def test_a_single_noisy_fix_taken_does_not_make_the_next_true_ones_faults():
    # p10 400 m off is within reach (433 m in 10 s); p11 is 400 m (plus 100 m driven) from it,
    # out of its reach, but within reach of p9, a fix taken before it
    kept, faults = screened(thrown(track(30), 10, 1, 400.0))
    assert faults == []
    assert len(kept) == 30


def test_after_a_long_silence_the_bus_may_be_anywhere_it_could_drive():
    # 20 min silent then 20 km away: 33.3 x 1,200 = 40 km drivable
    before = track(10)
    after = [Fix(f.t + 1_200, f.x + 20_000, f.y, f.speed_kmh, None, f"q{k}") for k, f in enumerate(track(10))]
    kept, faults = screened(before + after)
    assert faults == [] and len(kept) == 20


def test_a_fix_far_from_every_itinerary_is_a_fault_and_no_witness():
    # a cold start's (0,0) as the day's first fix: off the network, so the real track
    # after it is taken from its first fix (no jump to outvote)
    fixes = track(10)
    kept, faults = screened(fixes, near=[False] + [True] * 9)
    assert faults == ["p0"] and kept == [f"p{k}" for k in range(1, 10)]


def test_a_long_run_far_from_every_itinerary_never_becomes_the_bus():
    # 30 fixes 50 km off at 60 s pings (30 min, past the 300 s that makes a near run the bus)
    fixes = thrown(track(100, every=60.0), 30, 30, 50_000.0)
    kept, faults = screened(fixes, near=[not 30 <= k < 60 for k in range(100)])
    assert faults == [f"p{k}" for k in range(30, 60)] and len(kept) == 70


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(0, 120), max_size=6), first=st.integers(1, 100), count=st.integers(1, 40),
       dx=st.sampled_from([600.0, 3_000.0, 50_000.0]))
def test_the_verdicts_do_not_depend_on_the_batches(cuts, first, count, dx):
    fixes = thrown(track(120), first, count, dx)
    whole = screened(fixes)
    screen, kept, faults = PositionScreen(), [], []
    bounds = [0, *sorted(cuts), len(fixes)]
    for a, b in zip(bounds, bounds[1:]):
        screen, some_kept, some_faults = screen_positions(screen, fixes[a:b], [True] * (b - a), RULES)
        kept += [f.msg_id for f in some_kept]
        faults += [f.fix.msg_id for f in some_faults]
    assert (kept, faults) == whole
