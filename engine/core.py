"""The engine: per-vehicle reorder buffers and tracks, service-day closing."""

from __future__ import annotations

import bisect
import datetime as dt
from dataclasses import dataclass, field

import numpy as np

from fiscaliza.fleet import Vehicle
from fiscaliza.policy import Policy
from geofences.zones import Geofences
from gtfs.model import Feed
from gtfs.projection import Projector
from telemetry import CatracaReading, Occurrence, Rejection, TachographPing, encode
from trips.matching import ServiceDay, match_service_day, service_date_for, service_day
from trips.model import DetectedTrip, Fix, RealizedTrip, Track
from trips.tracker import advance_track, new_track


@dataclass(frozen=True)
class Context:
    """Everything static the engine needs: schedule, geometry, policy, fleet."""

    feed: Feed
    geofences: Geofences
    policy: Policy
    fleet: dict[str, Vehicle]


@dataclass(frozen=True)
class Message:
    """A decoded message and where it came from (file:line or topic/partition/offset)."""

    body: TachographPing | CatracaReading | Occurrence
    location: str | None = None
    raw: str | None = None  # the message as received, kept for rejections


@dataclass
class Emitted:
    trips: list[RealizedTrip] = field(default_factory=list)
    infractions: list = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)

    def extend(self, other: "Emitted") -> None:
        self.trips.extend(other.trips)
        self.infractions.extend(other.infractions)
        self.rejected.extend(other.rejected)


def message_id(ping: TachographPing | CatracaReading) -> str:
    """Content-based id of a telemetry message (the same message always gets it)."""
    suffix = f"#{ping.seq}" if ping.seq is not None else ""
    return f"{ping.vehicle_id}/{ping.ts.isoformat()}{suffix}"


class Engine:
    """Holds state between batches; every decision is delegated to pure functions."""

    def __init__(self, context: Context):
        self.ctx = context
        self._projector = Projector(context.feed.epsg)
        self._rules = context.policy.trips
        self._lateness = context.policy.stream.allowed_lateness_s
        self._pending: dict[str, list[Fix]] = {}  # per vehicle, sorted by time
        self._tracks: dict[str, Track] = {}
        self._seen: dict[tuple, float] = {}  # dedup keys -> event time
        self._max_event = -np.inf
        self._first_event = np.inf
        self._days: dict[dt.date, ServiceDay] = {}
        self._detected: dict[dt.date, list[DetectedTrip]] = {}
        self._closed: set[dt.date] = set()
        self.occurrences: list[Occurrence] = []
        self.catraca: dict[str, list[CatracaReading]] = {}

    @property
    def watermark(self) -> float:
        return self._max_event - self._lateness

    # --- input -------------------------------------------------------------------

    def ingest(self, messages: list[Message]) -> Emitted:
        out = Emitted()
        pings: list[tuple[TachographPing, str | None]] = []
        for message in messages:
            body = message.body
            if isinstance(body, Occurrence):
                self.occurrences.append(body)
                continue
            rejection = self._admit(message)
            if rejection is not None:
                out.rejected.append(rejection)
            elif isinstance(body, TachographPing):
                pings.append((body, message.location))
            else:
                self.catraca.setdefault(body.vehicle_id, []).append(body)
        self._buffer(pings)
        out.extend(self._advance())
        return out

    def _admit(self, message: Message) -> Rejection | None:
        body = message.body
        source = "tachograph" if isinstance(body, TachographPing) else "catraca"

        def reject(reason: str, detail: str) -> Rejection:
            raw = message.raw if message.raw is not None else encode(body).decode()
            return Rejection(source=source, reason=reason, detail=detail, location=message.location, raw=raw)

        if body.vehicle_id not in self.ctx.fleet:
            return reject("unknown_vehicle", f"vehicle {body.vehicle_id!r} is not in fleet.csv")
        epoch = body.epoch
        if epoch < self.watermark:
            return reject("late", f"event time {body.ts.isoformat()} is more than "
                                  f"{self._lateness:.0f} s behind the newest event")
        key = (source, body.vehicle_id, epoch, body.seq)
        if key in self._seen:
            return reject("duplicate", f"same vehicle, time and seq as an earlier message ({message_id(body)})")
        self._seen[key] = epoch
        self._max_event = max(self._max_event, epoch)
        self._first_event = min(self._first_event, epoch)
        return None

    def _buffer(self, pings: list[tuple[TachographPing, str | None]]) -> None:
        if not pings:
            return
        lon = np.fromiter((p.lon for p, _ in pings), float, len(pings))
        lat = np.fromiter((p.lat for p, _ in pings), float, len(pings))
        x, y = self._projector.to_xy(lon, lat)
        for (ping, _), px, py in zip(pings, x.tolist(), y.tolist()):
            fix = Fix(ping.epoch, px, py, ping.speed_kmh, ping.route_id, message_id(ping))
            bisect.insort(self._pending.setdefault(ping.vehicle_id, []), fix, key=lambda f: (f.t, f.msg_id))

    # --- processing --------------------------------------------------------------

    def _advance(self, until: float | None = None) -> Emitted:
        """Release buffered pings up to the watermark and close finished days."""
        limit = self.watermark if until is None else until
        for vehicle_id, pending in self._pending.items():
            cut = bisect.bisect_right(pending, limit, key=lambda f: f.t)
            if cut == 0:
                continue
            batch, self._pending[vehicle_id] = pending[:cut], pending[cut:]
            track = self._tracks.get(vehicle_id) or new_track(vehicle_id)
            track, detected = advance_track(track, batch, self.ctx.geofences, self._rules)
            self._tracks[vehicle_id] = track
            for trip in detected:
                date = service_date_for(trip, self._days_around(trip.departed_at), self.ctx.feed.timezone,
                                        self._rules.match_window_s)
                self._detected.setdefault(date, []).append(trip)
        self._forget_seen(limit)
        return self._close_days(limit)

    def _days_around(self, epoch: float) -> dict[dt.date, ServiceDay]:
        local = dt.datetime.fromtimestamp(epoch, self.ctx.feed.timezone).date()
        return {d: self._day(d) for d in (local, local - dt.timedelta(days=1))}

    def _day(self, date: dt.date) -> ServiceDay:
        if date not in self._days:
            self._days[date] = service_day(self.ctx.feed, date)
        return self._days[date]

    def _day_closes_at(self, day: ServiceDay) -> float:
        # Late trips of the day's last departures may still be running.
        return day.close_epoch + self._rules.match_window_s + self._rules.max_trip_duration_s

    def _close_days(self, limit: float) -> Emitted:
        out = Emitted()
        for date in sorted(self._detected):
            if date in self._closed:
                continue
            day = self._day(date)
            if self._day_closes_at(day) <= limit:
                out.extend(self._close_day(day))
        return out

    def _close_day(self, day: ServiceDay) -> Emitted:
        self._closed.add(day.date)
        detected = self._detected.pop(day.date, [])
        trips = match_service_day(detected, day, self.ctx.feed.timezone, self._rules)
        return Emitted(trips=trips)

    def _forget_seen(self, limit: float) -> None:
        # Keys older than the watermark can no longer be admitted anyway.
        if len(self._seen) > 100_000:
            self._seen = {k: t for k, t in self._seen.items() if t >= limit}

    def close(self) -> Emitted:
        """End of input: process everything buffered and close every day it covers.

        A service day is covered when the input's event-time span overlaps the span
        of its schedule; days where trips were realized are closed in any case.
        """
        out = self._advance(until=np.inf)
        if np.isfinite(self._first_event):
            tz = self.ctx.feed.timezone
            day = dt.datetime.fromtimestamp(self._first_event, tz).date() - dt.timedelta(days=1)
            last = dt.datetime.fromtimestamp(self._max_event, tz).date()
            while day <= last:
                schedule = self._day(day)
                first, end = schedule.scheduled_span()
                if first is not None and first <= self._max_event and end >= self._first_event:
                    self._detected.setdefault(day, [])
                day += dt.timedelta(days=1)
        for date in sorted(self._detected):
            if date not in self._closed:
                out.extend(self._close_day(self._day(date)))
        return out

    def covered_dates(self) -> list[dt.date]:
        return sorted(self._closed)
