"""The vehicle stage: per-vehicle reordering, deduplication, trip detection, the trip
rules on each trip's arrival and — once the operator stage has matched a service day —
the rules that need the day's matching, over the compact facts it kept.

The state of a vehicle holds what its open trip and open episodes need plus the day's
compact facts (`engine.daylog`, `engine.triplog`), never the day's pings: the raw
telemetry, which is the evidence, stays in the input topics and files.

State lives in msgspec Structs (`engine.vehiclestate`) read and written through a
`Store` (a dict in the replay, a Faust table in the workers), so the same code runs in
both. The stage orchestrates (ingest, release, flush, heartbeat) and hands concerns to
their modules: whether a message is taken (`engine.admission`), the live view moved at
admission (`engine.liveviews`), the day's compact facts and the episodes judged while
the day runs (`engine.dayfacts`), the trip a vehicle is running (`engine.running`), a
trip's arrival (`engine.arrival`), the passes along an itinerary in the open track (the
track rules, the unfollowed passes: `engine.passes`), and a matched day settled
(`engine.settling`). What stays here: the buffering and release in event-time order,
trip detection, a clock fault's unfollowed passes, and undoing a release that failed.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import logging
from collections.abc import Callable
from typing import NamedTuple

import msgspec
import msgspec.inspect
import numpy as np

from engine.admission import (
    KEPT_LATE,
    Gate,
    admit,
    content_digest,
    dedup_key,
    forget_old_keys,
    held_message,
    holds,
    in_feed_time,
    keep_for_rejudgment,
    resolve_held,
    source_of,
)
from engine.arrival import Arrivals, forget_trip_readings
from engine.changelog import at_most_provisional, emit_change
from engine.clocks import clock_passes
from engine.dayfacts import Keeping, judge_catraca_episodes, judge_over_episodes, log_day
from engine.daylog import DayLog, OtherCatraca
from engine.late import Rejudged, rejudged_changes
from engine.messages import (
    DayMatched,
    Heartbeat,
    TripDetected,
    TripUnfollowed,
    VehicleAhead,
    VehicleDayRevised,
)
from engine.liveviews import LiveViews
from engine.passes import Passes
from engine.running import RunningTrips, conflicted_exits
from engine.sends import Sends
from engine.servicedays import ServiceDays
from engine.settling import Judging, settle_day
from engine.status import VehicleStatus, open_trip
from engine.triplog import TripLog, watch
from engine.values import Context, Message
from engine.vehiclestate import VehicleState
from gtfs.projection import Projector
from gtfs.schedule import ServiceDay
from rules.facts import SensorRuns
from rules.model import Finding, Infraction, Scope, localized
from rules.versions import OtherVersion, kept_reading, kept_version, version_key
from telemetry import CatracaReading, Occurrence, Rejection, TachographPing, encode, message_id
from trips.memo import TakeGeometry, TrackMemo
from trips.model import Fix, columns
from trips.position import PositionFault, screen_positions
from trips.tracker import advance_track, grown_track, new_track


class PartitionState(msgspec.Struct):
    """A partition's progress. Its watermark is the slowest input's: the tachograph and
    catraca topics are consumed independently, one may run hours ahead of the other."""

    partition: int
    max_events: dict[str, float] = msgspec.field(default_factory=dict)  # newest event time per source
    first_event: float | None = None
    dirty: list[str] = msgspec.field(default_factory=list)  # vehicles with pending messages
    reporting: dict[str, list[int]] = msgspec.field(default_factory=dict)  # since the last heartbeat
    final: bool = False  # end of input seen: everything released
    ends_seen: list[str] = msgspec.field(default_factory=list)  # inputs whose end-of-input came
    # vehicle -> its newest fix, until the watermark is a silence past it (trips.unfollowed)
    quiet: dict[str, float] = msgspec.field(default_factory=dict)
    # vehicle -> when its sensors were heard in what was released since the last heartbeat
    coverage: dict[str, SensorRuns] = msgspec.field(default_factory=dict)
    # input topic -> the next offset of this partition the worker expects (streams.ledger:
    # what its Kafka consumer passed over is read back); the replay reads files: empty
    next_offsets: dict[str, int] = msgspec.field(default_factory=dict)

    @property
    def max_event(self) -> float | None:
        return max(self.max_events.values()) if self.max_events else None


# A vehicle-day judged again from its raw input (engine.late): (vehicle, [start, end) of its
# operating day in epoch s, occurrences) -> every infraction record the core finds in it, then
# its insufficient evidence, and the day as the operator stage is to hear it again
JudgeAgain = Callable[[str, float, float, list[Occurrence]], Rejudged]
# the scopes of the rules the vehicle stage judges (the operator stage judges Scope.SERVICE_DAY)
_VEHICLE_SCOPES = frozenset({Scope.TRIP, Scope.MATCHED_TRIP, Scope.VEHICLE_DAY, Scope.TRACK})


class _Release(NamedTuple):
    """A release's plan (`VehicleStage._release_plan`)."""

    vehicles: list[tuple[VehicleState, int, int]]  # each loaded, with its fixes' and readings' cuts
    fixes: list[Fix]  # the fixes released, vehicle by vehicle, in order


_STATE = msgspec.msgpack.Encoder()
_STATE_DECODER = msgspec.msgpack.Decoder(VehicleState)

# The fields of a vehicle's state that `VehicleStage._process` changes; it only reads the
# others. A release that raises is undone from a snapshot of these alone, taken at every
# beat: the rest is replaced whole (immutable values, or a dict copied). tests/engine/
# test_vehicle.py undoes every beat of a day with it and compares with the whole state
# encoded before.
_PROCESSED = ("released", "track", "unfollowed", "emitted", "departure", "last_counter", "last_reading",
              "trip_readings", "positions")


def _snapshot(state: VehicleState) -> tuple:
    """What undoing a release needs (`_restored`). The day and trip logs are changed in
    place, so the logs a release can change are kept as copies (`_log_copy`): every day
    log, and the trip logs still watching. A settled trip log (`watching` False) is kept
    as the object it is: nothing changes it any more (triplog.watch, its only writer
    after it opens, returns at once on it), and the trip logs of a vehicle's day are
    mostly settled, so the snapshot costs the open logs, not the day. The lists are
    copied (a release appends to them)."""
    trips = list(state.trips)
    watching = [(i, _log_copy(log)) for i, log in enumerate(trips) if log.watching]
    logs = trips, watching, [_log_copy(log) for log in state.days]
    return logs, tuple(dict(v) if isinstance(v, dict) else v for v in (getattr(state, name) for name in _PROCESSED))


def _restored(state: VehicleState, snapshot: tuple) -> VehicleState:
    """`state` as it was when `snapshot` was taken (in place; the snapshot's copies are
    copied again, so it could restore twice)."""
    (trips, watching, days), values = snapshot
    state.days = [_log_copy(log) for log in days]
    state.trips = list(trips)
    for i, log in watching:
        state.trips[i] = _log_copy(log)
    for name, value in zip(_PROCESSED, values):
        setattr(state, name, dict(value) if isinstance(value, dict) else value)
    return state


def _log_copy(log: DayLog | OtherCatraca | TripLog) -> DayLog | OtherCatraca | TripLog:
    """A day or trip log as it is now, whatever is done to `log` after: a shallow copy
    with its lists copied and the log in it (a day's `other`) copied too. Their items
    and its other fields are immutable (frozen Structs, tuples, numbers, strings), so
    this is the log's value at a few list copies, not an encoding of the day's kept
    fixes at every beat (tests/engine/test_vehicle.py undoes every beat of a day with it)."""
    copied = log.__copy__()
    for name in _LIST_FIELDS[type(log)]:
        setattr(copied, name, list(getattr(log, name)))
    if type(log) is DayLog and log.other is not None:
        copied.other = _log_copy(log.other)
    elif type(log) is OtherCatraca:
        copied.log = _log_copy(log.log)
    return copied


# the fields of the logs a release changes in place that are lists (appended to)
_LIST_FIELDS = {cls: tuple(field.name for field in msgspec.inspect.type_info(cls).fields
                           if isinstance(field.type, msgspec.inspect.ListType))
                for cls in (DayLog, OtherCatraca, TripLog)}


log = logging.getLogger(__name__)


def _describe(item: Fix | CatracaReading, tz) -> str:
    """The message's id; a reading's time in the feed's timezone, whether the reading was
    kept as admitted or read back from stored state (msgpack keeps no offset)."""
    return item.msg_id if isinstance(item, Fix) else message_id(item, tz)


def _position_fault(vehicle_id: str, fault: PositionFault, tz) -> Rejection:
    """A fix dropped by the position screen, dead-lettered with the ping's fields as the fix
    kept them (the message itself stays in the input, where the evidence bundles read it;
    its location is the message id)."""
    fix = fault.fix
    ping = {"vehicle_id": vehicle_id, "ts": dt.datetime.fromtimestamp(fix.t, tz).isoformat(), "lat": fix.lat,
            "lon": fix.lon, "speed_kmh": fix.speed_kmh}
    return Rejection(source="tachograph", reason="position_fault", detail=fault.detail, location=fix.msg_id,
                     raw=msgspec.json.encode(ping).decode())


def _fix_order(f: Fix) -> tuple[float, str]:
    return (f.t, f.msg_id)


def _reading_order(r: CatracaReading) -> tuple[float, int]:
    return (r.epoch, r.counter)


class VehicleStage:
    """One partition of the vehicle stage."""

    def __init__(self, ctx: Context, partition: PartitionState,
                 load: Callable[[str], VehicleState | None], save: Callable[[VehicleState], None],
                 sources: frozenset[str] = frozenset({"tachograph", "catraca"}),
                 wall_clock: Callable[[], float] | None = None, judge_again: JudgeAgain | None = None):
        self.ctx = ctx
        # the core over a vehicle-day's raw input, where the shell can read it back (engine.late);
        # without it a message beyond the allowed lateness is rejected as `late`
        self._judge_again = judge_again
        self.partition = partition
        self.sources = sources  # the inputs the watermark waits for
        self._load, self._save = load, save
        self._projector = Projector(ctx.feed.epsg)
        self._lateness = ctx.policy.stream.allowed_lateness_s
        self._days = ServiceDays(ctx.feed, ctx.policy.trips.service_day_cutover_s)
        # the trip each vehicle runs now: its departure told, B-04 while it runs (engine.running)
        self._running = RunningTrips(ctx, self._days, self._projector)
        # per vehicle, the corridor geometry of its open track measured so far: a cache, not
        # state (a restarted worker measures again and finds the same)
        self._track_memos: dict[str, TrackMemo] = {}
        # per vehicle seen at a release, the earliest of its pending messages (inf: none),
        # kept no later than it as messages come (`_pending_at`): a release loads and reads only
        # the vehicles with something at or before the watermark, not every vehicle waiting
        # (a worker unpacks each state it loads). A cache, not state: one not known is loaded
        self._due: dict[str, float] = {}
        # the fixes of the release running, measured together (trips.memo.TakeGeometry)
        self._released_geometry: TakeGeometry | None = None
        pack = ctx.pack
        # rules only some packs list: nothing of theirs is measured or kept for the others
        self._track_rules = pack.rules_for(Scope.TRACK)
        self._reads_doors = ctx.policy.unmarked_stop is not None and \
            any("unmarked_stop" in rule.requires for rule in pack.catalogue.values())
        self._reads_trip_catraca = ctx.policy.other_line is not None and \
            any("other_line" in rule.requires for rule in pack.catalogue.values())
        self._live_views = LiveViews(ctx, self._day)
        self._vehicle_codes = frozenset(rule.code for rule in pack.catalogue.values() if rule.scope in _VEHICLE_SCOPES)
        self._judging = Judging(ctx, self._days, self._projector, frozenset(rule.code for rule in self._track_rules))
        # what keeping the day's compact facts reads (engine.dayfacts)
        self._keeping = Keeping(self._judging, self._reads_doors, self._reads_trip_catraca)
        # a trip's arrival: the rules its track settles, B-04 on its live match, its log (engine.arrival)
        self._arrivals = Arrivals(ctx, self._days, self._projector, self._running, self._keeping,
                                  self._reads_trip_catraca)
        # the passes along an itinerary: the track rules over them, the unfollowed told (engine.passes)
        self._passes = Passes(ctx, self._days, self._projector, self._track_rules)
        # what admission reads (engine.admission); `wall_clock`, the processing clock (epoch s)
        # of a live worker: a message dated further ahead of it than a device clock may be
        # off is quarantined; replay reads history, none
        self._gate = Gate(ctx, self._days, self._lateness, rejudging=judge_again is not None, wall_clock=wall_clock)

    @property
    def watermark(self) -> float | None:
        """The slowest input's newest event time less the allowed lateness; none until
        every expected input has been heard from."""
        newest = self.partition.max_events
        if not newest.keys() >= self.sources:
            return None
        return min(newest[source] for source in self.sources) - self._lateness

    def _state(self, vehicle_id: str) -> VehicleState:
        return self._load(vehicle_id) or VehicleState(vehicle_id)

    def _day(self, date: dt.date) -> ServiceDay:
        return self._days(date)

    # --- telemetry in -------------------------------------------------------------

    def ingest(self, messages: list[Message], occurrences: list[Occurrence] | tuple = ()) -> Sends:
        """Admit a batch (in arrival order), then release what the watermark passed."""
        out = Sends()
        touched: dict[str, VehicleState] = {}
        pings: list[tuple[VehicleState, TachographPing]] = []
        heard: dict[str, tuple[VehicleState, VehicleStatus | None]] = {}
        for message in messages:
            body = message.body
            state = touched.get(body.vehicle_id) or self._state(body.vehicle_id)
            if body.vehicle_id in self.ctx.fleet:
                # (a held message is rare: the watermark is read only when one waits)
                taken, copy = resolve_held(state, message, self._gate, self.watermark) if state.held else ((), None)
                for held, rejection in taken:
                    self._take(state, held, rejection, out, touched, pings, heard)
                    touched[body.vehicle_id] = state
                if copy is not None:  # of the message held: it stays held
                    out.rejected.append(copy)
                    touched[body.vehicle_id] = state
                    continue
                if holds(state, message, self._gate):
                    self._mark_dirty(body.vehicle_id)
                    touched[body.vehicle_id] = state
                    continue
            self._take(state, message, None, out, touched, pings, heard)
        arrived = self._buffer(pings)
        self.partition.dirty = sorted(set(self.partition.dirty) | set(touched))
        for state in touched.values():
            self._save(state)  # (before the release loads its vehicles: the very objects admitted to)
        limit = self.watermark
        planned = self._release_plan(limit)
        # the pings that arrived and the fixes the watermark passed, measured together: one
        # query of each kind for the live view and the release (a query's cost is mostly its call)
        take = TakeGeometry(self.ctx.geofences, [fix for _, fix in arrived] + planned.fixes)
        out.statuses += self._live_views.statuses(arrived, heard, out.live_departed, take)
        for state in touched.values():
            self._save(state)  # again: the live views moved (a store that copies what it is given keeps that too)
        out.merge(self.release(limit, occurrences, planned, take))
        out.findings += self._judge_late_days(sorted(touched), occurrences, out)
        self._note_sent(out.findings)
        return out

    def _take(self, state: VehicleState, message: Message, rejection: Rejection | None, out: Sends,
              touched: dict[str, VehicleState], pings: list, heard: dict) -> None:
        """A message admitted (into the vehicle's pending messages) or dead-lettered.
        `heard`: the vehicles whose live view took a newer catraca reading in this call,
        with the status their view showed before it (engine.liveviews, `LiveViews.statuses`)."""
        body = message.body
        if rejection is None:
            try:
                rejection = self._admit(state, message)
            except Exception as exc:  # noqa: BLE001 - one bad message must not stop the stream
                log.exception("dead-lettering %s: the engine failed on it", message.location)
                rejection = Rejection(source=source_of(body),
                                      reason="engine_error", detail=f"{type(exc).__name__}: {exc}",
                                      location=message.location,
                                      raw=message.raw if message.raw is not None else encode(body).decode())
        if rejection is KEPT_LATE:
            touched[body.vehicle_id] = state
            out.late_kept += 1
            return
        if rejection is not None:
            out.rejected.append(rejection)
            if rejection.reason == "conflicting_duplicate":
                touched[body.vehicle_id] = state
                released = self._keep_versions(state, body, pings) if isinstance(body, TachographPing) \
                    else self._keep_catraca_versions(state, body)
                if released:
                    self._rejudge_version(state, body)
                out.findings += self._at_most_provisional(state)
            if rejection.reason in ("clock_offset", "future") and state.clock_faults:
                touched[body.vehicle_id] = state
                if isinstance(body, TachographPing):
                    out.unfollowed = self._with_clock_passes(state, out.unfollowed)
            return
        touched[body.vehicle_id] = state
        if isinstance(body, TachographPing):
            pings.append((state, body))
        else:
            bisect.insort(state.pending_catraca, body, key=_reading_order)
            self._pending_at(state.vehicle_id, body.epoch)
            live = state.live
            if live.catraca_at is None or body.epoch > live.catraca_at:
                if state.vehicle_id not in heard:
                    heard[state.vehicle_id] = (state, self._live_views.shown(state))
                state.live = msgspec.structs.replace(live, catraca_at=body.epoch)

    def _at_most_provisional(self, state: VehicleState) -> list[Finding]:
        """The records already sent that cite a message now known in two versions, sent
        again at most provisional (same id, same detected_at), their instants in the feed's
        timezone: a record read back from stored state has them in UTC (rules.model.localized),
        one the stage still holds as it made it in the feed's, and what is sent must not
        depend on which (the worker's decoded states, streams.decoded)."""
        changed: list[Finding] = []
        tz = self.ctx.feed.timezone
        for record in list(state.emitted.values()):
            after = at_most_provisional(record, state.conflicted)
            if after is not record:
                changed += emit_change(state.emitted, localized(after, tz), record.detected_at.timestamp(), tz)
        for log in state.trips:
            for k, record in enumerate(log.infractions):
                after = at_most_provisional(record, state.conflicted)
                if after is not record:
                    log.infractions[k] = after
                    changed.append(localized(after, tz))
        return changed

    def _keep_versions(self, state: VehicleState, body: TachographPing, pings: list) -> bool:
        """A second version of a ping: the one of the two the facts take is chosen by content
        (rules.versions.kept_version) while the first still waits for the watermark, so the
        order of arrival decides nothing; the other is kept beside the facts, to judge the
        records that cite it on both. One already taken into the facts stays there: whether
        it was (released), returned."""
        key = dedup_key(body)
        if key not in state.digests:
            return False  # a copy of a message held by the clock-jump guard: not taken yet
        this = content_digest(body)
        new = self._fix_of(body, *self._xy(body))
        vkey = version_key(new.t, new.msg_id)
        known = state.versions.get(vkey)
        first = known.digests[0] if known is not None else state.digests[key]
        # the first version admitted in this call (not yet pending), or waiting in pending
        k = next((k for k, (s, p) in enumerate(pings) if s is state and dedup_key(p) == key), None)
        i = None if k is not None else \
            next((i for i, f in enumerate(state.pending) if f.t == new.t and version_key(f.t, f.msg_id) == vkey), None)
        if k is None and i is None:
            state.versions = {**state.versions, vkey: OtherVersion(new, (first, this))}
            return True
        before = self._fix_of(pings[k][1], *self._xy(pings[k][1])) if k is not None else state.pending[i]
        kept, kept_digest, other, other_digest = kept_version(before, first, new, this)
        if kept is new and k is not None:
            pings[k] = (state, body)
        elif kept is new:
            pending = state.pending[:i] + state.pending[i + 1:]
            bisect.insort(pending, new, key=_fix_order)
            state.pending = pending
            self._pending_at(state.vehicle_id, new.t)
        state.versions = {**state.versions, vkey: OtherVersion(other, (kept_digest, other_digest))}
        return False

    def _keep_catraca_versions(self, state: VehicleState, body: CatracaReading) -> bool:
        """A second version of a catraca reading while the first still waits for the
        watermark: the one the day's facts take is chosen by content
        (rules.versions.kept_reading), the other is accumulated beside them (DayLog.other),
        so the order of arrival decides nothing. Whether the first was released already
        (it stays as it was), returned."""
        key = dedup_key(body)
        i = next((i for i, r in enumerate(state.pending_catraca) if dedup_key(r) == key), None)
        if key not in state.digests or key in state.catraca_versions or i is None:
            # a copy of a held message, a third version, or the first already released
            return key in state.digests and key not in state.catraca_versions
        version = kept_reading(state.pending_catraca[i], state.digests[key], body, content_digest(body))
        if version.kept is body:
            pending = state.pending_catraca[:i] + state.pending_catraca[i + 1:]
            bisect.insort(pending, body, key=_reading_order)
            state.pending_catraca = pending
            self._pending_at(state.vehicle_id, body.epoch)
        state.catraca_versions = {**state.catraca_versions, key: version}
        return False

    def _admit(self, state: VehicleState, message: Message) -> Rejection | None:
        """The message admitted or not (engine.admission); one taken moves the partition's progress."""
        verdict = admit(state, message, self._gate, self.watermark)
        if verdict is None:
            self._note_progress(message.body)
        return verdict

    def _note_progress(self, body: TachographPing | CatracaReading) -> None:
        """A message taken: the partition's newest event of its input, its first event, and
        the minute its operator reported in (for the next heartbeat)."""
        epoch, source = body.epoch, source_of(body)
        p = self.partition
        p.max_events[source] = max(p.max_events.get(source, epoch), epoch)
        p.first_event = epoch if p.first_event is None else min(p.first_event, epoch)
        operator = self.ctx.fleet[body.vehicle_id].operator_id
        minute = int(epoch // 60)
        minutes = p.reporting.setdefault(operator, [])
        if not minutes or minutes[-1] != minute:
            minutes.append(minute)

    def _pending_at(self, vehicle_id: str, epoch: float) -> None:
        """A message of that time now pending: the vehicle's next release is no later
        (`_due`). A vehicle not known there stays unknown: loaded at the next release."""
        if vehicle_id in self._due:
            self._due[vehicle_id] = min(self._due[vehicle_id], epoch)

    def _mark_dirty(self, vehicle_id: str) -> None:
        """A vehicle with a message waiting (pending or held), for the next release."""
        if vehicle_id not in self.partition.dirty:
            self.partition.dirty = sorted({*self.partition.dirty, vehicle_id})

    def _rejudge_version(self, state: VehicleState, body: TachographPing | CatracaReading) -> None:
        """A second version of a message the day's facts took already (the watermark passed
        it): they cannot take it any more, so its vehicle-day is judged again from its raw
        input, which holds both versions, as for a late message (engine.late), where a
        re-judgment is wired and the policy's bounds allow; else what cites it stays at
        most provisional. The second version is dead-lettered all the same (counted)."""
        if self._judge_again is not None:
            keep_for_rejudgment(state, body, self._gate, self.watermark)

    def _xy(self, ping: TachographPing) -> tuple[float, float]:
        x, y = self._projector.to_xy(np.array([ping.lon]), np.array([ping.lat]))
        return float(x[0]), float(y[0])

    def _with_clock_passes(self, state: VehicleState, told: list[TripUnfollowed]) -> list[TripUnfollowed]:
        """`told` with the vehicle's latest tachograph clock-fault stretch as unfollowed
        passes on every itinerary it may run, each replacing its earlier version (same key).
        A stretch no longer than a gap the tracker reads through (a lone ping dated 2099)
        hides no departure: none."""
        fault = max((f for f in state.clock_faults if f.input == "tachograph"), key=lambda f: f.last, default=None)
        if fault is None or fault.last - fault.first <= self.ctx.policy.trips.max_coverage_gap_s:
            return told
        lines = self._arrivals.licensed_lines(state.vehicle_id)
        passes = clock_passes(state.vehicle_id, fault, [it for it in self.ctx.geofences.itineraries.values()
                                                        if it.pattern.route_id in lines])
        keys = {p.key for p in passes}
        operator = self.ctx.fleet[state.vehicle_id].operator_id
        return [m for m in told if m.passage.key not in keys] + [TripUnfollowed(operator, p) for p in passes]

    def _take_all_held(self, out: Sends) -> None:
        """End of input: nothing came back behind a held message. One within the bound of
        the stream's event-time frontier (the newest message taken, of any vehicle and
        input) is taken; one beyond it is `future` (DESIGN.md), whether the stream was read
        in event-time order (replay) or as it arrived (a worker's backfill): a ping dated
        2099 never closes seventy years of service days."""
        touched: dict[str, VehicleState] = {}
        pings: list = []
        heard: dict = {}
        frontier = self.partition.max_event
        bound = self.ctx.policy.stream.max_clock_jump_s
        for vehicle_id in list(self.partition.dirty):
            state = self._load(vehicle_id)
            if state is None or not state.held:
                continue
            for source in sorted(state.held):
                held = state.held.pop(source)
                message = held_message(source, held)
                beyond = None
                if frontier is not None and message.body.epoch > frontier + bound:
                    beyond = Rejection(
                        source=source, reason="future", location=held.location, raw=held.raw,
                        detail=(f"event time {message.body.ts.isoformat()} is "
                                f"{(message.body.epoch - frontier) / 60:.0f} min beyond the stream's event-time "
                                f"frontier ({dt.datetime.fromtimestamp(frontier, message.body.ts.tzinfo).isoformat()}) "
                                "at the end of the input (policy stream.max_clock_jump_s)"))
                self._take(state, message, beyond, out, touched, pings, heard)
            touched[vehicle_id] = state
        out.statuses += self._live_views.statuses(self._buffer(pings), heard, out.live_departed)
        for state in touched.values():
            self._save(state)

    def _judge_late_days(self, vehicle_ids, occurrences, out: Sends) -> list[Finding]:
        """The vehicle-days already judged that late messages wait for, judged again."""
        found: list[Finding] = []
        for vehicle_id in vehicle_ids:
            state = self._load(vehicle_id)
            if state is None or not state.late:
                continue
            for date, day in sorted(state.late.items()):
                if not (day.waiting and date in state.judged):
                    continue
                try:
                    changed, revised = self._judge_again_day(state, date, occurrences)
                except Exception:  # noqa: BLE001 - the day stands as judged; the stream goes on
                    log.exception("judging %s's %s again failed", vehicle_id, date)
                    state.late = {**state.late, date: msgspec.structs.replace(day, waiting=False,
                                                                              rejudged=day.rejudged + 1)}
                    self._save(state)
                    continue
                found += changed
                out.revised += [revised] if revised is not None else []
                out.rejudged += 1
        return found

    def _judge_again_day(self, state: VehicleState, date: str,
                         occurrences) -> tuple[list[Finding], VehicleDayRevised | None]:
        """One vehicle-day judged again from its raw input through the same core; what
        changed against what was sent for it (engine.late.rejudged_changes), and the
        insufficient evidence that names messages in two versions (rules.versions): what only
        one version supports, which the day's first judgment, before the second version
        came, could not know; and the day as the operator stage is to hear it again."""
        day = dt.date.fromisoformat(date)
        start, end = self._days.window(day)
        rejudged = self._judge_again(state.vehicle_id, start, end, list(occurrences))
        found = [r for r in rejudged.records
                 if r.vehicle_id == state.vehicle_id and r.service_date == day and r.code in self._vehicle_codes]
        doubted = [r for r in found if not isinstance(r, Infraction) and "conflicting_versions" in r.evidence]
        found = [r for r in found if isinstance(r, Infraction)]
        late = state.late[date]
        watermark = self.watermark
        changed, sent = rejudged_changes(state.sent.get(date, {}), found,
                                         late.newest if watermark is None else max(watermark, late.newest),
                                         self.ctx.feed.timezone)
        state.sent = {**state.sent, date: sent}
        state.late = {**state.late, date: msgspec.structs.replace(late, waiting=False, rejudged=late.rejudged + 1)}
        self._save(state)
        return [*changed, *doubted], rejudged.revised

    def _note_sent(self, findings: list[Finding]) -> None:
        """The vehicle-stage records sent, as last sent per vehicle-day: what a re-judgment
        compares with (only where one is wired)."""
        if self._judge_again is None:
            return
        by_vehicle: dict[str, list[Infraction]] = {}
        for record in findings:
            if isinstance(record, Infraction) and record.vehicle_id in self.ctx.fleet and \
                    record.code in self._vehicle_codes:
                by_vehicle.setdefault(record.vehicle_id, []).append(record)
        for vehicle_id, records in by_vehicle.items():
            state = self._state(vehicle_id)
            sent = dict(state.sent)
            for record in records:
                date = record.service_date.isoformat()
                sent[date] = {**sent.get(date, {}), record.infraction_id: record}
            state.sent = sent
            self._save(state)

    def _buffer(self, pings: list[tuple[VehicleState, TachographPing]]) -> list[tuple[VehicleState, Fix]]:
        """The admitted pings as fixes, into their vehicles' pending messages (for release)."""
        if not pings:
            return []
        lon = np.fromiter((p.lon for _, p in pings), float, len(pings))
        lat = np.fromiter((p.lat for _, p in pings), float, len(pings))
        x, y = self._projector.to_xy(lon, lat)
        fixes = []
        for (state, ping), px, py in zip(pings, x.tolist(), y.tolist()):
            fix = self._fix_of(ping, px, py)
            if state.pending and _fix_order(fix) < _fix_order(state.pending[-1]):
                bisect.insort(state.pending, fix, key=_fix_order)
            else:  # in order, as nearly every ping comes: where insort would put it, without its search
                state.pending.append(fix)
            self._pending_at(state.vehicle_id, fix.t)
            fixes.append((state, fix))
        return fixes

    def _fix_of(self, ping: TachographPing, x: float, y: float) -> Fix:
        return Fix(ping.epoch, x, y, ping.speed_kmh, ping.route_id, message_id(ping), ping.lat, ping.lon,
                   ping.doors_open if self._reads_doors else None, ping.speed_source == "derived")

    def _release_plan(self, limit: float | None) -> _Release:
        """What a release at `limit` takes: the vehicles it loads, each with how many of its
        pending fixes and catraca readings are at or before the limit, and those fixes."""
        released: list[tuple[VehicleState, int, int]] = []
        if limit is None:
            return _Release(released, [])
        for vehicle_id in self._due_at(self.partition.dirty, limit):
            state = self._state(vehicle_id)
            # most dirty vehicles have nothing at or before the limit: seen at their first message
            cut = bisect.bisect_right(state.pending, limit, key=lambda f: f.t) \
                if state.pending and state.pending[0].t <= limit else 0
            cut_catraca = bisect.bisect_right(state.pending_catraca, limit, key=lambda r: r.epoch) \
                if state.pending_catraca and state.pending_catraca[0].epoch <= limit else 0
            released.append((state, cut, cut_catraca))
        return _Release(released, [fix for state, cut, _ in released for fix in state.pending[:cut]])

    def release(self, limit: float | None, occurrences: list[Occurrence] | tuple = (),
                planned: _Release | None = None, take: TakeGeometry | None = None) -> Sends:
        """Messages at or before `limit` go, in event-time order, to trip detection and the
        day's compact facts, vehicle by vehicle; each trip found is judged at once on its
        own track (D-11, A-07). `planned`: `_release_plan(limit)`, made by the caller just
        before (nothing between changed what it read); `take`: its fixes measured together,
        with others (the live view's), else they are measured here."""
        out = Sends()
        if limit is None:
            return out
        released, fixes = planned if planned is not None else self._release_plan(limit)
        dirty = self.partition.dirty
        # every vehicle's fixes measured together, before any vehicle is processed (each
        # state is cut only when processed: a failure that stops the loop leaves the others
        # as they were)
        self._released_geometry = take if take is not None else TakeGeometry(self.ctx.geofences, fixes)
        done = set()  # vehicles released with nothing left waiting: no longer dirty
        try:
            for state, cut, cut_catraca in released:
                if cut or cut_catraca:
                    batch, state.pending = state.pending[:cut], state.pending[cut:]
                    readings, state.pending_catraca = state.pending_catraca[:cut_catraca], \
                        state.pending_catraca[cut_catraca:]
                    forget_old_keys(state, self._lateness)
                    before = _snapshot(state)
                    try:
                        self._process(state, batch, readings, occurrences, out)
                    except Exception:  # noqa: BLE001 - one bad message must not stop the stream
                        state = self._isolate(self._undone(state, before), batch, readings, occurrences, out)
                    self._save(state)
                self._due[state.vehicle_id] = min(state.pending[0].t if state.pending else np.inf,
                                                  state.pending_catraca[0].epoch if state.pending_catraca else np.inf)
                if not (state.pending or state.pending_catraca or state.held):
                    done.add(state.vehicle_id)
        finally:
            self._released_geometry = None
            for state, _, _ in released:
                if (memo := self._track_memos.get(state.vehicle_id)) is not None:
                    memo.take = None
        self.partition.dirty = [vehicle_id for vehicle_id in dirty if vehicle_id not in done] if done else list(dirty)
        self._fall_silent(limit, out)
        return out

    def _due_at(self, dirty: list[str], limit: float) -> list[str]:
        """The vehicles of `dirty` a release at `limit` loads, in its order: every one but
        those waiting (`_due` knows their earliest pending message, later than `limit`).
        Compared in one array, not vehicle by vehicle: a partition's dirty vehicles are
        nearly all of its fleet, and a call releases a few of them."""
        due = np.fromiter(map(self._due.get, dirty, itertools.repeat(-np.inf)), float, len(dirty))
        loaded = np.flatnonzero(~((limit < due) & (due < np.inf)))
        return [dirty[i] for i in loaded.tolist()]

    def _fall_silent(self, limit: float, out: Sends) -> None:
        """Vehicles silent for longer than `max_coverage_gap_s` by the watermark (no fix of
        theirs at or before `limit` can still come): a stretch of an itinerary their
        telemetry broke off in is an unfollowed pass now, not when they speak again."""
        silence = self.ctx.policy.trips.max_coverage_gap_s
        quiet = self.partition.quiet
        # the silent ones found in one array over the newest fixes, then taken in vehicle
        # order: nearly every call finds none, and the partition holds its whole fleet
        newest = np.fromiter(quiet.values(), float, len(quiet))
        silent = np.flatnonzero(~(newest + silence >= limit)).tolist()
        if not silent:
            return
        vehicle_ids = list(quiet)
        for vehicle_id in sorted(vehicle_ids[i] for i in silent):
            del quiet[vehicle_id]
            state = self._state(vehicle_id)
            if state.track is not None:
                out.unfollowed += self._passes.unfollowed(state, state.track.fixes, True, self._memo(state))
                self._save(state)

    def _process(self, state: VehicleState, batch: list[Fix], readings: list[CatracaReading], occurrences,
                 out: Sends) -> None:
        """Released messages of one vehicle through the core. Outputs go to `out` only if
        all of it succeeds."""
        mine = Sends()
        take = self._released_geometry  # the call's fixes measured together (None: measured here)
        if batch:
            state.released["tachograph"] = max(state.released.get("tachograph", batch[-1].t), batch[-1].t)
            # a fix the bus could not have driven to is no position: the detectors see a silence
            rules = self.ctx.policy.trips
            rows = take.rows(batch) if take is not None else None
            near = self.ctx.geofences.near_any_itinerary(*columns(batch, "x", "y"), rules.max_network_distance_m) \
                if rows is None else take.near_any_itinerary(rows, rules.max_network_distance_m)
            state.positions, batch, faults = screen_positions(state.positions, batch, near.tolist(), rules)
            mine.rejected += [_position_fault(state.vehicle_id, fault, self.ctx.feed.timezone) for fault in faults]
        limits = None  # the speed limit at each fix taken, from the take (else log_day measures them)
        if batch and take is not None and (rows := take.rows(batch)) is not None:
            try:
                limits = take.speed_limits(rows).tolist()
            except Exception:  # noqa: BLE001 - another vehicle's fix may fail the take: log_day measures these
                log.warning("the release's shared speed limits failed; %s's fixes measured alone", state.vehicle_id,
                            exc_info=True)
        self._note_coverage(state.vehicle_id, log_day(self._keeping, state, batch, readings, mine.rejected, limits))
        if readings:
            state.released["catraca"] = max(state.released.get("catraca", readings[-1].epoch), readings[-1].epoch)
        if batch:
            mine.detected += self._advance(state, batch, occurrences, mine)
            mine.findings += judge_over_episodes(self._keeping, state)
            self.partition.quiet[state.vehicle_id] = batch[-1].t
        if mine.detected or readings:
            mine.findings += judge_catraca_episodes(self._keeping, state, occurrences)
        if self._reads_trip_catraca:
            forget_trip_readings(state)
        running = open_trip(state.track.fixes, self.ctx, self._memo(state)) \
            if state.track and state.track.fixes else None
        mine.departed += self._running.departure(state, running)
        if batch:
            mine.findings += self._running.judge(state, running, occurrences, self._memo(state))
        out.merge(mine)

    def on_ahead(self, message: VehicleAhead) -> list[VehicleStatus]:
        """The bus ahead of one of this vehicle's departures (a line with a scheduled headway): kept for
        the latest departure, and the live view's status given again, with it, if the
        view still runs that trip and it changes what the status shows (engine.liveviews)."""
        state = self._load(message.vehicle_id)
        taken = None if state is None else self._live_views.take_ahead(state, message)
        if taken is None:
            return []
        self._save(state)
        return self._live_views.status_with_ahead(state, message, taken)

    def _isolate(self, state: VehicleState, batch: list[Fix], readings: list[CatracaReading], occurrences,
                 out: Sends) -> VehicleState:
        """A vehicle's release raised: from the state before it, its messages again one at
        a time (the result does not depend on how they are split); each one that raises
        is dead-lettered with the exception (`engine_error`) and the others go on."""
        items = sorted([(f.t, 0, f) for f in batch] + [(r.epoch, 1, r) for r in readings], key=lambda i: i[:2])
        # each message measured on its own, as it would be alone: a fault in the release's
        # shared geometry (trips.memo.TakeGeometry) must not fail every message it holds
        shared, self._released_geometry = self._released_geometry, None
        try:
            for _, kind, item in items:
                snapshot = _snapshot(state)
                try:
                    self._process(state, [item] if kind == 0 else [], [item] if kind == 1 else [], occurrences, out)
                except Exception as exc:  # noqa: BLE001
                    log.exception("dead-lettering %s: the engine failed on it", _describe(item, self.ctx.feed.timezone))
                    state = self._undone(state, snapshot)
                    out.rejected.append(Rejection(
                        source="tachograph" if kind == 0 else "catraca", reason="engine_error",
                        detail=f"{type(exc).__name__}: {exc}", location=_describe(item, self.ctx.feed.timezone),
                        raw=msgspec.json.encode(item if kind == 0 else in_feed_time(item, self.ctx.feed.timezone))
                        .decode()))
        finally:
            self._released_geometry = shared
        return state

    def _advance(self, state: VehicleState, batch: list[Fix], occurrences, out: Sends) -> list[TripDetected]:
        track = state.track or new_track(state.vehicle_id)
        # the open trip's fixes and the new ones, in order: the one tuple every reader of
        # this beat is given, so the track's memo knows it at once (trips.memo `over`)
        fixes = grown_track(track, batch)
        state.track, trips = advance_track(track, batch, self.ctx.geofences, self.ctx.policy.trips, self._memo(state),
                                           fixes)
        out.unfollowed += self._passes.unfollowed(state, fixes, False, self._memo(state))
        if self._track_rules:
            arrivals = [track.last_arrival, *(t.arrived_at for t in trips)]
            out.findings += self._passes.judge(state, fixes, batch, arrivals, occurrences, out.cut_short,
                                               self._memo(state))
        for trip in trips:
            out.findings += self._arrivals.judge(state, trip, fixes, occurrences, self._memo(state))
        for log in state.trips:
            watch(log, fixes, self.ctx.geofences.itinerary(log.route_id, log.direction_id, log.shape_id))
        operator = self.ctx.fleet[state.vehicle_id].operator_id
        return [TripDetected(operator, trip, conflicted_exits(trip, state)) for trip in trips]

    def _undone(self, state: VehicleState, snapshot: tuple) -> VehicleState:
        """`state` as the snapshot left it, and its track's memo forgotten: the failed call's
        detection read the track it was making, not the one restored (which may have been
        stored by another process, under other rules: detect_trips' gate must read it whole)."""
        self._track_memos.pop(state.vehicle_id, None)
        return _restored(state, snapshot)

    def _memo(self, state: VehicleState) -> TrackMemo:
        """The vehicle's track geometry measured so far (trips.memo): a cache, not state."""
        memo = self._track_memos.get(state.vehicle_id)
        if memo is None:
            memo = self._track_memos[state.vehicle_id] = TrackMemo(self.ctx.geofences)
        memo.take = self._released_geometry
        return memo

    # --- the sensors heard, for the heartbeat ------------------------------------------

    def _note_coverage(self, vehicle_id: str, runs: SensorRuns | None) -> None:
        """When the vehicle's sensors were heard (engine.dayfacts.log_day), for the next heartbeat."""
        if runs is None:
            return
        gap = self.ctx.policy.trips.max_coverage_gap_s
        before = self.partition.coverage.get(vehicle_id, SensorRuns())
        self.partition.coverage[vehicle_id] = before.merged(runs, gap)

    def heartbeat(self, final: bool = False) -> Heartbeat:
        p = self.partition
        beat = Heartbeat(source=p.partition, watermark=self.watermark, first_event=p.first_event,
                         max_event=p.max_event, reporting=p.reporting, final=final, coverage=p.coverage)
        p.reporting = {}
        p.coverage = {}
        return beat

    def flush(self, occurrences: list[Occurrence] | tuple = ()) -> Sends:
        """End of input: take every held message, release every pending one."""
        # everything taking the held messages gave (their rejections, live views and live
        # departures, and what a second version or a clock fault among them changed in the
        # records sent: these were dropped before), then what is released
        out = Sends()
        self._take_all_held(out)
        out.merge(self.release(np.inf, occurrences))
        self._note_sent(out.findings)
        return out

    # --- a closed service day comes back from the operator stage --------------------

    def judge_day(self, message: DayMatched, occurrences: list[Occurrence], location: str | None = None) -> Sends:
        """`on_day_matched`, guarded: if the engine fails on it, the vehicle's state stays
        as it was and the message is dead-lettered (`engine_error`); the stream goes on."""
        before = _STATE.encode(self._state(message.vehicle_id))
        try:
            out = Sends(findings=self.on_day_matched(message, occurrences))
            self._note_sent(out.findings)
            # the day's late messages: the day judged again now, from its raw input
            out.findings += self._judge_late_days([message.vehicle_id], occurrences, out)
            return out
        except Exception as exc:  # noqa: BLE001 - one message must not stop the stream
            log.exception("dead-lettering %s: the engine failed on it", location or f"day-matched {message.vehicle_id}")
            self._save(_STATE_DECODER.decode(before))
            return Sends(rejected=[Rejection(
                source="day-matched", reason="engine_error", detail=f"{type(exc).__name__}: {exc}", location=location,
                raw=msgspec.json.encode(message).decode())])

    def on_day_matched(self, message: DayMatched, occurrences: list[Occurrence]) -> list[Finding]:
        """The vehicle's day settled (engine.settling); its state saved unless it was judged already."""
        state = self._state(message.vehicle_id)
        settled, findings = settle_day(state, message, occurrences, self._judging)
        if settled is not state:
            self._save(settled)
        return findings
