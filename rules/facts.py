"""The facts detectors read: a realized trip, a service day, a vehicle's day.

Plain frozen values assembled by the engine from its state; detectors never reach
beyond them, so a rule can be re-run on the facts alone (the evidence bundle).
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

import msgspec
import numpy as np

from geofences.zones import Itinerary
from gtfs.model import ScheduledTrip
from gtfs.schedule import ServiceDay
from telemetry import CatracaReading, Occurrence
from trips.matching import align_departures
from trips.memo import Along
from trips.model import Fix, Match, columns
from trips.unfollowed import UnfollowedPass


@dataclass(frozen=True)
class TripFacts:
    match: Match
    itinerary: Itinerary
    operator_id: str
    fixes: tuple[Fix, ...]  # from the last ping before the departure to the arrival ping
    tz: ZoneInfo
    day_start: float  # epoch of GTFS time 0 of the trip's service date
    # the fixes measured against the itinerary (one per fix), when the engine has them
    # measured already (trips.memo); else measured from the fixes, to the same numbers.
    # Never part of the facts' value.
    measured: Along | None = field(default=None, compare=False, repr=False)
    # the vehicle's plausible catraca readings over the trip, in event-time order, and the
    # lines it is licensed for (fleet.csv `lines`, else every line of its operator): given
    # by the engine only when the pack reads them (rules.other_line); None: not read
    readings: tuple[CatracaReading, ...] = ()
    licensed_lines: tuple[str, ...] | None = None

    @property
    def realized(self):
        return self.match.realized

    @property
    def scheduled(self) -> ScheduledTrip | None:
        return self.match.scheduled

    @property
    def departed_at(self) -> float:
        return self.match.detected.departed_at

    @property
    def arrived_at(self) -> float:
        return self.match.detected.arrived_at

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.measured is not None:
            return self.measured.t, self.measured.x, self.measured.y
        return columns(self.fixes, "t", "x", "y")

    def progress(self) -> np.ndarray:
        """Metres along the itinerary's shape of each fix."""
        if self.measured is not None:
            return self.measured.progress
        _, x, y = self.arrays()
        return self.itinerary.locate(x, y)

    def distance(self) -> np.ndarray:
        """Metres from each fix to the itinerary's shape."""
        if self.measured is not None:
            return self.measured.distance
        _, x, y = self.arrays()
        return self.itinerary.distance(x, y)


class LineService(msgspec.Struct, frozen=True):
    """A line's service across days, as far as an interruption of it goes (Canarana's art.
    6º II): what the operator stage keeps per line between its service days, never the
    days' trips. Times are epochs."""

    last_departure: float | None = None  # the line's last realized departure seen
    # the first scheduled departure left unserved since then over days the telemetry could
    # observe (None: nothing owed is unserved); a day it could not restarts it
    since: float | None = None
    # the same, counted across days the telemetry could not observe
    unproven_since: float | None = None
    blind: tuple[str, ...] = ()  # such days (ISO dates) since the line last ran
    reported: bool = False  # the interruption since `since` was recorded already


class CutShortPass(msgspec.Struct, frozen=True):
    """A pass along an itinerary that a track rule found cut short before its terminal
    (Conselheiro Lafaiete's turn back: a reversal held, accused, justified or unproven):
    the scheduled trip it was running is that rule's act, not also a trip suspended
    (rules.conselheiro_lafaiete.art42a). Told by the vehicle stage to the operator stage."""

    vehicle_id: str
    route_id: str
    direction_id: int
    shape_id: str
    departed_at: float  # the origin zone's edge crossed (PassFacts.departed_at)
    code: str  # the rule that found it


Run = tuple[float, float]


class SensorRuns(msgspec.Struct, frozen=True):
    """When one vehicle's sensors were heard, as runs (first, last) of readings no further
    apart than `trips.max_coverage_gap_s`: its tachograph fixes (where it was: the only
    sensor that can show a trip was not run), and its catraca readings whose counter rose
    (boardings: the vehicle was in service, wherever it was). Told by the vehicle stage to
    the operator stage in each heartbeat (what it released since the last one) and merged
    there; the service-day rules read them (ServiceDayFacts.unobserved). Each set of runs
    is as `merge_runs` gives it: sorted, each run more than the gap after the one before
    (so both its starts and its ends rise, and a time is found in it by bisection)."""

    tachograph: tuple[Run, ...] = ()
    boarding: tuple[Run, ...] = ()

    def merged(self, other: "SensorRuns", gap_s: float) -> "SensorRuns":
        return SensorRuns(merge_runs(self.tachograph, other.tachograph, gap_s),
                          merge_runs(self.boarding, other.boarding, gap_s))

    def since(self, horizon: float) -> "SensorRuns":
        """Without the runs over before `horizon` (they cannot matter to a later day)."""
        return SensorRuns(tuple(r for r in self.tachograph if r[1] >= horizon),
                          tuple(r for r in self.boarding if r[1] >= horizon))


def runs_of(times: list[float], gap_s: float) -> tuple[Run, ...]:
    """Instants as runs: a new run where two are more than `gap_s` apart."""
    return merge_runs((), tuple((t, t) for t in times), gap_s)


def merge_runs(a: tuple[Run, ...], b: tuple[Run, ...], gap_s: float) -> tuple[Run, ...]:
    """Two sets of runs as one: runs that overlap or lie at most `gap_s` apart join (the
    same readings told twice join too, so a message released again changes nothing).
    `a` as this gives them (SensorRuns): its runs ending more than `gap_s` before `b`'s
    first start are kept as they are, not merged again, so adding a heartbeat's few runs
    to a day of them costs what the new ones touch (the same runs as merging all)."""
    if not b:
        return a
    first = min(start for start, _ in b)
    kept = bisect.bisect_left(a, first - gap_s, key=_end)  # a[:kept] end before first - gap_s
    merged: list[list[float]] = []
    for start, end in sorted((*a[kept:], *b)):
        if merged and start - merged[-1][1] <= gap_s:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return (*a[:kept], *((s, e) for s, e in merged))


def _start(run: Run) -> float:
    return run[0]


def _end(run: Run) -> float:
    return run[1]


def _starting_before(runs: tuple[Run, ...], first: int, end: float) -> list[Run]:
    """runs[first:] up to the first that starts at or after `end` (not a slice: no copy
    of the rest of the day)."""
    found = []
    for i in range(first, len(runs)):
        if runs[i][0] >= end:
            break
        found.append(runs[i])
    return found


def uncovered(runs: tuple[Run, ...], start: float, end: float) -> list[Run]:
    """The parts of [start, end] that no run covers (runs as SensorRuns holds them: the
    ones ending before `start` are skipped by bisection, not read)."""
    pieces, at = [], start
    for i in range(bisect.bisect_left(runs, start, key=_end), len(runs)):  # not a slice: no copy of the rest
        a, b = runs[i]
        if b < at:
            continue
        if a > end:
            break
        if a > at:
            pieces.append((at, a))
        at = max(at, b)
        if at >= end:
            break
    if at < end:
        pieces.append((at, end))
    return pieces


@dataclass(frozen=True)
class ServiceDayFacts:
    day: ServiceDay
    tz: ZoneInfo
    trips: tuple[TripFacts, ...]
    operator_of_route: dict[str, str]
    origin_of: dict[tuple[str, int], tuple[float, float]]  # (route, direction) -> (lat, lon)
    # Times (epoch) at which each operator's fleet reported, to tell absence of
    # service from absence of telemetry.
    reporting: dict[str, tuple[float, ...]]
    occurrences: tuple[Occurrence, ...] = ()
    # stretches of itineraries the vehicles' telemetry could not follow (trips.unfollowed),
    # no realized trip among them
    unfollowed: tuple[UnfollowedPass, ...] = ()
    # each line's service before this day, by route (the operator stage's memory across
    # days); empty where the policy's law needs none
    line_service: dict[str, LineService] = field(default_factory=dict)
    # passes a track rule found cut short before the terminal (a turn back), whatever its
    # verdict; empty where the pack has no such rule
    cut_short: tuple[CutShortPass, ...] = ()
    # each operator's vehicles (fleet.csv), and when each vehicle's sensors were heard:
    # who could have run a scheduled trip, and whether their telemetry shows it was not run
    fleet: dict[str, tuple[str, ...]] = field(default_factory=dict)
    coverage: dict[str, SensorRuns] = field(default_factory=dict)

    def cut_short_trips(self, policy) -> dict[str, CutShortPass]:
        """The scheduled trips the cut-short passes were running, by key: per line and
        direction, each pass paired one-to-one with a scheduled trip no realized trip was
        matched to, departures at most the match window apart (trips.matching's
        alignment: most pairs, then least deviation). A pass that is itself among the
        day's trips (a departure still running, matched live) was running the trip it is
        matched to, and covers no other."""
        window = policy.trips.match_window_s
        matched = {tf.scheduled.key for tf in self.trips if tf.scheduled is not None}
        departures = {(tf.match.detected.vehicle_id, tf.departed_at) for tf in self.trips}
        passes: dict[tuple[str, int], list[CutShortPass]] = {}
        for p in sorted(self.cut_short, key=lambda p: (p.departed_at, p.vehicle_id)):
            if any(v == p.vehicle_id and abs(d - p.departed_at) < 1 for v, d in departures):
                continue
            mine = passes.setdefault((p.route_id, p.direction_id), [])
            # one departure along two shapes of the line (variants from one origin) is one
            # bus running one trip: it covers one trip, not one per shape
            if not any(q.vehicle_id == p.vehicle_id and abs(q.departed_at - p.departed_at) < 1 for q in mine):
                mine.append(p)
        covered: dict[str, CutShortPass] = {}
        for line, mine in sorted(passes.items()):
            free = [t for t in self.day.trips if (t.route_id, t.direction_id) == line and t.key not in matched]
            for i, j in align_departures([p.departed_at for p in mine],
                                         [self.day.departure_epoch(t) for t in free], window):
                covered[free[j].key] = mine[i]
        return covered

    def may_have_run(self, route_id: str, direction_id: int, departure: float, policy) -> list[UnfollowedPass]:
        """The unfollowed passes that may be a departure at `departure` of that route and
        direction (within the match window of when they may have left)."""
        window = policy.trips.match_window_s
        return [p for p in self.unfollowed if p.could_be(route_id, direction_id, departure, window)]

    def could_have_run(self, trip: ScheduledTrip) -> tuple[tuple[str, ...], str | None]:
        """The vehicles that could have run a scheduled trip, and the block that names
        them. A trip of a block is its block's vehicle's: the vehicle of the block's
        nearest matched trip before it, and of the nearest after (both where the block
        changed hands between them). Without a block, or with none of its trips run, any
        vehicle of the operator could have run it."""
        departure = self.day.departure_epoch(trip)
        if trip.block_id:
            held = self._held_by_block.get(trip.block_id, [])
            before = bisect.bisect_left(held, departure, key=_start)  # held[:before] leave before it
            after = bisect.bisect_right(held, departure, key=_start)  # held[after:] leave after it
            vehicles = {v for _, v in held[max(0, before - 1):before]} | {v for _, v in held[after:after + 1]}
            if vehicles:
                return tuple(sorted(vehicles)), trip.block_id
        return self.fleet.get(self.operator_of_route[trip.route_id], ()), None

    # Indexes over the facts, built once per value, on first use (the live D-22 asks about
    # each scheduled trip at every beat: a scan of the day per question grew with the day).
    # Not fields: never part of the facts' value.

    @functools.cached_property
    def _held_by_block(self) -> dict[str, list[tuple[float, str]]]:
        """By block: (scheduled departure, vehicle) of each of its trips matched, sorted."""
        held: dict[str, list[tuple[float, str]]] = {}
        for tf in self.trips:
            if tf.scheduled is not None and tf.scheduled.block_id:
                held.setdefault(tf.scheduled.block_id, []).append(
                    (self.day.departure_epoch(tf.scheduled), tf.realized.vehicle_id))
        return {block: sorted(trips) for block, trips in held.items()}

    @functools.cached_property
    def _quickest_s(self) -> dict[tuple[str, int], float]:
        """By line and direction: its quickest realized trip, departure to arrival."""
        quickest: dict[tuple[str, int], float] = {}
        for tf in self.trips:
            line = (tf.realized.route_id, tf.realized.direction_id)
            took = tf.match.detected.arrived_at - tf.match.detected.departed_at
            quickest[line] = min(quickest[line], took) if line in quickest else took
        return quickest

    @functools.cached_property
    def _died_running_at(self) -> dict[str, float]:
        """By vehicle: the earliest last fix of its unfollowed passes whose telemetry never
        came back (`_silences`)."""
        died: dict[str, float] = {}
        for p in self.unfollowed:
            if p.silences and p.silences[-1][1] is None:
                died[p.vehicle_id] = min(died.get(p.vehicle_id, p.last_t), p.last_t)
        return died

    def unobserved(self, trip: ScheduledTrip, policy) -> list[dict]:
        """Why the telemetry of the vehicles that could have run a scheduled trip does not
        show it was not run (empty: it shows it), per vehicle: the silences of its
        tachograph inside the trip's match window (its departure ± `match_window_s`: a
        departure anywhere in it would have been matched to the trip), and the catraca
        boardings counted in them.

        A silence is a stretch longer than `max_coverage_gap_s` without a fix (the limit
        past which trips are no longer followed, trips.unfollowed); at the window's edges
        only its part inside the window counts, so a fix that close to an edge covers it
        (and a vehicle whose newest fix is that close to the watermark is not silent). Each silence of a
        vehicle that could have run the trip hides it, but one of the block's vehicle
        before its first fix or after its last fix of the day (within the day's scheduled
        span ± the match window) in which its catraca counted no boarding: that vehicle
        had not started its day, or had ended it (switched off, its catraca silent too),
        and it is its block's only vehicle. A silence with boardings counted is service
        seen by the catraca: the vehicle ran unseen. Without a block's vehicle any vehicle
        of the operator could have run the trip, so every one must be seen throughout."""
        window = policy.trips.match_window_s
        departure = self.day.departure_epoch(trip)
        vehicles, block = self.could_have_run(trip)
        return self._silences(vehicles, block, departure - window, departure + window, strict=block is None,
                              policy=policy, hides_a_trip_s=self.quickest_trip_s(trip.route_id, trip.direction_id,
                                                                                trip.arrival_s - trip.departure_s))

    def unobserved_window(self, route_id: str, direction_id: int, start: float, end: float, policy) -> list[dict]:
        """As `unobserved`, for the departures a frequency window [start, end) asks of a
        line (D-12): the vehicles that could have made them are those that ran the line
        that day (each may have had a silence before its first fix or after its last: not
        yet out, or done), else, none having run it, every vehicle of the operator, each
        seen throughout."""
        vehicles, strict = self.could_run_line(route_id)
        return self._silences(vehicles, None, start, end, strict=strict, policy=policy,
                              hides_a_trip_s=self.quickest_trip_s(route_id, direction_id, 0.0))

    def quickest_trip_s(self, route_id: str, direction_id: int, otherwise: float) -> float:
        """The quickest realized trip of a line and direction that day, departure to
        arrival (`otherwise` without one): a silence shorter than that cannot have hidden a
        whole trip of it."""
        return self._quickest_s.get((route_id, direction_id), otherwise)

    def could_run_line(self, route_id: str) -> tuple[tuple[str, ...], bool]:
        """The vehicles that could have made a line's departures: those that ran it that day,
        else (True: none did) every vehicle of its operator."""
        vehicles = tuple(sorted({tf.realized.vehicle_id for tf in self.trips if tf.realized.route_id == route_id}))
        if vehicles:
            return vehicles, False
        return self.fleet.get(self.operator_of_route[route_id], ()), True

    @staticmethod
    def hides_for(passage: UnfollowedPass, vehicles: tuple[str, ...]) -> bool:
        """Whether an unfollowed pass may hide service of one of `vehicles`. A pass seen on
        the itinerary may be any vehicle's run there; a stretch a faulty clock dated
        (`clock_offset_s`, engine.clocks) was seen nowhere, so it hides only the service of
        a vehicle that could have run it (a spare bus with a stale clock hides no block's
        trip but its own)."""
        return passage.clock_offset_s is None or passage.vehicle_id in vehicles

    def _silences(self, vehicles, block: str | None, start: float, end: float, *, strict: bool,
                  policy, hides_a_trip_s: float = 0.0) -> list[dict]:
        """Per vehicle, its tachograph's silences in [start, end] that may hide service (see
        `unobserved`); `strict`: also those before its first fix or after its last. A
        vehicle whose telemetry broke off in the middle of an itinerary and did not come back
        (an unfollowed pass still silent, trips.unfollowed) was not switched off: its
        silences after that are service unseen. A silence between two fixes shorter than
        `hides_a_trip_s` (the quickest trip of the line) hides no trip: a trip it cut into
        shows on the itinerary around it, an unfollowed pass that the rules read (a modem
        off for minutes near a window must not erase its D-12)."""
        window, gap = policy.trips.match_window_s, policy.trips.max_coverage_gap_s
        first, last = self.day.scheduled_span()
        day_from, day_to = (first or start) - window, (last or end) + window
        found = []
        for vehicle in vehicles:
            runs = self.coverage.get(vehicle, SensorRuns())
            tachograph, boarding = runs.tachograph, runs.boarding
            # its telemetry broke off while it ran an itinerary and never came back: a unit
            # that died, not a bus switched off at the end of its day
            died_at = self._died_running_at.get(vehicle)
            hiding = []
            for a, b in uncovered(tachograph, start, end):
                if (a == start or b == end) and b - a <= gap:
                    continue  # a fix within max_coverage_gap_s of the window's edge: followed up to it
                # the runs are sorted with rising starts and ends (SensorRuns): found by bisection
                boarded = _starting_before(boarding, bisect.bisect_right(boarding, a, key=_end), b)
                heard = bisect.bisect_right(tachograph, a, key=_end)  # tachograph[:heard] end at or before a
                before = tachograph[heard - 1][1] if heard else None
                heard = bisect.bisect_left(tachograph, b, key=_start)  # tachograph[heard:] start at or after b
                after = tachograph[heard][0] if heard < len(tachograph) else None
                died = died_at is not None and died_at <= a + gap
                if before is not None and after is not None and not died and after - before < hides_a_trip_s:
                    continue  # too short to hide a whole trip, seen on both sides
                seen_before = before is not None and before >= day_from
                seen_after = (after is not None and after <= day_to) or died
                if strict or boarded or (seen_before and seen_after):
                    hiding.append({"silence": [iso(a, self.tz), iso(b, self.tz)],
                                   "catraca_boardings": [[iso(x, self.tz), iso(y, self.tz)] for x, y in boarded]})
            if hiding:
                found.append({"vehicle_id": vehicle, "block_id": block, "silences": hiding})
        return found

    def reported_minutes(self, operator_id: str, start: float, end: float) -> int:
        """Distinct minutes of [start, end] in which the operator's fleet reported."""
        times = self.reporting.get(operator_id, ())  # sorted
        i, j = bisect.bisect_left(times, start), bisect.bisect_right(times, end)
        return len({int(t // 60) for t in times[i:j]})

    def departure_observable(self, operator_id: str, departure: float, policy) -> bool:
        """Whether the fleet was seen around a scheduled departure (its match window), so
        that a departure not seen is a fact (D-22) and its km count for art. 45."""
        window = policy.trips.match_window_s
        return self.reported_minutes(operator_id, departure - window, departure + window) \
            >= policy.trips.min_reporting_minutes

    def reported_between(self, operator_id: str, start: float, end: float, *, include_end: bool = True) -> bool:
        times = self.reporting.get(operator_id, ())  # sorted
        i = bisect.bisect_left(times, start)
        return bool(i < len(times) and (times[i] <= end if include_end else times[i] < end))


class CatracaDay(msgspec.Struct, frozen=True):
    """A vehicle's catraca over its operating day, reduced to what the rules read: how
    many readings, the silences between consecutive readings longer than the policy's
    limit, and the notable readings (fault, seal broken, counter below the reading
    before) with the counter before each. Exact: the silences in service and the
    violations computed from it are those computed from every reading."""

    readings: int = 0
    first: float | None = None  # epoch of the day's first reading
    last: float | None = None
    gaps: tuple[tuple[float, float], ...] = ()  # (reading, next reading) further apart than the limit
    notable: tuple[tuple[CatracaReading, int | None], ...] = ()  # (reading, counter before it)
    # (time, counter) of the reading after each notable one, in the same order (shorter
    # while the newest notable readings wait for theirs): a counter that dips and comes
    # back above where it was is two clocks interleaved, not a counter set back
    after: tuple[tuple[float, int], ...] = ()

    def after_notable(self, index: int) -> tuple[float, int] | None:
        return self.after[index] if index < len(self.after) else None


def catraca_day(readings, previous_counter: int | None, max_silence_s: float) -> CatracaDay:
    """The CatracaDay of a day's readings (any order): the batch form of what the engine
    accumulates reading by reading."""
    ordered = sorted(readings, key=lambda r: (r.epoch, r.counter))
    gaps, notable, after = [], [], []
    previous = previous_counter
    for before, reading in zip([None, *ordered], ordered):
        if before is not None and reading.epoch - before.epoch > max_silence_s:
            gaps.append((before.epoch, reading.epoch))
        after += [(reading.epoch, reading.counter)] * (len(notable) - len(after))
        if is_notable(reading, previous):
            notable.append((reading, previous))
        previous = reading.counter
    return CatracaDay(len(ordered), ordered[0].epoch if ordered else None, ordered[-1].epoch if ordered else None,
                      tuple(gaps), tuple(notable), tuple(after))


def is_notable(reading: CatracaReading, previous_counter: int | None) -> bool:
    return (reading.status == "fault" or not reading.seal_intact
            or (previous_counter is not None and reading.counter < previous_counter))


@dataclass(frozen=True)
class PassFacts:
    """A vehicle's run along one itinerary from a departure seen (the origin zone left)
    until it reached the destination zone, left the corridor, departed again or the
    fixes so far end: what a track rule reads, whether or not it became a realized trip."""

    vehicle_id: str
    operator_id: str
    itinerary: Itinerary
    service_date: dt.date
    tz: ZoneInfo
    departed_at: float  # the origin zone's edge crossed
    fixes: tuple[Fix, ...]  # from the last fix inside the origin zone to the pass's last
    arrived: bool  # its end is the destination zone reached (the fix inside it not included)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return columns(self.fixes, "t", "x", "y")


class DoorFix(msgspec.Struct, frozen=True, array_like=True):
    """A fix with the doors open while standing, where it stood: the distance to the
    nearest marked stop (and which), and whether it may stop there anyway (a terminal
    zone, off every line's corridor). Kept with the fix after it, which ends its run."""

    fix: Fix
    stop_m: float
    stop_id: str | None
    excused: bool  # in a terminal zone or off every itinerary's corridor (a garage, a yard)


@dataclass(frozen=True)
class VehicleDayFacts:
    vehicle_id: str
    operator_id: str
    date: dt.date
    tz: ZoneInfo
    # The day's fixes a vehicle-day rule can read: every one above its speed limit (plus
    # the one after it) and those on either side of a catraca event or a departure, in
    # event-time order. The state never holds the day's pings (DESIGN.md, Timing).
    fixes: tuple[Fix, ...]
    speed_limits_kmh: tuple[float, ...]  # the limit at each fix's position
    catraca: CatracaDay
    trips: tuple[TripFacts, ...]
    in_service: tuple[tuple[float, float], ...]  # epoch intervals
    # the fixes with the doors open while standing away from every marked stop, each with
    # the next fix (engine.daylog): exactly the runs the day's pings hold
    doors: tuple[DoorFix, ...] = ()
    doors_reported: bool = False  # some ping of the day carried `doors_open`
    # (first, last) receipt times of the stretches whose messages were dated by a faulty
    # clock and rejected (engine.clocks): what the vehicle did then is not known
    clock_faults: tuple[tuple[float, float], ...] = ()


def trip_at(facts: VehicleDayFacts, epoch: float) -> TripFacts | None:
    """The vehicle's trip running at `epoch`, if any."""
    return next((tf for tf in facts.trips if tf.departed_at <= epoch <= tf.arrived_at), None)


def episode_fields(facts: VehicleDayFacts, epoch: float, fix: Fix) -> dict:
    """Where and when a vehicle-day episode happened, as its record states it: the trip it
    happened in (the one running at `epoch`, if any), the vehicle, and the place of `fix`."""
    trip = trip_at(facts, epoch)
    return {"route_id": trip.realized.route_id if trip else None,
            "direction_id": trip.realized.direction_id if trip else None,
            "trip_id": trip.realized.trip_id if trip else None,
            "vehicle_id": facts.vehicle_id, "service_date": facts.date,
            "occurred_at": local(epoch, facts.tz), "lat": fix.lat, "lon": fix.lon}


def trip_identity(facts: TripFacts) -> tuple:
    """What identifies a realized trip from the moment it arrives: its service date,
    line and direction, vehicle and departure. Never the scheduled trip it matches, which
    is only final at day close (an infraction's id may hash only facts known when it is
    first emitted)."""
    realized = facts.realized
    return (realized.service_date, f"{realized.route_id}:{realized.direction_id}", realized.vehicle_id,
            round(facts.departed_at))


def local(epoch: float, tz: ZoneInfo) -> dt.datetime:
    return dt.datetime.fromtimestamp(round(epoch, 3), tz)


def kmh(metres: float, seconds: float) -> float:
    """A speed in km/h from a distance and a time."""
    return metres / seconds * 3.6


@functools.lru_cache(maxsize=1 << 16)
def iso(epoch: float, tz: ZoneInfo) -> str:
    # kept: a service day's live judgments write the same few instants (a window's edges,
    # a vehicle's last fix) into the evidence of every trip they concern, at every beat
    return local(epoch, tz).isoformat(timespec="seconds")


def unfollowed_evidence(passage: UnfollowedPass, tz: ZoneInfo) -> dict:
    """An unfollowed pass as a record's evidence: which vehicle, its fixes, how far along
    the shape, when it may have left, and the silences (None: it had not spoken again)."""
    return {"vehicle_id": passage.vehicle_id, "first_fix": iso(passage.first_t, tz),
            "last_fix": iso(passage.last_t, tz), "msg_ids": [passage.first_msg_id, passage.last_msg_id],
            "along_shape_m": [passage.from_m, passage.to_m],
            "may_have_departed": [iso(passage.earliest_departure, tz), iso(passage.latest_departure, tz)],
            "silences": [[iso(a, tz) if a is not None else None, iso(b, tz) if b is not None else None]
                         for a, b in passage.silences],
            **({"clock_offset_s": passage.clock_offset_s} if passage.clock_offset_s is not None else {})}


class Standing(msgspec.Struct, frozen=True, array_like=True):
    """What the pings show after a trip's arrival, up to `terminal_s` later: when the first
    came, the last of the run still inside the destination zone, and the first outside
    it (None: none yet). Enough to place the end of the trip's time in service whatever
    the vehicle does next."""

    first_after: float | None = None
    run_end: float | None = None
    first_outside: float | None = None


def standing_after(trip: TripFacts, fixes, terminal_s: float) -> Standing:
    """The Standing of a trip from the pings after its arrival (batch form)."""
    t, x, y = columns(fixes, "t", "x", "y")
    keep = (t >= trip.arrived_at) & (t <= trip.arrived_at + terminal_s)
    t, x, y = t[keep], x[keep], y[keep]
    if not len(t):
        return Standing()
    inside = trip.itinerary.destination.contains(x, y)
    out = np.flatnonzero(~inside)
    first_outside = float(t[out[0]]) if len(out) else None
    run = int(out[0]) if len(out) else len(t)
    return Standing(float(t[0]), float(t[run - 1]) if run else None, first_outside)


def in_service_intervals(trips: list[TripFacts] | tuple[TripFacts, ...], fixes: tuple[Fix, ...] | list[Fix],
                         terminal_s: float) -> tuple[tuple[float, float], ...]:
    """When a vehicle is in service (DESIGN.md), from its pings (batch form)."""
    return in_service_from([(trip, standing_after(trip, fixes, terminal_s)) for trip in trips], terminal_s)


def in_service_from(trips: list[tuple[TripFacts, Standing]], terminal_s: float) -> tuple[tuple[float, float], ...]:
    """When a vehicle is in service (DESIGN.md): while it runs a trip, and while it
    stands in the destination terminal zone less than `terminal_s` after arriving.
    Standing is proven by pings: it ends at the last ping still inside the zone; a
    vehicle that never left the zone before its next departure never left service."""
    if not trips:
        return ()
    ordered = sorted(trips, key=lambda pair: pair[0].departed_at)
    intervals = []
    for k, (trip, stand) in enumerate(ordered):
        cap = trip.arrived_at + terminal_s
        leaves_again = k + 1 < len(ordered) and ordered[k + 1][0].departed_at <= cap
        end = trip.arrived_at
        if leaves_again:
            departure = ordered[k + 1][0].departed_at
            if stand.first_after is not None and stand.first_after < departure:
                if stand.first_outside is None or stand.first_outside >= departure:
                    end = departure  # inside all along until it left again
                elif stand.run_end is not None:
                    end = stand.run_end
        elif stand.run_end is not None:
            end = stand.run_end
        intervals.append((trip.departed_at, max(end, trip.arrived_at)))
    merged: list[list[float]] = []
    for start, end in intervals:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((a, b) for a, b in merged)


def overlaps(intervals, start: float, end: float) -> bool:
    return any(a <= end and start <= b for a, b in intervals)


def within(intervals, t: float) -> bool:
    return any(a <= t <= b for a, b in intervals)
