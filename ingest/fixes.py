"""The pure core of every adapter: a source's fix becomes a tachograph message (a dict of
the contract, validated by its decoder) or a rejection with its reason.

A vehicle's trail (what was already sent for it) makes the mapping idempotent: a fix at a
(vehicle, time) already sent with the same position is a repeat and is not sent again; with
another position it is a `conflicting_duplicate` and rejected."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

import msgspec

from kernel.fleet import Vehicle
from telemetry.validation import Rejection, decode_tachograph

# Reason codes of rejected.jsonl added by the adapters (the contract's own come from its decoder).
NO_VEHICLE: Final = "no_vehicle"  # the entity names no vehicle at all
UNKNOWN_VEHICLE: Final = "unknown_vehicle"  # its id, label and plate are not in fleet.csv
NO_POSITION: Final = "no_position"
NO_TIMESTAMP: Final = "no_timestamp"  # neither the entity nor the feed's header has a time
CONFLICTING_DUPLICATE: Final = "conflicting_duplicate"
STALE: Final = "stale"  # older than what the trail still remembers of its vehicle
INVALID_SPEED: Final = "invalid_speed"

# The trail remembers a vehicle's positions this far behind its latest one: a repeat within
# it is recognised; a fix older than that is stale (a feed replaying its past).
TRAIL_S: Final = 3 * 3600.0

EARTH_RADIUS_M: Final = 6_371_008.8


@dataclass(frozen=True)
class SourceFix:
    """One position as a source gave it, before it is mapped: where it came from, its text
    (for the dead letter), the vehicle's identifiers in the order they are tried."""

    location: str
    raw: str
    vehicle_keys: tuple[str, ...]
    lat: float | None
    lon: float | None
    ts: datetime | None  # aware; None: the source gave none
    speed_kmh: float | None = None  # the vehicle's own speed; None: derived from displacement
    route_id: str | None = None
    received_at: datetime | None = None  # aware; when the source's server (not the device) saw it


@dataclass(frozen=True)
class Trail:
    """What was sent for one vehicle: (epoch, lat, lon) by time, the latest last."""

    sent: tuple[tuple[float, float, float], ...] = ()

    @property
    def latest(self) -> float | None:
        return self.sent[-1][0] if self.sent else None

    def at(self, epoch: float) -> tuple[float, float] | None:
        for when, lat, lon in self.sent:
            if when == epoch:
                return lat, lon
        return None

    def before(self, epoch: float) -> tuple[float, float, float] | None:
        earlier = [fix for fix in self.sent if fix[0] < epoch]
        return earlier[-1] if earlier else None

    def with_fix(self, epoch: float, lat: float, lon: float) -> "Trail":
        kept = [fix for fix in self.sent if fix[0] >= max(epoch, self.latest or epoch) - TRAIL_S]
        return Trail(tuple(sorted([*kept, (epoch, lat, lon)])))


@dataclass(frozen=True)
class FleetIndex:
    """fleet.csv looked up by vehicle_id or by plate (plates compared without case,
    spaces or hyphens: `ABC-1234` is `abc1234`)."""

    by_id: Mapping[str, str]
    by_plate: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, fleet: Mapping[str, Vehicle]) -> "FleetIndex":
        plates = {plate_key(v.plate): v.vehicle_id for v in fleet.values() if plate_key(v.plate)}
        return cls({v: v for v in fleet}, plates)

    def vehicle_of(self, keys: tuple[str, ...]) -> str | None:
        for key in keys:
            key = key.strip()
            if key in self.by_id:
                return self.by_id[key]
            if plate_key(key) in self.by_plate:
                return self.by_plate[plate_key(key)]
        return None


def plate_key(plate: str) -> str:
    return re.sub(r"[^0-9A-Z]", "", plate.upper())


@dataclass(frozen=True)
class Sent:
    """A fix accepted: the contract's message as JSON-ready builtins."""

    vehicle_id: str
    message: dict


@dataclass(frozen=True)
class Repeat:
    """A fix already sent (same vehicle, time and position): nothing to send."""

    vehicle_id: str


Outcome = Sent | Repeat | Rejection


def distance_m(lat0: float, lon0: float, lat1: float, lon1: float) -> float:
    """Great-circle (haversine) distance in metres."""
    p0, p1 = math.radians(lat0), math.radians(lat1)
    dp, dl = p1 - p0, math.radians(lon1 - lon0)
    h = math.sin(dp / 2) ** 2 + math.cos(p0) * math.cos(p1) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(h)))


def derived_speed_kmh(previous: tuple[float, float, float] | None, epoch: float, lat: float, lon: float) -> float:
    """The speed from the displacement since the vehicle's previous fix sent; 0 for its
    first (nothing to derive from). Derived speeds never prove a C-01 (DESIGN.md)."""
    if previous is None:
        return 0.0
    when, lat0, lon0 = previous
    return round(distance_m(lat0, lon0, lat, lon) / (epoch - when) * 3.6, 2)


def reject(fix: SourceFix, reason: str, detail: str) -> Rejection:
    return Rejection(source="tachograph", reason=reason, detail=detail, location=fix.location, raw=fix.raw)


def admit(fix: SourceFix, fleet: FleetIndex, trails: Mapping[str, Trail],
          header_ts: datetime | None = None) -> tuple[Outcome, Trail | None]:
    """The fix's outcome and its vehicle's new trail (None: unchanged).

    The fix's own time is used; without one, the feed header's, and the message says so
    (`ts_source: feed_header`). Without a speed, it is derived and marked `derived`."""
    if not fix.vehicle_keys:
        return reject(fix, NO_VEHICLE, "the entity has no vehicle id, label or plate"), None
    vehicle_id = fleet.vehicle_of(fix.vehicle_keys)
    if vehicle_id is None:
        return reject(fix, UNKNOWN_VEHICLE, "vehicle " + " / ".join(fix.vehicle_keys)
                      + " is neither a vehicle_id nor a plate of fleet.csv"), None
    if fix.lat is None or fix.lon is None:
        return reject(fix, NO_POSITION, "the entity has no position"), None
    ts, from_header = (fix.ts, False) if fix.ts is not None else (header_ts, True)
    if ts is None:
        return reject(fix, NO_TIMESTAMP, "neither the entity nor the feed header has a timestamp"), None
    if fix.speed_kmh is not None and not (math.isfinite(fix.speed_kmh) and fix.speed_kmh >= 0):
        return reject(fix, INVALID_SPEED, f"speed {fix.speed_kmh!r} km/h is not a speed"), None
    if not (math.isfinite(fix.lat) and math.isfinite(fix.lon)):
        return reject(fix, "out_of_range", f"position ({fix.lat}, {fix.lon}) is not finite"), None
    trail = trails.get(vehicle_id, Trail())
    epoch = ts.timestamp()
    already = trail.at(epoch)
    if already is not None:
        if already == (fix.lat, fix.lon):
            return Repeat(vehicle_id), None
        return reject(fix, CONFLICTING_DUPLICATE, f"vehicle {vehicle_id} at {ts.isoformat()} was already sent at "
                      f"({already[0]}, {already[1]}), not ({fix.lat}, {fix.lon})"), None
    if trail.latest is not None and epoch < trail.latest - TRAIL_S:
        return reject(fix, STALE, f"{ts.isoformat()} is more than {TRAIL_S / 3600:g} h before the last position "
                      f"sent for vehicle {vehicle_id}"), None
    message = {"vehicle_id": vehicle_id, "ts": ts.isoformat(), "lat": fix.lat, "lon": fix.lon}
    if fix.speed_kmh is not None:
        message |= {"speed_kmh": round(fix.speed_kmh, 2), "speed_source": "reported"}
    else:
        message |= {"speed_kmh": derived_speed_kmh(trail.before(epoch), epoch, fix.lat, fix.lon),
                    "speed_source": "derived"}
    if fix.route_id:
        message["route_id"] = fix.route_id
    if fix.received_at is not None:
        message["received_at"] = fix.received_at.isoformat()
    if from_header:
        message["ts_source"] = "feed_header"
    checked = decode_tachograph(msgspec.json.encode(message), fix.location)
    if isinstance(checked, Rejection):
        return msgspec.structs.replace(checked, raw=fix.raw), None
    return Sent(vehicle_id, message), trail.with_fix(epoch, fix.lat, fix.lon)
