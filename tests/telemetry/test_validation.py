"""Total decoding: reason codes, boundaries, Rejection contents, batches, properties."""

import json
from datetime import datetime, timedelta, timezone

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from telemetry import (
    RAW_SHOWN_BYTES,
    REASON_CODES,
    SOURCES,
    CatracaReading,
    CutMessage,
    Occurrence,
    Rejection,
    TachographPing,
    decode,
    decode_catraca,
    decode_many,
    decode_occurrence,
    decode_tachograph,
    encode,
)

PING = {
    "vehicle_id": "JN-101",
    "ts": "2026-12-01T08:00:00-03:00",
    "lat": -19.5171,
    "lon": -40.2659,
    "speed_kmh": 32.5,
}
CATRACA = {
    "vehicle_id": "JN-101",
    "ts": "2026-12-01T11:00:00Z",
    "counter": 5230,
    "seal_intact": True,
    "status": "ok",
}
OCCURRENCE = {
    "id": "OC-1",
    "kind": "road_closure",
    "start": "2026-12-01T06:00:00-03:00",
    "end": "2026-12-01T18:00:00-03:00",
}
BASE = {"tachograph": PING, "catraca": CATRACA, "occurrences": OCCURRENCE}
STRUCT = {"tachograph": TachographPing, "catraca": CatracaReading, "occurrences": Occurrence}
DECODER = {
    "tachograph": decode_tachograph,
    "catraca": decode_catraca,
    "occurrences": decode_occurrence,
}
REQUIRED = {
    "tachograph": ["vehicle_id", "ts", "lat", "lon", "speed_kmh"],
    "catraca": ["vehicle_id", "ts", "counter", "seal_intact", "status"],
    "occurrences": ["id", "kind", "start", "end"],
}


def _raw(message: dict) -> bytes:
    return json.dumps(message).encode()


def _with(source: str, /, **changes) -> bytes:
    return _raw(BASE[source] | changes)


def _assert_rejected(kind: str, raw, reason: str, path: str | None = None) -> Rejection:
    result = DECODER[kind](raw, location="L:1")
    assert isinstance(result, Rejection), result
    assert result.reason == reason, result.detail
    assert result.source == kind
    assert result.location == "L:1"
    assert "\n" not in result.detail and "\r" not in result.detail
    if path is not None:
        assert f"`{path}`" in result.detail, result.detail
    return result


# --- invalid_json ------------------------------------------------------------

INVALID_JSON_INPUTS = [
    pytest.param(b"", id="empty-bytes"),
    pytest.param("", id="empty-str"),
    pytest.param(b"\n", id="empty-line"),
    pytest.param(b"   \t", id="whitespace"),
    pytest.param(b"{", id="truncated"),
    pytest.param(b'{"vehicle_id": "JN-101",}', id="trailing-comma"),
    pytest.param(b"{'vehicle_id': 'JN-101'}", id="single-quotes"),
    pytest.param(b'{"lat": NaN}', id="nan-literal"),
    pytest.param(b'{"speed_kmh": Infinity}', id="infinity-literal"),
    pytest.param(b"\xff\xfe{}", id="invalid-utf8-prefix"),
    pytest.param(b"\xef\xbb\xbf{}", id="utf8-bom"),
    pytest.param("{\"note\": \"\ud800\"}", id="lone-surrogate-str"),
]


@pytest.mark.parametrize("kind", SOURCES)
@pytest.mark.parametrize("raw", INVALID_JSON_INPUTS)
def test_unparseable_input_is_rejected_invalid_json(kind, raw):
    _assert_rejected(kind, raw, "invalid_json")


@pytest.mark.parametrize("kind", SOURCES)
@pytest.mark.parametrize("trailer", [b" {}", b"\n{}", b" x", b","])
def test_valid_object_followed_by_more_text_is_rejected_invalid_json(kind, trailer):
    _assert_rejected(kind, _raw(BASE[kind]) + trailer, "invalid_json")


@pytest.mark.parametrize("kind", SOURCES)
def test_invalid_utf8_inside_a_field_value_is_rejected_invalid_json(kind):
    first_field = REQUIRED[kind][0]
    raw = _with(kind, **{first_field: "X"}).replace(b'"X"', b'"JN-\xc3"')
    _assert_rejected(kind, raw, "invalid_json")


@pytest.mark.parametrize("kind", SOURCES)
def test_invalid_utf8_inside_an_unknown_field_is_still_rejected_invalid_json(kind):
    raw = _raw(BASE[kind] | {"extra": "X"}).replace(b'"X"', b'"\xff"')
    _assert_rejected(kind, raw, "invalid_json")


def test_empty_line_detail_says_the_message_is_empty():
    assert "Empty message" in _assert_rejected("tachograph", b"\n", "invalid_json").detail


# --- not_an_object -----------------------------------------------------------


@pytest.mark.parametrize("kind", SOURCES)
@pytest.mark.parametrize("raw", [b"[]", b"[{}]", b"1", b"3.5", b'"text"', b"null", b"true"])
def test_json_that_is_not_an_object_is_rejected_not_an_object(kind, raw):
    rejection = _assert_rejected(kind, raw, "not_an_object", "$")
    assert rejection.detail.startswith("Expected `object`")


# --- missing_field -----------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "field"), [(kind, field) for kind in SOURCES for field in REQUIRED[kind]]
)
def test_message_without_a_required_field_is_rejected_missing_field(kind, field):
    message = {k: v for k, v in BASE[kind].items() if k != field}
    rejection = _assert_rejected(kind, _raw(message), "missing_field", "$")
    assert f"`{field}`" in rejection.detail


def test_empty_object_is_rejected_missing_field():
    _assert_rejected("tachograph", b"{}", "missing_field")


# --- wrong_type --------------------------------------------------------------

WRONG_TYPES = [
    ("tachograph", "lat", "-19.5"),
    ("tachograph", "lat", True),
    ("tachograph", "lon", False),
    ("tachograph", "speed_kmh", True),
    ("tachograph", "speed_kmh", None),
    ("tachograph", "odometer_km", [1.0]),
    ("tachograph", "doors_open", 0),
    ("tachograph", "doors_open", 1),
    ("tachograph", "doors_open", "true"),
    ("tachograph", "seq", 1.5),
    ("tachograph", "seq", True),
    ("tachograph", "vehicle_id", 101),
    ("tachograph", "vehicle_id", None),
    ("tachograph", "route_id", 1),
    ("tachograph", "ts", 1796122800),
    ("catraca", "counter", 1.5),
    ("catraca", "counter", True),
    ("catraca", "counter", "5230"),
    ("catraca", "seal_intact", 1),
    ("catraca", "seal_intact", "yes"),
    ("catraca", "seal_intact", None),
    ("catraca", "status", 0),
    ("catraca", "seq", "1"),
    ("occurrences", "id", 1),
    ("occurrences", "kind", None),
    ("occurrences", "start", 0),
    ("occurrences", "geometry", []),
    ("occurrences", "geometry", "POINT (0 0)"),
    ("occurrences", "note", 5),
]


@pytest.mark.parametrize(("kind", "field", "value"), WRONG_TYPES)
def test_value_of_the_wrong_json_type_is_rejected_wrong_type(kind, field, value):
    _assert_rejected(kind, _with(kind, **{field: value}), "wrong_type", f"$.{field}")


def test_bool_for_number_is_rejected_wrong_type():
    rejection = _assert_rejected("tachograph", _with("tachograph", lat=True), "wrong_type")
    assert rejection.detail == "Expected `float`, got `bool` - at `$.lat`"


def test_number_for_bool_is_rejected_wrong_type():
    rejection = _assert_rejected("catraca", _with("catraca", seal_intact=1), "wrong_type")
    assert rejection.detail == "Expected `bool`, got `int` - at `$.seal_intact`"


# --- out_of_range ------------------------------------------------------------

OUT_OF_RANGE = [
    ("tachograph", "lat", 90.0001),
    ("tachograph", "lat", -90.0001),
    ("tachograph", "lon", 180.0001),
    ("tachograph", "lon", -181),
    ("tachograph", "speed_kmh", -0.1),
    ("tachograph", "odometer_km", -1),
    ("tachograph", "seq", -1),
    ("tachograph", "vehicle_id", ""),
    ("catraca", "counter", -1),
    ("catraca", "vehicle_id", ""),
    ("catraca", "seq", -1),
    ("occurrences", "vehicle_id", ""),
]


@pytest.mark.parametrize(("kind", "field", "value"), OUT_OF_RANGE)
def test_value_outside_its_range_is_rejected_out_of_range(kind, field, value):
    _assert_rejected(kind, _with(kind, **{field: value}), "out_of_range", f"$.{field}")


@pytest.mark.parametrize("field", ["lat", "speed_kmh", "odometer_km"])
def test_ping_with_overflowing_float_is_rejected_out_of_range(field):
    raw = _with("tachograph", **{field: 1.0}).replace(
        f'"{field}": 1.0'.encode(), f'"{field}": 1e999'.encode()
    )
    _assert_rejected("tachograph", raw, "out_of_range", f"$.{field}")


@pytest.mark.parametrize("lat", [90.0, -90.0, 90, 0])
def test_ping_with_latitude_on_the_boundary_is_accepted(lat):
    assert decode_tachograph(_with("tachograph", lat=lat)).lat == lat


@pytest.mark.parametrize("lon", [180.0, -180.0])
def test_ping_with_longitude_on_the_boundary_is_accepted(lon):
    assert decode_tachograph(_with("tachograph", lon=lon)).lon == lon


def test_ping_at_latitude_90_0001_is_rejected_out_of_range():
    rejection = _assert_rejected("tachograph", _with("tachograph", lat=90.0001), "out_of_range")
    assert rejection.detail == "Expected `float` <= 90.0 - at `$.lat`"


@pytest.mark.parametrize("speed", [0, 0.0])
def test_ping_at_speed_zero_is_accepted(speed):
    assert decode_tachograph(_with("tachograph", speed_kmh=speed)).speed_kmh == 0.0


def test_ping_at_negative_speed_is_rejected_out_of_range():
    rejection = _assert_rejected("tachograph", _with("tachograph", speed_kmh=-0.1), "out_of_range")
    assert rejection.detail == "Expected `float` >= 0.0 - at `$.speed_kmh`"


def test_catraca_with_counter_zero_is_accepted():
    assert decode_catraca(_with("catraca", counter=0)).counter == 0


# --- timestamps --------------------------------------------------------------

TIME_FIELDS = [
    ("tachograph", "ts"),
    ("catraca", "ts"),
    ("occurrences", "start"),
    ("occurrences", "end"),
]
NAIVE_TIMESTAMPS = ["2026-12-01T08:00:00", "2026-12-01T08:00:00.250", "2026-12-01 08:00:00"]


@pytest.mark.parametrize(("kind", "field"), TIME_FIELDS)
@pytest.mark.parametrize("naive", NAIVE_TIMESTAMPS)
def test_naive_timestamp_is_rejected_timestamp_without_offset(kind, field, naive):
    raw = _with(kind, **{field: naive})
    _assert_rejected(kind, raw, "timestamp_without_offset", f"$.{field}")


def test_ping_with_naive_timestamp_is_rejected_timestamp_without_offset():
    raw = _with("tachograph", ts="2026-12-01T08:00:00")
    rejection = _assert_rejected("tachograph", raw, "timestamp_without_offset")
    assert rejection.detail == "Expected `datetime` with a timezone component - at `$.ts`"


NOT_TIMESTAMPS = [
    "garbage",
    "",
    "2026-12-01",
    "08:00:00Z",
    "2026-13-01T08:00:00Z",
    "2026-02-30T08:00:00Z",
    "2026-12-01T24:00:00Z",
    "2026-12-01T08:00Z",
    "2026-12-01T08:00:00+25:00",
    "01/12/2026 08:00",
]


@pytest.mark.parametrize(("kind", "field"), TIME_FIELDS)
@pytest.mark.parametrize("value", NOT_TIMESTAMPS)
def test_string_that_is_not_a_timestamp_is_rejected_invalid_timestamp(kind, field, value):
    _assert_rejected(kind, _with(kind, **{field: value}), "invalid_timestamp", f"$.{field}")


# --- invalid_value -----------------------------------------------------------

INVALID_VALUES = [
    ("catraca", "status", "OK"),
    ("catraca", "status", "unknown"),
    ("catraca", "status", ""),
    ("occurrences", "kind", "flood"),
    ("occurrences", "kind", "Road_Closure"),
    ("tachograph", "speed_source", "gps"),
    ("tachograph", "speed_source", "Derived"),
]


@pytest.mark.parametrize(("extra", "source"), [({}, "reported"), ({"speed_source": "reported"}, "reported"),
                                                ({"speed_source": "derived"}, "derived")])
def test_ping_speed_source_is_reported_unless_it_says_derived(extra, source):
    ping = decode_tachograph(json.dumps({**PING, **extra}).encode())
    assert isinstance(ping, TachographPing) and ping.speed_source == source


@pytest.mark.parametrize(("kind", "field", "value"), INVALID_VALUES)
def test_unknown_literal_is_rejected_invalid_value(kind, field, value):
    raw = _with(kind, **{field: value})
    rejection = _assert_rejected(kind, raw, "invalid_value", f"$.{field}")
    assert rejection.detail.startswith("Invalid enum value")


@pytest.mark.parametrize(
    ("geometry", "path"),
    [
        ({"type": "Circle", "coordinates": [0, 0]}, "$.geometry.type"),
        ({"type": "Point"}, "$.geometry"),
        ({"type": "Point", "coordinates": [0, "x"]}, "$.geometry.coordinates[1]"),
        ({"type": "LineString", "coordinates": [[0, 0]]}, "$.geometry.coordinates"),
        (
            {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1]]]},
            "$.geometry.coordinates[0]",
        ),
        ({"type": "MultiPolygon", "coordinates": []}, "$.geometry.coordinates"),
    ],
)
def test_occurrence_with_malformed_geometry_is_rejected_invalid_value(geometry, path):
    raw = _with("occurrences", kind="authorized_detour", geometry=geometry)
    rejection = _assert_rejected("occurrences", raw, "invalid_value", path)
    assert rejection.detail.startswith("Invalid GeoJSON geometry")


# --- end_before_start --------------------------------------------------------


def test_occurrence_ending_before_it_starts_is_rejected_end_before_start():
    raw = _with("occurrences", start="2026-12-01T10:00:00Z", end="2026-12-01T09:59:59Z")
    _assert_rejected("occurrences", raw, "end_before_start", "$.end")


def test_end_before_start_compares_instants_not_wall_clock():
    # 09:00-03:00 is 12:00Z, so it ends after a 10:00Z start despite the smaller wall time.
    raw = _with("occurrences", start="2026-12-01T10:00:00Z", end="2026-12-01T09:00:00-03:00")
    assert isinstance(decode_occurrence(raw), Occurrence)
    raw = _with("occurrences", start="2026-12-01T10:00:00-03:00", end="2026-12-01T12:00:00Z")
    _assert_rejected("occurrences", raw, "end_before_start")


def test_every_reason_code_is_documented():
    assert set(REASON_CODES) == {
        "invalid_json",
        "not_an_object",
        "missing_field",
        "wrong_type",
        "out_of_range",
        "timestamp_without_offset",
        "invalid_timestamp",
        "invalid_value",
        "end_before_start",
        "too_long",
    }


# --- too_long and the raw text kept ------------------------------------------


def test_a_message_longer_than_the_bound_is_too_long_unparsed_with_its_raw_cut():
    raw = _with("tachograph", note="x" * 70_000)
    result = decode("tachograph", raw, "L:1", max_bytes=65536)
    assert (result.reason, result.location) == ("too_long", "L:1")
    assert f"{len(raw)} bytes" in result.detail and "stream.max_message_bytes (65536)" in result.detail
    assert result.raw == raw[:RAW_SHOWN_BYTES].decode() and result.raw_length == len(raw)


def test_a_message_of_exactly_the_bound_is_decoded():
    raw = _raw(PING)
    assert isinstance(decode("tachograph", raw, max_bytes=len(raw)), TachographPing)
    assert decode("tachograph", raw, max_bytes=len(raw) - 1).reason == "too_long"


def test_a_message_its_reader_cut_is_too_long_with_the_length_it_had():
    result = decode("catraca", CutMessage(b"\0" * RAW_SHOWN_BYTES, 2**31), "zeros.jsonl:1", max_bytes=65536)
    assert (result.reason, result.raw_length, result.raw) == ("too_long", 2**31, "\0" * RAW_SHOWN_BYTES)
    assert "2147483648 bytes" in result.detail


def test_every_rejection_keeps_the_raw_text_up_to_the_bound_and_says_how_long_it_was():
    raw = b"not json " + b"y" * 5000
    result = _assert_rejected("tachograph", raw, "invalid_json")
    assert (result.raw, result.raw_length) == (raw[:RAW_SHOWN_BYTES].decode(), len(raw))
    assert list(json.loads(encode(result))) == ["source", "reason", "detail", "location", "raw_length", "raw"]


def test_a_short_rejection_is_kept_whole_and_written_as_before():
    result = _assert_rejected("tachograph", b"not json", "invalid_json")
    assert list(json.loads(encode(result))) == ["source", "reason", "detail", "location", "raw"]


def test_the_raw_text_is_cut_between_characters():
    raw = b'"' + "é".encode() * 1000 + b'"'  # 2-byte characters from byte 1: the cut falls inside one
    result = _assert_rejected("tachograph", raw, "not_an_object")
    assert result.raw == '"' + "é" * ((RAW_SHOWN_BYTES - 1) // 2) and result.raw_length == len(raw)


# --- forward compatibility ---------------------------------------------------


@pytest.mark.parametrize("kind", SOURCES)
def test_unknown_extra_fields_are_ignored(kind):
    extras = {
        "firmware": "2.1",
        "lat_raw": "x",
        "nested": {"a": [1, None, True]},
        "seal_intact_v2": 3,
    }
    plain = DECODER[kind](_raw(BASE[kind]))
    extended = DECODER[kind](_raw(extras | BASE[kind]))
    assert isinstance(extended, STRUCT[kind])
    assert extended == plain


def test_pretty_printed_multiline_json_is_accepted():
    assert isinstance(decode_tachograph(json.dumps(PING, indent=2)), TachographPing)


def test_trailing_newline_of_a_jsonl_line_is_accepted():
    assert isinstance(decode_catraca(_raw(CATRACA) + b"\r\n"), CatracaReading)


# --- Rejection contents ------------------------------------------------------


def test_rejection_keeps_raw_text_and_location_for_bytes_input():
    raw = _with("tachograph", route_id="São Mateus", lat=91)
    rejection = decode_tachograph(raw, location="T.jsonl:17")
    assert isinstance(rejection, Rejection)
    assert rejection.raw == raw.decode("utf-8")
    assert rejection.location == "T.jsonl:17"
    assert rejection.source == "tachograph"


def test_rejection_keeps_raw_text_for_str_input():
    raw = '{"vehicle_id": "JN-101", "status": "quebrada ção"}'
    rejection = decode_catraca(raw, location="catraca/2/1234")
    assert rejection.raw == raw and rejection.location == "catraca/2/1234"


def test_rejection_location_defaults_to_none():
    assert decode_occurrence(b"[]").location is None


def test_rejection_of_invalid_utf8_replaces_bad_bytes_in_raw():
    rejection = decode_tachograph(b'{"vehicle_id": "JN\xff"}')
    assert rejection.reason == "invalid_json"
    assert rejection.raw == '{"vehicle_id": "JN\ufffd"}'


def test_rejection_of_lone_surrogate_text_is_still_encodable():
    rejection = decode_tachograph('{"vehicle_id": "\ud800"}')
    assert rejection.reason == "invalid_json"
    assert json.loads(encode(rejection))["raw"].startswith('{"vehicle_id": "')


def test_rejection_detail_stays_on_one_line_for_multiline_input():
    raw = json.dumps(PING | {"lat": 95}, indent=2)
    rejection = decode_tachograph(raw)
    assert rejection.reason == "out_of_range"
    assert "\n" not in rejection.detail and rejection.raw == raw


def test_rejection_detail_names_the_field_path_for_missing_field():
    rejection = decode_tachograph(_raw({k: v for k, v in PING.items() if k != "lon"}))
    assert rejection.detail == "Object missing required field `lon` - at `$`"


def test_bytearray_and_memoryview_inputs_are_accepted():
    raw = _raw(PING)
    assert decode_tachograph(bytearray(raw)) == decode_tachograph(raw)
    assert decode_tachograph(memoryview(raw)) == decode_tachograph(raw)


def test_generic_decode_rejects_unknown_source_as_programming_error():
    with pytest.raises(ValueError, match="unknown telemetry source"):
        decode("gps", _raw(PING))  # type: ignore[arg-type]


# --- decode_many -------------------------------------------------------------


def test_decode_many_splits_good_and_bad_preserving_order():
    raws = [
        _with("tachograph", seq=0),
        b"not json",
        _with("tachograph", seq=1),
        _with("tachograph", lat=100),
        _with("tachograph", seq=2),
        b"[]",
    ]
    good, bad = decode_many("tachograph", raws)
    assert [p.seq for p in good] == [0, 1, 2]
    assert [r.reason for r in bad] == ["invalid_json", "out_of_range", "not_an_object"]
    assert [r.raw for r in bad] == ["not json", raws[3].decode(), "[]"]
    assert all(r.location is None for r in bad)


def test_decode_many_pairs_locations_with_messages():
    raws = (line for line in [_raw(CATRACA), b"{", _with("catraca", status="x")])
    locations = [f"C.jsonl:{n}" for n in (1, 2, 3)]
    good, bad = decode_many("catraca", raws, locations)
    assert len(good) == 1
    assert [(r.location, r.reason) for r in bad] == [
        ("C.jsonl:2", "invalid_json"),
        ("C.jsonl:3", "invalid_value"),
    ]


def test_decode_many_of_occurrences_returns_occurrences():
    good, bad = decode_many("occurrences", [_raw(OCCURRENCE)])
    assert bad == [] and isinstance(good[0], Occurrence)


def test_decode_many_of_nothing_is_two_empty_lists():
    assert decode_many("catraca", []) == ([], [])


def test_decode_many_with_mismatched_locations_raises():
    with pytest.raises(ValueError):
        decode_many("catraca", [_raw(CATRACA)], ["a", "b"])


def test_decode_many_with_unknown_kind_raises_even_when_empty():
    with pytest.raises(ValueError, match="unknown telemetry source"):
        decode_many("occurrence", [])  # type: ignore[call-overload]


# --- properties --------------------------------------------------------------

# every field of the contracts, read off them: one added later (speed_source was, and
# hypothesis drew it from the source with a null, not a SpeedSource) is never an "extra"
KNOWN_FIELDS = {f.encode_name for contract in (TachographPing, CatracaReading, Occurrence)
                for f in msgspec.structs.fields(contract)}
offsets = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
# valid timestamps lie in 2000-2100 (contract), whatever their offset
aware_datetimes = st.datetimes(
    min_value=datetime(2000, 1, 2), max_value=datetime(2099, 12, 30), timezones=offsets
)
finite = {"allow_nan": False, "allow_infinity": False}
non_empty_text = st.text(min_size=1)
optional_text = st.none() | st.text()
extra_fields = st.dictionaries(
    # Keys never collide with contract fields (message | extras would not be "extra").
    st.text().filter(lambda k: k not in KNOWN_FIELDS),
    st.none() | st.booleans() | st.integers() | st.text(),
    max_size=3,
)

ping_messages = st.fixed_dictionaries(
    {
        "vehicle_id": non_empty_text,
        "ts": aware_datetimes,
        "lat": st.floats(min_value=-90, max_value=90, **finite),
        "lon": st.floats(min_value=-180, max_value=180, **finite) | st.integers(-180, 180),
        "speed_kmh": st.floats(min_value=0, **finite) | st.integers(min_value=0, max_value=400),
    },
    optional={
        "odometer_km": st.none() | st.floats(min_value=0, **finite),
        "route_id": optional_text,
        "driver_id": optional_text,
        "doors_open": st.none() | st.booleans(),
        "seq": st.none() | st.integers(min_value=0),
    },
)
catraca_messages = st.fixed_dictionaries(
    {
        "vehicle_id": non_empty_text,
        "ts": aware_datetimes,
        "counter": st.integers(min_value=0),
        "seal_intact": st.booleans(),
        "status": st.sampled_from(["ok", "fault"]),
    },
    optional={"seq": st.none() | st.integers(min_value=0)},
)
positions = st.tuples(
    st.floats(min_value=-180, max_value=180, **finite),
    st.floats(min_value=-90, max_value=90, **finite),
).map(list)
geometries = st.one_of(
    positions.map(lambda p: {"type": "Point", "coordinates": p}),
    st.lists(positions, min_size=2, max_size=5).map(
        lambda ps: {"type": "LineString", "coordinates": ps}
    ),
    st.lists(positions, min_size=3, max_size=5).map(
        lambda ps: {"type": "Polygon", "coordinates": [ps + [ps[0]]]}
    ),
)
occurrence_messages = st.builds(
    lambda base, start, duration: base
    | {"start": start, "end": start + duration},
    st.fixed_dictionaries(
        {
            "id": st.text(),
            "kind": st.sampled_from(
                ["road_closure", "authorized_detour", "accident", "breakdown", "other"]
            ),
        },
        optional={
            "route_id": optional_text,
            "vehicle_id": st.none() | non_empty_text,
            "geometry": st.none() | geometries,
            "note": optional_text,
        },
    ),
    st.datetimes(
        min_value=datetime(2000, 1, 2), max_value=datetime(2098, 12, 30), timezones=offsets
    ),
    st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=365)),
)


def _as_json(message: dict) -> bytes:
    return json.dumps(
        {k: v.isoformat() if isinstance(v, datetime) else v for k, v in message.items()}
    ).encode()


def _assert_same_fields(struct, message: dict) -> None:
    for key, value in message.items():
        decoded = getattr(struct, key)
        assert decoded == value, key
        if isinstance(value, datetime):
            assert decoded.utcoffset() == value.utcoffset()


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(message=ping_messages, extras=extra_fields)
def test_property_any_valid_ping_object_decodes(message, extras):
    ping = decode_tachograph(_as_json(extras | message))
    assert isinstance(ping, TachographPing), ping
    _assert_same_fields(ping, message)
    assert decode_tachograph(encode(ping)) == ping


@given(message=catraca_messages, extras=extra_fields)
def test_property_any_valid_catraca_object_decodes(message, extras):
    reading = decode_catraca(_as_json(extras | message))
    assert isinstance(reading, CatracaReading), reading
    _assert_same_fields(reading, message)
    assert decode_catraca(encode(reading)) == reading


@given(message=occurrence_messages)
def test_property_any_valid_occurrence_object_decodes(message):
    occ = decode_occurrence(_as_json(message))
    assert isinstance(occ, Occurrence), occ
    _assert_same_fields(occ, message)
    assert occ.start_epoch <= occ.end_epoch
    assert decode_occurrence(encode(occ)) == occ


def _assert_total(kind: str, raw) -> None:
    result = DECODER[kind](raw, location="fuzz")
    assert isinstance(result, (STRUCT[kind], Rejection))
    if isinstance(result, Rejection):
        assert result.reason in REASON_CODES
        assert result.location == "fuzz" and result.source == kind
        assert "\n" not in result.detail
        json.loads(encode(result))  # always writable to rejected.jsonl


@given(kind=st.sampled_from(SOURCES), raw=st.binary(max_size=200))
def test_property_arbitrary_bytes_never_raise(kind, raw):
    _assert_total(kind, raw)


@given(kind=st.sampled_from(SOURCES), raw=st.text(max_size=200))
def test_property_arbitrary_text_never_raises(kind, raw):
    _assert_total(kind, raw)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(**finite) | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@given(kind=st.sampled_from(SOURCES), data=st.data())
def test_property_valid_message_with_one_field_replaced_never_raises(kind, data):
    base = dict(BASE[kind])
    field = data.draw(st.sampled_from([*base, "seq", "geometry", "doors_open", "odometer_km"]))
    base[field] = data.draw(json_values)
    _assert_total(kind, _raw(base))


@given(kind=st.sampled_from(SOURCES), value=json_values)
def test_property_arbitrary_json_never_raises(kind, value):
    _assert_total(kind, json.dumps(value))


# --- hostile input: nesting, clocks a thousand years off, a byte order mark ------------


@pytest.mark.parametrize("kind", SOURCES)
def test_nesting_deeper_than_any_message_is_rejected_before_parsing(kind):
    # 2 KB nested 1,000 deep, inside a field nobody reads: before this, a RecursionError
    # (a traceback in replay, an unguarded crash in the worker)
    raw = _raw(BASE[kind] | {"firmware": None}).replace(b"null", b"[" * 1000 + b"]" * 1000)
    rejection = _assert_rejected(kind, raw, "invalid_json")
    assert "Nested deeper than 32 levels" in rejection.detail
    # brackets inside a string are text, not nesting
    assert isinstance(DECODER[kind](_with(kind, firmware="[" * 1000)), STRUCT[kind])


@pytest.mark.parametrize("ts", ["0001-01-01T00:00:00-03:00", "9999-12-30T00:00:00-03:00",
                                "1999-12-31T23:59:59Z", "2100-01-01T00:00:00Z"])
@pytest.mark.parametrize("kind", ["tachograph", "catraca"])
def test_a_timestamp_outside_2000_to_2100_is_out_of_range(kind, ts):
    rejection = _assert_rejected(kind, _with(kind, ts=ts), "out_of_range", "$.ts")
    assert "from 2000-01-01 to 2100-01-01" in rejection.detail


def test_an_occurrence_ending_in_year_9999_is_out_of_range():
    _assert_rejected("occurrences", _with("occurrences", end="9999-12-30T00:00:00-03:00"), "out_of_range", "$.end")


@pytest.mark.parametrize("kind", SOURCES)
def test_a_byte_order_mark_is_named(kind):
    rejection = _assert_rejected(kind, b"\xef\xbb\xbf" + _raw(BASE[kind]), "invalid_json")
    assert "byte order mark (BOM" in rejection.detail  # before: "invalid character (byte 0)"


nested = st.recursive(st.none() | st.integers(), lambda children: st.lists(children, max_size=2), max_leaves=3)


@given(kind=st.sampled_from(SOURCES), depth=st.integers(min_value=0, max_value=5000))
def test_property_any_depth_of_nesting_never_raises(kind, depth):
    raw = _raw(BASE[kind] | {"firmware": None}).replace(b"null", b"[" * depth + b"]" * depth)
    _assert_total(kind, raw)
