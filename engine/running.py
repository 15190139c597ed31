"""The trip a vehicle is running now, between its departure and its arrival, at each beat
after trip detection (the vehicle stage's release, engine.vehicle): its departure told
once to the operator stage (`TripDeparted`: D-12, D-13 and D-22 count it while the day
runs), and B-04 judged on its live match as soon as its fixes show a timepoint passed off
schedule, provisional (the trip's arrival and the day's matching settle the same record).

`RunningTrips` is built by the stage from the static context, the feed's service days
and the projection the rules measure occurrences' geometry in; the stage hands it the
running trip (engine.status.open_trip: the itinerary and the index of the track's last
fix in its origin zone) and the vehicle's track memo (trips.memo), which stays the
stage's. Of `VehicleState` it reads `vehicle_id`, `track` (the open trip's fixes), `trips`
(the trips arrived before the running one), `conflicted` and `emitted`; it writes
`departure` (the running trip last told) and `emitted` (the B-04 records sent, through
engine.changelog.emit_change).

Its caches, never state (a restarted worker without them finds the same): per vehicle,
the running trip's departure as last measured, its live match and what it was found
from, and what B-04's judgment last read (also kept in the track memo's `grown` store);
per pattern, where B-04 reads a timepoint passage (`checkpoint_marks`, which a trip's
arrival reads too).
"""

from __future__ import annotations

import datetime as dt
import itertools
import operator
from typing import NamedTuple

import msgspec
import numpy as np

from engine.assemble import service_date_of
from engine.changelog import at_most_provisional, emit_change
from engine.messages import TripDeparted
from engine.servicedays import ServiceDays
from engine.triplog import arrived_before
from engine.values import Context
from engine.vehiclestate import VehicleState
from gtfs.model import Pattern, pattern_key
from gtfs.projection import Projector
from gtfs.schedule import ServiceDay
from rules import b04
from rules.evaluate import detect_live, finish
from rules.facts import TripFacts
from rules.model import PROVISIONAL, Finding, Infraction, Live
from telemetry import Occurrence
from trips.detection import departure_time
from trips.matching import live_matches
from trips.memo import TrackMemo, measured
from trips.model import Departure, DetectedTrip, Fix, Match


def conflicted_exits(trip: DetectedTrip, state: VehicleState) -> tuple[str, ...]:
    """The trip's departure pings that came in two versions."""
    return tuple(sorted(m for m in trip.exit_msg_ids if m in state.conflicted))


class _RunningRead:
    """What B-04's judgment of a vehicle's running trip read when it last ran
    (`RunningTrips.judge`), for the stage to skip it at a beat where provably
    none of it changed: a cache, never state (a worker without it judges, and finds the
    same). The trip's fixes read are `track[exit_index:length]`, which the track must
    still hold from its exit (the very objects); `unpassed`: the lowest timepoint mark of
    the scheduled trip no fix read had reached (inf: none left); `emitted`: each record
    the judgment sent or found already sent, as `state.emitted` held it after. The read is
    also kept in the track memo's `grown` store (`_RUNNING_READ`): found there, the track
    only grew at its end since, so its first `length` fixes are still the ones read."""

    __slots__ = ("itinerary", "match", "track", "exit_index", "length", "occurrences", "conflicted", "emitted",
                 "unpassed")

    def __init__(self, itinerary, match: Match, track: tuple, exit_index: int, occurrences: tuple,
                 conflicted: tuple, emitted: tuple, unpassed: float) -> None:
        self.itinerary, self.match = itinerary, match
        self.track, self.exit_index, self.length = track, exit_index, len(track)
        self.occurrences, self.conflicted, self.emitted, self.unpassed = occurrences, conflicted, emitted, unpassed


# the key of a vehicle's `_RunningRead` in its track memo's `grown` store
_RUNNING_READ = "engine.running.read"


class _RunningMatch(NamedTuple):
    """A running trip's live match and what it was found from (`RunningTrips.match`):
    the service date and day are functions of the itinerary and departure alone, the match
    of the day and the vehicle's trips up to the running one."""

    itinerary: object
    departed: float
    date: dt.date  # the service date
    day: ServiceDay
    trips: tuple[DetectedTrip, ...]
    match: Match


class RunningTrips:
    """The running trips of one partition's vehicles: what the stage asks at each beat,
    and the caches that spare asking it again (see the module's docstring)."""

    def __init__(self, ctx: Context, days: ServiceDays, projector: Projector):
        self.ctx = ctx
        self._days = days
        self._projector = projector
        # per pattern key, where B-04 reads a timepoint passage (`checkpoint_marks`)
        self._marks: dict[str, tuple[float, ...]] = {}
        # per vehicle, its running trip's live match and what it was matched from (`match`)
        self._matches: dict[str, _RunningMatch] = {}
        # per vehicle, its running trip's departure as last measured (`departure`): a function of
        # the itinerary and the two fixes around the exit alone, asked again at every beat of the trip
        self._departures: dict[str, tuple[object, tuple[Fix, ...], float]] = {}
        # per vehicle, what B-04's judgment of its running trip last read (`judge`), kept
        # only when B-04 is the pack's one running-trip rule: the judgment's answer is then known
        self._reads: dict[str, _RunningRead] = {}
        self._b04_alone = all(rule.detect is b04.detect for rule in ctx.pack.catalogue.values()
                              if rule.live == Live.RUNNING_TRIP)

    def departure(self, state: VehicleState, running) -> list[TripDeparted]:
        """The running trip, told to the operator stage once: D-12, D-13 and D-22 count
        it as a departure while the day runs. Its departure is the tracker's (the same
        crossing of the origin zone's edge), so it is the same whether seen running or
        only once the trip has arrived."""
        if running is None:
            return []
        itinerary, e = running
        fixes = state.track.fixes
        pair = tuple(fixes[e: e + 2])
        kept = self._departures.get(state.vehicle_id)
        if kept is not None and kept[0] is itinerary and kept[1] == pair:
            departed = kept[2]
        else:
            departed = departure_time(itinerary, np.array([f.t for f in pair]), np.array([f.x for f in pair]),
                                      np.array([f.y for f in pair]), 0)
            self._departures[state.vehicle_id] = (itinerary, pair, departed)
        key = (departed, itinerary.pattern.key)
        if state.departure is not None and tuple(state.departure) == key:
            return []
        state.departure = key
        pattern = itinerary.pattern
        trip = Departure.of(state.vehicle_id, pattern, departed, departure_gap_s=pair[1].t - pair[0].t,
                            exit_msg_ids=(pair[0].msg_id, pair[1].msg_id), left_at=pair[1].t).trip()
        return [TripDeparted(self.ctx.fleet[state.vehicle_id].operator_id, trip, conflicted_exits(trip, state))]

    def judge(self, state: VehicleState, running, occurrences: list[Occurrence] | tuple,
              track_memo: TrackMemo) -> list[Finding]:
        """B-04 while the trip runs (DESIGN.md, Timing): as soon as its fixes show a
        timepoint passed off schedule on the trip's live match, provisional, detected
        when the first fix past the timepoint was seen. The trip's arrival and the day's
        matching settle the same record (same id). `track_memo`: the vehicle's track
        memo (the stage's, trips.memo).

        A beat whose new fixes reach no timepoint mark the trip's fixes had not reached,
        with every other input as the last judgment read it, is not judged again
        (`_unchanged_since`): the judgment would send nothing. B-04 reads of the fixes only
        each timepoint's first fix at or past its mark and the one before (its pings,
        times and progress, the fix nearest the passage), all kept when fixes only come
        after them, and a mark not reached stays so; the live match (which fixes the
        trip's itinerary, departure, service day and scheduled trip) is the same object;
        `finish` reads the occurrences, `at_most_provisional` the conflicted messages'
        ids, equal; and each record is compared with the very record `state.emitted` held
        after the last judgment, which that judgment found unchanged again if run (a
        record sent is stamped with its earliest moment; a later fix's moment does not
        lower it). Anything else that changed `state.emitted` (an arrival's or the day's
        settling, a release undone) makes the stage judge."""
        if running is None or state.departure is None:
            self._reads.pop(state.vehicle_id, None)
            return []
        itinerary, exit_index = running
        kept = self.match(state, itinerary, state.departure[0])
        match, day = kept.match, kept.day
        if match.scheduled is None:
            return []
        occurrences = tuple(occurrences)
        conflicted = tuple(state.conflicted)
        memo = measured(state.track.fixes, self.ctx.geofences, track_memo)
        if self._unchanged_since(state, itinerary, exit_index, match, occurrences, conflicted, memo):
            return []
        fixes = state.track.fixes[exit_index:]
        along = memo.along(itinerary)
        facts = TripFacts(match, itinerary, self.ctx.fleet[state.vehicle_id].operator_id, fixes,
                          self.ctx.feed.timezone, day.start_epoch, measured=along[exit_index:])
        found = [r for r in detect_live(Live.RUNNING_TRIP, facts, self.ctx.pack, self.ctx.policy, kept.date)
                 if isinstance(r, Infraction)]
        changed: list[Finding] = []
        judged = []
        for record in finish(found, occurrences, self.ctx.pack, self.ctx.policy, self._projector):
            if record.status == "confirmed":
                record = msgspec.structs.replace(record, status=PROVISIONAL)
            record = at_most_provisional(record, state.conflicted)
            seen = record.occurred_at.timestamp()
            moment = next((f.t for f in fixes if f.t >= seen), fixes[-1].t)
            changed += emit_change(state.emitted, record, moment, self.ctx.feed.timezone)
            judged.append(record.infraction_id)
        if self._b04_alone:
            progress = facts.progress()
            top = float(progress[~np.isnan(progress)].max(initial=-np.inf))
            self._reads[state.vehicle_id] = memo.grown[_RUNNING_READ] = _RunningRead(
                itinerary, match, state.track.fixes, exit_index, occurrences, conflicted,
                tuple((key, state.emitted.get(key)) for key in judged),
                min((mark for mark in b04.passage_marks(match.scheduled, self.ctx.policy) if mark > top),
                    default=np.inf))
        return changed

    def _unchanged_since(self, state: VehicleState, itinerary, exit_index: int, match: Match,
                         occurrences: tuple, conflicted: tuple, memo: TrackMemo) -> bool:
        """Whether the running trip's judgment last read what it would read now, but new
        fixes that reach no mark it had not reached (`judge`); if so, those fixes
        are taken as read."""
        read = self._reads.get(state.vehicle_id)
        track = state.track.fixes
        if read is None or read.match is not match or read.itinerary is not itinerary \
                or read.occurrences != occurrences or read.conflicted != conflicted:
            return False
        known = read.length - read.exit_index
        if len(track) - exit_index < known:
            return False
        # kept in the memo: the track only grew since (one look, not one per fix of the trip)
        grown = memo.grown.get(_RUNNING_READ) is read and exit_index == read.exit_index
        if not grown and not all(map(operator.is_, itertools.islice(read.track, read.exit_index, read.length),
                                     itertools.islice(track, exit_index, exit_index + known))):
            return False
        if any(state.emitted.get(key) is not record for key, record in read.emitted):
            return False
        unpassed = read.unpassed
        if any(p >= unpassed for p in memo.progress(itinerary)[exit_index + known:].tolist()):
            return False
        read.track, read.exit_index, read.length = track, exit_index, len(track)
        memo.grown[_RUNNING_READ] = read
        return True

    def match(self, state: VehicleState, itinerary, departed: float) -> _RunningMatch:
        """The live match of the trip running `itinerary` since `departed`, after the
        vehicle's earlier trips of its service day, as `live_matches` gives it. Kept per
        vehicle (a cache, not state: the same at every beat of a trip, which asked it again
        per beat): its service date and day while the itinerary and departure are the same
        (what they are functions of), the match while the earlier trips are too."""
        kept = self._matches.get(state.vehicle_id)
        if kept is not None and kept.itinerary is itinerary and kept.departed == departed:
            date, day, trip = kept.date, kept.day, kept.trips[-1]
        else:
            trip = Departure.of(state.vehicle_id, itinerary.pattern, departed).trip()
            date = service_date_of(trip, self.ctx, self._days)
            day, kept = self._days(date), None
        trips = (*arrived_before(state.vehicle_id, state.trips, date.isoformat(), departed), trip)
        if kept is not None and kept.trips == trips:
            return kept
        match = live_matches(list(trips), day, self.ctx.feed.timezone, self.ctx.policy.trips)[-1]
        kept = self._matches[state.vehicle_id] = _RunningMatch(itinerary, departed, date, day, trips, match)
        return kept

    def checkpoint_marks(self, pattern: Pattern) -> tuple[float, ...]:
        """Where along the pattern's shape B-04 reads a timepoint passage, for any of its
        scheduled trips: past an intermediate timepoint by the stop radius, or short of
        the final stop by it."""
        key = pattern.key
        if key not in self._marks:
            radius = self.ctx.policy.a07.stop_radius_m
            marks = set()
            for template in self.ctx.feed.trips.values():
                if pattern_key(template.route_id, template.direction_id, template.shape_id) != key:
                    continue
                last = len(template.stops) - 1
                for k, stop in enumerate(template.stops[1:], start=1):
                    if stop.timepoint:
                        marks.add(stop.shape_dist_m - radius if k == last else stop.shape_dist_m + radius)
            self._marks[key] = tuple(sorted(marks))
        return self._marks[key]
