"""Geofences built from the tiny fixture feed, with and without GeoJSON overrides.

Fixture `tests/gtfs/fixtures/tiny/` in EPSG:31984: A (356000, 7815000), B (359000, 7815000),
C (359000, 7819000); shape L = A -> B -> C, R = C -> B -> A (3000 m + 4000 m = 7000 m).
Override polygons are written in WGS84; their corners are UTM coordinates inverse-projected
with this throwaway recipe and pasted with 8 decimals (≈ 1 mm):

    from pyproj import Transformer
    t = Transformer.from_crs(31984, 4326, always_xy=True)
    lon, lat = t.transform(358900, 7814900)
    print(f"[{lon:.8f}, {lat:.8f}]")  # [-40.34672604, -19.75653100]
"""

import json
import re
from pathlib import Path

import msgspec
import numpy as np
import pytest

from geofences import CircleZone, GeofenceError, PolygonZone, build_geofences
from gtfs import load_feed
from kernel.policy import load_policy

TINY = Path(__file__).parent.parent / "gtfs" / "fixtures" / "tiny"
POLICY = load_policy()

A, B, C = (356000, 7815000), (359000, 7815000), (359000, 7819000)

# 200 m square centred on B: UTM x 358900..359100, y 7814900..7815100
SQUARE_AROUND_B = [
    [-40.34672604, -19.75653100],  # (358900, 7814900)
    [-40.34481754, -19.75654534],  # (359100, 7814900)
    [-40.34480239, -19.75473846],  # (359100, 7815100)
    [-40.34671087, -19.75472411],  # (358900, 7815100)
    [-40.34672604, -19.75653100],
]
# Bus yard at C: UTM x 358900..359100, y 7818950..7819300 (50 m south to 300 m north of C)
YARD_AT_C = [
    [-40.34641927, -19.71994149],  # (358900, 7818950)
    [-40.34451120, -19.71995581],  # (359100, 7818950)
    [-40.34448476, -19.71679375],  # (359100, 7819300)
    [-40.34639279, -19.71677943],  # (358900, 7819300)
    [-40.34641927, -19.71994149],
]


@pytest.fixture(scope="module")
def tiny():
    return load_feed(TINY)


def _feature(properties, geometry):
    return {"type": "Feature", "properties": properties, "geometry": geometry}


def _polygon(ring):
    return {"type": "Polygon", "coordinates": [ring]}


def _write(tmp_path, doc) -> Path:
    path = tmp_path / "overrides.geojson"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _collection(*features):
    return {"type": "FeatureCollection", "features": list(features)}


def _xy(*points):
    xs, ys = zip(*points)
    return np.array(xs, dtype=float), np.array(ys, dtype=float)


# --- without overrides -------------------------------------------------------------------


def test_one_itinerary_per_pattern(tiny):
    fences = build_geofences(tiny, POLICY)
    # patterns: E dir 1 on R, F dir 0 on L, T dir 0 on L, T dir 1 on R
    assert sorted(fences.itineraries) == ["E:1:R", "F:0:L", "T:0:L", "T:1:R"]
    assert sorted(fences.itineraries) == sorted(p.key for p in tiny.patterns)
    for key, itinerary in fences.itineraries.items():
        assert itinerary.pattern.key == key
        assert itinerary.line.equals(tiny.shapes[itinerary.pattern.shape_id].line)
        assert itinerary.length_m == pytest.approx(7000, abs=0.01)  # 3000 m + 4000 m
        assert itinerary.corridor_m == 50  # policy trips.corridor_m


def test_a_trip_names_its_itinerary_by_route_direction_and_shape(tiny):
    fences = build_geofences(tiny, POLICY)
    for trip in tiny.trips.values():
        itinerary = fences.itinerary(trip.route_id, trip.direction_id, trip.shape_id)
        pattern = itinerary.pattern
        assert (pattern.route_id, pattern.direction_id, pattern.shape_id) == \
            (trip.route_id, trip.direction_id, trip.shape_id)
    with pytest.raises(KeyError):
        fences.itinerary("T", 1, "L")  # route T runs direction 1 on shape R only


@pytest.mark.parametrize(("key", "origin", "destination"), [("T:0:L", A, C), ("T:1:R", C, A)])
def test_terminal_zones_are_circles_of_the_policy_radius_at_first_and_last_stops(
    tiny, key, origin, destination
):
    itinerary = build_geofences(tiny, POLICY).itineraries[key]
    for zone, (x, y), stop_id in (
        (itinerary.origin, origin, itinerary.pattern.origin_stop_id),
        (itinerary.destination, destination, itinerary.pattern.destination_stop_id),
    ):
        assert isinstance(zone, CircleZone)
        assert zone.name == stop_id
        assert (zone.x, zone.y) == pytest.approx((x, y), abs=0.01)
        assert zone.radius_m == 100  # policy trips.terminal_zone_m


def test_a_terminal_named_in_the_policy_has_its_own_radius(tiny):
    # buses lay over 150 m from the feed's stop C: the policy gives C 200 m, A keeps 100 m
    policy = msgspec.structs.replace(
        POLICY, trips=msgspec.structs.replace(POLICY.trips, terminal_zone_m_by_stop={"C": 200.0}))
    itinerary = build_geofences(tiny, policy).itineraries["T:0:L"]
    assert (itinerary.origin.radius_m, itinerary.destination.radius_m) == (100, 200)
    x, y = _xy((C[0] + 150, C[1]))
    assert itinerary.destination.contains(x, y).tolist() == [True]


def test_a_policy_radius_for_a_stop_that_is_no_terminal_is_refused(tiny):
    policy = msgspec.structs.replace(
        POLICY, trips=msgspec.structs.replace(POLICY.trips, terminal_zone_m_by_stop={"B": 200.0}))
    with pytest.raises(GeofenceError, match=r"terminal_zone_m_by_stop: 'B' is no terminal stop"):
        build_geofences(tiny, policy)


def test_origin_zone_membership_at_the_terminal_radius(tiny):
    origin = build_geofences(tiny, POLICY).itineraries["T:0:L"].origin  # around A
    # 99.9 m and 100.1 m east of A along the shape
    x, y = _xy((A[0] + 99.9, A[1]), (A[0] + 100.1, A[1]))
    assert origin.contains(x, y).tolist() == [True, False]


@pytest.mark.parametrize(("key", "order"), [("T:0:L", ["A", "B", "C"]), ("T:1:R", ["C", "B", "A"])])
def test_stop_zones_follow_the_trip_with_the_a07_radius(tiny, key, order):
    stops = build_geofences(tiny, POLICY).itineraries[key].stops
    assert [s.name for s in stops] == order
    assert all(s.radius_m == 40 for s in stops)  # policy a07.stop_radius_m
    corner = stops[1]
    assert (corner.x, corner.y) == pytest.approx(B, abs=0.01)


def test_without_overrides_the_speed_limit_is_the_policy_default(tiny):
    fences = build_geofences(tiny, POLICY)
    assert fences.speed_zones == ()
    assert fences.speed_limit(*_xy(A, B, C)).tolist() == [60, 60, 60]  # c01.default_limit_kmh


# --- overrides ---------------------------------------------------------------------------


def test_speed_zone_override_lowers_the_limit_inside_only(tiny, tmp_path):
    overrides = _write(
        tmp_path,
        _collection(
            _feature(
                {"kind": "speed_zone", "speed_limit_kmh": 40, "name": "escola"}, _polygon(SQUARE_AROUND_B)
            )
        ),
    )
    fences = build_geofences(tiny, POLICY, overrides)
    assert [(z.zone.name, z.limit_kmh) for z in fences.speed_zones] == [("escola", 40.0)]
    # B itself; 90 m west and north of B (inside the ±100 m square); 110 m east (outside); A
    x, y = _xy(B, (B[0] - 90, B[1] + 90), (B[0] + 110, B[1]), A)
    assert fences.speed_limit(x, y).tolist() == [40, 40, 60, 60]


def test_speed_zone_without_name_is_named_by_its_index(tiny, tmp_path):
    overrides = _write(
        tmp_path,
        _collection(
            _feature({"kind": "terminal_zone", "stop_id": "C"}, _polygon(YARD_AT_C)),
            _feature({"kind": "speed_zone", "speed_limit_kmh": 30}, _polygon(SQUARE_AROUND_B)),
        ),
    )
    fences = build_geofences(tiny, POLICY, overrides)
    assert [(z.zone.name, z.limit_kmh) for z in fences.speed_zones] == [("speed_zone_1", 30.0)]


def test_terminal_zone_override_replaces_the_circle_of_that_terminal(tiny, tmp_path):
    overrides = _write(
        tmp_path, _collection(_feature({"kind": "terminal_zone", "stop_id": "C"}, _polygon(YARD_AT_C)))
    )
    fences = build_geofences(tiny, POLICY, overrides)
    outbound, inbound = fences.itineraries["T:0:L"], fences.itineraries["T:1:R"]
    assert isinstance(outbound.destination, PolygonZone) and outbound.destination.name == "C"
    assert isinstance(inbound.origin, PolygonZone) and inbound.origin.name == "C"
    # A keeps its 100 m circle
    assert isinstance(outbound.origin, CircleZone) and outbound.origin.radius_m == 100
    # 250 m north of C: outside the old 100 m circle, inside the yard (up to 300 m north);
    # 80 m south of C: inside the old circle, outside the yard (only 50 m south)
    x, y = _xy((C[0], C[1] + 250), (C[0], C[1] - 80), C)
    assert outbound.destination.contains(x, y).tolist() == [True, False, True]
    assert inbound.origin.contains(x, y).tolist() == [True, False, True]


def test_multipolygon_speed_zone_is_accepted(tiny, tmp_path):
    multi = {"type": "MultiPolygon", "coordinates": [[SQUARE_AROUND_B], [YARD_AT_C]]}
    zone = _feature({"kind": "speed_zone", "speed_limit_kmh": 20}, multi)
    overrides = _write(tmp_path, _collection(zone))
    fences = build_geofences(tiny, POLICY, overrides)
    assert fences.speed_limit(*_xy(A, B, C)).tolist() == [60, 20, 20]  # B and C inside, A not


# --- invalid overrides -------------------------------------------------------------------


@pytest.mark.parametrize(
    "doc",
    [
        pytest.param(
            _feature({"kind": "speed_zone", "speed_limit_kmh": 40}, _polygon(SQUARE_AROUND_B)),
            id="a_single_feature",
        ),
        pytest.param([], id="a_list"),
        pytest.param({"type": "GeometryCollection", "geometries": []}, id="a_geometry_collection"),
    ],
)
def test_overrides_that_are_not_a_feature_collection_are_refused(tiny, tmp_path, doc):
    path = _write(tmp_path, doc)
    message = re.escape(f"{path}: geofence overrides must be a GeoJSON FeatureCollection")
    with pytest.raises(GeofenceError, match=message):
        build_geofences(tiny, POLICY, path)


def test_unknown_kind_is_refused(tiny, tmp_path):
    path = _write(tmp_path, _collection(_feature({"kind": "parking"}, _polygon(SQUARE_AROUND_B))))
    message = re.escape(f"{path}: feature 0: unknown kind 'parking'")
    with pytest.raises(GeofenceError, match=message):
        build_geofences(tiny, POLICY, path)


def test_feature_without_kind_is_refused(tiny, tmp_path):
    path = _write(tmp_path, _collection(_feature({}, _polygon(SQUARE_AROUND_B))))
    with pytest.raises(GeofenceError, match=re.escape(f"{path}: feature 0: unknown kind None")):
        build_geofences(tiny, POLICY, path)


@pytest.mark.parametrize(
    "properties",
    [
        pytest.param({"kind": "speed_zone"}, id="missing"),
        pytest.param({"kind": "speed_zone", "speed_limit_kmh": 0}, id="zero"),
        pytest.param({"kind": "speed_zone", "speed_limit_kmh": -40}, id="negative"),
        pytest.param({"kind": "speed_zone", "speed_limit_kmh": "40"}, id="a_string"),
        pytest.param({"kind": "speed_zone", "speed_limit_kmh": True}, id="a_boolean"),
    ],
)
def test_speed_zone_without_a_positive_limit_is_refused(tiny, tmp_path, properties):
    path = _write(tmp_path, _collection(_feature(properties, _polygon(SQUARE_AROUND_B))))
    message = re.escape(f"{path}: feature 0: speed_zone needs a positive speed_limit_kmh")
    with pytest.raises(GeofenceError, match=message):
        build_geofences(tiny, POLICY, path)


def test_terminal_zone_without_stop_id_is_refused(tiny, tmp_path):
    path = _write(tmp_path, _collection(_feature({"kind": "terminal_zone"}, _polygon(YARD_AT_C))))
    message = re.escape(f"{path}: feature 0: terminal_zone needs a stop_id")
    with pytest.raises(GeofenceError, match=message):
        build_geofences(tiny, POLICY, path)


def test_point_geometry_is_refused_naming_the_feature(tiny, tmp_path):
    point = {"type": "Point", "coordinates": SQUARE_AROUND_B[0]}
    path = _write(
        tmp_path,
        _collection(
            _feature({"kind": "speed_zone", "speed_limit_kmh": 40}, _polygon(SQUARE_AROUND_B)),
            _feature({"kind": "speed_zone", "speed_limit_kmh": 40}, point),
        ),
    )
    message = re.escape(f"{path}: feature 1: zones must be valid (Multi)Polygons")
    with pytest.raises(GeofenceError, match=message):
        build_geofences(tiny, POLICY, path)


def test_self_intersecting_polygon_is_refused(tiny, tmp_path):
    # corners in the order SW, NE, SE, NW: a bow tie crossing itself at B
    bow_tie = [SQUARE_AROUND_B[i] for i in (0, 2, 1, 3, 0)]
    bad = _feature({"kind": "speed_zone", "speed_limit_kmh": 40}, _polygon(bow_tie))
    path = _write(tmp_path, _collection(bad))
    message = re.escape(f"{path}: feature 0: zones must be valid (Multi)Polygons")
    with pytest.raises(GeofenceError, match=message):
        build_geofences(tiny, POLICY, path)


def test_feature_without_geometry_is_refused(tiny, tmp_path):
    path = _write(tmp_path, _collection({"type": "Feature", "properties": {"kind": "speed_zone"}}))
    with pytest.raises(GeofenceError, match=re.escape(f"{path}: feature 0: invalid geometry")):
        build_geofences(tiny, POLICY, path)


def test_feature_that_is_not_an_object_is_refused(tiny, tmp_path):
    path = _write(tmp_path, {"type": "FeatureCollection", "features": ["speed_zone"]})
    with pytest.raises(GeofenceError, match=re.escape(f"{path}: feature 0:")):
        build_geofences(tiny, POLICY, path)


def test_unparsable_json_is_refused(tiny, tmp_path):
    path = tmp_path / "overrides.geojson"
    path.write_text('{"type": "FeatureCollection", "features": [', encoding="utf-8")
    with pytest.raises(GeofenceError, match=re.escape(f"cannot read geofence overrides {path}:")):
        build_geofences(tiny, POLICY, path)


def test_missing_overrides_file_is_refused(tiny, tmp_path):
    path = tmp_path / "nowhere.geojson"
    with pytest.raises(GeofenceError, match=re.escape(f"cannot read geofence overrides {path}:")):
        build_geofences(tiny, POLICY, path)
