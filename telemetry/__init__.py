"""Telemetry data contracts and total decoding for fiscaliza.

Three sources feed the enforcement pipeline, one JSON object per message
(JSON Lines files or stream records). All timestamps are ISO-8601 / RFC 3339
strings that MUST carry a UTC offset (``Z`` or ``±HH:MM``); naive timestamps
are rejected. Unknown extra fields are ignored, for forward compatibility.
Numbers are strict: JSON integers are accepted for float fields, but booleans
are never numbers, numbers are never booleans, and strings are never numbers.

``tachograph`` -> ``TachographPing``
    required: ``vehicle_id`` (non-empty str), ``ts`` (aware datetime),
    ``lat`` (float in [-90, 90]), ``lon`` (float in [-180, 180]),
    ``speed_kmh`` (finite float >= 0);
    optional (default None): ``odometer_km`` (finite float >= 0), ``route_id``,
    ``driver_id`` (str), ``doors_open`` (bool), ``seq`` (int >= 0),
    ``received_at`` (aware datetime: when a clock other than the device's — the
    ingest adapter's, the AVL server's — received it; the engine checks the
    device's clock against it, ``engine.clocks``).

``catraca`` -> ``CatracaReading`` (turnstile)
    required: ``vehicle_id`` (non-empty str), ``ts`` (aware datetime),
    ``counter`` (cumulative int >= 0), ``seal_intact`` (bool),
    ``status`` ("ok" | "fault"); optional: ``seq`` (int >= 0), ``received_at``
    (as the tachograph's).

``occurrences`` -> ``Occurrence``
    required: ``id`` (str), ``kind`` ("road_closure" | "authorized_detour" |
    "accident" | "breakdown" | "other"), ``start`` and ``end`` (aware
    datetimes, ``end >= start``); optional: ``route_id`` (str), ``vehicle_id``
    (non-empty str), ``geometry`` (GeoJSON Point, LineString, Polygon,
    MultiPoint, MultiLineString or MultiPolygon object, WGS84 lon/lat),
    ``note`` (str). An ``authorized_detour`` without geometry is route-wide.

Each Struct exposes POSIX seconds: ``epoch`` (pings, readings) or
``start_epoch`` / ``end_epoch`` (occurrences).

``decode_tachograph`` / ``decode_catraca`` / ``decode_occurrence`` /
``decode_many`` never raise for bad input; they return a ``Rejection`` whose
``reason`` is one of ``REASON_CODES``. ``encode`` / ``to_builtins`` serialize
Structs and Rejections (a rejection line is
``{"source","reason","detail","location","raw"}``; ``raw`` holds at most the
message's first ``RAW_SHOWN_BYTES``, and a ``raw_length`` before it gives the
message's length where it was cut). A message longer than the policy's bound is
rejected as ``too_long`` unparsed; a file's reader passes such a line as a
``CutMessage``, never read whole.
"""

from telemetry.contracts import (
    GEOMETRY_TYPES,
    AwareDatetime,
    CatracaReading,
    CatracaStatus,
    Occurrence,
    OccurrenceKind,
    TachographPing,
    geometry_problem,
    SOURCE_ORDER,
    event_order,
    message_id,
)
from telemetry.validation import (
    RAW_SHOWN_BYTES,
    REASON_CODES,
    SOURCES,
    CutMessage,
    Decoded,
    RawMessage,
    Rejection,
    Source,
    decode,
    decode_catraca,
    decode_many,
    decode_occurrence,
    decode_tachograph,
    encode,
    to_builtins,
)

__all__ = [
    "AwareDatetime",
    "CatracaReading",
    "CatracaStatus",
    "CutMessage",
    "Decoded",
    "GEOMETRY_TYPES",
    "Occurrence",
    "OccurrenceKind",
    "RAW_SHOWN_BYTES",
    "REASON_CODES",
    "RawMessage",
    "Rejection",
    "SOURCES",
    "Source",
    "TachographPing",
    "SOURCE_ORDER",
    "event_order",
    "message_id",
    "decode",
    "decode_catraca",
    "decode_many",
    "decode_occurrence",
    "decode_tachograph",
    "encode",
    "geometry_problem",
    "to_builtins",
]
