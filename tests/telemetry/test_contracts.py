"""Contract Structs: fields, defaults, epochs, round-trips, invariants."""

import json
import math
from datetime import datetime, timedelta, timezone

import msgspec
import pytest

from telemetry import (
    CatracaReading,
    Occurrence,
    Rejection,
    TachographPing,
    decode_catraca,
    decode_occurrence,
    decode_tachograph,
    encode,
    geometry_problem,
    to_builtins,
)

BRT = timezone(timedelta(hours=-3))

MINIMAL_PING = {
    "vehicle_id": "JN-101",
    "ts": "2026-12-01T08:00:00-03:00",
    "lat": -19.5171,
    "lon": -40.2659,
    "speed_kmh": 32.5,
}
FULL_PING = MINIMAL_PING | {
    "odometer_km": 120345.7,
    "route_id": "R01",
    "driver_id": "D-77",
    "doors_open": False,
    "seq": 17,
}
MINIMAL_CATRACA = {
    "vehicle_id": "JN-101",
    "ts": "2026-12-01T11:00:00Z",
    "counter": 5230,
    "seal_intact": True,
    "status": "ok",
}
FULL_CATRACA = MINIMAL_CATRACA | {"seq": 3}
MINIMAL_OCCURRENCE = {
    "id": "OC-1",
    "kind": "road_closure",
    "start": "2026-12-01T06:00:00-03:00",
    "end": "2026-12-01T18:00:00-03:00",
}
FULL_OCCURRENCE = MINIMAL_OCCURRENCE | {
    "kind": "authorized_detour",
    "route_id": "R01",
    "vehicle_id": "JN-101",
    "geometry": {
        "type": "LineString",
        "coordinates": [[-40.27, -19.52], [-40.26, -19.51], [-40.25, -19.50]],
    },
    "note": "Obra na Av. Presidente Vargas",
}

DECODERS = {
    "tachograph": decode_tachograph,
    "catraca": decode_catraca,
    "occurrences": decode_occurrence,
}
STRUCTS = {
    "tachograph": TachographPing,
    "catraca": CatracaReading,
    "occurrences": Occurrence,
}
VALID_MESSAGES = [
    ("tachograph", MINIMAL_PING),
    ("tachograph", FULL_PING),
    ("catraca", MINIMAL_CATRACA),
    ("catraca", FULL_CATRACA),
    ("occurrences", MINIMAL_OCCURRENCE),
    ("occurrences", FULL_OCCURRENCE),
]


def _raw(message: dict) -> bytes:
    return json.dumps(message).encode()


@pytest.mark.parametrize(("kind", "message"), VALID_MESSAGES)
def test_valid_message_decodes_to_its_struct(kind, message):
    decoded = DECODERS[kind](_raw(message))
    assert isinstance(decoded, STRUCTS[kind])


@pytest.mark.parametrize(("kind", "message"), VALID_MESSAGES)
def test_valid_message_round_trips_through_encode(kind, message):
    decoded = DECODERS[kind](_raw(message))
    again = DECODERS[kind](encode(decoded))
    assert again == decoded
    assert DECODERS[kind](json.dumps(to_builtins(decoded))) == decoded


@pytest.mark.parametrize(("kind", "message"), VALID_MESSAGES)
def test_valid_message_keeps_every_field_value(kind, message):
    builtins = to_builtins(DECODERS[kind](_raw(message)))
    for key, value in message.items():
        if key in {"ts", "start", "end"}:
            assert datetime.fromisoformat(builtins[key]) == datetime.fromisoformat(value)
        else:
            assert builtins[key] == value


def test_minimal_ping_defaults_optional_fields_to_none():
    ping = decode_tachograph(_raw(MINIMAL_PING))
    assert (ping.odometer_km, ping.route_id, ping.driver_id, ping.doors_open, ping.seq) == (
        None,
        None,
        None,
        None,
        None,
    )


def test_full_ping_exposes_typed_fields():
    ping = decode_tachograph(_raw(FULL_PING))
    assert ping.ts == datetime(2026, 12, 1, 8, 0, tzinfo=BRT)
    assert ping.ts.utcoffset() == timedelta(hours=-3)
    assert (ping.lat, ping.lon, ping.speed_kmh) == (-19.5171, -40.2659, 32.5)
    assert (ping.odometer_km, ping.route_id, ping.driver_id) == (120345.7, "R01", "D-77")
    assert ping.doors_open is False
    assert ping.seq == 17


def test_ping_epoch_is_posix_seconds_of_ts():
    ping = decode_tachograph(_raw(MINIMAL_PING))
    assert ping.epoch == datetime(2026, 12, 1, 11, 0, tzinfo=timezone.utc).timestamp()
    assert isinstance(ping.epoch, float)


def test_catraca_epoch_is_posix_seconds_of_ts():
    reading = decode_catraca(_raw(MINIMAL_CATRACA))
    assert reading.epoch == datetime(2026, 12, 1, 11, 0, tzinfo=timezone.utc).timestamp()


def test_occurrence_start_and_end_epochs():
    occ = decode_occurrence(_raw(MINIMAL_OCCURRENCE))
    assert occ.start_epoch == datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc).timestamp()
    assert occ.end_epoch - occ.start_epoch == 12 * 3600


def test_integer_json_numbers_are_accepted_for_float_fields():
    ping = decode_tachograph(_raw(MINIMAL_PING | {"lat": -19, "speed_kmh": 0, "odometer_km": 7}))
    assert isinstance(ping, TachographPing)
    assert isinstance(ping.lat, float) and ping.lat == -19.0
    assert isinstance(ping.speed_kmh, float) and isinstance(ping.odometer_km, float)


def test_utc_z_suffix_and_numeric_offset_denote_the_same_instant():
    z = decode_tachograph(_raw(MINIMAL_PING | {"ts": "2026-12-01T11:00:00Z"}))
    brt = decode_tachograph(_raw(MINIMAL_PING))
    assert z.ts == brt.ts and z.epoch == brt.epoch


def test_authorized_detour_without_geometry_is_valid():
    occ = decode_occurrence(_raw(MINIMAL_OCCURRENCE | {"kind": "authorized_detour"}))
    assert isinstance(occ, Occurrence)
    assert occ.kind == "authorized_detour" and occ.geometry is None


def test_occurrence_with_end_equal_to_start_is_valid():
    instant = "2026-12-01T06:00:00Z"
    occ = decode_occurrence(_raw(MINIMAL_OCCURRENCE | {"start": instant, "end": instant}))
    assert isinstance(occ, Occurrence)


@pytest.mark.parametrize(
    "kind", ["road_closure", "authorized_detour", "accident", "breakdown", "other"]
)
def test_every_occurrence_kind_is_accepted(kind):
    assert isinstance(decode_occurrence(_raw(MINIMAL_OCCURRENCE | {"kind": kind})), Occurrence)


@pytest.mark.parametrize("status", ["ok", "fault"])
def test_every_catraca_status_is_accepted(status):
    assert isinstance(decode_catraca(_raw(MINIMAL_CATRACA | {"status": status})), CatracaReading)


GOOD_GEOMETRIES = [
    {"type": "Point", "coordinates": [-40.26, -19.51]},
    {"type": "Point", "coordinates": [-40.26, -19.51, 120.0]},
    {"type": "MultiPoint", "coordinates": [[-40.26, -19.51], [-40.25, -19.5]]},
    {"type": "LineString", "coordinates": [[-40.26, -19.51], [-40.25, -19.5]]},
    {
        "type": "MultiLineString",
        "coordinates": [[[-40.26, -19.51], [-40.25, -19.5]], [[0, 0], [1, 1]]],
    },
    {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]},
    {
        "type": "MultiPolygon",
        "coordinates": [[[[0, 0], [1, 0], [1, 1], [0, 0]]], [[[2, 2], [3, 2], [3, 3], [2, 2]]]],
        "bbox": [0, 0, 3, 3],
    },
]


@pytest.mark.parametrize("geometry", GOOD_GEOMETRIES, ids=lambda g: g["type"])
def test_occurrence_accepts_each_geojson_geometry_type(geometry):
    occ = decode_occurrence(_raw(MINIMAL_OCCURRENCE | {"geometry": geometry}))
    assert isinstance(occ, Occurrence)
    assert occ.geometry == geometry
    assert geometry_problem(geometry) is None


BAD_GEOMETRIES = [
    ({"type": "Circle", "coordinates": [0, 0]}, "$.geometry.type"),
    ({"type": "GeometryCollection", "geometries": []}, "$.geometry.type"),
    ({"coordinates": [0, 0]}, "$.geometry.type"),
    ({"type": "Point"}, "$.geometry"),
    ({"type": "Point", "coordinates": "0,0"}, "$.geometry.coordinates"),
    ({"type": "Point", "coordinates": [0]}, "$.geometry.coordinates"),
    ({"type": "Point", "coordinates": [0, True]}, "$.geometry.coordinates[1]"),
    ({"type": "Point", "coordinates": [181, 0]}, "$.geometry.coordinates[0]"),
    ({"type": "Point", "coordinates": [0, -91]}, "$.geometry.coordinates[1]"),
    ({"type": "MultiPoint", "coordinates": []}, "$.geometry.coordinates"),
    ({"type": "LineString", "coordinates": [[0, 0]]}, "$.geometry.coordinates"),
    ({"type": "LineString", "coordinates": [[0, 0], "x"]}, "$.geometry.coordinates[1]"),
    ({"type": "MultiLineString", "coordinates": [[[0, 0]]]}, "$.geometry.coordinates[0]"),
    ({"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [0, 0]]]}, "$.geometry.coordinates[0]"),
    (
        {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1]]]},
        "$.geometry.coordinates[0]",
    ),
    ({"type": "MultiPolygon", "coordinates": [[]]}, "$.geometry.coordinates[0]"),
]


@pytest.mark.parametrize(("geometry", "path"), BAD_GEOMETRIES)
def test_geometry_problem_names_the_offending_path(geometry, path):
    problem = geometry_problem(geometry)
    assert problem is not None and problem.endswith(f"- at `{path}`")


def test_geometry_problem_handles_huge_integers_without_overflow():
    assert geometry_problem({"type": "Point", "coordinates": [0, 0, 10**400]}) is None
    assert geometry_problem({"type": "Point", "coordinates": [10**400, 0]}) is not None


def test_structs_are_frozen():
    ping = decode_tachograph(_raw(MINIMAL_PING))
    with pytest.raises(AttributeError):
        ping.lat = 0.0  # type: ignore[misc]


def test_ping_and_catraca_are_hashable_and_comparable():
    a = decode_tachograph(_raw(FULL_PING))
    b = decode_tachograph(_raw(FULL_PING))
    assert a == b and hash(a) == hash(b)
    c = decode_catraca(_raw(MINIMAL_CATRACA))
    assert {c, decode_catraca(_raw(MINIMAL_CATRACA))} == {c}


def test_structs_reject_positional_construction():
    with pytest.raises(TypeError):
        TachographPing("JN-101", datetime.now(timezone.utc), 0.0, 0.0, 0.0)  # type: ignore[misc]


def test_direct_construction_rejects_non_finite_speed():
    with pytest.raises(ValueError, match="finite"):
        TachographPing(
            vehicle_id="JN-101",
            ts=datetime(2026, 12, 1, tzinfo=timezone.utc),
            lat=0.0,
            lon=0.0,
            speed_kmh=math.inf,
        )


def test_direct_construction_rejects_end_before_start():
    with pytest.raises(ValueError, match="`end` must not be before `start`"):
        Occurrence(
            id="OC-1",
            kind="accident",
            start=datetime(2026, 12, 1, 9, tzinfo=timezone.utc),
            end=datetime(2026, 12, 1, 8, tzinfo=timezone.utc),
        )


def test_direct_construction_rejects_malformed_geometry():
    with pytest.raises(ValueError, match="Invalid GeoJSON geometry"):
        Occurrence(
            id="OC-1",
            kind="accident",
            start=datetime(2026, 12, 1, 8, tzinfo=timezone.utc),
            end=datetime(2026, 12, 1, 9, tzinfo=timezone.utc),
            geometry={"type": "Point", "coordinates": []},
        )


def test_msgspec_strict_mode_refuses_bool_for_float_and_int_for_bool():
    # Guards the assumption the reason mapping relies on: strict decoders never coerce.
    with pytest.raises(msgspec.ValidationError, match="got `bool`"):
        msgspec.json.decode(_raw(MINIMAL_PING | {"lat": True}), type=TachographPing)
    with pytest.raises(msgspec.ValidationError, match="got `int`"):
        msgspec.json.decode(_raw(MINIMAL_CATRACA | {"seal_intact": 1}), type=CatracaReading)


def test_rejection_serializes_with_the_documented_keys_in_order():
    rejection = decode_tachograph(b"{", location="T.jsonl:17")
    assert isinstance(rejection, Rejection)
    line = json.loads(encode(rejection))
    assert list(line) == ["source", "reason", "detail", "location", "raw"]
    assert line == to_builtins(rejection)
    assert line["location"] == "T.jsonl:17" and line["raw"] == "{"


@pytest.mark.parametrize("decode,message", [(decode_tachograph, MINIMAL_PING), (decode_catraca, MINIMAL_CATRACA)])
def test_received_at_is_optional_and_an_aware_time(decode, message):
    # when a clock other than the device's received it (an adapter, an AVL server): the
    # engine checks the device's clock against it (engine.clocks)
    assert decode(_raw(message)).received_at is None
    received = decode(_raw(message | {"received_at": "2026-12-01T11:00:02Z"})).received_at
    assert received == datetime(2026, 12, 1, 11, 0, 2, tzinfo=timezone.utc)


@pytest.mark.parametrize("received_at,reason", [("2026-12-01T11:00:02", "timestamp_without_offset"),
                                                ("9999-12-01T11:00:02Z", "out_of_range")])
def test_a_received_at_that_is_no_instant_of_this_system_is_rejected(received_at, reason):
    rejected = decode_tachograph(_raw(MINIMAL_PING | {"received_at": received_at}))
    assert isinstance(rejected, Rejection) and rejected.reason == reason
