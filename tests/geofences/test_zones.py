"""Zone membership, speed limits and itinerary corridors on hand-made metric geometry.

Thresholds come from the shipped policy (`load_policy()`): c01.default_limit_kmh = 60,
trips.corridor_m = 50, a07.stop_radius_m = 40.
"""

import numpy as np
import pytest
from shapely import LineString, Polygon, box

from geofences import CircleZone, Geofences, Itinerary, PolygonZone, SpeedZone
from gtfs.model import Pattern
from kernel.policy import load_policy

POLICY = load_policy()


def _xy(*points):
    xs, ys = zip(*points)
    return np.array(xs, dtype=float), np.array(ys, dtype=float)


def test_policy_thresholds_used_here():
    assert POLICY.c01.default_limit_kmh == 60
    assert POLICY.trips.corridor_m == 50
    assert POLICY.a07.stop_radius_m == 40


# --- circles -----------------------------------------------------------------------------


def test_circle_contains_its_boundary_and_not_a_centimetre_beyond():
    zone = CircleZone("B", 359000, 7815000, POLICY.a07.stop_radius_m)
    x, y = _xy(
        (359000, 7815000),  # centre: 0 m
        (359024, 7815032),  # hypot(24, 32) = 40 m: exactly the radius
        (359040, 7815000),  # 40 m east: exactly the radius
        (359040.01, 7815000),  # 40.01 m: radius + 0.01
        (358976, 7814968),  # hypot(24, 32) = 40 m south-west
    )
    assert zone.distance(x, y) == pytest.approx([0, 40, 40, 40.01, 40], abs=1e-6)
    assert zone.contains(x, y).tolist() == [True, True, True, False, True]


def test_circle_of_terminal_radius_excludes_101_m():
    zone = CircleZone("A", 0, 0, POLICY.trips.terminal_zone_m)
    x, y = _xy((60, 80), (0, 101))  # hypot(60, 80) = 100 m; 101 m
    assert zone.contains(x, y).tolist() == [True, False]


# --- polygons ----------------------------------------------------------------------------


def test_polygon_membership_inside_on_edge_and_outside():
    zone = PolygonZone("yard", box(0, 0, 100, 100))
    x, y = _xy((50, 50), (100, 50), (0, 0), (150, 50), (-0.01, 50))
    assert zone.contains(x, y).tolist() == [True, True, True, False, False]
    # 150 − 100 = 50 m east of the edge; 0.01 m west of the other edge
    assert zone.distance(x, y) == pytest.approx([0, 0, 0, 50, 0.01], abs=1e-9)


def test_concave_polygon_excludes_its_notch():
    # an L-shaped yard: 100 × 100 square without its north-east 50 × 50 quarter
    zone = PolygonZone("L-yard", Polygon([(0, 0), (100, 0), (100, 50), (50, 50), (50, 100), (0, 100)]))
    x, y = _xy((25, 75), (75, 25), (75, 75))
    assert zone.contains(x, y).tolist() == [True, True, False]


# --- speed limits ------------------------------------------------------------------------

ZONE_40 = SpeedZone(PolygonZone("school", box(0, 0, 100, 100)), 40)
ZONE_30 = SpeedZone(PolygonZone("market", box(50, 0, 150, 100)), 30)


def _fences(*speed_zones):
    return Geofences(
        itineraries={}, speed_zones=speed_zones, default_speed_limit_kmh=POLICY.c01.default_limit_kmh
    )


def test_speed_limit_without_zones_is_the_policy_default():
    x, y = _xy((0, 0), (1e5, -1e5))
    assert _fences().speed_limit(x, y).tolist() == [60, 60]


def test_speed_limit_inside_a_zone_is_its_limit():
    x, y = _xy((25, 50), (200, 50))  # inside the 40 zone; 100 m east of it
    assert _fences(ZONE_40).speed_limit(x, y).tolist() == [40, 60]


@pytest.mark.parametrize(
    "order", [(ZONE_40, ZONE_30), (ZONE_30, ZONE_40)], ids=["40_then_30", "30_then_40"]
)
def test_overlapping_zones_give_the_lowest_limit(order):
    # x = 25: only the 40 zone; x = 75: both (min(40, 30) = 30); x = 125: only 30; x = 200: none
    x, y = _xy((25, 50), (75, 50), (125, 50), (200, 50))
    assert _fences(*order).speed_limit(x, y).tolist() == [40, 30, 30, 60]


def test_zone_with_a_limit_above_the_default_raises_it_there():
    # an 80 km/h stretch of highway: inside 80 (not min(60, 80)); outside the default 60
    highway = SpeedZone(PolygonZone("highway", box(0, 0, 100, 100)), 80)
    x, y = _xy((50, 50), (200, 50))
    assert _fences(highway).speed_limit(x, y).tolist() == [80, 60]


def test_speed_limit_of_no_positions_is_empty():
    empty = np.array([], dtype=float)
    assert _fences(ZONE_40).speed_limit(empty, empty).shape == (0,)


# --- itinerary corridor ------------------------------------------------------------------


def _itinerary(route_id="T"):
    return Itinerary(
        pattern=Pattern(route_id, 0, "L", "A", "C"),
        line=LineString([(0, 0), (1000, 0)]),
        corridor_m=POLICY.trips.corridor_m,
        origin=CircleZone("A", 0, 0, POLICY.trips.terminal_zone_m),
        destination=CircleZone("C", 1000, 0, POLICY.trips.terminal_zone_m),
        stops=(),
    )


def test_corridor_contains_50_m_and_not_50_1_m():
    x, y = _xy((500, 49.9), (500, 50), (500, 50.1), (500, -50), (500, -50.1))
    itinerary = _itinerary()
    assert itinerary.distance(x, y) == pytest.approx([49.9, 50, 50.1, 50, 50.1], abs=1e-9)
    assert itinerary.in_corridor(x, y).tolist() == [True, True, False, True, False]


def test_corridor_beyond_the_end_is_measured_from_the_end_point():
    # (1030, 40): hypot(30, 40) = 50 m -> inside;  (1030, 41): hypot(30, 41) = 50.80 m -> outside
    # (1050, 0): 1050 − 1000 = 50 m -> inside;      (1050.1, 0): 50.1 m -> outside
    x, y = _xy((1030, 40), (1030, 41), (1050, 0), (1050.1, 0))
    assert _itinerary().in_corridor(x, y).tolist() == [True, False, True, False]


def test_itinerary_locates_positions_and_knows_its_length():
    itinerary = _itinerary()
    assert itinerary.length_m == 1000
    assert itinerary.locate(*_xy((250, 30), (-10, 0))).tolist() == [250, 0]  # clamped at the start


def test_for_route_selects_itineraries_of_that_route():
    t, u = _itinerary("T"), _itinerary("U")
    fences = Geofences(itineraries={"T:0:L": t, "U:0:L": u}, speed_zones=(), default_speed_limit_kmh=60)
    assert fences.for_route("T") == (t,)
    assert fences.for_route("X") == ()
    assert fences.for_route(None) == (t, u)


def test_on_corridors_gives_each_near_itinerary_with_exactly_its_corridor_test():
    # T runs along y = 0, U along y = 300 (x 0..1000), V along y = 0 but with a 20 m corridor
    import dataclasses

    t = _itinerary("T")
    u = dataclasses.replace(_itinerary("U"), line=LineString([(0, 300), (1000, 300)]))
    v = dataclasses.replace(_itinerary("V"), corridor_m=20.0)
    fences = Geofences(itineraries={"T:0:L": t, "U:0:L": u, "V:0:L": v}, speed_zones=(),
                       default_speed_limit_kmh=60)
    # 50 m off T (its corridor's edge, inside); 50.1 m (outside); 250 m off T = 50 m off U;
    # 20 m off T and V; 600 m away from everything
    x, y = _xy((500, 50), (500, 50.1), (500, 250), (100, 20), (500, 900))
    near = {i.pattern.route_id: mask.tolist() for i, mask in fences.on_corridors(x, y)}
    assert near == {"T": [True, False, False, True, False], "U": [False, False, True, False, False],
                    "V": [False, False, False, True, False]}
    for itinerary, mask in fences.on_corridors(x, y):  # the same answer as each itinerary's own test
        assert mask.tolist() == itinerary.in_corridor(x, y).tolist()
    assert fences.on_corridors(*_xy((500, 900))) == []
