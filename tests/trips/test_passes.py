"""Passes along an itinerary from a departure seen (trips.passes), on the tiny feed:
shape L, 7000 m from terminal A to terminal C; tracks as in tests/rules/test_turn_back.py."""

import sys
from pathlib import Path

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
