"""A GTFS-Realtime feed for passengers and third-party apps (#14 part 5, #28 item 1):
where each bus is (VehiclePositions) and when it will reach the stops it has still to
serve (TripUpdates), from the live tables.

What a consumer (and MobilityData's validator rules) needs, and how it is made here:

- One running trip instance per bus (`running`), computed once and used by both feeds, so
  a vehicle shown with a trip in VehiclePositions always has that trip's TripUpdate (W003).
- The trip descriptor names the instance: `trip_id` (known to the static feed, with its own
  route and direction: E003, E004, E024, E035), `start_date` (the service date, which for
  a trip past midnight is the day before), `start_time` and `schedule_relationship` (W009):
  - a timetabled trip is SCHEDULED, its start_time the first time of stop_times.txt (E023);
  - a frequencies.txt trip with exact_times=1 is SCHEDULED, its start_time the departure
    of the headway it runs (a multiple of headway_secs after the window's start: E019);
  - a frequencies.txt trip with exact_times=0 is UNSCHEDULED (E013), its start_time the
    bus's own departure from the origin terminal, which stays the same while it runs
    (trip_id, start_time and start_date: E006). When the live table has no trip_id for it
    (the engine's live match leaves headway lines unmatched), the trip is the frequency
    template of the line and direction whose window the departure falls in.
- A `stop_time_update` for every stop the bus has not yet served (E041): the stops beyond
  its position along the shape (`progress`, against each stop's shape_dist_traveled), in
  stop_sequence order (E002). The prediction carries the current deviation forward: the
  deviation at the bus's position (the newest fix's time against the scheduled time at
  that point of the shape, interpolated between stops) added to every remaining stop, i.e.
  the schedule's running times from where the bus is, and never before the feed's time
  (a stop not yet served is reached after it: P008). Scheduled trips give `time` and
  `delay`; exact_times=0 trips give only `time` (P013) and mark each update UNSCHEDULED
  (S010).
- A bus between trips (not in service, or arrived and in layover: the engine's
  `layover_since`, or at the end of its trip's shape) is shown without a trip, never with
  a finished one.
- Entity ids are stable: the vehicle id in VehiclePositions, vehicle and trip instance in
  TripUpdates. `vehicle.timestamp` and `trip_update.timestamp` are the fix's own time.

A position older than `max_age_s` is not current any more and is left out. The GTFS-Realtime
Best Practices want a vehicle position at most 90 s old (the validator's P005); the default
here is the operations room's "not reporting" (`MAX_AGE_S`, 600 s) while the engine emits
vehicle-status late, and the web app's `WebConfig.gtfs_rt_max_age_s` is the setting to bring
down to 90 s (`fiscaliza serve --gtfs-rt-max-age 90`) once statuses are emitted at each
ping's arrival.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from google.transit import gtfs_realtime_pb2 as rt

from gtfs import Feed
from gtfs.model import Frequency, ScheduledStop, TripTemplate
from gtfs.schedule import service_day_start

KMH_TO_MS = 1000 / 3600
MAX_AGE_S = 600.0  # the operations room's "not reporting"; best practice for riders: <= 90 s
BEST_PRACTICE_MAX_AGE_S = 90.0
# an exact_times=0 departure this long before its frequency window opens still runs that window's trip
FREQUENCY_EARLY_S = 900

SCHEDULED = rt.TripDescriptor.SCHEDULED
UNSCHEDULED = rt.TripDescriptor.UNSCHEDULED
STOP_SCHEDULED = rt.TripUpdate.StopTimeUpdate.SCHEDULED
STOP_UNSCHEDULED = rt.TripUpdate.StopTimeUpdate.UNSCHEDULED


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
    in_service: bool = True
    progress: float | None = None  # fraction of the itinerary's shape run
    layover: bool = False  # arrived, standing in the terminal between trips (the row's layover_since)


@dataclass(frozen=True)
class StopPrediction:
    stop_sequence: int
    stop_id: str
    arrival: int  # epoch seconds
    departure: int
    # against the schedule; None for exact_times=0 trips (no schedule to be late against)
    arrival_delay: int | None
    departure_delay: int | None


@dataclass(frozen=True)
class RunningTrip:
    """The trip instance a bus runs, as both feeds publish it."""
    trip_id: str
    route_id: str
    direction_id: int
    start_date: str  # YYYYMMDD
    start_time: str  # HH:MM:SS, GTFS time of the service date (may pass 24:00:00)
    unscheduled: bool  # frequencies.txt exact_times=0
    delay: int
    stops: tuple[StopPrediction, ...]  # the stops not yet served, in stop_sequence order


def _gtfs_time(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _candidate_dates(feed: Feed, template: TripTemplate, epoch: float) -> list[tuple[dt.date, float]]:
    """(service date, GTFS seconds of `epoch` on it) for the dates the template runs that
    `epoch` may belong to: its local date and the day before (trips past midnight)."""
    local = dt.datetime.fromtimestamp(epoch, feed.timezone).date()
    days = feed.service_days.get(template.service_id, frozenset())
    return [(d, epoch - service_day_start(d, feed.timezone).timestamp())
            for d in (local, local - dt.timedelta(days=1)) if d in days]


def _frequencies_by_trip(feed: Feed) -> dict[str, list[Frequency]]:
    by_trip: dict[str, list[Frequency]] = {}
    for f in feed.frequencies:
        by_trip.setdefault(f.trip_id, []).append(f)
    return by_trip


def _instance(position: LivePosition, feed: Feed, frequencies: dict[str, list[Frequency]]):
    """(template, service date, GTFS start seconds, unscheduled) of the bus's trip, or None."""
    if position.departed_at is None:
        return None
    departed = position.departed_at.timestamp()
    trip = feed.trips.get(position.trip_id) if position.trip_id else None
    if trip is not None and (trip.route_id != position.route_id
                             or (position.direction_id is not None and trip.direction_id != position.direction_id)):
        return None
    if trip is not None and trip.trip_id not in frequencies:  # timetabled
        if position.schedule_deviation_s is None:
            return None
        scheduled = departed - position.schedule_deviation_s
        for date, seconds in _candidate_dates(feed, trip, scheduled):
            if abs(seconds - trip.departure_s) <= 1:
                return trip, date, trip.departure_s, False
        return None
    if trip is not None and all(f.exact_times for f in frequencies[trip.trip_id]):  # exact_times=1
        if position.schedule_deviation_s is None:
            return None
        scheduled = departed - position.schedule_deviation_s
        for date, seconds in _candidate_dates(feed, trip, scheduled):
            start = round(seconds)
            if any(f.start_s <= start < f.end_s and (start - f.start_s) % f.headway_s == 0
                   for f in frequencies[trip.trip_id]):
                return trip, date, start, False
        return None
    # exact_times=0: the template whose window (of the line and direction) the departure falls in
    templates = [trip] if trip is not None else [
        t for t in feed.trips.values() if t.trip_id in frequencies and t.route_id == position.route_id
        and t.direction_id == position.direction_id and not all(f.exact_times for f in frequencies[t.trip_id])]
    best = None
    for template in templates:
        for date, seconds in _candidate_dates(feed, template, departed):
            for f in frequencies[template.trip_id]:
                if f.exact_times:
                    continue
                gap = 0.0 if f.start_s <= seconds < f.end_s else (f.start_s - seconds if seconds < f.start_s else None)
                if gap is not None and gap <= FREQUENCY_EARLY_S and (best is None or gap < best[0]):
                    best = (gap, template, date, round(seconds))
    return None if best is None else (best[1], best[2], best[3], True)


def running(position: LivePosition, feed: Feed, frequencies: dict[str, list[Frequency]] | None = None,
            now: dt.datetime | None = None) -> RunningTrip | None:
    """The trip instance the bus runs and its predictions for the stops it has not served;
    None between trips (not in service, arrived, or no trip the static feed knows).
    A stop not yet served is not reached before `now` (the feed's time) either: a prediction
    the fix's age has overtaken is moved up to `now`."""
    if not position.in_service or position.layover or position.progress is None or position.progress >= 1.0:
        return None
    if position.route_id not in feed.routes:
        return None
    frequencies = _frequencies_by_trip(feed) if frequencies is None else frequencies
    instance = _instance(position, feed, frequencies)
    if instance is None:
        return None
    template, date, start_s, unscheduled = instance
    shift = start_s - template.departure_s  # frequency templates' stop times are relative
    stops: tuple[ScheduledStop, ...] = template.stops
    length = feed.shapes[template.shape_id].length_m
    bus_m = position.progress * length
    along = np.maximum.accumulate(np.array([s.shape_dist_m for s in stops]))
    times = np.array([s.arrival_s + shift for s in stops], dtype=float)
    day_start = service_day_start(date, feed.timezone).timestamp()
    fix = position.ts.timestamp()
    # the deviation where the bus is: its fix's time against the schedule at that point
    delay = round(fix - (day_start + float(np.interp(bus_m, along, times))))
    remaining = [(s, a) for s, a in zip(stops, along) if a > bus_m]
    if not remaining:
        return None
    predictions = []
    floor = round(max(fix, now.timestamp() + 1 if now is not None else fix))  # after `now`: still ahead
    for stop, _ in remaining:  # never before the fix, and strictly increasing from stop to stop (E022)
        scheduled_arrival = round(day_start + stop.arrival_s + shift)
        scheduled_departure = round(day_start + stop.departure_s + shift)
        arrival = max(scheduled_arrival + delay, floor)
        departure = max(scheduled_departure + delay, arrival)
        predictions.append(StopPrediction(
            stop.stop_sequence, stop.stop_id, arrival, departure,
            None if unscheduled else arrival - scheduled_arrival,
            None if unscheduled else departure - scheduled_departure))
        floor = departure + 1
    return RunningTrip(template.trip_id, template.route_id, template.direction_id, date.strftime("%Y%m%d"),
                       _gtfs_time(start_s), unscheduled, delay, tuple(predictions))


def _header(message: rt.FeedMessage, now: dt.datetime) -> None:
    message.header.gtfs_realtime_version = "2.0"
    message.header.incrementality = rt.FeedHeader.FULL_DATASET
    message.header.timestamp = int(now.timestamp())


def _descriptor(descriptor: rt.TripDescriptor, trip: RunningTrip) -> None:
    descriptor.trip_id = trip.trip_id
    descriptor.route_id = trip.route_id
    descriptor.direction_id = trip.direction_id
    descriptor.start_date = trip.start_date
    descriptor.start_time = trip.start_time
    descriptor.schedule_relationship = UNSCHEDULED if trip.unscheduled else SCHEDULED


def current(positions: Iterable[LivePosition], now: dt.datetime, max_age_s: float = MAX_AGE_S) -> list[LivePosition]:
    """The positions at most `max_age_s` old (and not from the future), one per vehicle."""
    return sorted((p for p in positions if 0 <= (now - p.ts).total_seconds() <= max_age_s),
                  key=lambda p: p.vehicle_id)


def vehicle_positions(positions: Iterable[LivePosition], feed: Feed, now: dt.datetime,
                      max_age_s: float = MAX_AGE_S) -> bytes:
    message = rt.FeedMessage()
    _header(message, now)
    frequencies = _frequencies_by_trip(feed)
    for position in current(positions, now, max_age_s):
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
        trip = running(position, feed, frequencies)
        if trip is not None:
            _descriptor(vehicle.trip, trip)
    return message.SerializeToString()


def trip_updates(positions: Iterable[LivePosition], feed: Feed, now: dt.datetime,
                 max_age_s: float = MAX_AGE_S) -> bytes:
    """One TripUpdate per bus running a trip the static feed knows, with a stop_time_update
    for each stop it has still to serve."""
    message = rt.FeedMessage()
    _header(message, now)
    frequencies = _frequencies_by_trip(feed)
    for position in current(positions, now, max_age_s):
        trip = running(position, feed, frequencies, now)
        if trip is None:
            continue
        entity = message.entity.add()
        entity.id = f"{position.vehicle_id}:{trip.trip_id}:{trip.start_date}:{trip.start_time}"
        update = entity.trip_update
        _descriptor(update.trip, trip)
        update.vehicle.id = position.vehicle_id
        if position.label:
            update.vehicle.label = position.label
        update.timestamp = int(position.ts.timestamp())
        if not trip.unscheduled:
            update.delay = trip.delay
        for stop in trip.stops:
            stu = update.stop_time_update.add()
            stu.stop_sequence = stop.stop_sequence
            stu.stop_id = stop.stop_id
            stu.schedule_relationship = STOP_UNSCHEDULED if trip.unscheduled else STOP_SCHEDULED
            stu.arrival.time = stop.arrival
            stu.departure.time = stop.departure
            if not trip.unscheduled:
                stu.arrival.delay = stop.arrival_delay
                stu.departure.delay = stop.departure_delay
    return message.SerializeToString()


# --- ServiceAlerts: the riders' side of the motivos justificados --------------------------

@dataclass(frozen=True)
class Notice:
    """An occurrence registered by a fiscal (dockets' `occurrences`), as the alerts need it."""
    occurrence_id: str
    kind: str  # one of ALERT_KINDS; other kinds (a breakdown, an accident) are not told riders
    start: dt.datetime
    end: dt.datetime
    route_id: str | None
    note: str | None


# kind -> (header, effect): what the rider is told, in Portuguese
ALERT_KINDS = {
    "road_closure": ("Via interditada", rt.Alert.DETOUR),
    "authorized_detour": ("Desvio autorizado", rt.Alert.DETOUR),
}


def _text(translated: rt.TranslatedString, text: str) -> None:
    translation = translated.translation.add()
    translation.text = text
    translation.language = "pt"


def service_alerts(notices: Iterable[Notice], feed: Feed, now: dt.datetime) -> bytes:
    """One Alert per road closure or authorized detour not yet over: its period (when to show
    it and when it applies), the line it affects (or every operator's, when it names none),
    and Portuguese text."""
    message = rt.FeedMessage()
    _header(message, now)
    for notice in sorted(notices, key=lambda n: (n.start, n.occurrence_id)):
        if notice.kind not in ALERT_KINDS or notice.end <= now:
            continue
        header, effect = ALERT_KINDS[notice.kind]
        route = feed.routes.get(notice.route_id) if notice.route_id else None
        entity = message.entity.add()
        entity.id = notice.occurrence_id
        alert = entity.alert
        for period in (alert.communication_period.add(), alert.impact_period.add()):
            period.start = int(notice.start.timestamp())
            period.end = int(notice.end.timestamp())
        if route is not None:
            alert.informed_entity.add().route_id = route.route_id
        else:
            for agency_id in sorted(feed.agencies):
                alert.informed_entity.add().agency_id = agency_id
        alert.cause = rt.Alert.UNKNOWN_CAUSE
        alert.effect = effect
        line = f"linha {route.short_name} ({route.long_name})" if route is not None else "todas as linhas"
        _text(alert.header_text, f"{header}: {line}")
        start, end = (t.astimezone(feed.timezone).strftime("%d/%m/%Y %H:%M") for t in (notice.start, notice.end))
        description = f"De {start} a {end}. Os ônibus podem não passar por todos os pontos do itinerário."
        if notice.note:
            description = f"{notice.note.strip()} {description}"
        _text(alert.description_text, description)
    return message.SerializeToString()
