"""Zone membership, speed limits and itinerary corridors on hand-made metric geometry.

Thresholds come from the shipped policy (`load_policy()`); the points at and just beyond
each boundary are computed from the policy's number (named r, c, limit below), so the
tests hold whatever the policy says and check that the zones apply it. Points at exactly
a radius r use a 3-4-5 triangle: hypot(0.6 r, 0.8 r) = r (exact in binary for the
shipped radii: 0.6 × 40 = 24, 0.8 × 40 = 32; 0.6 × 100 = 60, 0.8 × 100 = 80).
"""

import dataclasses
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import shapely
from shapely import LineString, Polygon, box

from geofences import CircleZone, Geofences, Itinerary, PolygonZone, SpeedZone
from geofences.zones import spans_along, surely_near
from gtfs import load_feed
from gtfs.model import Pattern
from kernel.policy import load_policy
from samples import conselheiro_lafaiete

POLICY = load_policy()


def _xy(*points):
    xs, ys = zip(*points)
    return np.array(xs, dtype=float), np.array(ys, dtype=float)


# --- circles -----------------------------------------------------------------------------


def test_circle_of_the_a07_stop_radius_contains_its_boundary_and_not_a_centimetre_beyond():
    r = POLICY.a07.stop_radius_m  # the stop zone of A-07 (40 m in the shipped policy)
    zone = CircleZone("B", 359000, 7815000, r)
    x, y = _xy(
        (359000, 7815000),  # centre: 0 m
        (359000 + 0.6 * r, 7815000 + 0.8 * r),  # hypot(0.6 r, 0.8 r) = r: exactly the radius
        (359000 + r, 7815000),  # r east: exactly the radius
        (359000 + r + 0.01, 7815000),  # r + 0.01 m
        (359000 - 0.6 * r, 7815000 - 0.8 * r),  # r south-west
    )
    assert zone.distance(x, y) == pytest.approx([0, r, r, r + 0.01, r], abs=1e-6)
    assert zone.contains(x, y).tolist() == [True, True, True, False, True]


def test_circle_of_the_terminal_radius_contains_it_and_excludes_one_metre_more():
    r = POLICY.trips.terminal_zone_m  # 100 m in the shipped policy
    zone = CircleZone("A", 0, 0, r)
    x, y = _xy((0.6 * r, 0.8 * r), (0, r + 1))  # hypot(0.6 r, 0.8 r) = r; r + 1 m
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


LIMIT = POLICY.c01.default_limit_kmh  # C-01's limit outside any zone (60 km/h in the shipped policy)


def test_speed_limit_without_zones_is_the_policy_default():
    x, y = _xy((0, 0), (1e5, -1e5))
    assert _fences().speed_limit(x, y).tolist() == [LIMIT, LIMIT]


def test_speed_limit_inside_a_zone_is_its_limit():
    x, y = _xy((25, 50), (200, 50))  # inside the 40 zone; 100 m east of it: the policy's default
    assert _fences(ZONE_40).speed_limit(x, y).tolist() == [40, LIMIT]


@pytest.mark.parametrize(
    "order", [(ZONE_40, ZONE_30), (ZONE_30, ZONE_40)], ids=["40_then_30", "30_then_40"]
)
def test_overlapping_zones_give_the_lowest_limit(order):
    # x = 25: only the 40 zone; x = 75: both (min(40, 30) = 30); x = 125: only 30;
    # x = 200: none, the policy's default
    x, y = _xy((25, 50), (75, 50), (125, 50), (200, 50))
    assert _fences(*order).speed_limit(x, y).tolist() == [40, 30, 30, LIMIT]


def test_zone_with_a_limit_above_the_default_raises_it_there():
    # a stretch of highway 20 km/h above the policy's default: inside, its own limit
    # (not min(default, default + 20)); outside, the default
    highway = SpeedZone(PolygonZone("highway", box(0, 0, 100, 100)), LIMIT + 20)
    x, y = _xy((50, 50), (200, 50))
    assert _fences(highway).speed_limit(x, y).tolist() == [LIMIT + 20, LIMIT]


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


def test_corridor_contains_the_policys_half_width_and_not_10_cm_more():
    c = POLICY.trips.corridor_m  # 50 m in the shipped policy: 49.9 and 50 in, 50.1 out
    x, y = _xy((500, c - 0.1), (500, c), (500, c + 0.1), (500, -c), (500, -c - 0.1))
    itinerary = _itinerary()
    assert itinerary.distance(x, y) == pytest.approx([c - 0.1, c, c + 0.1, c, c + 0.1], abs=1e-9)
    assert itinerary.in_corridor(x, y).tolist() == [True, True, False, True, False]


def test_corridor_beyond_the_end_is_measured_from_the_end_point():
    c = POLICY.trips.corridor_m  # the line ends at (1000, 0); shipped c = 50 m
    # (1000 + 0.6 c, 0.8 c): hypot = c -> inside (1030, 40);  one metre further north -> outside
    #   (1030, 41): hypot(30, 41) = 50.80 m;
    # (1000 + c, 0): c past the end -> inside (1050, 0);   (1000 + c + 0.1, 0) -> outside
    x, y = _xy((1000 + 0.6 * c, 0.8 * c), (1000 + 0.6 * c, 0.8 * c + 1), (1000 + c, 0), (1000 + c + 0.1, 0))
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
    # T and U have the policy's corridor c (50 m shipped); T runs along y = 0, U along
    # y = 6 c (300 m) (x 0..1000), V along y = 0 but with a corridor of c / 2 (25 m)
    c = POLICY.trips.corridor_m
    t = _itinerary("T")
    u = dataclasses.replace(_itinerary("U"), line=LineString([(0, 6 * c), (1000, 6 * c)]))
    v = dataclasses.replace(_itinerary("V"), corridor_m=c / 2)
    fences = Geofences(itineraries={"T:0:L": t, "U:0:L": u, "V:0:L": v}, speed_zones=(),
                       default_speed_limit_kmh=LIMIT)
    # c off T (its corridor's edge, inside); c + 0.1 m (outside); 5 c off T = c off U (edge of
    # U's); c / 2 off T and V (edge of V's); 18 c (900 m) off T = 12 c off U: away from everything
    x, y = _xy((500, c), (500, c + 0.1), (500, 5 * c), (100, c / 2), (500, 18 * c))
    near = {i.pattern.route_id: mask.tolist() for i, mask in fences.on_corridors(x, y)}
    assert near == {"T": [True, False, False, True, False], "U": [False, False, True, False, False],
                    "V": [False, False, False, True, False]}
    for itinerary, mask in fences.on_corridors(x, y):  # the same answer as each itinerary's own test
        assert mask.tolist() == itinerary.in_corridor(x, y).tolist()
    assert fences.on_corridors(*_xy((500, 18 * c))) == []


def test_measure_pairs_numbers_the_itineraries_in_their_order_and_measures_as_each_itinerary():
    # T along y = 0 (x 0..1000), U along y = 300 from x = 1000 back to 0; one position near
    # T, one near U, one far from both: near pairs come from the segment index, far ones
    # from shapely, all as the itinerary's own distance and locate
    import dataclasses

    t = _itinerary("T")
    u = dataclasses.replace(_itinerary("U"), line=LineString([(1000, 300), (0, 300)]))
    fences = Geofences(itineraries={"T:0:L": t, "U:0:L": u}, speed_zones=(), default_speed_limit_kmh=LIMIT)
    x, y = _xy((200, 10), (300, 290), (600, 5000))
    position, which = np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 0, 1, 0, 1])
    distance, progress = fences.measure_pairs(x, y, position, which)
    expected = [(i.distance(x[p:p + 1], y[p:p + 1])[0], i.locate(x[p:p + 1], y[p:p + 1])[0])
                for p, i in zip(position.tolist(), [(t, u)[w] for w in which.tolist()])]
    assert list(zip(distance.tolist(), progress.tolist())) == expected
    assert expected[:4] == [(10.0, 200.0), (290.0, 800.0), (290.0, 300.0), (10.0, 700.0)]


def test_near_any_itinerary_is_a_distance_from_the_shapes_whatever_the_corridor():
    d = POLICY.trips.max_network_distance_m  # 20 km in the shipped policy
    fences = Geofences(itineraries={"T:0:L": _itinerary()}, speed_zones=(), default_speed_limit_kmh=60)
    # on the line, d north of its middle, 0.1 m more, d east of its end, and a (0,0)-style fix far away
    x, y = _xy((500, 0), (500, d), (500, d + 0.1), (1000 + d, 0), (-5e6, -5e6))
    assert fences.near_any_itinerary(x, y, d).tolist() == [True, True, False, True, False]
    empty = np.array([], dtype=float)
    assert fences.near_any_itinerary(empty, empty, d).tolist() == []


def _sample_fences() -> Geofences:
    """A Geofences over the Conselheiro Lafaiete sample feed's shapes, one itinerary each."""
    shapes = load_feed(conselheiro_lafaiete()[0]).shapes.values()
    return Geofences(itineraries={f"R{i}:0:{s.shape_id}": dataclasses.replace(_itinerary(f"R{i}"), line=s.line)
                                  for i, s in enumerate(shapes)}, speed_zones=(), default_speed_limit_kmh=60)


def test_near_any_itinerary_at_and_around_its_boundary_is_dwithin_on_the_whole_shapes():
    """Inside the area `surely_near` gives it answers without asking GEOS; at the boundary the
    answer must still be GEOS's `dwithin` over the whole shapes, bit for bit. Positions at
    50 m, 300 m and the policy's 20 km from the sample's shapes (across a segment, or in any
    direction from a vertex), each asked with `metres` its own distance as shapely gives it
    (near), one ulp less (not near) and one ulp more (near)."""
    fences = _sample_fences()
    lines = [i.line for i in fences.itineraries.values()]
    coords = shapely.get_coordinates(lines)
    rng = np.random.default_rng(31)
    x, y = [], []
    for radius in (50.0, 300.0, POLICY.trips.max_network_distance_m):
        at = rng.integers(0, len(coords) - 1, 40)
        a, b = coords[at], coords[at + 1]
        ex, ey = b[:, 0] - a[:, 0], b[:, 1] - a[:, 1]
        length = np.maximum(np.hypot(ex, ey), 1e-9)
        across = a + (b - a) * rng.random((40, 1)) + radius * np.stack((-ey / length, ex / length), axis=1)
        angle = rng.random(40) * 2 * np.pi
        around = a + radius * np.stack((np.cos(angle), np.sin(angle)), axis=1)
        x += [*across[:, 0], *around[:, 0]]
        y += [*across[:, 1], *around[:, 1]]
    answers, expected = [], []
    for px, py in zip(x, y):
        distance = min(shapely.distance(lines, shapely.Point(px, py)))
        for metres in (distance, np.nextafter(distance, -np.inf), np.nextafter(distance, np.inf)):
            answers.append(fences.near_any_itinerary(np.array([px]), np.array([py]), float(metres)).item())
            expected.append(bool(shapely.dwithin(lines, shapely.Point(px, py), float(metres)).any()))
    assert answers == expected
    assert expected == [True, False, True] * len(x)  # dwithin is the distance, to the bit


def test_the_surely_near_area_is_a_metre_inside_the_distance_and_holds_the_network():
    """Every point of the area (its boundary, a point every 5 m) lies at least a metre less
    than `metres` from the shapes as shapely measures them, less a millimetre of rounding
    (so that a position inside is near whichever way GEOS rounds), and every vertex of
    the shapes is inside it (a bus on its line is answered without the query)."""
    lines = [i.line for i in _sample_fences().itineraries.values()]
    vertices = shapely.get_coordinates(lines)
    for metres in (300.0, 2000.0, POLICY.trips.max_network_distance_m):
        area = surely_near(lines, metres)
        edge = shapely.get_coordinates(shapely.segmentize(shapely.boundary(area), 5.0))
        nearest = np.min([shapely.distance(line, shapely.points(edge)) for line in lines], axis=0)
        assert nearest.max() <= metres - 1.0 + 1e-3
        assert shapely.contains_xy(area, vertices[:, 0], vertices[:, 1]).all()
    # none with more discs than allowed (a small radius over a large network), none of a metre
    assert surely_near(lines, 300.0, most_discs=1) is None
    assert surely_near(lines, 1.0) is None and surely_near([], 300.0) is None


def test_near_any_itinerary_over_a_grid_around_the_network_is_dwithin_on_the_whole_shapes():
    """Positions every 37 m over the sample's network and 600 m beyond it, asked at 300 m (an
    area of discs, and positions outside it asked of GEOS) and at 20 m (no area)."""
    fences = _sample_fences()
    lines = [i.line for i in fences.itineraries.values()]
    west, south, east, north = shapely.total_bounds(lines)
    x, y = (grid.ravel() for grid in np.meshgrid(np.arange(west - 600, east + 600, 37.0),
                                                  np.arange(south - 600, north + 600, 37.0)))
    for metres in (300.0, 20.0):
        expected = np.array([shapely.dwithin(line, shapely.points(x, y), metres) for line in lines]).any(axis=0)
        assert fences.near_any_itinerary(x, y, metres).tolist() == expected.tolist()
        assert 0 < expected.sum() < len(x)


def test_near_any_itinerary_at_huge_radii_is_dwithin_on_the_whole_shapes_and_answers():
    """A radius no city needs (a policy turning the network test off) goes to GEOS whole:
    above a billion metres the metre the area keeps inside is under the rounding of its
    vertices (points around the area's own vertices, a radius from the network, were near
    by the area and not by `dwithin`), and near the float maximum the discs' union fails
    for a network across an axis (a city the equator crosses, in its northern UTM zone)."""
    line = LineString([(490_000.0, -3_000.0), (492_000.0, 4_000.0)])
    fences = Geofences(itineraries={"k": SimpleNamespace(line=line, corridor_m=30.0)}, speed_zones=(),
                       default_speed_limit_kmh=50.0)
    rng = np.random.default_rng(7)
    for metres in (1e15, 1e100, 1e300, 1e308, sys.float_info.max):
        assert surely_near([line], metres) is None
        angle = rng.random(500) * 2 * np.pi
        x = 491_000.0 + metres * np.cos(angle) * (1 - rng.random(500) * 1e-13)
        y = metres * np.sin(angle) * (1 - rng.random(500) * 1e-13)
        with np.errstate(over="ignore"):  # GEOS's squared distance overflows: not near, as it answers
            expected = shapely.dwithin(line, shapely.points(x, y), metres)
        assert fences.near_any_itinerary(x, y, metres).tolist() == expected.tolist()
    assert surely_near([line], 1e9) is not None  # 50,000 times the policy's 20 km still has its area


def test_near_any_itinerary_fails_on_a_nan_position_as_dwithin_does():
    """A NaN position makes the whole query fail (GEOS refuses it), as the whole-shape query
    did: a take of many vehicles' fixes then fails and each vehicle asks for its own
    (trips.memo.TakeGeometry), so one vehicle's faulty fix fails that vehicle only."""
    fences = _sample_fences()
    x0, y0 = next(iter(fences.itineraries.values())).line.coords[0]
    with pytest.raises(shapely.errors.GEOSException):
        fences.near_any_itinerary(np.array([x0, np.nan]), np.array([y0, np.nan]), POLICY.trips.max_network_distance_m)


# --- the stretches of a shape inside a zone ----------------------------------------------

# A shape that runs 1000 m east along y = 0, then 200 m north, then 1000 m back west along
# y = 200: a terminal loop, as São Paulo's line 8002-10 ends (tests/trips/test_realdata.py).
LOOP = LineString([(0, 0), (1000, 0), (1000, 200), (0, 200)])


def test_a_shape_starting_in_a_circle_is_inside_it_from_its_start_to_the_radius():
    r = POLICY.trips.terminal_zone_m  # 100 m shipped
    # back at (0, 200) the loop ends 200 m from the centre, past r: one stretch
    assert spans_along(LOOP, CircleZone("A", 0, 0, r)) == pytest.approx(np.array([[0, r]]), abs=1e-9)


def test_a_shape_passing_a_circle_twice_is_inside_it_twice():
    # a circle of 150 m around (500, 100): y = 0 passes 100 m from the centre, cutting
    # a chord of 2 × sqrt(150² − 100²) = 2 × 111.80 m; so does y = 200 on the way back,
    # which starts 1000 + 200 = 1200 m along at x = 1000: x = 500 ± 111.80 is 1700 ∓ 111.80
    half = np.sqrt(150**2 - 100**2)
    assert spans_along(LOOP, CircleZone("B", 500, 100, 150)) == pytest.approx(
        np.array([[500 - half, 500 + half], [1700 - half, 1700 + half]]), abs=1e-9)


def test_a_shape_ending_in_a_circle_is_inside_it_to_its_end():
    # 100 m around the loop's end (0, 200): entered 100 m before it, 2200 − 100 = 2100 m along
    assert spans_along(LOOP, CircleZone("C", 0, 200, 100)) == pytest.approx(np.array([[2100, 2200]]), abs=1e-9)


def test_a_shape_that_only_touches_a_circle_has_no_stretch_in_it():
    # y = 0 is tangent to a circle of 100 m around (500, −100): one point in common
    assert spans_along(LOOP, CircleZone("T", 500, -100, 100)).shape == (0, 2)


def test_a_polygon_zone_holds_the_stretch_between_its_edges():
    # a yard x 400..600, y −50..50 on the east leg
    assert spans_along(LOOP, PolygonZone("yard", box(400, -50, 600, 50))) == pytest.approx(
        np.array([[400, 600]]), abs=1e-9)


def test_an_itinerary_knows_the_stretches_of_its_shape_in_its_terminal_zones():
    r = POLICY.trips.terminal_zone_m
    itinerary = _itinerary()  # 1000 m east, zones of r at both ends
    assert itinerary.origin_spans_m == pytest.approx(np.array([[0, r]]), abs=1e-9)
    assert itinerary.destination_spans_m == pytest.approx(np.array([[1000 - r, 1000]]), abs=1e-9)


def test_itineraries_near_are_those_named_or_ending_in_a_zone_given_in_the_feed_s_order():
    # five itineraries on three terminals: A→B, B→A, B→C, C→A, and A→C on another line;
    # asked by key or by zone, each comes once, in the order the feed lists them
    zones = {name: CircleZone(name, x, 0, POLICY.trips.terminal_zone_m) for name, x in (("A", 0), ("B", 1000),
                                                                                          ("C", 2000))}
    ends = [("1", "A", "B"), ("1", "B", "A"), ("2", "B", "C"), ("2", "C", "A"), ("3", "A", "C")]
    itineraries = {}
    for n, (route, origin, destination) in enumerate(ends):
        pattern = Pattern(route, n % 2, f"S{n}", origin, destination)
        itineraries[pattern.key] = Itinerary(pattern, LineString([(zones[origin].x, 0), (zones[destination].x, 0)]),
                                             POLICY.trips.corridor_m, zones[origin], zones[destination], ())
    fences = Geofences(itineraries, (), 50.0)
    keys = list(itineraries)

    def near(named, zone_names):
        return [i.pattern.key for i in fences.itineraries_near(named, [id(zones[z]) for z in zone_names])]

    assert near([], []) == []
    assert near([keys[3], keys[0]], []) == [keys[0], keys[3]]
    assert near([], ["C"]) == [keys[2], keys[3], keys[4]]  # ending in C, or starting there
    assert near([keys[4]], ["B"]) == [keys[0], keys[1], keys[2], keys[4]]
    assert near(keys, ["A", "B", "C"]) == keys
    assert fences.itineraries_near([], [id(object())]) == []  # a zone no itinerary has
    assert fences.origin_zones == (zones["A"], zones["B"], zones["C"])


def test_terminal_zones_hold_what_each_zone_s_own_test_holds_circles_and_polygons_alike():
    # in_terminal_zones tests every circle's candidates at once and a polygon on its own:
    # per zone, exactly the positions its `contains` holds (on the edge, a hair beyond,
    # in two overlapping zones), the zones in the index's order, none empty
    r = POLICY.trips.terminal_zone_m
    circle_a, circle_b = CircleZone("A", 0, 0, r), CircleZone("B", 1.5 * r, 0, r)  # they overlap
    square = PolygonZone("P", box(3000, -50, 3100, 50))
    itineraries = {}
    for n, (origin, destination) in enumerate(((circle_a, circle_b), (circle_b, square), (square, circle_a))):
        pattern = Pattern("1", n % 2, f"S{n}", origin.name, destination.name)
        itineraries[pattern.key] = Itinerary(pattern, LineString([(0, 0), (3050, 0)]), POLICY.trips.corridor_m,
                                             origin, destination, ())
    fences = Geofences(itineraries, (), 50.0)
    rng = np.random.default_rng(3)
    x = np.concatenate(([0.6 * r, 0.6 * r + 1e-9, 0.75 * r, 3000.0, 3100.0, 3100.0 + 1e-9, 9e9],
                        rng.uniform(-r, 3200, 400)))
    y = np.concatenate(([0.8 * r, 0.8 * r, 0.0, 0.0, 50.0, 0.0, 0.0], rng.uniform(-r, r, 400)))
    zones = fences._terminal_index[0]
    expected = [(id(zone), zone.contains(x, y)) for zone in zones if zone.contains(x, y).any()]
    got = fences.in_terminal_zones(x, y)
    assert [zone for zone, _ in got] == [zone for zone, _ in expected] and len(got) == 3
    for (_, mask), (_, want) in zip(got, expected):
        np.testing.assert_array_equal(mask, want)
    assert got[0][1][0] and not got[0][1][1]  # on circle A's edge; a hair beyond it, out
    assert got[2][1][4] and not got[2][1][5]  # on the square's corner; a hair beyond it, out
