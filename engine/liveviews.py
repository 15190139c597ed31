"""The vehicles' live views moved at each call (DESIGN.md, Timing: "The live view does
not wait for the watermark"): the stage-side shell of `engine.live` (the view, pure) and
`engine.status` (what it shows). Each admitted ping moves its vehicle's view at once, in
arrival order, and the `vehicle-status` leaves in the same call, stamped with the ping's
time; a catraca reading that changes what a view shows sends its status again; the bus
ahead (`VehicleAhead`, from the operator stage) joins the status of the departure it is for.

Reads of `VehicleState`: `live`; `ahead` (the headway shown); `trips` and `days`, read
only (the live match skips the trips the release detected already; the catraca last heard
may be in a day's log). Writes: `live` (its newest ping, screen, position, legs, match and
the departure told) and, in `take_ahead`, `ahead`. The stage writes `live.catraca_at` as a
reading is admitted (`_take`, with `shown` before it). The legal path (release, the
judgments) reads nothing written here.

The live view is information, never evidence: a failure here is logged and never loses
the call's legal work. A failure in one vehicle's view leaves that view as it was before
the call; a failure in the call's shared geometry loses the call's statuses, with each
view's newest ping and screen already taken.

Cache: the `LiveMap` (the network's itineraries and the geometry the views are measured
against), built once from the context; never state: a restarted worker builds the same.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import NamedTuple

import msgspec

from engine.live import LiveMap, advance, measure, shared, taken_rows
from engine.messages import LiveDeparture, VehicleAhead
from engine.status import VehicleStatus, live_match, live_status
from engine.values import Context
from engine.vehiclestate import VehicleState
from gtfs.schedule import ServiceDay
from trips.memo import TakeGeometry
from trips.model import Departure, Fix, columns
from trips.position import screen_positions

log = logging.getLogger(__name__)


class AheadTaken(NamedTuple):
    """The bus ahead kept in a vehicle's state (`LiveViews.take_ahead`), with the status
    its view showed before it."""
    shown: VehicleStatus | None


class LiveViews:
    """The live views of one partition's vehicles: `statuses` at each call, `shown`
    before a catraca reading, `take_ahead` and `status_with_ahead` for the bus ahead."""

    def __init__(self, ctx: Context, day: Callable[[dt.date], ServiceDay]):
        self.ctx = ctx
        self._day = day  # the service day of a date (the live match reads its timetable)
        self._live_map = LiveMap(ctx.geofences)

    def statuses(self, fixes: list[tuple[VehicleState, Fix]],
                 heard: dict[str, tuple[VehicleState, VehicleStatus | None]],
                 departed: list[LiveDeparture], take: TakeGeometry | None = None) -> list[VehicleStatus]:
        """The statuses of a call: one per position its pings (as `fixes`, in arrival order)
        moved a view to (`_live`), read with every catraca reading of the call; then, for a
        vehicle no ping of the call moved, its status again if the call's catraca readings
        changed what it shows (a catraca topic behind the tachograph's showed the bus's
        catraca silent until its next ping). `heard`: those vehicles, with the status
        their view showed before the call's readings (`shown`). That status is stamped with
        the view's position, as shown: a reading moves no position, and one older than the
        view's newest reading changed nothing (the stage's `_take`). Never evidence: a
        failure here loses the status, never the call's legal work. `departed`: the
        departures the views saw, for the operator stage (`_live_departure`). `take`: the
        engine call's fixes measured together, these among them (trips.memo.TakeGeometry:
        one query of each kind for the live view and the release)."""
        statuses = self._live(fixes, departed, take)
        moved = {status.vehicle_id for status in statuses}
        for vehicle_id, (state, before) in heard.items():
            if vehicle_id in moved:
                continue
            try:
                now = live_status(state, self.ctx)
            except Exception:  # noqa: BLE001 - the live view is information: the legal path goes on
                log.exception("the live status of %s failed after a catraca reading", vehicle_id)
                continue
            if now is not None and now != before:
                statuses.append(now)
        return statuses

    def shown(self, state: VehicleState) -> VehicleStatus | None:
        """The status the vehicle's live view shows now (its last one sent), None if it
        cannot be read (`statuses` then sends the status it can read after)."""
        try:
            return live_status(state, self.ctx)
        except Exception:  # noqa: BLE001 - the live view is information: the legal path goes on
            log.exception("the live status of %s failed before a catraca reading", state.vehicle_id)
            return None

    def take_ahead(self, state: VehicleState, message: VehicleAhead) -> AheadTaken | None:
        """The bus ahead of one of the vehicle's departures (a line with a scheduled
        headway), kept in `state.ahead` for the latest departure; None (nothing kept) for
        an older departure's. The stage saves the state, then asks `status_with_ahead`."""
        if state.ahead is not None and state.ahead.departed_at > message.departed_at:
            return None
        shown = self.shown(state)
        state.ahead = message
        return AheadTaken(shown)

    def status_with_ahead(self, state: VehicleState, message: VehicleAhead,
                          taken: AheadTaken) -> list[VehicleStatus]:
        """The live view's status given again, with the bus ahead taken, if the view still
        runs that trip and it changes what the status shows (the release's answer to a
        departure the live view told already mostly says the same)."""
        running = next((leg for leg in state.live.legs if leg.key == state.live.running), None)
        if running is None or running.departed != message.departed_at:
            return []
        status = live_status(state, self.ctx)
        return [status] if status is not None and status != taken.shown else []

    def _live(self, fixes: list[tuple[VehicleState, Fix]], departed: list[LiveDeparture],
              take: TakeGeometry | None) -> list[VehicleStatus]:
        """`_live_views`, guarded: the live view is information, so a failure in its
        batched geometry loses this call's statuses, never the call's legal work."""
        try:
            return self._live_views(fixes, departed, take)
        except Exception:  # noqa: BLE001 - one bad message must not stop the stream
            log.exception("the live views of a call failed (%d pings)", len(fixes))
            return []

    def _live_views(self, fixes: list[tuple[VehicleState, Fix]], departed: list[LiveDeparture],
                    take: TakeGeometry | None = None) -> list[VehicleStatus]:
        """The admitted pings into their vehicles' live views, in arrival order, and each
        moved view's status, now (DESIGN.md: the live view does not wait for the
        watermark). A ping not newer than its view's newest moves nothing; a position the
        bus could not have driven to (trips.position, the release's screen with the view's
        own state) moves nothing either. One status per position taken, stamped with its
        ping's time: a replay's large calls show every moment, as a live take does. Each
        departure a view sees goes to `departed` (`_live_departure`). Never evidence: a
        failure here is logged and the vehicle's view left as it was before the call, the
        legal path goes on."""
        if not fixes:
            return []
        rules = self.ctx.policy.trips
        by_vehicle: dict[str, tuple[VehicleState, list[Fix]]] = {}
        for state, fix in fixes:
            newest = state.live.newest if state.vehicle_id not in by_vehicle else by_vehicle[state.vehicle_id][1][-1].t
            if newest is not None and fix.t <= newest:
                continue  # older than what the view shows: it does not move it back
            by_vehicle.setdefault(state.vehicle_id, (state, []))[1].append(fix)
        if not by_vehicle:
            return []
        order = list(by_vehicle.values())
        flat = [fix for _, mine in order for fix in mine]
        rows = taken_rows(take, self._live_map.geofences, flat)
        near = shared(lambda: take.near_any_itinerary(rows, rules.max_network_distance_m),
                      "the network screen") if rows is not None else None
        if near is None:
            near = self._live_map.geofences.near_any_itinerary(*columns(flat, "x", "y"), rules.max_network_distance_m)
        near = near.tolist()
        screened: list[tuple[VehicleState, list[Fix]]] = []
        k = 0
        for state, mine in order:
            screen, taken, _ = screen_positions(state.live.screen, mine, near[k: k + len(mine)], rules)
            k += len(mine)
            state.live = msgspec.structs.replace(state.live, newest=mine[-1].t, screen=screen)
            if taken:
                screened.append((state, taken))
        fixes_in = [fix for _, taken in screened for fix in taken]
        vehicles = [v for v, (_, taken) in enumerate(screened) for _ in taken]
        following = [frozenset(leg.key for leg in state.live.legs) for state, _ in screened]
        measured = measure(self._live_map, fixes_in, vehicles, following, take)
        statuses = []
        k = 0
        for state, taken in screened:
            before, mine, left = state.live, [], []
            try:
                for fix, m in zip(taken, measured[k: k + len(taken)]):
                    state.live = advance(state.live, fix, m, self._live_map, self.ctx.policy)
                    match = live_match(state, self.ctx, self._day)
                    if match is not state.live.match:  # kept while the same departure runs
                        state.live = msgspec.structs.replace(state.live, match=match)
                    left += self._live_departure(state)
                    mine.append(live_status(state, self.ctx))
            except Exception:  # noqa: BLE001 - the live view is information: the legal path goes on
                log.exception("the live view of %s failed on %s", state.vehicle_id, fix.msg_id)
                state.live, mine, left = before, [], []
            k += len(taken)
            statuses += [status for status in mine if status is not None]
            departed += left
        return statuses

    def _live_departure(self, state: VehicleState) -> list[LiveDeparture]:
        """The departure the live view runs, told to the operator stage once, as soon as it
        is seen, so the bus ahead joins the status at once instead of at release (~the
        allowed lateness later). Live information, never evidence: the legal departure
        (TripDeparted, `engine.running`'s `RunningTrips.departure`) is told at release as before. The same
        crossing of the origin zone's edge, so the release's answer names the same departure."""
        view = state.live
        leg = next((leg for leg in view.legs if leg.key == view.running), None)
        if leg is None or leg.departed is None or view.told == (leg.key, leg.departed):
            return []
        state.live = msgspec.structs.replace(view, told=(leg.key, leg.departed))
        pattern = self._live_map.itinerary(leg.key).pattern
        trip = Departure.of(state.vehicle_id, pattern, leg.departed).trip()
        return [LiveDeparture(self.ctx.fleet[state.vehicle_id].operator_id, trip)]

