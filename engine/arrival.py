"""A trip's arrival, at the beat trip detection finds it (the vehicle stage's release,
engine.vehicle): the trip rules its own track settles the moment it arrives (D-11, A-07,
the other line's catraca readings where the pack lists it), B-04 on the arrived trip's
live match, provisional until the day's matching settles it, and the trip's log opened
(engine.triplog) for what the rest of the day watches of it.

`Arrivals` is built by the stage from the static context, the feed's service days, the
projection the rules measure occurrences' geometry in, the stage's `RunningTrips` (a
pattern's checkpoint marks, which the trip log keeps), the `Keeping` of the day's compact
facts (engine.dayfacts.keep_around) and whether the pack reads a trip's catraca readings;
the stage hands it the vehicle's track memo (trips.memo), which stays the stage's. Of
`VehicleState` it reads `vehicle_id`, `trips` (the trips arrived before), `trip_readings`,
`track` and `released` (which readings a trip can still span), `conflicted` and
`emitted`; it writes `trips` (the trip log opened), `emitted` (the B-04 records sent,
through engine.changelog.emit_change), `trip_readings` (those no trip can span any more
forgotten) and, through engine.dayfacts.keep_around, `days` (the fixes on either side of
the departure kept in their day logs).

Its cache, never state (a restarted worker without it finds the same): per operator, the
lines its vehicles without lines of their own are licensed for (`licensed_lines`, which
the stage's clock-fault passes read too).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import replace

import msgspec
import numpy as np

from engine.assemble import service_date_of, trip_facts
from engine.changelog import at_most_provisional, emit_change
from engine.dayfacts import Keeping, keep_around
from engine.running import RunningTrips
from engine.servicedays import ServiceDays
from engine.triplog import arrived_before, open_trip_log
from engine.values import Context
from engine.vehiclestate import VehicleState
from gtfs.projection import Projector
from rules.evaluate import evaluate_arrival, finish, safe_detect
from rules.facts import TripFacts
from rules.model import PROVISIONAL, Finding, Infraction, Scope, stamped
from trips.matching import live_matches, unmatched_realization
from trips.memo import TrackMemo, measured
from trips.model import DetectedTrip, Fix, Match


class Arrivals:
    """A partition's arrivals: what judging them reads, and the licensed lines cache."""

    def __init__(self, ctx: Context, days: ServiceDays, projector: Projector, running: RunningTrips,
                 keeping: Keeping, reads_trip_catraca: bool) -> None:
        self.ctx = ctx
        self._days = days
        self._projector = projector
        self._running = running
        self._keeping = keeping
        self._reads_trip_catraca = reads_trip_catraca
        self._operator_lines: dict[str, tuple[str, ...]] = {}

    def judge(self, state: VehicleState, trip: DetectedTrip, fixes: Sequence[Fix], occurrences,
              memo: TrackMemo) -> list[Finding]:
        """The trip rules its own track settles, the moment it arrives. Its scheduled
        match is not known yet: the records carry no trip_id until the day closes."""
        date = service_date_of(trip, self.ctx, self._days)
        realized = unmatched_realization(trip, date, self.ctx.feed.timezone)
        # the fixes as the track's memo measured them when they came (trip detection read
        # the same): the rules at the arrival locate nothing again
        along = measured(fixes, self.ctx.geofences, memo).along(
            self.ctx.geofences.itinerary(trip.route_id, trip.direction_id, trip.shape_id))
        facts = trip_facts(Match(trip, realized, None, None), fixes, self.ctx, self._days(date), stay=False,
                           along=along)
        if self._reads_trip_catraca:
            facts = replace(facts, licensed_lines=self.licensed_lines(state.vehicle_id), readings=tuple(
                r for r in state.trip_readings if trip.departed_at <= r.epoch <= trip.arrived_at))
        findings = evaluate_arrival(facts, occurrences, self.ctx.pack, self.ctx.policy, self._projector)
        # Evidence complete when the watermark passes the arrival ping.
        arrival_ping = facts.fixes[-1].t if facts.fixes else trip.arrived_at
        findings = [at_most_provisional(stamped(f, arrival_ping, self.ctx.feed.timezone), state.conflicted)
                    if isinstance(f, Infraction) else f for f in findings]
        live = self._judge_live_match(state, trip, date, facts, occurrences, arrival_ping)
        state.trips.append(open_trip_log(
            trip, date.isoformat(), facts.fixes, facts.progress(),
            self._running.checkpoint_marks(facts.itinerary.pattern),
            self.ctx.policy.trips.in_service_terminal_s, [f for f in findings if isinstance(f, Infraction)]))
        keep_around(self._keeping, state, fixes, trip.departed_at)  # a silence in service may start there
        return findings + live

    def licensed_lines(self, vehicle_id: str) -> tuple[str, ...]:
        """The lines a vehicle is licensed for: its fleet row's, else every line of its
        operator (kernel.fleet)."""
        vehicle = self.ctx.fleet[vehicle_id]
        if vehicle.lines:
            return vehicle.lines
        operator = vehicle.operator_id
        if operator not in self._operator_lines:
            self._operator_lines[operator] = tuple(sorted(
                r.route_id for r in self.ctx.feed.routes.values() if r.agency_id == operator))
        return self._operator_lines[operator]

    def _judge_live_match(self, state: VehicleState, trip: DetectedTrip, date: dt.date, arrived: TripFacts,
                          occurrences, arrival_ping: float) -> list[Finding]:
        """B-04 on the arrived trip's live match (the one D-13 uses while the day runs:
        the next trip of its block, else the nearest departure), provisional: the day's
        final matching confirms it, or withdraws it when it matches the trip elsewhere.
        `arrived`: the trip's facts as the arrival's rules read them (its fixes, measured)."""
        earlier = arrived_before(state.vehicle_id, state.trips, date.isoformat(), trip.departed_at)
        day = self._days(date)
        match = live_matches([*earlier, trip], day, self.ctx.feed.timezone, self.ctx.policy.trips)[-1]
        if match.scheduled is None:
            return []
        facts = replace(arrived, match=match, readings=(), licensed_lines=None)
        found = []
        for rule in self.ctx.pack.rules_for(Scope.MATCHED_TRIP):
            found += [r for r in safe_detect(rule, facts, self.ctx.policy, date) if isinstance(r, Infraction)]
        changed: list[Finding] = []
        for record in finish(found, occurrences, self.ctx.pack, self.ctx.policy, self._projector):
            if record.status == "confirmed":
                record = msgspec.structs.replace(record, status=PROVISIONAL)
            record = at_most_provisional(record, state.conflicted)
            changed += emit_change(state.emitted, record, arrival_ping, self.ctx.feed.timezone)
        return changed


def forget_trip_readings(state: VehicleState) -> None:
    """The readings no trip can span any more go: those before the open track's first
    fix (a trip departs after its exit fix, which the track holds until it arrives),
    or before the newest fix released when there is no open track."""
    if state.track is not None and state.track.fixes:
        since = state.track.fixes[0].t
    else:
        since = state.released.get("tachograph", -np.inf)
    if state.trip_readings and state.trip_readings[0].epoch < since:
        state.trip_readings = [r for r in state.trip_readings if r.epoch >= since]
