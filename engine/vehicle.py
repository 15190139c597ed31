"""The vehicle stage: per-vehicle reordering, deduplication, trip detection and —
once the operator stage has matched a service day — the trip and vehicle-day rules
over the evidence it holds.

State lives in msgspec Structs read and written through a `Store` (a dict in the
replay, a Faust table in the workers), so the same code runs in both.
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec
import numpy as np

from engine.assemble import build_trip_facts, operating_window, service_date_of, trip_facts, vehicle_day_facts
from engine.messages import DayMatched, Heartbeat, TripDetected
from engine.values import Context, Message
from gtfs.projection import Projector
from rules.evaluate import evaluate_arrival, evaluate_vehicle_day, rejustify
from rules.model import Finding, Infraction, localized, stamped
from telemetry import CatracaReading, Occurrence, Rejection, TachographPing, encode
from trips.matching import Match, ServiceDay, service_day, unmatched_realization
from trips.model import DetectedTrip, Fix, Track
from trips.tracker import advance_track, new_track


class JudgedTrip(msgspec.Struct):
    """A trip judged on arrival, until its service day's matching settles it: the
    records emitted for it (trip_id filled in then, same ids)."""

    departed_at: float
    route_id: str
    direction_id: int
    shape_id: str
    service_date: str
    infractions: list[Infraction] = msgspec.field(default_factory=list)


class VehicleState(msgspec.Struct):
    vehicle_id: str
    pending: list[Fix] = msgspec.field(default_factory=list)  # not yet past the watermark
    track: Track | None = None
    archive: list[Fix] = msgspec.field(default_factory=list)  # released pings: the evidence
    catraca: list[CatracaReading] = msgspec.field(default_factory=list)
    last_counter: int | None = None  # the last catraca counter of the days already judged
    seen: dict[str, float] = msgspec.field(default_factory=dict)  # dedup keys -> event time
    judged: list[str] = msgspec.field(default_factory=list)  # service dates already judged
    max_events: dict[str, float] = msgspec.field(default_factory=dict)  # newest event time per input
    judged_trips: list[JudgedTrip] = msgspec.field(default_factory=list)  # judged on arrival, not yet matched


class PartitionState(msgspec.Struct):
    """A partition's progress. Its watermark is the slowest input's: the tachograph and
    catraca topics are consumed independently, one may run hours ahead of the other."""

    partition: int
    max_events: dict[str, float] = msgspec.field(default_factory=dict)  # newest event time per source
    first_event: float | None = None
    dirty: list[str] = msgspec.field(default_factory=list)  # vehicles with pending pings
    reporting: dict[str, list[int]] = msgspec.field(default_factory=dict)  # since the last heartbeat
    final: bool = False  # end of input seen: everything released
    ends_seen: list[str] = msgspec.field(default_factory=list)  # inputs whose end-of-input came

    @property
    def max_event(self) -> float | None:
        return max(self.max_events.values()) if self.max_events else None


@dataclass
class VehicleOutput:
    rejected: list[Rejection] = field(default_factory=list)
    detected: list[TripDetected] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def message_id(ping: TachographPing | CatracaReading) -> str:
    """Content-based id of a telemetry message (the same message always gets it)."""
    suffix = f"#{ping.seq}" if ping.seq is not None else ""
    return f"{ping.vehicle_id}/{ping.ts.isoformat()}{suffix}"


class VehicleStage:
    """One partition of the vehicle stage."""

    def __init__(self, ctx: Context, partition: PartitionState,
                 load: Callable[[str], VehicleState | None], save: Callable[[VehicleState], None],
                 sources: frozenset[str] = frozenset({"tachograph", "catraca"})):
        self.ctx = ctx
        self.partition = partition
        self.sources = sources  # the inputs the watermark waits for
        self._load, self._save = load, save
        self._projector = Projector(ctx.feed.epsg)
        self._lateness = ctx.policy.stream.allowed_lateness_s
        self._days: dict[dt.date, ServiceDay] = {}

    @property
    def watermark(self) -> float | None:
        """The slowest input's newest event time less the allowed lateness; none until
        every expected input has been heard from."""
        newest = self.partition.max_events
        if not self.sources <= set(newest):
            return None
        return min(newest[source] for source in self.sources) - self._lateness

    def _lateness_limit(self, state: VehicleState, source: str) -> float | None:
        """A message is late when it is behind its vehicle's newest message of the same
        input by more than the lateness (a restarted worker whose partition progress
        survived but not every vehicle's state still takes that vehicle's redelivery)."""
        newest = state.max_events.get(source)
        return None if newest is None else newest - self._lateness

    def _state(self, vehicle_id: str) -> VehicleState:
        return self._load(vehicle_id) or VehicleState(vehicle_id)

    # --- telemetry in -------------------------------------------------------------

    def ingest(self, messages: list[Message], occurrences: list[Occurrence] | tuple = ()) -> VehicleOutput:
        """Admit a batch (in arrival order), then release what the watermark passed."""
        out = VehicleOutput()
        touched: dict[str, VehicleState] = {}
        pings: list[tuple[VehicleState, TachographPing]] = []
        for message in messages:
            body = message.body
            state = touched.get(body.vehicle_id) or self._state(body.vehicle_id)
            rejection = self._admit(state, message)
            if rejection is not None:
                out.rejected.append(rejection)
                continue
            touched[body.vehicle_id] = state
            if isinstance(body, TachographPing):
                pings.append((state, body))
            else:
                state.catraca.append(body)
        self._buffer(pings)
        for state in touched.values():
            self._save(state)
        released = self.release(self.watermark, occurrences)
        out.detected += released.detected
        out.findings += released.findings
        return out

    def _admit(self, state: VehicleState, message: Message) -> Rejection | None:
        body = message.body
        source = "tachograph" if isinstance(body, TachographPing) else "catraca"

        def reject(reason: str, detail: str) -> Rejection:
            raw = message.raw if message.raw is not None else encode(body).decode()
            return Rejection(source=source, reason=reason, detail=detail, location=message.location, raw=raw)

        if body.vehicle_id not in self.ctx.fleet:
            return reject("unknown_vehicle", f"vehicle {body.vehicle_id!r} is not in fleet.csv")
        epoch = body.epoch
        key = f"{source}|{epoch!r}|{body.seq}"
        if key in state.seen:
            # before the lateness checks: a message Kafka delivers again after a worker
            # restart or a rebalance is behind its vehicle's newest one, and is a duplicate
            return reject("duplicate", f"same vehicle, time and seq as an earlier message ({message_id(body)})")
        limit = self._lateness_limit(state, source)
        if limit is not None and epoch < limit:
            return reject("late", f"event time {body.ts.isoformat()} is more than "
                                  f"{self._lateness:.0f} s behind the vehicle's newest event")
        watermark = self.watermark
        horizon = self.ctx.policy.trips.max_trip_duration_s
        if watermark is not None and epoch < watermark - horizon:
            # its service day may already be closed and judged
            return reject("late", f"event time {body.ts.isoformat()} is more than {horizon:.0f} s behind "
                                  "the stream's progress: its service day may be closed")
        state.seen[key] = epoch
        state.max_events[source] = max(state.max_events.get(source, epoch), epoch)
        p = self.partition
        p.max_events[source] = max(p.max_events.get(source, epoch), epoch)
        p.first_event = epoch if p.first_event is None else min(p.first_event, epoch)
        operator = self.ctx.fleet[body.vehicle_id].operator_id
        minute = int(epoch // 60)
        minutes = p.reporting.setdefault(operator, [])
        if not minutes or minutes[-1] != minute:
            minutes.append(minute)
        return None

    def _buffer(self, pings: list[tuple[VehicleState, TachographPing]]) -> None:
        if not pings:
            return
        lon = np.fromiter((p.lon for _, p in pings), float, len(pings))
        lat = np.fromiter((p.lat for _, p in pings), float, len(pings))
        x, y = self._projector.to_xy(lon, lat)
        dirty = set(self.partition.dirty)
        for (state, ping), px, py in zip(pings, x.tolist(), y.tolist()):
            fix = Fix(ping.epoch, px, py, ping.speed_kmh, ping.route_id, message_id(ping), ping.lat, ping.lon)
            bisect.insort(state.pending, fix, key=lambda f: (f.t, f.msg_id))
            dirty.add(state.vehicle_id)
        self.partition.dirty = sorted(dirty)

    def release(self, limit: float | None, occurrences: list[Occurrence] | tuple = ()) -> VehicleOutput:
        """Pings at or before `limit` go to trip detection, vehicle by vehicle; each trip
        found is judged at once on its own track (D-11, A-07)."""
        out = VehicleOutput()
        if limit is None:
            return out
        still_dirty = []
        for vehicle_id in self.partition.dirty:
            state = self._state(vehicle_id)
            cut = bisect.bisect_right(state.pending, limit, key=lambda f: f.t)
            if cut:
                batch, state.pending = state.pending[:cut], state.pending[cut:]
                state.archive.extend(batch)
                track, trips = advance_track(state.track or new_track(vehicle_id), batch,
                                             self.ctx.geofences, self.ctx.policy.trips)
                state.track = track
                operator = self.ctx.fleet[vehicle_id].operator_id
                out.detected += [TripDetected(operator, trip) for trip in trips]
                for trip in trips:
                    out.findings += self._judge_arrival(state, trip, occurrences)
                self._save(state)
            if state.pending:
                still_dirty.append(vehicle_id)
        self.partition.dirty = still_dirty
        return out

    def _judge_arrival(self, state: VehicleState, trip: DetectedTrip, occurrences) -> list[Finding]:
        """The trip rules its own track settles, the moment it arrives. Its scheduled
        match is not known yet: the records carry no trip_id until the day closes."""
        date = service_date_of(trip, self.ctx, self._day)
        realized = unmatched_realization(trip, date, self.ctx.feed.timezone)
        facts = trip_facts(Match(trip, realized, None, None), state.archive, self.ctx, self._day(date), stay=False)
        findings = evaluate_arrival(facts, occurrences, self.ctx.policy, self._projector)
        # Evidence complete when the watermark passes the arrival ping.
        arrival_ping = facts.fixes[-1].t if facts.fixes else trip.arrived_at
        findings = [stamped(f, arrival_ping, self.ctx.feed.timezone) if isinstance(f, Infraction) else f
                    for f in findings]
        infractions = [f for f in findings if isinstance(f, Infraction)]
        if infractions:
            state.judged_trips.append(JudgedTrip(trip.departed_at, trip.route_id, trip.direction_id, trip.shape_id,
                                                 date.isoformat(), infractions))
        return findings

    def _day(self, date: dt.date) -> ServiceDay:
        if date not in self._days:
            self._days[date] = service_day(self.ctx.feed, date)
        return self._days[date]

    def heartbeat(self, final: bool = False) -> Heartbeat:
        p = self.partition
        beat = Heartbeat(source=p.partition, watermark=self.watermark, first_event=p.first_event,
                         max_event=p.max_event, reporting=p.reporting, final=final)
        p.reporting = {}
        return beat

    def flush(self, occurrences: list[Occurrence] | tuple = ()) -> VehicleOutput:
        """End of input: release every pending ping."""
        return self.release(np.inf, occurrences)

    # --- a closed service day comes back from the operator stage --------------------

    def on_day_matched(self, message: DayMatched, occurrences: list[Occurrence]) -> list[Finding]:
        state = self._state(message.vehicle_id)
        if message.service_date.isoformat() in state.judged:
            return []  # delivered again after a restart: judged once already
        state.judged.append(message.service_date.isoformat())
        day = self._day(message.service_date)
        trips = [build_trip_facts(record, state.archive, self.ctx, day) for record in message.matches]
        findings: list[Finding] = self._settle_arrivals(state, message, occurrences)
        facts = vehicle_day_facts(day, self.ctx, state, trips)
        settled = evaluate_vehicle_day(trips, facts, occurrences, self.ctx.policy, self._projector)
        findings += [stamped(f, message.closed_at, self.ctx.feed.timezone) if isinstance(f, Infraction) else f
                     for f in settled]
        if facts is not None and facts.catraca:
            state.last_counter = facts.catraca[-1].counter
        # Forget what no later day can need: before this operating day's end, less a trip.
        _, end = operating_window(day, self.ctx)
        horizon = end - self.ctx.policy.trips.max_trip_duration_s
        state.archive = state.archive[bisect.bisect_left(state.archive, horizon, key=lambda f: f.t):]
        state.catraca = [r for r in state.catraca if r.epoch >= end]
        # Dedup keys live until their day is judged: a message redelivered after a worker
        # restart is then recognized as a duplicate, not taken for a late one.
        state.seen = {k: t for k, t in state.seen.items() if t >= horizon}
        state.judged = state.judged[-7:]
        self._save(state)
        return findings

    def _settle_arrivals(self, state: VehicleState, message: DayMatched, occurrences) -> list[Finding]:
        """The day's matching is final: the records judged on arrival get their trip's
        scheduled trip_id, and an occurrence registered since may justify them. Only
        records that changed are emitted again (same ids, first detected_at kept)."""
        date = message.service_date.isoformat()
        trip_of = {(r.detected.departed_at, r.detected.route_id, r.detected.direction_id, r.detected.shape_id):
                   r.realized.trip_id for r in message.matches}
        updates: list[Finding] = []
        kept = []
        for judged in state.judged_trips:
            if judged.service_date != date:
                kept.append(judged)
                continue
            trip_id = trip_of.get((judged.departed_at, judged.route_id, judged.direction_id, judged.shape_id))
            for before in judged.infractions:
                before = localized(before, self.ctx.feed.timezone)
                after = rejustify(msgspec.structs.replace(before, trip_id=trip_id), occurrences,
                                  self.ctx.policy, self._projector)
                if after != before:
                    updates.append(after)
        state.judged_trips = kept
        return updates
