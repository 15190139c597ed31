"""The engine: per-vehicle reorder buffers and tracks, closing service days and months."""

from __future__ import annotations

import bisect
import calendar
import datetime as dt
from collections import defaultdict

import numpy as np

from engine.assemble import day_km, month_of, service_day_facts, trip_facts, vehicle_day_facts
from engine.values import Context, Emitted, Message
from gtfs.projection import Projector
from rules.art45 import MonthKm, close_month
from rules.evaluate import evaluate_day
from rules.model import Infraction, InsufficientEvidence
from telemetry import CatracaReading, Occurrence, Rejection, TachographPing, encode
from trips.matching import ServiceDay, match_service_day_full, service_date_for, service_day
from trips.model import DetectedTrip, Fix, Track
from trips.tracker import advance_track, new_track


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
        self._pending: dict[str, list[Fix]] = {}  # per vehicle, sorted by time, not yet released
        self._tracks: dict[str, Track] = {}
        self._archive: dict[str, list[Fix]] = defaultdict(list)  # released fixes, the evidence
        self._catraca: dict[str, list[CatracaReading]] = defaultdict(list)
        self._last_counter: dict[str, int] = {}
        self._reporting: dict[str, list[float]] = defaultdict(list)  # per operator: ping times
        self._seen: dict[tuple, float] = {}  # dedup keys -> event time
        self._max_event = -np.inf
        self._first_event = np.inf
        self._days: dict[dt.date, ServiceDay] = {}
        self._detected: dict[dt.date, list[DetectedTrip]] = {}
        self._closed: set[dt.date] = set()
        self._occurrences: list[Occurrence] = []
        self._suppressions: dict[tuple[str, str], list[Infraction]] = defaultdict(list)  # (operator, month)
        self._month_km: dict[tuple[str, str], MonthKm] = {}
        self._closed_months: set[str] = set()

    @property
    def watermark(self) -> float:
        return self._max_event - self._lateness

    # --- input -------------------------------------------------------------------

    def ingest(self, messages: list[Message]) -> Emitted:
        out = Emitted()
        pings: list[TachographPing] = []
        for message in messages:
            body = message.body
            if isinstance(body, Occurrence):
                self._occurrences.append(body)
                continue
            rejection = self._admit(message)
            if rejection is not None:
                out.rejected.append(rejection)
            elif isinstance(body, TachographPing):
                pings.append(body)
            else:
                self._catraca[body.vehicle_id].append(body)
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

    def _buffer(self, pings: list[TachographPing]) -> None:
        if not pings:
            return
        lon = np.fromiter((p.lon for p in pings), float, len(pings))
        lat = np.fromiter((p.lat for p in pings), float, len(pings))
        x, y = self._projector.to_xy(lon, lat)
        for ping, px, py in zip(pings, x.tolist(), y.tolist()):
            fix = Fix(ping.epoch, px, py, ping.speed_kmh, ping.route_id, message_id(ping), ping.lat, ping.lon)
            bisect.insort(self._pending.setdefault(ping.vehicle_id, []), fix, key=lambda f: (f.t, f.msg_id))

    # --- processing --------------------------------------------------------------

    def _advance(self, until: float | None = None) -> Emitted:
        """Release buffered pings up to the watermark and close finished periods."""
        limit = self.watermark if until is None else until
        for vehicle_id, pending in self._pending.items():
            cut = bisect.bisect_right(pending, limit, key=lambda f: f.t)
            if cut == 0:
                continue
            batch, self._pending[vehicle_id] = pending[:cut], pending[cut:]
            self._archive[vehicle_id].extend(batch)
            self._reporting[self.ctx.fleet[vehicle_id].operator_id].extend(f.t for f in batch)
            track = self._tracks.get(vehicle_id) or new_track(vehicle_id)
            track, detected = advance_track(track, batch, self.ctx.geofences, self._rules)
            self._tracks[vehicle_id] = track
            for trip in detected:
                date = service_date_for(trip, self._days_around(trip.departed_at), self.ctx.feed.timezone,
                                        self._rules.match_window_s)
                self._detected.setdefault(date, []).append(trip)
        self._forget_seen(limit)
        out = self._close_days(limit)
        out.extend(self._close_months(limit))
        return out

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
        for date in self._open_dates(limit):
            day = self._day(date)
            if self._day_closes_at(day) <= limit:
                out.extend(self._close_day(day))
        return out

    def _open_dates(self, limit: float) -> list[dt.date]:
        """Service days not yet closed that the input so far covers, in date order:
        those with realized trips and those whose schedule overlaps the input's span."""
        dates = set(self._detected)
        if np.isfinite(self._first_event):
            tz = self.ctx.feed.timezone
            day = dt.datetime.fromtimestamp(self._first_event, tz).date() - dt.timedelta(days=1)
            last = dt.datetime.fromtimestamp(min(limit, self._max_event), tz).date()
            while day <= last:
                first, end = self._day(day).scheduled_span()
                if first is not None and first <= self._max_event and end >= self._first_event:
                    dates.add(day)
                day += dt.timedelta(days=1)
        return sorted(dates - self._closed)

    def _close_day(self, day: ServiceDay) -> Emitted:
        self._closed.add(day.date)
        detected = self._detected.pop(day.date, [])
        matches = match_service_day_full(detected, day, self.ctx.feed.timezone, self._rules)
        trips = [trip_facts(m, self._archive[m.detected.vehicle_id], self.ctx, day) for m in matches]
        day_facts = service_day_facts(day, trips, self.ctx, self._sorted_reporting(), self._occurrences)
        vehicles = vehicle_day_facts(day, self.ctx, self._archive, self._catraca, self._last_counter, trips)
        findings = evaluate_day(day_facts, vehicles, self.ctx.policy, self._projector)
        out = Emitted(trips=[m.realized for m in matches])
        month = month_of(day.date)
        for finding in findings:
            if isinstance(finding, InsufficientEvidence):
                out.insufficient.append(finding)
                continue
            out.infractions.append(finding)
            if finding.code == "D-22":
                self._suppressions[(finding.operator_id, month)].append(finding)
        for operator, (programmed, realized) in day_km(day, matches, self.ctx).items():
            km = self._month_km.get((operator, month), MonthKm())
            self._month_km[(operator, month)] = km.add(programmed, realized, day.date.isoformat())
        for vehicle in vehicles:
            if vehicle.catraca:
                self._last_counter[vehicle.vehicle_id] = vehicle.catraca[-1].counter
        self._prune(day)
        return out

    def _sorted_reporting(self) -> dict[str, list[float]]:
        for times in self._reporting.values():
            times.sort()
        return self._reporting

    def _prune(self, day: ServiceDay) -> None:
        """Forget evidence no later day can need (the day before the closed one)."""
        horizon = day.start_epoch - self._rules.max_trip_duration_s
        for store in (self._archive, self._reporting):
            for key, items in store.items():
                times = [getattr(i, "t", i) for i in items]
                store[key] = items[bisect.bisect_left(times, horizon):]
        for vehicle, readings in self._catraca.items():
            self._catraca[vehicle] = [r for r in readings if r.epoch >= horizon]

    def _close_months(self, limit: float) -> Emitted:
        out = Emitted()
        for month in sorted({m for _, m in self._month_km} - self._closed_months):
            year, number = map(int, month.split("-"))
            last = dt.date(year, number, calendar.monthrange(year, number)[1])
            if self._day_closes_at(self._day(last)) <= limit:
                out.extend(self._close_month(month))
        return out

    def _close_month(self, month: str) -> Emitted:
        self._closed_months.add(month)
        year, number = map(int, month.split("-"))
        days = sum(1 for d in range(1, calendar.monthrange(year, number)[1] + 1)
                   if self._day(dt.date(year, number, d)).trips or self._day(dt.date(year, number, d)).windows)
        out = Emitted()
        for (operator, m), km in sorted(self._month_km.items()):
            if m != month:
                continue
            out.infractions += close_month(self._suppressions.pop((operator, m), []), km, month, days,
                                           self.ctx.policy)
        return out

    def _forget_seen(self, limit: float) -> None:
        # Keys older than the watermark can no longer be admitted anyway.
        if len(self._seen) > 100_000:
            self._seen = {k: t for k, t in self._seen.items() if t >= limit}

    def close(self) -> Emitted:
        """End of input: process everything buffered and close every period it covers.

        A service day is covered when the input's event-time span overlaps the span
        of its schedule; days where trips were realized are closed in any case.
        Months are closed over the service days the input covered.
        """
        out = self._advance(until=self._max_event)  # releases every buffered ping
        for date in self._open_dates(np.inf):
            out.extend(self._close_day(self._day(date)))
        for month in sorted({m for _, m in self._month_km} - self._closed_months):
            out.extend(self._close_month(month))
        return out

    def covered_dates(self) -> list[dt.date]:
        return sorted(self._closed)
