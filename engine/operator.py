"""The operator stage: collects an operator's realized trips, closes its service days
when every vehicle-stage partition's watermark has passed them, matches the trips to
the schedule, runs the service-day rules, and closes months (art. 45).

State lives in an `OperatorState` read and written through load/save callbacks (a
dict in the replay, a Faust table in the workers). A message never changes the state it
loaded: it works on a shallow copy and replaces each field it changes (a new dict or
list, never one changed in place), so the state as it was before the message is still
there, whole, to put back if the message fails.
"""

from __future__ import annotations

import bisect
import calendar
import copy
import dataclasses
import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass

import msgspec

from engine.assemble import day_km, match_record, month_of, operator_day, service_date_of, service_day_facts
from engine.changelog import at_most_provisional, emit_change, settle
from engine.late import rejudged_changes
from engine.messages import (
    DayMatched,
    Heartbeat,
    LiveDeparture,
    OperatorInput,
    TripCutShort,
    TripDeparted,
    TripDetected,
    TripUnfollowed,
    VehicleAhead,
    VehicleDayRevised,
)
from engine.sends import Sends
from engine.status import MonthEfficiency, month_efficiency
from engine.values import Context
from gtfs.projection import Projector
from gtfs.schedule import ServiceDay, service_day
from rules.art45 import MonthKm, close_month
from rules.d13 import is_off_schedule
from rules.evaluate import evaluate_service_day, safe_detect
from rules.facts import CutShortPass, LineService, SensorRuns, ServiceDayFacts
from rules.line_interruption import advance_lines
from rules.model import PROVISIONAL, WITHDRAWN, Finding, Infraction, Live, interval_of, localized, plain, stamped
from telemetry import Occurrence, Rejection
from trips.headways import ahead, behind, scheduled_headway
from trips.matching import live_matches, match_service_day_full
from trips.model import Departure, DetectedTrip, Match, trip_key
from trips.unfollowed import UnfollowedPass


class MonthTotals(msgspec.Struct):
    programmed_m: float = 0.0
    realized_m: float = 0.0
    service_dates: list[str] = msgspec.field(default_factory=list)  # closed days with telemetry
    # closed days with service scheduled but no telemetry at all from the operator's fleet:
    # no evidence either way, so left out of art. 45's efficiency (and listed)
    without_telemetry: list[str] = msgspec.field(default_factory=list)


class ClosedDay(msgspec.Struct, frozen=True):
    """A closed service day as it was judged: its inputs, and each record as last sent.
    Kept while a late message may still have one of its vehicle-days judged again
    (stream.rejudge_max_late_s): a `VehicleDayRevised` then swaps that vehicle's part of
    the inputs and the day is judged again (`OperatorStage.on_revised`)."""

    detected: list[DetectedTrip]
    unfollowed: list[UnfollowedPass]
    cut_short: list[CutShortPass]
    conflicted: list[str]
    coverage: dict[str, SensorRuns]  # by vehicle, as at the close
    reporting: list[int]  # epoch minutes, as at the close
    lines: dict[str, LineService]  # each line's service before the day (Canarana's art. 6º II)
    settled: dict[str, Infraction]  # id -> as last sent (withdrawn ones included)
    km: tuple[float, float]  # what the day added to its month: (programmed, realized) metres
    without_telemetry: bool  # a day the month counts apart (MonthTotals.without_telemetry)
    closed_at: float


@dataclass(frozen=True)
class DayJudged:
    """A service day judged from its inputs (`OperatorStage._judged`)."""

    day: ServiceDay
    matches: list
    facts: ServiceDayFacts
    verdicts: list[Finding]
    km: tuple[float, float]
    without_telemetry: bool


class OperatorState(msgspec.Struct):
    operator_id: str
    detected: dict[str, list[DetectedTrip]] = msgspec.field(default_factory=dict)  # by service date
    watermarks: dict[int, float] = msgspec.field(default_factory=dict)  # by source partition
    final: list[int] = msgspec.field(default_factory=list)  # source partitions at end of input
    first_event: float | None = None
    max_event: float | None = None
    reporting: list[int] = msgspec.field(default_factory=list)  # sorted epoch minutes
    # by vehicle of the operator: when its sensors were heard (the days not closed yet)
    coverage: dict[str, SensorRuns] = msgspec.field(default_factory=dict)
    closed: list[str] = msgspec.field(default_factory=list)
    suppressions: dict[str, list[Infraction]] = msgspec.field(default_factory=dict)  # by month
    months: dict[str, MonthTotals] = msgspec.field(default_factory=dict)
    closed_months: list[str] = msgspec.field(default_factory=list)
    # service-day records emitted while their day runs (D-12, D-13, D-22), by id
    emitted: dict[str, Infraction] = msgspec.field(default_factory=dict)
    live: list[str] = msgspec.field(default_factory=list)  # open dates with trips not yet judged live
    running: dict[str, TripDeparted] = msgspec.field(default_factory=dict)  # by vehicle: departed, not arrived
    # by vehicle: a departure its live view saw that the release has not told yet
    # (LiveDeparture): read for the bus ahead only, never by a rule
    live_running: dict[str, LiveDeparture] = msgspec.field(default_factory=dict)
    # by service date: stretches of itineraries the vehicles' telemetry could not follow
    unfollowed: dict[str, list[UnfollowedPass]] = msgspec.field(default_factory=dict)
    # by service date: passes a track rule found cut short before the terminal (a turn back)
    cut_short: dict[str, list[CutShortPass]] = msgspec.field(default_factory=dict)
    # by service date: departure pings that came in two versions (at most provisional)
    conflicted: dict[str, list[str]] = msgspec.field(default_factory=dict)
    judged_live_to: float | None = None  # the watermark the day's live verdicts were last reached at
    # each line's service across closed days, by route (Canarana's art. 6º II): a few numbers
    # per line, never the days' trips; empty where the policy sets no [interruption]
    lines: dict[str, LineService] = msgspec.field(default_factory=dict)
    # by service date: the closed days a late message may still have judged again (ClosedDay)
    reopenable: dict[str, ClosedDay] = msgspec.field(default_factory=dict)


_MESSAGE = msgspec.json.Encoder()
log = logging.getLogger(__name__)


class OperatorStage:
    def __init__(self, ctx: Context, sources: int, load: Callable[[str], OperatorState | None],
                 save: Callable[[OperatorState], None]):
        self.ctx = ctx
        self.sources = sources  # how many vehicle-stage partitions send heartbeats
        self._load, self._save = load, save
        self._projector = Projector(ctx.feed.epsg)
        self._days: dict[dt.date, ServiceDay] = {}
        self._operator_days: dict[tuple[dt.date, str], ServiceDay] = {}
        self._dues: dict[tuple[dt.date, str], tuple[float, ...]] = {}
        # by (date, operator), then vehicle: its trips at the last live evaluation and their
        # live matches (see `_live_matches`); a cache, never state
        self._live_memo: dict[tuple[dt.date, str], dict[str, tuple[tuple[DetectedTrip, ...], list[Match]]]] = {}

    def _state(self, operator_id: str) -> OperatorState:
        """The operator's state to work on: a shallow copy of the stored one, whose fields
        are replaced, never changed in place (the stored one is `handle`'s undo)."""
        stored = self._load(operator_id)
        return copy.copy(stored) if stored is not None else OperatorState(operator_id)

    def _day(self, date: dt.date) -> ServiceDay:
        if date not in self._days:
            self._days[date] = service_day(self.ctx.feed, date)
        return self._days[date]

    def _operator_day(self, date: dt.date, operator_id: str) -> ServiceDay:
        """`operator_day`, kept like `_day`: every heartbeat asks for it, and its spans are
        indexed once per ServiceDay value."""
        key = (date, operator_id)
        if key not in self._operator_days:
            self._operator_days[key] = operator_day(self._day(date), self.ctx, operator_id)
        return self._operator_days[key]

    # --- input ---------------------------------------------------------------------

    def handle(self, operator_id: str, message: OperatorInput, occurrences: list[Occurrence],
               location: str | None = None) -> Sends:
        """One message of the operator stage's input, whichever it is. If the engine
        fails on it (a bug, not bad input), the operator's state stays as it was before
        the message, which is dead-lettered (`engine_error`) with the exception; the
        stream goes on (a heartbeat lost this way is overtaken by the next one)."""
        before = self._load(operator_id)  # left as it is by the handlers (see _state)
        try:
            if isinstance(message, TripDetected):
                return Sends(to_vehicles=self.on_detected(message))
            if isinstance(message, TripDeparted):
                return Sends(to_vehicles=self.on_departed(message))
            if isinstance(message, LiveDeparture):
                return Sends(to_vehicles=self.on_live_departed(message))
            if isinstance(message, TripUnfollowed):
                self.on_unfollowed(message)
                return Sends()
            if isinstance(message, TripCutShort):
                self.on_cut_short(message)
                return Sends()
            if isinstance(message, VehicleDayRevised):
                return self.on_revised(message, occurrences)
            return self.on_heartbeat(operator_id, message, occurrences)
        except Exception as exc:  # noqa: BLE001 - one message must not stop the stream
            log.exception("dead-lettering %s: the operator stage failed on it", location or type(message).__name__)
            self._save(before if before is not None else OperatorState(operator_id))
            return Sends(rejected=[Rejection(
                source="operator-events", reason="engine_error", detail=f"{type(exc).__name__}: {exc}",
                location=location, raw=_MESSAGE.encode(message).decode())])

    def on_detected(self, message: TripDetected) -> list[VehicleAhead]:
        state = self._state(message.operator_id)
        trip = message.trip
        date = service_date_of(trip, self.ctx, self._day)
        known = state.detected.get(date.isoformat(), [])
        # redelivered after a restart: the same trip by its identity, not its every field
        # (one detected by an older engine may lack a field a newer one fills in)
        if any(_same_trip(k, trip) for k in known) or date.isoformat() in state.closed:
            return []
        state.detected = {**state.detected, date.isoformat(): [*known, trip]}
        self._note_conflicted(state, date.isoformat(), message.conflicted)
        running = state.running.get(trip.vehicle_id)
        seen_live = state.live_running.get(trip.vehicle_id)
        seen_running = any(d is not None and d.trip.departed_at == trip.departed_at for d in (running, seen_live))
        if running is not None and running.trip.departed_at <= trip.arrived_at:
            state.running = _without(state.running, trip.vehicle_id)  # it arrived: a realized trip now
        if seen_live is not None and seen_live.trip.departed_at <= trip.arrived_at:
            state.live_running = _without(state.live_running, trip.vehicle_id)
        if date.isoformat() not in state.live:
            state.live = [*state.live, date.isoformat()]
        self._save(state)
        # a departure first heard of at its arrival may come between a running vehicle and the one it followed
        return [] if seen_running else self._headways(state, trip, date, own=False)

    def on_departed(self, message: TripDeparted) -> list[VehicleAhead]:
        """A vehicle left on a trip: a departure while the day runs, until it arrives."""
        state = self._state(message.operator_id)
        trip = message.trip
        before = state.running.get(trip.vehicle_id)
        if before is not None and before.trip.departed_at >= trip.departed_at:
            return []  # delivered again, or older than what is known
        state.running = {**state.running, trip.vehicle_id: message}
        seen_live = state.live_running.get(trip.vehicle_id)
        if seen_live is not None and seen_live.trip.departed_at <= trip.departed_at:
            state.live_running = _without(state.live_running, trip.vehicle_id)  # the release caught up with it
        date = service_date_of(trip, self.ctx, self._day)
        self._note_conflicted(state, date.isoformat(), message.conflicted)
        if date.isoformat() not in state.closed and date.isoformat() not in state.live:
            state.live = [*state.live, date.isoformat()]
        self._save(state)
        return self._headways(state, trip, date, own=True)

    def on_live_departed(self, message: LiveDeparture) -> list[VehicleAhead]:
        """A departure a vehicle's live view saw, ~the allowed lateness before the release
        tells it: answered at once with the bus ahead, for the live status. Live
        information, never evidence: kept apart from the legal departures (`running`),
        which the day's rules read; only the headways (`_headways`) read it, until the
        release tells the vehicle's departure or its trip."""
        state = self._state(message.operator_id)
        trip = message.trip
        before = state.live_running.get(trip.vehicle_id)
        legal = state.running.get(trip.vehicle_id)
        if before == message or (before is not None and before.trip.departed_at > trip.departed_at) \
                or (legal is not None and legal.trip.departed_at >= trip.departed_at):
            return []  # delivered again, older than what is known, or told by the release already
        date = service_date_of(trip, self.ctx, self._day)
        if date.isoformat() in state.closed:
            return []
        state.live_running = {**state.live_running, trip.vehicle_id: message}
        self._save(state)
        return self._headways(state, trip, date, own=True)

    @staticmethod
    def _note_conflicted(state: OperatorState, date: str, ids: tuple[str, ...]) -> None:
        if ids:
            state.conflicted = {**state.conflicted, date: sorted(set(state.conflicted.get(date, [])) | set(ids))}

    def _service_date_of(self, passage, departed: float) -> str:
        """The service day (ISO) of a pass along an itinerary that is no realized trip,
        dated as a trip of its line departing at `departed` would be."""
        departure = Departure(passage.vehicle_id, passage.route_id, passage.direction_id, passage.shape_id, departed)
        return service_date_of(departure, self.ctx, self._day).isoformat()

    def on_unfollowed(self, message: TripUnfollowed) -> None:
        """A stretch the vehicle's telemetry could not follow: kept with its service day
        (the latest version of it, as it grows), read when the day's rules run."""
        state = self._state(message.operator_id)
        passage = message.passage
        date = self._service_date_of(passage, passage.latest_departure)
        if date in state.closed:
            log.warning("a trip not followed came after its day closed: %s", passage)
            return
        known = [p for p in state.unfollowed.get(date, []) if p.key != passage.key]
        state.unfollowed = {**state.unfollowed, date: sorted([*known, passage], key=lambda p: p.key)}
        if date not in state.live:
            state.live = [*state.live, date]
        self._save(state)

    def on_cut_short(self, message: TripCutShort) -> None:
        """A pass cut short before the terminal (a turn back): kept with its service day,
        read when the day's rules run, live and at close. It comes before the heartbeat
        that takes the watermark past the reversal, and the pass is a departure running
        until then (`running`), so no verdict on its trip can be reached without it."""
        state = self._state(message.operator_id)
        passage = message.passage
        date = self._service_date_of(passage, passage.departed_at)
        if date in state.closed:
            log.warning("a pass cut short came after its day closed: %s", passage)
            return
        known = state.cut_short.get(date, [])
        if passage in known:
            return  # delivered again after a restart
        state.cut_short = {**state.cut_short,
                           date: sorted([*known, passage], key=lambda p: (p.departed_at, p.vehicle_id, p.shape_id))}
        if date not in state.live:
            state.live = [*state.live, date]
        self._save(state)

    def _headways(self, state: OperatorState, trip: DetectedTrip, date: dt.date, own: bool) -> list[VehicleAhead]:
        """The bus ahead of `trip`'s (if `own`: it is running) and of the running bus right
        behind it, whose bus ahead it may now be: on any line with a scheduled headway there
        (a frequency window's, or the timetable's gap between departures)."""
        if date.isoformat() in state.closed:
            return []
        day = self._day(date)
        window_s = self.ctx.policy.trips.match_window_s
        line = (trip.route_id, trip.direction_id)
        # a vehicle's departure told at release stays one until its trip arrives, when its
        # live view has seen it leave again already (both count, as on the street)
        departures = sorted({(t.departed_at, t.vehicle_id) for t in state.detected.get(date.isoformat(), [])
                             if (t.route_id, t.direction_id) == line}
                            | {(t.departed_at, t.vehicle_id)
                               for t in [*(d.trip for d in state.running.values()),
                                         *(d.trip for d in state.live_running.values())]
                               if (t.route_id, t.direction_id) == line
                               and service_date_of(t, self.ctx, self._day) == date})
        running = _running(state)
        told = [(trip.departed_at, trip.vehicle_id)] if own else []
        follower = behind(departures, trip.departed_at, trip.vehicle_id)
        if follower is not None and running.get(follower[1]) is not None \
                and running[follower[1]].departed_at == follower[0]:
            told.append(follower)
        out = []
        for departed_at, vehicle_id in told:
            scheduled = scheduled_headway(day, trip.route_id, trip.direction_id, departed_at, window_s)
            if scheduled is None:
                continue
            front = ahead(departures, departed_at, vehicle_id)
            out.append(VehicleAhead(vehicle_id, departed_at, front[1] if front else None,
                                    front[0] if front else None, scheduled))
        return out

    def on_heartbeat(self, operator_id: str, beat: Heartbeat, occurrences: list[Occurrence]) -> Sends:
        state = self._state(operator_id)
        if beat.watermark is not None:
            state.watermarks = {**state.watermarks, beat.source: max(state.watermarks.get(beat.source, beat.watermark),
                                                                     beat.watermark)}
        if beat.final and beat.source not in state.final:
            state.final = [*state.final, beat.source]
        for name, value in (("first_event", beat.first_event), ("max_event", beat.max_event)):
            if value is not None:
                current = getattr(state, name)
                pick = min if name == "first_event" else max
                setattr(state, name, value if current is None else pick(current, value))
        minutes = beat.reporting.get(operator_id, [])
        if minutes:
            state.reporting = _with_minutes(state.reporting, minutes)
        gap = self.ctx.policy.trips.max_coverage_gap_s
        coverage = dict(state.coverage)
        for vehicle_id, runs in sorted(beat.coverage.items()):
            if vehicle_id in self.ctx.fleet and self.ctx.fleet[vehicle_id].operator_id == operator_id:
                coverage[vehicle_id] = coverage.get(vehicle_id, SensorRuns()).merged(runs, gap)
        state.coverage = coverage
        # the trips that arrived first, live; then the periods the watermark closed (a day
        # may close in the same beat, e.g. a backlog: its provisional D-13 still comes
        # first, so detected_at never depends on how the input was batched)
        final = len(state.final) >= self.sources
        retold = self._forget_unconfirmed(state, final)
        # the days open before the beat judges or closes any (neither reads what the other
        # writes: the live judgment changes no trip, date or event span, the close only
        # what the live judgment does not read)
        open_dates = self._open_dates(state)
        live = self._judge_live(state, occurrences, final, open_dates)
        out = self._close(state, occurrences, final=final, open_dates=open_dates)
        out.findings[:0] = live
        out.to_vehicles[:0] = retold
        self._save(state)
        return out

    def _forget_unconfirmed(self, state: OperatorState, final: bool) -> list[VehicleAhead]:
        """Drops the departures seen live (`live_running`) that the release never
        confirmed: once every partition's watermark is past such a departure by the
        allowed lateness, the release has read the pings after it and told it (a
        TripDeparted or TripDetected of it lets it go), or never will (its exit ping
        dead-lettered, another itinerary or departure chosen). Left there, it stayed the
        bus ahead of its followers until the vehicle's next legal departure or the day's
        close. The bus running right behind each one dropped is told its bus ahead again.
        Live information only: no rule reads `live_running`."""
        if not state.live_running or not (final or len(state.watermarks) >= self.sources):
            return []
        watermark = self._watermark(state)
        if watermark is None:
            return []
        margin = self.ctx.policy.stream.allowed_lateness_s
        stale = [d.trip for d in state.live_running.values() if d.trip.departed_at + margin < watermark]
        if not stale:
            return []
        state.live_running = {vehicle: departed for vehicle, departed in state.live_running.items()
                              if departed.trip.departed_at + margin >= watermark}
        retold = []
        for trip in sorted(stale, key=lambda t: (t.departed_at, t.vehicle_id)):
            retold += self._headways(state, trip, service_date_of(trip, self.ctx, self._day), own=False)
        return retold

    def _judge_live(self, state: OperatorState, occurrences, final: bool,
                    open_dates: list[dt.date]) -> list[Finding]:
        """The service-day rules while the day runs, over the day's departures matched
        live (trips.matching.live_matches: arrived trips and the trips running now):
        D-13 provisional from the first departure off schedule; D-12 once its frequency
        window has ended; D-22 provisional once a scheduled departure's match window has
        passed without a departure matched to it. Each is sent when it changes; its
        detected_at is when its evidence was complete (the departure, the window's end,
        the match window's end), whatever order the stages heard things in."""
        # At the end of input every partition has released everything: the input's newest
        # event, not a partition whose vehicles went quiet early, is how far it got.
        watermark = state.max_event if final and state.max_event is not None else self._watermark(state)
        # D-12 and D-22 assert that no departure happened: only once every partition has
        # told how far it got (one not heard from yet may hold the departure)
        absence = watermark if final or len(state.watermarks) >= self.sources else None
        found: list[Finding] = []
        tz = self.ctx.feed.timezone
        emitted = dict(state.emitted)  # emit_change adds to it
        self._forget_live_memo(state.operator_id, open_dates)
        for date in open_dates:
            iso_date = date.isoformat()
            day = self._operator_day(date, state.operator_id)
            due = self._due(date, state.operator_id)
            # a moment in (judged_live_to, absence]: the first one after judged_live_to
            after = 0 if state.judged_live_to is None else bisect.bisect_right(due, state.judged_live_to)
            crossed = absence is not None and after < len(due) and due[after] <= absence
            if iso_date not in state.live and not crossed:
                continue
            running = [d.trip for d in state.running.values()]
            running = [t for t in running if service_date_of(t, self.ctx, self._day) == date]
            matches = self._live_matches(date, state.operator_id, state.detected.get(iso_date, []) + running)
            reporting = {state.operator_id: [minute * 60.0 for minute in state.reporting]}
            facts = service_day_facts(day, matches, self.ctx, reporting, occurrences,
                                      state.unfollowed.get(iso_date, []), state.cut_short.get(iso_date, []),
                                      state.coverage)
            window = self.ctx.policy.trips.match_window_s
            for rule in self.ctx.pack.catalogue.values():
                if rule.live not in (Live.OFF_SCHEDULE_DEPARTURE, Live.WINDOW_END, Live.DEPARTURE_DUE):
                    continue
                if rule.live != Live.OFF_SCHEDULE_DEPARTURE and absence is None:
                    continue  # an absence is asserted by none of its records yet (see below)
                # a trip's D-22 only once its match window is over: the later ones are not judged
                due = {"due_by": absence} if rule.live == Live.DEPARTURE_DUE else {}
                for record in safe_detect(rule, facts, self.ctx.policy, day.date, **due):
                    if not isinstance(record, Infraction):
                        continue
                    if rule.live == Live.OFF_SCHEDULE_DEPARTURE:
                        # proven when the vehicle was first seen outside the origin zone
                        off = [m.detected.left_at or m.detected.arrived_at for m in matches if m.realized.route_id == record.route_id
                               and m.realized.departure_deviation_s is not None
                               and is_off_schedule(m.realized.departure_deviation_s, self.ctx.policy)]
                        moment = min(off) if off else day.close_epoch
                    elif rule.live == Live.WINDOW_END:
                        moment = interval_of(record).end  # the window's end
                    else:
                        moment = interval_of(record).start + window  # departure + match window
                    # an absence (no departure in the window) only once every partition is past it
                    if rule.live != Live.OFF_SCHEDULE_DEPARTURE and (absence is None or moment > absence):
                        continue  # not over yet: departures may still come
                    if rule.live != Live.WINDOW_END:
                        record = msgspec.structs.replace(record, status=PROVISIONAL)
                    record = at_most_provisional(record, state.conflicted.get(iso_date, []))
                    found += emit_change(emitted, record, moment, tz)
        state.emitted = emitted
        state.live = []
        state.judged_live_to = absence if absence is not None else state.judged_live_to
        return found

    def _live_matches(self, date: dt.date, operator_id: str, trips: list[DetectedTrip]) -> list[Match]:
        """`live_matches(trips, ...)` of the operator's day, matching again only the
        vehicles whose trips changed since the day's last live evaluation. Exact, not an
        approximation: live matching is per vehicle (a vehicle's matches depend on its
        own trips, in the order given, and on the frozen day alone), and its answer is
        the vehicles' answers in the order of their ids. The memo keeps only the
        vehicles of the last evaluation, and only the open dates'."""
        key = (date, operator_id)
        day = self._operator_day(date, operator_id)
        by_vehicle: dict[str, list[DetectedTrip]] = {}
        for trip in trips:
            by_vehicle.setdefault(trip.vehicle_id, []).append(trip)
        before = self._live_memo.get(key, {})
        memo: dict[str, tuple[tuple[DetectedTrip, ...], list[Match]]] = {}
        matches: list[Match] = []
        for vehicle in sorted(by_vehicle):
            mine = tuple(by_vehicle[vehicle])
            kept = before.get(vehicle)
            if kept is None or kept[0] != mine:
                kept = (mine, live_matches(list(mine), day, self.ctx.feed.timezone, self.ctx.policy.trips))
            memo[vehicle] = kept
            matches += kept[1]
        self._live_memo[key] = memo
        return matches

    def _forget_live_memo(self, operator_id: str, open_dates: list[dt.date]) -> None:
        """Drops the live memo of the operator's days no longer open (closed ones)."""
        for key in [k for k in self._live_memo if k[1] == operator_id and k[0] not in open_dates]:
            del self._live_memo[key]

    def _due(self, date: dt.date, operator_id: str) -> tuple[float, ...]:
        """The moments the operator's day's live verdicts may change without a new
        departure, sorted: the end of each frequency window (D-12) and of each scheduled
        departure's match window (D-22). Kept like `_operator_day`: every heartbeat asks."""
        key = (date, operator_id)
        if key not in self._dues:
            day = self._operator_day(date, operator_id)
            window = self.ctx.policy.trips.match_window_s
            self._dues[key] = tuple(sorted([day.departure_epoch(t) + window for t in day.trips]
                                           + [day.start_epoch + w.end_s for w in day.windows]))
        return self._dues[key]

    # --- closing -------------------------------------------------------------------

    def _watermark(self, state: OperatorState) -> float | None:
        """The slowest partition's watermark; partitions not heard from yet do not hold
        it back (a partition without any vehicle has nothing to wait for)."""
        return min(state.watermarks.values()) if state.watermarks else None

    def _closes_at(self, day: ServiceDay) -> float:
        rules = self.ctx.policy.trips
        return day.close_epoch + rules.match_window_s + rules.max_trip_duration_s

    def _open_dates(self, state: OperatorState) -> list[dt.date]:
        """Days not yet closed that the input covers: with realized trips, or whose
        schedule (of this operator) overlaps the input's event-time span."""
        dates = {dt.date.fromisoformat(d) for d in state.detected}
        if state.first_event is not None and state.max_event is not None:
            tz = self.ctx.feed.timezone
            day = dt.datetime.fromtimestamp(state.first_event, tz).date() - dt.timedelta(days=1)
            last = dt.datetime.fromtimestamp(state.max_event, tz).date()
            while day <= last:
                first, end = self._operator_day(day, state.operator_id).scheduled_span()
                if first is not None and first <= state.max_event and end >= state.first_event:
                    dates.add(day)
                day += dt.timedelta(days=1)
        return sorted(d for d in dates if d.isoformat() not in state.closed)

    def _close(self, state: OperatorState, occurrences, final: bool, open_dates: list[dt.date]) -> Sends:
        out = Sends()
        watermark = self._watermark(state)
        for date in open_dates:
            closes_at = self._closes_at(self._day(date))
            if final or (watermark is not None and closes_at <= watermark):
                self._close_day(state, date, occurrences, out, self._closed_at(state, closes_at, final))
        for month in sorted(set(state.months) - set(state.closed_months)):
            year, number = map(int, month.split("-"))
            last = dt.date(year, number, calendar.monthrange(year, number)[1])
            if final or (watermark is not None and self._closes_at(self._day(last)) <= watermark):
                out.findings += self._close_month(state, month)
                totals = state.months[month]
                out.months.append(month_efficiency(
                    state.operator_id, month, totals.programmed_m, totals.realized_m, totals.service_dates,
                    totals.without_telemetry, dt.date.fromisoformat(max(totals.service_dates + totals.without_telemetry,
                                                                        default=last.isoformat())),
                    self.ctx.policy.art45.min_efficiency, month_closed=True))
        return out

    @staticmethod
    def _closed_at(state: OperatorState, closes_at: float, final: bool) -> float:
        """The event time of the watermark when a period closes: its closing moment, or,
        when the input ended before it, the input's newest event (the end of input
        releases everything at once)."""
        if final and state.max_event is not None:
            return min(closes_at, state.max_event)
        return closes_at

    def _close_day(self, state: OperatorState, date: dt.date, occurrences, out: Sends,
                   closed_at: float) -> None:
        state.closed = [*state.closed, date.isoformat()]
        detected, state.detected = _popped(state.detected, date.isoformat(), [])
        # a vehicle that never arrived: the day's matching has settled it
        state.running = {vehicle: departed for vehicle, departed in state.running.items()
                         if service_date_of(departed.trip, self.ctx, self._day) > date}
        state.live_running = {vehicle: departed for vehicle, departed in state.live_running.items()
                              if service_date_of(departed.trip, self.ctx, self._day) > date}
        unfollowed, state.unfollowed = _popped(state.unfollowed, date.isoformat(), [])
        cut_short_passes, state.cut_short = _popped(state.cut_short, date.isoformat(), [])
        conflicted, state.conflicted = _popped(state.conflicted, date.isoformat(), [])
        inputs = ClosedDay(detected, unfollowed, cut_short_passes, conflicted, state.coverage, state.reporting,
                           state.lines, {}, (0.0, 0.0), False, closed_at)
        judged = self._judged(state.operator_id, date, inputs, occurrences)
        out.trips += [m.realized for m in judged.matches]
        if self.ctx.policy.interruption is not None:  # an interruption spans days: the lines' memory
            state.lines = advance_lines(state.lines, judged.facts, self.ctx.policy)
        tz = self.ctx.feed.timezone
        first_seen = {k: localized(r, tz).detected_at.timestamp() for k, r in state.emitted.items()}
        emitted = dict(state.emitted)  # settle forgets the day's records in it
        changes = settle(emitted, judged.verdicts, date, closed_at, tz)
        out.findings += changes
        state.emitted = emitted
        settled = {**{r.infraction_id: r for r in changes if isinstance(r, Infraction) and r.status == WITHDRAWN},
                   **{v.infraction_id: _as_sent(v, first_seen.get(v.infraction_id, closed_at), tz)
                      for v in judged.verdicts if isinstance(v, Infraction)}}
        month = month_of(date)
        # the month's close (art. 45) judges every D-22 of the day, whether it changed now or not
        state.suppressions = {**state.suppressions, month: [
            *state.suppressions.get(month, []),
            *(stamped(v, first_seen.get(v.infraction_id, closed_at), tz) for v in judged.verdicts
              if isinstance(v, Infraction) and v.code == "D-22")]}
        out.months.append(self._count_day(state, date, judged.km, judged.without_telemetry))
        state.reopenable = self._reopenable(state, date, msgspec.structs.replace(
            inputs, detected=_in_order(detected, _departure), unfollowed=_in_order(unfollowed, _first_fix),
            cut_short=_in_order(cut_short_passes, _departure), settled=settled, km=judged.km,
            without_telemetry=judged.without_telemetry))
        by_vehicle: dict[str, list] = {}
        for m in judged.matches:
            by_vehicle.setdefault(m.detected.vehicle_id, []).append(match_record(m))
        trip_of = {t.key: t for t in judged.day.trips}
        cut_short: dict[str, list[tuple[CutShortPass, str, float]]] = {}
        for key, passage in sorted(judged.facts.cut_short_trips(self.ctx.policy).items()):
            cut_short.setdefault(passage.vehicle_id, []).append(
                (passage, trip_of[key].trip_id, judged.day.departure_epoch(trip_of[key])))
        for vehicle in sorted(v.vehicle_id for v in self.ctx.fleet.values() if v.operator_id == state.operator_id):
            out.to_vehicles.append(DayMatched(vehicle, state.operator_id, date, by_vehicle.get(vehicle, []), closed_at,
                                              cut_short.get(vehicle, [])))
        # Reporting minutes and sensor runs before the day cannot matter to a later day.
        horizon = int((judged.day.start_epoch - self.ctx.policy.trips.match_window_s) // 60)
        state.reporting = state.reporting[bisect.bisect_left(state.reporting, horizon):]
        state.coverage = {v: kept for v, runs in state.coverage.items()
                          if (kept := runs.since(horizon * 60)).tachograph or kept.boarding}

    def _judged(self, operator_id: str, date: dt.date, inputs: ClosedDay, occurrences) -> DayJudged:
        """A service day of the operator judged from its inputs: the trips matched to the
        schedule, the service-day rules' verdicts and what the day adds to art. 45."""
        day = self._operator_day(date, operator_id)
        matches = match_service_day_full(inputs.detected, day, self.ctx.feed.timezone, self.ctx.policy.trips)
        reporting = {operator_id: [minute * 60.0 for minute in inputs.reporting]}
        facts = service_day_facts(day, matches, self.ctx, reporting, occurrences, inputs.unfollowed,
                                  inputs.cut_short, inputs.coverage)
        if self.ctx.policy.interruption is not None:
            facts = dataclasses.replace(facts, line_service=dict(inputs.lines))
        verdicts = [at_most_provisional(v, inputs.conflicted)
                    for v in evaluate_service_day(facts, self.ctx.pack, self.ctx.policy, self._projector)]
        programmed, realized = day_km(day, matches, self.ctx, facts).get(operator_id, (0.0, 0.0))
        return DayJudged(day, matches, facts, verdicts, (programmed, realized),
                         bool(day.trips and not matches and programmed == 0))

    def _count_day(self, state: OperatorState, date: dt.date, km: tuple[float, float], without_telemetry: bool,
                   replaced: ClosedDay | None = None) -> MonthEfficiency:
        """The day's km into its month's totals for art. 45 (in place of what `replaced`
        added, when the day is judged again), and the month as it stands."""
        month = month_of(date)
        # its fields are reassigned below, never changed in place: a shallow copy keeps the stored one
        totals = copy.copy(state.months[month]) if month in state.months else MonthTotals()
        state.months = {**state.months, month: totals}
        if replaced is not None:
            if replaced.without_telemetry:
                totals.without_telemetry = [d for d in totals.without_telemetry if d != date.isoformat()]
            else:
                totals.programmed_m -= replaced.km[0]
                totals.realized_m -= replaced.km[1]
                totals.service_dates = [d for d in totals.service_dates if d != date.isoformat()]
        if without_telemetry:
            totals.without_telemetry = sorted(set(totals.without_telemetry) | {date.isoformat()})
        else:
            totals.programmed_m += km[0]
            totals.realized_m += km[1]
            totals.service_dates = sorted(set(totals.service_dates) | {date.isoformat()})
        return month_efficiency(state.operator_id, month, totals.programmed_m, totals.realized_m,
                                totals.service_dates, totals.without_telemetry, date,
                                self.ctx.policy.art45.min_efficiency, month_closed=month in state.closed_months)

    def _reopenable(self, state: OperatorState, date: dt.date, closed: ClosedDay) -> dict[str, ClosedDay]:
        """The closed days kept for a re-judgment, `closed` among them: those a message may
        still be late enough for (stream.rejudge_max_late_s, and a day for the cutover)."""
        oldest = (date - dt.timedelta(days=self._days_kept())).isoformat()
        return {**{d: c for d, c in state.reopenable.items() if d >= oldest}, date.isoformat(): closed}

    def _days_kept(self) -> int:
        return int(-(-self.ctx.policy.stream.rejudge_max_late_s // 86400)) + 1

    # --- a vehicle-day judged again (late data) ----------------------------------------

    def on_revised(self, message: VehicleDayRevised, occurrences: list[Occurrence]) -> Sends:
        """A vehicle-day judged again from its raw input (engine.late): what the vehicle
        stage told of it before, in [start, end), is replaced by what the re-judgment
        found. An open day takes it as any other input; a closed day kept for it is judged
        again, and what changed goes out: its records (same ids, first `detected_at` kept,
        `withdrawn` where no longer found), its realized trips, its month's art. 45 figure
        and, if the month is closed, its D-22 judged again under art. 45."""
        state = self._state(message.operator_id)
        out = Sends()
        revised = self._by_service_date(message)
        for date in sorted(set(state.detected) | set(state.unfollowed) | set(state.cut_short) | set(revised)):
            if date in state.closed:
                continue
            trips, unfollowed, cut_short = revised.get(date, ([], [], []))
            state.detected = {**state.detected, date: _swapped(state.detected.get(date, []), message, trips,
                                                               _departure)}
            state.unfollowed = {**state.unfollowed, date: _swapped(state.unfollowed.get(date, []), message,
                                                                   unfollowed, _first_fix)}
            state.cut_short = {**state.cut_short, date: _swapped(state.cut_short.get(date, []), message, cut_short,
                                                                 _departure)}
            self._note_conflicted(state, date, tuple(message.conflicted))
            state.live = sorted(set(state.live) | {date})
        gap = self.ctx.policy.trips.max_coverage_gap_s
        state.coverage = _with_runs(state.coverage, message, gap)
        state.reporting = _with_minutes(state.reporting, message.reporting)
        for date in sorted(set(revised) | set(state.reopenable)):
            if date not in state.closed:
                continue
            if date not in state.reopenable:
                log.warning("%s's operating day from %s judged again came after its service day %s was forgotten",
                            message.vehicle_id, dt.datetime.fromtimestamp(message.start, self.ctx.feed.timezone),
                            date)
                continue
            before = state.reopenable[date]
            if date not in revised and not self._concerns(state.operator_id, dt.date.fromisoformat(date), before,
                                                          message):
                continue  # a day the vehicle-day cannot change: not judged again
            trips, unfollowed, cut_short = revised.get(date, ([], [], []))
            after = msgspec.structs.replace(
                before,
                detected=_swapped(before.detected, message, trips, _departure),
                unfollowed=_swapped(before.unfollowed, message, unfollowed, _first_fix),
                cut_short=_swapped(before.cut_short, message, cut_short, _departure),
                conflicted=sorted(set(before.conflicted) | set(message.conflicted)),
                coverage=_with_runs(before.coverage, message, gap),
                reporting=sorted(set(before.reporting).union(message.reporting)))
            if after != before:
                self._judge_again(state, dt.date.fromisoformat(date), before, after, occurrences, out)
        self._save(state)
        return out

    def _concerns(self, operator_id: str, date: dt.date, closed: ClosedDay, message: VehicleDayRevised) -> bool:
        """Whether a re-judged vehicle-day can change a closed day: the day holds something
        the vehicle told of it then, or its schedule (with a match window and a trip's
        length around it) overlaps the vehicle-day, whose sensor runs and reporting minutes
        may then count for it."""
        def told(items, time_of) -> bool:
            return any(i.vehicle_id == message.vehicle_id and message.start <= time_of(i) < message.end for i in items)
        if told(closed.detected, _departure) or told(closed.unfollowed, _first_fix) \
                or told(closed.cut_short, _departure):
            return True
        first, last = self._operator_day(date, operator_id).scheduled_span()
        reach = self.ctx.policy.trips.match_window_s + self.ctx.policy.trips.max_trip_duration_s
        return first is not None and first - reach < message.end and message.start < last + reach

    def _by_service_date(self, message: VehicleDayRevised) -> dict[str, tuple[list, list, list]]:
        """The re-judged vehicle-day's trips, passes not followed and passes cut short, by
        the service date each belongs to (as the live stream's were filed)."""
        found: dict[str, tuple[list, list, list]] = {}
        for trip in message.trips:
            found.setdefault(service_date_of(trip, self.ctx, self._day).isoformat(), ([], [], []))[0].append(trip)
        for passage in message.unfollowed:
            found.setdefault(self._service_date_of(passage, passage.latest_departure), ([], [], []))[1].append(passage)
        for passage in message.cut_short:
            found.setdefault(self._service_date_of(passage, passage.departed_at), ([], [], []))[2].append(passage)
        return found

    def _judge_again(self, state: OperatorState, date: dt.date, before: ClosedDay, after: ClosedDay,
                     occurrences, out: Sends) -> None:
        """A closed day judged again on `after`, its inputs revised: what changed since
        `before` goes out."""
        tz = self.ctx.feed.timezone
        was = self._judged(state.operator_id, date, before, occurrences)
        now = self._judged(state.operator_id, date, after, occurrences)
        # a trip is one per vehicle and departure to the second (the trips output's identity):
        # the ones that changed go out again, the ones no longer found go out withdrawn
        sent = {trip_key(m.realized): m.realized for m in was.matches}
        found = {trip_key(m.realized): m.realized for m in now.matches}
        out.trips += [trip for key, trip in found.items() if sent.get(key) != trip]
        out.trips_withdrawn += [trip for key, trip in sent.items() if key not in found]
        watermark = self._watermark(state)
        moment = before.closed_at if watermark is None else max(before.closed_at, watermark)
        changes, settled = rejudged_changes(before.settled, [v for v in now.verdicts if isinstance(v, Infraction)],
                                            moment, tz)
        out.findings += changes
        month = month_of(date)
        month_closed = month in state.closed_months and month in state.suppressions
        closed = {r.infraction_id: r for r in self._month_verdicts(state, month, state.suppressions[month])} \
            if month_closed else {}
        d22 = [r for r in settled.values() if r.code == "D-22" and r.status != WITHDRAWN]
        suppressions = [*(s for s in state.suppressions.get(month, []) if s.service_date != date), *d22]
        state.suppressions = {**state.suppressions, month: sorted(suppressions, key=lambda s: s.service_date)}
        out.months.append(self._count_day(state, date, now.km, now.without_telemetry, replaced=before))
        if month_closed:
            # the month's art. 45 judged again: each D-22 whose status or figures changed
            out.findings += [r for r in self._month_verdicts(state, month, state.suppressions[month])
                             if closed.get(r.infraction_id) != r]
        state.reopenable = {**state.reopenable, date.isoformat(): msgspec.structs.replace(
            after, settled=settled, km=now.km, without_telemetry=now.without_telemetry)}

    def _close_month(self, state: OperatorState, month: str) -> list[Infraction]:
        state.closed_months = [*state.closed_months, month]
        verdicts = self._month_verdicts(state, month, state.suppressions.get(month, []))
        # the month's D-22 stay while a day of it may still be judged again (on_revised)
        year, number = map(int, month.split("-"))
        last = dt.date(year, number, calendar.monthrange(year, number)[1])
        oldest = (last - dt.timedelta(days=self._days_kept())).isoformat()[:7]
        state.suppressions = {m: s for m, s in state.suppressions.items()
                              if m not in state.closed_months or m >= oldest}
        return verdicts

    def _month_verdicts(self, state: OperatorState, month: str, kept: list[Infraction]) -> list[Infraction]:
        """The final state of the month's D-22 (art. 45) on its totals as they stand."""
        year, number = map(int, month.split("-"))
        days = sum(1 for d in range(1, calendar.monthrange(year, number)[1] + 1)
                   if self._operator_day(dt.date(year, number, d), state.operator_id).scheduled_span()[0]
                   is not None)
        totals = state.months[month]
        km = MonthKm(totals.programmed_m, totals.realized_m, tuple(totals.service_dates),
                     tuple(totals.without_telemetry))
        suppressions = [localized(s, self.ctx.feed.timezone) for s in kept]
        return close_month(suppressions, km, month, days, self.ctx.policy)


def _as_sent(record: Infraction, detected_at: float, tz) -> Infraction:
    """A record as the change log holds it once sent: plain evidence, stamped."""
    return stamped(msgspec.structs.replace(record, evidence=plain(record.evidence), detected_at=None), detected_at, tz)


def _swapped(items: list, message: VehicleDayRevised, revised: list, time_of) -> list:
    """`items` with the re-judged vehicle-day's own (its vehicle, dated in [start, end))
    replaced by `revised`, in time order."""
    kept = [i for i in items if i.vehicle_id != message.vehicle_id or not message.start <= time_of(i) < message.end]
    return _in_order([*kept, *revised], time_of)


def _in_order(items: list, time_of) -> list:
    """A day's trips or passes in one order whatever order they came in: a day whose
    inputs a re-judgment leaves as they were is seen unchanged."""
    return sorted(items, key=lambda i: (time_of(i), i.vehicle_id, msgspec.json.encode(i)))


def _departure(item: DetectedTrip | CutShortPass) -> float:
    return item.departed_at


def _first_fix(passage: UnfollowedPass) -> float:
    return passage.first_t


def _with_runs(coverage: dict[str, SensorRuns], message: VehicleDayRevised, gap_s: float) -> dict[str, SensorRuns]:
    """The vehicles' sensor runs with the re-judged vehicle-day's merged in (late readings
    only add to when a sensor was heard)."""
    runs = coverage.get(message.vehicle_id, SensorRuns()).merged(message.coverage, gap_s)
    return {**coverage, message.vehicle_id: runs}


def _same_trip(a: DetectedTrip, b: DetectedTrip) -> bool:
    """One realized trip: the same vehicle, itinerary, departure and arrival."""
    return (a.vehicle_id, a.route_id, a.direction_id, a.shape_id, a.departed_at, a.arrived_at) == \
        (b.vehicle_id, b.route_id, b.direction_id, b.shape_id, b.departed_at, b.arrived_at)


def _running(state: OperatorState) -> dict[str, DetectedTrip]:
    """Each running vehicle's latest departure, the trip it runs now: the release's
    (`running`), or the one its live view saw since (`live_running`)."""
    running = {vehicle: departed.trip for vehicle, departed in state.running.items()}
    for vehicle, departed in state.live_running.items():
        if vehicle not in running or departed.trip.departed_at > running[vehicle].departed_at:
            running[vehicle] = departed.trip
    return running


def _with_minutes(known: list[int], minutes) -> list[int]:
    """The sorted minutes `known` (no minute twice) with `minutes` added, as a new list.
    A heartbeat nearly always tells minutes after every one known: those are appended
    to a copy (the state's fields are replaced, never changed in place), with no set and
    no sort of the day's minutes so far; others are merged."""
    told = sorted(set(minutes))
    if not told:
        return list(known)
    if not known or told[0] > known[-1]:
        return [*known, *told]
    return sorted(set(known).union(told))


def _without(mapping: dict, key) -> dict:
    """`mapping` less `key`, as a new dict in the same order."""
    return {k: v for k, v in mapping.items() if k != key}


def _popped(mapping: dict, key, default):
    """(`mapping[key]` or `default`, `mapping` less `key`): dict.pop without changing it."""
    return mapping.get(key, default), _without(mapping, key) if key in mapping else mapping
