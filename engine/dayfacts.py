"""The day's compact facts: what the vehicle stage keeps, per vehicle and operating day,
for the rules that read the whole day (engine.daylog's `DayLog`: the fixes kept, the
catraca readings, the over-speed, door and catraca episodes), and the episodes judged
from them while the day runs: C-01 as soon as an over-speed episode is over, D-19 and
D-21 over the in-service time the trips arrived so far prove. The day's close settles
them (engine.settling, same ids).

Each function takes a `Keeping`, the static values it reads, and the vehicle's state, and
changes the state in place, as the stage's release does (the stage's snapshot undoes a
release that raises):
- `log_day` adds a release's fixes and readings to their operating days' logs
  (`state.days`: a log appended for a day not judged yet, the logs changed in place), and
  writes `state.last_reading`, `state.last_counter` and, when the pack reads the readings
  of a trip, `state.trip_readings` (a new list); it reads `state.judged` and
  `state.catraca_versions`. It returns when the vehicle's sensors were heard in the
  release, for the stage to merge into its partition's coverage (the next heartbeat's).
- `keep_around` keeps the fixes around a moment in their days' logs (`state.days`).
- `judge_over_episodes` and `judge_catraca_episodes` read `state.days`, `state.trips`,
  `state.judged`, `state.conflicted`, `state.versions`, `state.catraca_versions` and
  `state.clock_faults`, and write what they send into `state.emitted`
  (engine.changelog.emit_change).

One cache, never state (a worker without it finds the same): `Keeping.day_trips`, per
vehicle and operating day, the day's arrived trips as the records read them and the
in-service time they prove, with exactly what of the trip logs they were built from
(`_day_trips`). Everything else here is a function of the state and the input. The
feed's service days it reads are the stage's (`Judging.days`, engine.servicedays).
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.admission import dedup_key, in_feed_time
from engine.changelog import at_most_provisional, emit_change
from engine.daylog import DayLog, KeptFix, add_door, add_fix, add_reading, keep, other_catraca, over_episodes
from engine.settling import Judging, catraca_versions_of, on_both_versions, other_catraca_facts, vehicle_day_from
from engine.triplog import TripLog
from engine.vehiclestate import VehicleState
from rules import d19, d21
from rules.evaluate import detect_live, finish
from rules.facts import DoorFix, SensorRuns, TripFacts, VehicleDayFacts, in_service_from, runs_of, within
from rules.model import Finding, Infraction, Live, interval_of
from rules.unmarked_stop import standing_with_doors_open
from rules.versions import judged_on_both_catraca_versions
from telemetry import CatracaReading, Rejection, encode
from trips.matching import unmatched_realization
from trips.model import Fix, Match, columns


@dataclass(frozen=True)
class Keeping:
    """What keeping a vehicle's day facts reads besides its state: the judging of a day
    (the static context, the feed's service days, the projection: engine.settling), and
    what the pack's rules read that only some packs list: the doors (the unmarked stop
    rule) and the catraca readings of each trip (the other line rule)."""

    judging: Judging
    reads_doors: bool
    reads_trip_catraca: bool
    # a cache, never state: per vehicle, per operating day, its arrived trips as the
    # records read them and the in-service time they prove (`_day_trips`)
    day_trips: dict[str, dict[str, _DayTrips]] = field(default_factory=dict, compare=False, repr=False)


def _operating_date(keeping: Keeping, epoch: float) -> dt.date:
    """The operating day an instant belongs to (engine.servicedays)."""
    return keeping.judging.days.operating_date(epoch)


def _day_log(state: VehicleState, date: dt.date) -> DayLog:
    iso = date.isoformat()
    for log in state.days:
        if log.date == iso:
            return log
    log = DayLog(iso, previous_counter=state.last_counter, counter=state.last_counter)
    if iso not in state.judged:  # a judged day takes nothing more
        state.days.append(log)
    return log


def log_day(keeping: Keeping, state: VehicleState, batch: list[Fix], readings: list[CatracaReading],
            rejected: list[Rejection], limits: list[float] | None = None) -> SensorRuns | None:
    """Fixes and readings, merged in event-time order, into their operating days. A
    reading whose counter rose implausibly fast since the vehicle's previous one is
    rejected here (in event-time order, the same in replay and workers) and the next
    is compared with it: a single spike is dropped, a counter that really jumped
    carries on from its new value. Returned: when the vehicle's sensors were heard in
    them (rules.facts.SensorRuns), for the next heartbeat; none if neither was.
    `limits`: the speed limit at each fix (`Geofences.speed_limit`), when the caller
    measured it with other vehicles' fixes (trips.memo.TakeGeometry)."""
    ctx = keeping.judging.ctx
    if limits is None:
        limits = ctx.geofences.speed_limit(*columns(batch, "x", "y")).tolist() if batch else []
    tolerance = ctx.policy.c01.tolerance_kmh
    silence = ctx.policy.d19.max_silence_s
    doors = _doors(keeping, batch) if keeping.reads_doors and batch else None
    window = (np.inf, -np.inf, None)  # the current operating day: [start, end) and its log
    trip_readings = list(state.trip_readings)  # a new list: a snapshot keeps the old one

    def day_log(epoch: float) -> DayLog:
        nonlocal window
        if not window[0] <= epoch < window[1]:
            date = _operating_date(keeping, epoch)
            window = (*keeping.judging.days.window(date), _day_log(state, date))
        return window[2]

    boardings = []  # readings whose counter rose: passengers boarding, the vehicle in service
    i = j = 0
    while i < len(batch) or j < len(readings):
        # a fix and a reading at the same instant: the fix first (it is the reading's place)
        if j == len(readings) or (i < len(batch) and batch[i].t <= readings[j].epoch):
            add_fix(day_log(batch[i].t), KeptFix(batch[i], limits[i]), tolerance)
            if doors is not None:
                add_door(day_log(batch[i].t), doors[i], standing_with_doors_open(doors[i], ctx.policy))
            i += 1
        else:
            reading = readings[j]
            into = day_log(reading.epoch)
            version = state.catraca_versions.get(dedup_key(reading))
            if version is not None and into.other is None:
                into.other = other_catraca(into, state.last_reading)
            if into.other is not None:
                _add_other_reading(keeping, into, version.other if version is not None else reading)
            why = d21.implausible(state.last_reading, reading.epoch, reading.counter, ctx.policy)
            state.last_reading = (reading.epoch, reading.counter)
            if why is not None:
                rejected.append(Rejection(source="catraca", reason="implausible", detail=why,
                                          location=None,
                                          raw=encode(in_feed_time(reading, ctx.feed.timezone)).decode()))
            else:
                add_reading(into, reading, silence)
                if state.last_counter is not None and reading.counter > state.last_counter:
                    boardings.append(reading.epoch)
                state.last_counter = reading.counter
                if keeping.reads_trip_catraca:
                    trip_readings.append(reading)
            j += 1
    if keeping.reads_trip_catraca:
        state.trip_readings = trip_readings
    return _heard(keeping, [f.t for f in batch], boardings)


def _add_other_reading(keeping: Keeping, log: DayLog, reading: CatracaReading) -> None:
    """A reading into the day's catraca as the other versions tell it (DayLog.other),
    judged plausible there as the day's own are; an event only it shows keeps the fixes
    around it in the day's facts, as one of the day's own does (its record's place)."""
    policy = keeping.judging.ctx.policy
    other = log.other
    why = d21.implausible(other.last_reading, reading.epoch, reading.counter, policy)
    other.last_reading = (reading.epoch, reading.counter)
    if why is not None:
        return
    notable = len(other.log.notable)
    add_reading(other.log, reading, policy.d19.max_silence_s)
    if len(other.log.notable) > notable:
        keep(log, [log.last] if log.last is not None else [])
        log.keep_next = True


def _heard(keeping: Keeping, fixes: list[float], boardings: list[float]) -> SensorRuns | None:
    """When the vehicle's sensors were heard (rules.facts.SensorRuns); none if neither was."""
    if not fixes and not boardings:
        return None
    gap = keeping.judging.ctx.policy.trips.max_coverage_gap_s
    return SensorRuns(runs_of(fixes, gap), runs_of(boardings, gap))


def _doors(keeping: Keeping, batch: list[Fix]) -> list[DoorFix]:
    """Each fix as the door rule reads it; where it stood measured only for those
    standing with the doors open (a stop index query, a terminal and a corridor test)."""
    geofences = keeping.judging.ctx.geofences
    rules = keeping.judging.ctx.policy.unmarked_stop
    standing = [i for i, f in enumerate(batch) if f.doors_open is True and f.speed_kmh <= rules.max_speed_kmh]
    doors = [DoorFix(f, float("nan"), None, False) for f in batch]
    if standing:
        x, y = columns([batch[i] for i in standing], "x", "y")
        distance, stop_ids = geofences.nearest_stop(x, y)
        excused = geofences.in_any_terminal(x, y) | ~geofences.on_any_corridor(x, y)
        for k, i in enumerate(standing):
            doors[i] = DoorFix(batch[i], float(distance[k]), stop_ids[k], bool(excused[k]))
    return doors


def judge_over_episodes(keeping: Keeping, state: VehicleState) -> list[Finding]:
    """C-01 as soon as its episode is over, with the line of the trip it happened in
    once that trip has arrived (the same record again, same id)."""
    ctx = keeping.judging.ctx
    changed: list[Finding] = []
    for log in state.days:
        over = over_episodes(log, ctx.policy)
        if not over:
            continue
        date = dt.date.fromisoformat(log.date)
        trips = [(_live_trip(keeping, state.vehicle_id, t), t) for t in state.trips]
        facts = vehicle_day_from(state, date, log, trips, (), ctx)
        judged = detect_live(Live.EPISODE_OVER, facts, ctx.pack, ctx.policy, date)
        records = on_both_versions(state, judged, facts,
                                   [r for r in ctx.pack.catalogue.values() if r.live == Live.EPISODE_OVER],
                                   (), keeping.judging)
        for record in records:
            if isinstance(record, Infraction) and interval_of(record).end in over:
                record = at_most_provisional(record, state.conflicted)
                changed += emit_change(state.emitted, record, over[interval_of(record).end],
                                       ctx.feed.timezone)
    return changed


def judge_catraca_episodes(keeping: Keeping, state: VehicleState, occurrences) -> list[Finding]:
    """D-19 and D-21 while the day runs, over the in-service time its arrived trips
    prove (a trip is only known, and its departure with it, when it arrives): sent
    when they change, `detected_at` the moment the first episode's evidence was
    complete — the later of the episode (the silence passing the limit, the faulty
    or violated reading) and the arrival of the trip that proves the vehicle was
    in service then. The day close settles them (same id)."""
    ctx = keeping.judging.ctx
    changed: list[Finding] = []
    kept = keeping.day_trips.get(state.vehicle_id, {})
    keeping.day_trips[state.vehicle_id] = now = {}  # only the days judged now stay
    for day_log in state.days:
        logs = [log for log in state.trips if log.service_date == day_log.date]
        if not logs or day_log.date in state.judged:
            continue
        date = dt.date.fromisoformat(day_log.date)
        arrived, now[day_log.date] = _day_trips(keeping, state.vehicle_id, logs, kept.get(day_log.date))
        trips = list(zip(arrived, logs))
        in_service = now[day_log.date].in_service
        facts = vehicle_day_from(state, date, day_log, trips, in_service, ctx)
        # the day's facts, and those its catraca readings in two versions tell (rules.versions)
        worlds = [f for f in (facts, other_catraca_facts(facts, day_log)) if f is not None]
        versions = catraca_versions_of(state, date, keeping.judging.days) if len(worlds) > 1 else []
        for live, moments_of in ((Live.CATRACA_SILENCE, lambda f: _d19_moments(f, ctx.policy)),
                                 (Live.CATRACA_FAULT, lambda f: _d21_moments(f, ctx.policy))):
            found = [finish([r for r in detect_live(live, f, ctx.pack, ctx.policy, date)
                             if isinstance(r, Infraction)],
                            occurrences, ctx.pack, ctx.policy, keeping.judging.projector) for f in worlds]
            judged = judged_on_both_catraca_versions(*found, versions, ctx.feed.timezone) \
                if versions else [(record, 0) for record in found[0]]
            for record, world in judged:
                if not isinstance(record, Infraction):
                    continue  # only one version supports it: settled at the day's close
                complete = min(_proven_at(logs, moment) for moment in moments_of(worlds[world]))
                record = at_most_provisional(record, state.conflicted)
                changed += emit_change(state.emitted, record, complete, ctx.feed.timezone)
    if not now:
        del keeping.day_trips[state.vehicle_id]
    return changed


class _DayTrips:
    """A vehicle's arrived trips of one operating day as the records read them
    (`_live_trip`, in the logs' order) and the in-service time they prove
    (rules.facts.in_service_from), each with what it is a function of: `trips` by what
    each trip's context reads of its log (departure, arrival, pattern, service date),
    `in_service` of the trips with each one's standing after its arrival (`standings`).
    A cache, never state: what differs from what it was built from is built again, so it
    cannot go stale."""

    __slots__ = ("trips", "standings", "in_service")

    def __init__(self, trips: dict[tuple, TripFacts], standings: tuple, in_service: tuple) -> None:
        self.trips, self.standings, self.in_service = trips, standings, in_service


def _day_trips(keeping: Keeping, vehicle_id: str, logs: list[TripLog],
               kept: _DayTrips | None) -> tuple[list[TripFacts], _DayTrips]:
    """The day's trips, in the logs' order, and their in-service time (`_DayTrips`), from
    `kept` where it was built from what `logs` hold now. D-19 and D-21 are judged again at
    each reading, and building a trip's context again read every trip of the day so far
    per reading; only a trip new or changed is built now, and the in-service time when
    a trip or a standing changed (the standing grows with the pings after an arrival)."""
    reads = [(log.departed_at, log.arrived_at, log.route_id, log.direction_id, log.shape_id, log.service_date)
             for log in logs]
    known = kept.trips if kept is not None else {}
    trips: dict[tuple, TripFacts] = {}
    for read, log in zip(reads, logs):
        trip = known.get(read)
        trips[read] = trip if trip is not None else _live_trip(keeping, vehicle_id, log)
    facts = [trips[read] for read in reads]
    standings = tuple(zip(reads, (log.standing for log in logs)))
    if kept is not None and kept.standings == standings:
        return facts, _DayTrips(trips, standings, kept.in_service)
    in_service = in_service_from([(tf, log.standing) for tf, log in zip(facts, logs)],
                                 keeping.judging.ctx.policy.trips.in_service_terminal_s)
    return facts, _DayTrips(trips, standings, in_service)


def _d19_moments(facts: VehicleDayFacts, policy) -> list[float]:
    faults = [r.epoch for r, _ in facts.catraca.notable if r.status == "fault" and within(facts.in_service, r.epoch)]
    return [proven for _, _, proven in d19.proven_silences(facts, policy)] + faults


def _d21_moments(facts: VehicleDayFacts, policy) -> list[float]:
    return [v["proven"] for v in d21.violations(facts, policy)]


def _proven_at(logs: list[TripLog], moment: float) -> float:
    """When a moment in service is proven to be in service: at the arrival ping of
    the trip it is part of (its run or the standing after it)."""
    trip = max((log for log in logs if log.departed_at <= moment), key=lambda log: log.departed_at, default=None)
    return max(moment, trip.arrival_ping) if trip is not None else moment


def _live_trip(keeping: Keeping, vehicle_id: str, log: TripLog) -> TripFacts:
    """An arrived trip before its day's matching, as context for a record."""
    ctx = keeping.judging.ctx
    trip = log.trip(vehicle_id)
    date = dt.date.fromisoformat(log.service_date)
    return TripFacts(Match(trip, unmatched_realization(trip, date, ctx.feed.timezone), None, None),
                     ctx.geofences.itinerary(log.route_id, log.direction_id, log.shape_id),
                     ctx.fleet[vehicle_id].operator_id, (),
                     ctx.feed.timezone, keeping.judging.days(date).start_epoch)


def keep_around(keeping: Keeping, state: VehicleState, fixes: Sequence[Fix], moment: float) -> None:
    """Keep, in their operating days, the fixes on either side of a moment (a D-19 or
    D-21 event is placed at the fix nearest to it)."""
    i = bisect.bisect_right(fixes, moment, key=lambda f: f.t)
    around = [f for f in (fixes[i - 1] if i else None, fixes[i] if i < len(fixes) else None) if f is not None]
    if not around:
        return
    geofences = keeping.judging.ctx.geofences
    limits = geofences.speed_limit(np.array([f.x for f in around]), np.array([f.y for f in around]))
    for f, limit_kmh in zip(around, limits.tolist()):
        keep(_day_log(state, _operating_date(keeping, f.t)), [KeptFix(f, limit_kmh)])
