"""Frozen msgspec Structs for the three telemetry sources.

Field constraints are declared with ``Annotated[..., msgspec.Meta(...)]`` so
that msgspec enforces them while *decoding* (see ``telemetry.validation``).
Direct construction from Python trusts the caller for those constraints; only
the invariants in ``__post_init__`` (finite floats, ``end >= start``,
well-formed GeoJSON) are checked on every construction, decoded or not.
"""

import functools
import math
from collections.abc import Callable
from datetime import datetime, timezone, tzinfo
from typing import Annotated, Any, Final, Literal

import msgspec

__all__ = [
    "AwareDatetime",
    "CatracaReading",
    "CatracaStatus",
    "GEOMETRY_TYPES",
    "Occurrence",
    "OccurrenceKind",
    "SpeedSource",
    "TachographPing",
    "geometry_problem",
]

# --- constrained field types -------------------------------------------------

AwareDatetime = Annotated[
    datetime,
    msgspec.Meta(tz=True, description="ISO-8601/RFC 3339 timestamp with a UTC offset"),
]
VehicleId = Annotated[str, msgspec.Meta(min_length=1)]
Latitude = Annotated[float, msgspec.Meta(ge=-90.0, le=90.0)]
Longitude = Annotated[float, msgspec.Meta(ge=-180.0, le=180.0)]
NonNegativeFloat = Annotated[float, msgspec.Meta(ge=0.0)]
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0)]

CatracaStatus = Literal["ok", "fault"]
# where a ping's speed comes from: the vehicle's own sensor, or computed from its
# displacement by an ingest adapter (which never proves a C-01)
SpeedSource = Literal["reported", "derived"]
OccurrenceKind = Literal[
    "road_closure", "authorized_detour", "accident", "breakdown", "other"
]

GEOMETRY_TYPES: Final = frozenset(
    {"Point", "LineString", "Polygon", "MultiPoint", "MultiLineString", "MultiPolygon"}
)

# Prefixes of the messages raised from __post_init__. msgspec wraps them in a
# ValidationError, and telemetry.validation maps them to reason codes by prefix.
NON_FINITE_MESSAGE: Final = "Expected finite `float`"
END_BEFORE_START_MESSAGE: Final = "`end` must not be before `start`"
INVALID_GEOMETRY_MESSAGE: Final = "Invalid GeoJSON geometry"
TIMESTAMP_WINDOW_MESSAGE: Final = "Expected a timestamp from 2000-01-01 to 2100-01-01"

# Telemetry of this system cannot be older than GPS-era AVL nor a century ahead: a year
# 0001 or 9999 is a broken clock (and would make every day loop run for millennia).
EARLIEST: Final = datetime(2000, 1, 1, tzinfo=timezone.utc)
LATEST: Final = datetime(2100, 1, 1, tzinfo=timezone.utc)


def _require_window(**values: datetime) -> None:
    for name, value in values.items():
        if not EARLIEST <= value < LATEST:
            raise ValueError(f"{TIMESTAMP_WINDOW_MESSAGE}, got {value.isoformat()} - at `$.{name}`")


def _require_received_window(received_at: datetime | None) -> None:
    if received_at is not None:
        _require_window(received_at=received_at)


def _require_finite(**values: float | None) -> None:
    """Raise ValueError for NaN/±inf; msgspec range checks let +inf through ``ge``."""
    for name, value in values.items():
        if value is not None and not math.isfinite(value):
            raise ValueError(f"{NON_FINITE_MESSAGE}, got {value!r} - at `$.{name}`")


# --- structs -----------------------------------------------------------------


class TachographPing(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False, dict=True
):
    """One GPS/tachograph sample from a vehicle."""

    vehicle_id: VehicleId
    ts: AwareDatetime
    lat: Latitude
    lon: Longitude
    speed_kmh: NonNegativeFloat
    odometer_km: NonNegativeFloat | None = None
    route_id: str | None = None
    driver_id: str | None = None
    doors_open: bool | None = None
    seq: NonNegativeInt | None = None
    # when a clock other than the device's (the ingest adapter's, the AVL server's) saw it
    received_at: AwareDatetime | None = None
    speed_source: SpeedSource = "reported"

    def __post_init__(self) -> None:
        _require_finite(
            lat=self.lat,
            lon=self.lon,
            speed_kmh=self.speed_kmh,
            odometer_km=self.odometer_km,
        )
        _require_window(ts=self.ts)
        _require_received_window(self.received_at)

    @functools.cached_property
    def epoch(self) -> float:
        """``ts`` as POSIX seconds, computed once per message (`dict=True` gives the
        frozen Struct a ``__dict__`` to keep it in; fields, equality and encoding are
        unchanged): the engine reads a message's time some twenty times, and
        ``datetime.timestamp`` costs ~0.5 µs."""
        return self.ts.timestamp()


class CatracaReading(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False, dict=True
):
    """One reading of a vehicle's turnstile (catraca); ``counter`` is cumulative."""

    vehicle_id: VehicleId
    ts: AwareDatetime
    counter: NonNegativeInt
    seal_intact: bool
    status: CatracaStatus
    seq: NonNegativeInt | None = None
    received_at: AwareDatetime | None = None  # as TachographPing's

    def __post_init__(self) -> None:
        _require_window(ts=self.ts)
        _require_received_window(self.received_at)

    @functools.cached_property
    def epoch(self) -> float:
        """``ts`` as POSIX seconds, computed once per message (`dict=True` gives the
        frozen Struct a ``__dict__`` to keep it in; fields, equality and encoding are
        unchanged): the engine reads a message's time some twenty times, and
        ``datetime.timestamp`` costs ~0.5 µs."""
        return self.ts.timestamp()


# Among messages of one time: an occurrence first (it may justify what happens then), then
# the tachograph, then the catraca
SOURCE_ORDER = {"occurrences": 0, "tachograph": 1, "catraca": 2}


def event_order(source: str, body: "TachographPing | CatracaReading | Occurrence", index: int) -> tuple:
    """A decoded message's place in the replay's input order: event time, SOURCE_ORDER, vehicle,
    then `index` (its place in the input). The replay sorts its files by it, and a bundle's
    re-judgment (dockets.rejudgment) its lines, so that both feed the engine alike."""
    epoch = body.start_epoch if source == "occurrences" else body.epoch
    return epoch, SOURCE_ORDER[source], getattr(body, "vehicle_id", None) or "", index


def message_id(message: TachographPing | CatracaReading, tz: tzinfo | None = None) -> str:
    """Content-based id of a telemetry message (the same message always gets it): the
    vehicle, the event time as sent (or in `tz`, for a message whose offset was not kept,
    e.g. read back from msgpack state) and the seq. Evidence cites messages by it."""
    suffix = f"#{message.seq}" if message.seq is not None else ""
    ts = message.ts if tz is None else message.ts.astimezone(tz)
    return f"{message.vehicle_id}/{ts.isoformat()}{suffix}"


class Occurrence(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False):
    """An operational occurrence (closure, detour, accident...) over [start, end].

    ``geometry`` is a GeoJSON geometry object (RFC 7946, WGS84 lon/lat). An
    ``authorized_detour`` without geometry is valid: it applies route-wide.
    """

    id: str
    kind: OccurrenceKind
    start: AwareDatetime
    end: AwareDatetime
    route_id: str | None = None
    vehicle_id: VehicleId | None = None
    geometry: dict[str, Any] | None = None
    note: str | None = None

    def __post_init__(self) -> None:
        _require_window(start=self.start, end=self.end)
        if self.end < self.start:
            raise ValueError(
                f"{END_BEFORE_START_MESSAGE} ({self.end.isoformat()} < "
                f"{self.start.isoformat()}) - at `$.end`"
            )
        if self.geometry is not None:
            problem = geometry_problem(self.geometry)
            if problem is not None:
                raise ValueError(f"{INVALID_GEOMETRY_MESSAGE}: {problem}")

    @property
    def start_epoch(self) -> float:
        """``start`` as POSIX seconds."""
        return self.start.timestamp()

    @property
    def end_epoch(self) -> float:
        """``end`` as POSIX seconds."""
        return self.end.timestamp()


# --- GeoJSON geometry checks (pure) ------------------------------------------


def _kind_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _is_number(value: Any) -> bool:
    # bool is an int subclass; JSON true/false are not coordinates.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _position_problem(pos: Any, path: str) -> str | None:
    if not isinstance(pos, list):
        return f"expected a position array, got {_kind_name(pos)} - at `{path}`"
    if len(pos) < 2:
        return f"a position needs at least 2 numbers, got {len(pos)} - at `{path}`"
    for i, n in enumerate(pos):
        if not _is_number(n):
            return f"expected a number, got {_kind_name(n)} - at `{path}[{i}]`"
        # ints are always finite; math.isfinite would overflow on huge ints.
        if isinstance(n, float) and not math.isfinite(n):
            return f"expected a finite number, got {n!r} - at `{path}[{i}]`"
    lon, lat = pos[0], pos[1]
    if not -180 <= lon <= 180:
        return f"longitude {lon!r} outside [-180, 180] - at `{path}[0]`"
    if not -90 <= lat <= 90:
        return f"latitude {lat!r} outside [-90, 90] - at `{path}[1]`"
    return None


def _array_problem(value: Any, path: str, min_len: int, what: str) -> str | None:
    if not isinstance(value, list):
        return f"expected an array of {what}, got {_kind_name(value)} - at `{path}`"
    if len(value) < min_len:
        return f"expected at least {min_len} {what}, got {len(value)} - at `{path}`"
    return None


def _positions_problem(value: Any, path: str, min_len: int) -> str | None:
    problem = _array_problem(value, path, min_len, "positions")
    if problem is not None:
        return problem
    return next(
        (p for i, pos in enumerate(value) if (p := _position_problem(pos, f"{path}[{i}]"))),
        None,
    )


def _ring_problem(value: Any, path: str) -> str | None:
    problem = _positions_problem(value, path, 4)
    if problem is None and value[0] != value[-1]:
        return f"linear ring is not closed (first != last position) - at `{path}`"
    return problem


def _polygon_problem(value: Any, path: str) -> str | None:
    problem = _array_problem(value, path, 1, "linear rings")
    if problem is not None:
        return problem
    return next(
        (p for i, ring in enumerate(value) if (p := _ring_problem(ring, f"{path}[{i}]"))),
        None,
    )


def _many_problem(
    value: Any, path: str, what: str, check: Callable[[Any, str], str | None]
) -> str | None:
    problem = _array_problem(value, path, 1, what)
    if problem is not None:
        return problem
    return next(
        (p for i, item in enumerate(value) if (p := check(item, f"{path}[{i}]"))),
        None,
    )


def geometry_problem(geometry: Any, path: str = "$.geometry") -> str | None:
    """Return why ``geometry`` is not a usable GeoJSON geometry, or None if it is.

    Checks RFC 7946 structure for the six simple geometry types: positions of
    >= 2 finite numbers within lon/lat bounds, LineStrings of >= 2 positions,
    closed linear rings of >= 4 positions. Empty ``coordinates`` are rejected
    (RFC 7946 lets readers treat them as null, which would silently widen an
    occurrence to route-wide; senders should omit ``geometry`` instead).
    Extra members such as ``bbox`` are ignored.
    """
    if not isinstance(geometry, dict):
        return f"expected an object, got {_kind_name(geometry)} - at `{path}`"
    gtype = geometry.get("type")
    if gtype not in GEOMETRY_TYPES:
        allowed = ", ".join(sorted(GEOMETRY_TYPES))
        return f"`type` must be one of {allowed}; got {gtype!r} - at `{path}.type`"
    if "coordinates" not in geometry:
        return f"missing `coordinates` - at `{path}`"
    coords, cpath = geometry["coordinates"], f"{path}.coordinates"
    match gtype:
        case "Point":
            return _position_problem(coords, cpath)
        case "MultiPoint":
            return _positions_problem(coords, cpath, 1)
        case "LineString":
            return _positions_problem(coords, cpath, 2)
        case "MultiLineString":
            return _many_problem(
                coords, cpath, "line strings", lambda v, p: _positions_problem(v, p, 2)
            )
        case "Polygon":
            return _polygon_problem(coords, cpath)
        case _:  # MultiPolygon
            return _many_problem(coords, cpath, "polygons", _polygon_problem)
