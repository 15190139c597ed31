"""The passes along an itinerary in a vehicle's open track, at each beat after trip
detection (the vehicle stage's release, engine.vehicle): the track rules over them
(Scope.TRACK: a turn back before the terminal, trips.passes), and the passes its
telemetry broke off in told to the operator stage as unfollowed (trips.unfollowed), once.

`Passes` is built by the stage from the static context, the feed's service days, the
projection the rules measure occurrences' geometry in and the pack's track rules; the
stage hands it the vehicle's track memo (trips.memo), which stays the stage's. Of
`VehicleState`, `judge` reads `vehicle_id` and `conflicted` and writes `emitted` (the
records sent, through engine.changelog.emit_change); `unfollowed` reads `vehicle_id` and
`track` (the oldest fix it still holds) and writes `unfollowed` (what was told of each
pass, so it is told once, and again only grown).

No cache: everything here is a function of the state, the input and the static context.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.assemble import service_date_of
from engine.changelog import at_most_provisional, emit_change
from engine.messages import TripCutShort, TripUnfollowed
from engine.servicedays import ServiceDays
from engine.values import Context
from engine.vehiclestate import VehicleState
from gtfs.projection import Projector
from rules.evaluate import finish, safe_detect
from rules.facts import CutShortPass, PassFacts
from rules.model import Finding, Infraction, Rule, interval_of
from trips.detection import departure_time
from trips.memo import TrackMemo
from trips.model import Departure, Fix
from trips.passes import itinerary_passes
from trips.unfollowed import unfollowed_passes


class Passes:
    """A partition's passes: what judging them and telling the unfollowed ones read."""

    def __init__(self, ctx: Context, days: ServiceDays, projector: Projector, track_rules: list[Rule]) -> None:
        self.ctx = ctx
        self._days = days
        self._projector = projector
        self._track_rules = track_rules

    def judge(self, state: VehicleState, fixes: Sequence[Fix], batch: list[Fix], arrivals, occurrences,
              cut_short: list[TripCutShort], memo: TrackMemo) -> list[Finding]:
        """The track rules (Scope.TRACK: a turn back before the terminal) over the passes
        along an itinerary in the open track (trips.passes). A record is told once, at the
        beat whose batch holds the fix that completes its evidence (the last of its
        `interval_epoch`, the last ping it cites): the same in replay and workers however
        the pings were batched, since a pass never reaches across an arrival (where the
        track is cut) nor beyond the longest trip (its rules refuse longer ones). A pass a
        `cuts_trip_short` rule records is told to the operator stage then too (onto
        `cut_short`), whatever the record's verdict: its scheduled trip is that record's act."""
        new = {f.msg_id for f in batch}
        operator = self.ctx.fleet[state.vehicle_id].operator_id
        tz = self.ctx.feed.timezone
        found: list[Finding] = []
        for passage in itinerary_passes(fixes, self.ctx.geofences, self.ctx.policy.trips, memo, ends_at=arrivals):
            pair = fixes[passage.exit: passage.exit + 2]
            departed = departure_time(passage.itinerary, *(np.array([getattr(f, n) for f in pair]) for n in "txy"), 0)
            pattern = passage.itinerary.pattern
            date = service_date_of(Departure.of(state.vehicle_id, pattern, departed), self.ctx, self._days)
            facts = PassFacts(state.vehicle_id, operator, passage.itinerary, date, tz, departed,
                              tuple(fixes[passage.exit: passage.end]), passage.arrived)
            for rule in self._track_rules:
                for finding in safe_detect(rule, facts, self.ctx.policy, date):
                    pings = finding.evidence.get("pings") or [{}]
                    if pings[-1].get("msg_id") in new:
                        found.append(finding)
                        if rule.cuts_trip_short:
                            cut_short.append(TripCutShort(operator, CutShortPass(
                                state.vehicle_id, pattern.route_id, pattern.direction_id, pattern.shape_id,
                                departed, rule.code)))
        changed: list[Finding] = []
        for record in finish(found, occurrences, self.ctx.pack, self.ctx.policy, self._projector):
            if isinstance(record, Infraction):
                record = at_most_provisional(record, state.conflicted)
                changed += emit_change(state.emitted, record, interval_of(record).end, tz)
            else:
                changed.append(record)
        return changed

    def unfollowed(self, state: VehicleState, fixes, silent_after: bool, memo: TrackMemo) -> list[TripUnfollowed]:
        """The unfollowed passes in `fixes` not told yet, or grown since (trips.unfollowed);
        a stretch the track no longer holds cannot be found again and is forgotten."""
        found = unfollowed_passes(state.vehicle_id, fixes, self.ctx.geofences, self.ctx.policy.trips, silent_after,
                                  memo)
        operator = self.ctx.fleet[state.vehicle_id].operator_id
        told = []
        for passage in found:
            key = f"{passage.shape_id}|{passage.first_t!r}"
            seen = (passage.last_t, passage.silences[-1][1] is None)
            if state.unfollowed.get(key) == seen:
                continue
            state.unfollowed[key] = seen
            told.append(TripUnfollowed(operator, passage))
        oldest = state.track.fixes[0].t if state.track.fixes else np.inf
        state.unfollowed = {k: v for k, v in state.unfollowed.items() if float(k.rsplit("|", 1)[1]) >= oldest}
        return told
