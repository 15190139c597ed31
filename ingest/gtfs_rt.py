"""GTFS-Realtime VehiclePositions snapshots as source fixes (gtfs-realtime-bindings decodes)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import numpy
from google.protobuf import text_format
from google.protobuf.message import DecodeError
from google.transit import gtfs_realtime_pb2

from ingest.fixes import SourceFix
from kernel.errors import InputError


class SnapshotError(InputError):
    """Bytes that are not a GTFS-Realtime FeedMessage."""


@dataclass(frozen=True)
class Snapshot:
    header_ts: datetime | None
    fixes: tuple[SourceFix, ...]
    skipped: int = 0  # entities that are not vehicle positions (trip updates, alerts)


def _when(seconds: int) -> datetime | None:
    return datetime.fromtimestamp(seconds, tz=timezone.utc) if seconds else None


def decode_snapshot(data: bytes, name: str) -> Snapshot:
    """The VehiclePosition entities of one FeedMessage, each as a SourceFix (`name#entity
    id` locates it); bytes that are no FeedMessage raise SnapshotError."""
    feed = gtfs_realtime_pb2.FeedMessage()
    try:
        feed.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise SnapshotError(f"{name} is not a GTFS-Realtime FeedMessage: {str(exc).splitlines()[0] if str(exc) else 'undecodable'}") from None
    if not feed.header.gtfs_realtime_version:
        raise SnapshotError(f"{name} is not a GTFS-Realtime FeedMessage: no header.gtfs_realtime_version")
    fixes, skipped = [], 0
    for number, entity in enumerate(feed.entity, 1):
        if not entity.HasField("vehicle"):
            skipped += 1
            continue
        fixes.append(_fix(entity, f"{name}#{entity.id or number}"))
    return Snapshot(_when(feed.header.timestamp), tuple(fixes), skipped)


def _decimal(value: float) -> float:
    """A float32 of the wire as the shortest decimal that is that float32 (-19.74, not the
    -19.739999771118164 its float64 widening prints)."""
    return float(str(numpy.float32(value)))


def _fix(entity, location: str) -> SourceFix:
    vehicle = entity.vehicle
    descriptor = vehicle.vehicle
    keys = tuple(k for k in (descriptor.id, descriptor.label, descriptor.license_plate) if k.strip())
    has_position = vehicle.HasField("position")
    position = vehicle.position
    speed = position.speed * 3.6 if has_position and position.HasField("speed") else None
    route = vehicle.trip.route_id if vehicle.HasField("trip") and vehicle.trip.route_id else None
    return SourceFix(
        location=location,
        raw=text_format.MessageToString(entity, as_one_line=True),
        vehicle_keys=keys,
        lat=_decimal(position.latitude) if has_position else None,
        lon=_decimal(position.longitude) if has_position else None,
        ts=_when(vehicle.timestamp),
        speed_kmh=speed,
        route_id=route,
    )
