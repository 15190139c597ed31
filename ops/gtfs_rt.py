"""A GTFS-Realtime feed for passengers and third-party apps (#14 part 5): where each bus is
(VehiclePositions) and how late its trip runs (TripUpdates), from the live tables.

Consistent with the static feed: a trip or route id the static feed does not have is
never published (the vehicle's position still is, without a trip), and a position older
than `max_age_s` is not current any more and is left out. Frequency-based trips carry
their start time, as the specification requires.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from google.transit import gtfs_realtime_pb2 as rt

from gtfs import Feed

KMH_TO_MS = 1000 / 3600
MAX_AGE_S = 600.0  # the operations room's "not reporting"


@dataclass(frozen=True)
class LivePosition:
    """A row of live_vehicle_status, as the feed needs it."""
    vehicle_id: str
    label: str | None  # the plate, as riders see it
    ts: dt.datetime
    lat: float
    lon: float
    speed_kmh: float
    route_id: str | None
    direction_id: int | None
    trip_id: str | None
    departed_at: dt.datetime | None
    schedule_deviation_s: float | None


def _header(message: rt.FeedMessage, now: dt.datetime) -> None:
    message.header.gtfs_realtime_version = "2.0"
    message.header.incrementality = rt.FeedHeader.FULL_DATASET
    message.header.timestamp = int(now.timestamp())


def _trip(descriptor: rt.TripDescriptor, position: LivePosition, feed: Feed, frequency_trips: set[str]) -> bool:
    """Fill the trip descriptor if the static feed knows the trip; False if it does not."""
    if position.trip_id is None or position.trip_id not in feed.trips or position.route_id not in feed.routes:
        return False
    descriptor.trip_id = position.trip_id
    descriptor.route_id = position.route_id
    if position.direction_id is not None:
        descriptor.direction_id = position.direction_id
    if position.departed_at is not None:
        scheduled = position.departed_at - dt.timedelta(seconds=position.schedule_deviation_s or 0)
        local = scheduled.astimezone(feed.timezone)
        descriptor.start_date = local.strftime("%Y%m%d")
        if position.trip_id in frequency_trips:
            descriptor.start_time = local.strftime("%H:%M:%S")
    return True


def _current(positions: Iterable[LivePosition], now: dt.datetime, max_age_s: float) -> list[LivePosition]:
    return sorted((p for p in positions if 0 <= (now - p.ts).total_seconds() <= max_age_s),
                  key=lambda p: p.vehicle_id)


def vehicle_positions(positions: Iterable[LivePosition], feed: Feed, now: dt.datetime,
                      max_age_s: float = MAX_AGE_S) -> bytes:
    message = rt.FeedMessage()
    _header(message, now)
    frequency_trips = {f.trip_id for f in feed.frequencies}
    for position in _current(positions, now, max_age_s):
        entity = message.entity.add()
        entity.id = position.vehicle_id
        vehicle = entity.vehicle
        vehicle.vehicle.id = position.vehicle_id
        if position.label:
            vehicle.vehicle.label = position.label
        vehicle.position.latitude = position.lat
        vehicle.position.longitude = position.lon
        vehicle.position.speed = position.speed_kmh * KMH_TO_MS
        vehicle.timestamp = int(position.ts.timestamp())
        if not _trip(vehicle.trip, position, feed, frequency_trips):
            vehicle.ClearField("trip")
    return message.SerializeToString()


def trip_updates(positions: Iterable[LivePosition], feed: Feed, now: dt.datetime,
                 max_age_s: float = MAX_AGE_S) -> bytes:
    """One TripUpdate per bus running a known trip, its delay the departure's deviation
    (the live match) carried forward: no stop-by-stop prediction is made."""
    message = rt.FeedMessage()
    _header(message, now)
    frequency_trips = {f.trip_id for f in feed.frequencies}
    for position in _current(positions, now, max_age_s):
        if position.schedule_deviation_s is None:
            continue
        entity = rt.FeedEntity()
        update = entity.trip_update
        if not _trip(update.trip, position, feed, frequency_trips):
            continue
        entity.id = f"{position.vehicle_id}:{update.trip.trip_id}"
        update.vehicle.id = position.vehicle_id
        update.delay = round(position.schedule_deviation_s)
        update.timestamp = int(position.ts.timestamp())
        message.entity.append(entity)
    return message.SerializeToString()
