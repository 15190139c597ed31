"""Passes along an itinerary from a departure seen (trips.passes), on the tiny feed:
shape L, 7000 m from terminal A to terminal C; tracks as in tests/rules/test_turn_back.py."""

import sys
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rules"))
from test_turn_back import STAND, drive  # noqa: E402
from tiny_trip import GEOFENCES, ITINERARY, POLICY, S  # noqa: E402

from trips.passes import itinerary_passes  # noqa: E402


def passes(fixes, **kwargs):
    return [(p.exit, p.end, p.arrived) for p in itinerary_passes(fixes, GEOFENCES, POLICY.trips, **kwargs)
            if p.itinerary is ITINERARY]


def test_a_trip_is_one_pass_ending_before_the_destination_zone():
    fixes = drive(STAND + [(690, 7000), (750, 7000)])
    # fixes at -70 ... 750 s every 10 s: the exit is the last fix inside A's zone, -10 s (index 6;
    # the 0 s fix at 100 m lies on its edge, a hair out); C's zone's edge, 6900 m, is at
    # 680 s (a hair out too): the first fix inside is 690 s, index (690 + 70) / 10 = 76
    assert passes(fixes) == [(6, 76, True)]


def test_a_pass_ends_at_a_gps_jump_and_at_an_arrival():
    fixes = drive(STAND + [(690, 7000)], jumps=[(300, 3000)])  # 300 s: 3000 m ahead in 10 s
    # the jump is the 300 s fix, index (300 + 70) / 10 = 37
    assert passes(fixes) == [(6, 37, False)]
    # a realized trip's arrival at 200 s (the engine's track is cut there)
    assert passes(drive(STAND + [(690, 7000)]), ends_at=[None, S + 200]) == [(6, 27, False)]


def moved(fix, metres):
    """The fix that far south-east of where it was: off the corridor."""
    return msgspec.structs.replace(fix, x=fix.x + metres, y=fix.y - metres)


def test_a_pass_ends_at_the_first_of_a_jump_the_corridor_left_and_an_arrival():
    base = drive(STAND + [(690, 7000)])  # the fix at s seconds is index (s + 70) / 10
    # two jumps, 300 s and 500 s (indices 37 and 57): the first ends it, before C's zone (76)
    assert passes(drive(STAND + [(690, 7000)], jumps=[(300, 3000), (500, 3000)])) == [(6, 37, False)]
    # the fixes from 200 s to 240 s (indices 27 to 31) 100 m south and east (off the
    # corridor, no jump: 141 m in 10 s): more than GPS noise, the corridor left at the
    # first of them
    left = [moved(f, 100) if 200 <= f.t - S <= 240 else f for f in base]
    assert passes(left) == [(6, 27, False)]
    assert passes(left, ends_at=[S + 300]) == [(6, 27, False)]  # before a later arrival
    # two fixes off (at most max_noise_pings) are noise: the pass runs on to C's zone
    assert passes([moved(f, 100) if 200 <= f.t - S <= 210 else f for f in base]) == [(6, 76, True)]


def test_a_pass_the_console_declares_another_line_over_is_none():
    base = drive(STAND + [(690, 7000)])
    other = [msgspec.structs.replace(f, route_id="U") for f in base]
    assert passes(other) == []
    # one fix of the pass declaring its line is enough; none declared, nothing to refuse
    assert passes(other[:30] + base[30:31] + other[31:]) == [(6, 76, True)]
    assert passes([msgspec.structs.replace(f, route_id=None) for f in base]) == [(6, 76, True)]
    # a line declared outside the pass (after its end) is not read
    assert passes(base[:76] + other[76:]) == [(6, 76, True)]
