"""A realized trip from its arrival until its service day is matched: the compact facts
the day-close rules read, never its pings.

- The records judged on arrival (D-11, A-07), to fill in their trip_id at day close.
- How the vehicle stood in the destination zone afterwards (`Standing`): the end of
  its time in service (D-19, D-21).
- The fixes B-04 reads: the first of the trip's window and the two around each place
  a timepoint check can be made (the stop plus or minus the stop radius, for every
  scheduled trip of the pattern). B-04 finds in them exactly what it finds in every
  fix of the trip: the first fix past each mark and the one before it.

`open_trip_log` and `watch` are pure but for updating the log in place.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import numpy as np

from geofences.zones import Itinerary
from rules.facts import Standing
from rules.model import Infraction
from trips.model import Departure, DetectedTrip, Fix, columns


class TripLog(msgspec.Struct):
    departed_at: float
    arrived_at: float
    route_id: str
    direction_id: int
    shape_id: str
    service_date: str
    cap: float  # arrival + the terminal standing time: later pings do not matter
    arrival_ping: float  # the first ping in the destination zone: the trip is known from then
    window_last: Fix | None = None  # the last fix of B-04's window so far (the arrival ping, then the run)
    standing: Standing = Standing()
    watching: bool = True  # pings after the arrival may still change the facts
    seen: tuple[float, str] = (float("-inf"), "")  # the newest fix looked at
    in_run: bool = True  # B-04's window goes on while the vehicle stays in the zone
    checkpoint_fixes: list[Fix] = msgspec.field(default_factory=list)  # in event-time order
    pending_marks: list[float] = msgspec.field(default_factory=list)  # not passed yet (m along the shape)
    infractions: list[Infraction] = msgspec.field(default_factory=list)

    @property
    def key(self) -> tuple[float, str, int, str]:
        return (self.departed_at, self.route_id, self.direction_id, self.shape_id)

    def trip(self, vehicle_id: str) -> DetectedTrip:
        """The arrived trip as its log recalls it: its departure and arrival, nothing
        measured (what live matching and the records' context read of it)."""
        return Departure(vehicle_id, self.route_id, self.direction_id, self.shape_id, self.departed_at) \
            .trip(self.arrived_at)


def _order(fix: Fix) -> tuple[float, str]:
    return (fix.t, fix.msg_id)


def open_trip_log(trip: DetectedTrip, service_date: str, window: tuple[Fix, ...], progress: np.ndarray,
                  marks: tuple[float, ...], terminal_s: float, infractions: list[Infraction]) -> TripLog:
    """The log of a trip that just arrived; `window` its fixes up to the arrival ping,
    `progress` theirs along its itinerary (as the arrival's rules read them)."""
    log = TripLog(trip.departed_at, trip.arrived_at, trip.route_id, trip.direction_id, trip.shape_id,
                  service_date, trip.arrived_at + terminal_s, window[-1].t if window else trip.arrived_at,
                  infractions=infractions)
    if not window:
        log.in_run = False
        return log
    chosen = {0}
    for mark in marks:
        reached = np.flatnonzero(progress >= mark)
        if len(reached):
            i = int(reached[0])
            chosen.update({max(i - 1, 0), i})
        else:
            log.pending_marks.append(mark)
    log.checkpoint_fixes = [window[i] for i in sorted(chosen)]
    log.window_last = window[-1]
    return log


def watch(log: TripLog, fixes: Sequence[Fix], itinerary: Itinerary) -> None:
    """Look at the fixes after the arrival not looked at yet (`fixes` in event-time order)."""
    if not log.watching:
        return
    new = [f for f in fixes if _order(f) > log.seen and f.t >= log.arrived_at]
    if not new:
        return
    x, y = columns(new, "x", "y")
    inside = itinerary.destination.contains(x, y)
    progress = itinerary.locate(x, y) if log.pending_marks and log.in_run else None
    first_after, run_end, first_outside = log.standing.first_after, log.standing.run_end, log.standing.first_outside
    for k, fix in enumerate(new):
        if fix.t > log.cap:
            log.watching = False
            break
        log.seen = _order(fix)
        if first_after is None:
            first_after = fix.t
        if first_outside is None:
            if inside[k]:
                run_end = fix.t
            else:
                first_outside = fix.t
        if log.in_run and log.window_last is not None and _order(fix) > _order(log.window_last):
            if not inside[k]:
                log.in_run = False
            else:
                passed = [m for m in log.pending_marks if progress is not None and progress[k] >= m]
                if passed:
                    known = {f.msg_id for f in log.checkpoint_fixes}
                    log.checkpoint_fixes += [f for f in (log.window_last, fix) if f.msg_id not in known]
                    log.pending_marks = [m for m in log.pending_marks if m not in passed]
                log.window_last = fix
        if first_outside is not None and not log.in_run:
            log.watching = False
            break
    log.standing = Standing(first_after, run_end, first_outside)
    if not log.watching:  # settled: what only the watching needed goes
        log.window_last, log.seen = None, (0.0, "")


def arrived_before(vehicle_id: str, logs: list[TripLog], service_date: str, moment: float) -> list[DetectedTrip]:
    """A vehicle's trips of a service date that departed before `moment`, as detected
    trips: what its live match of a later trip follows (trips.matching.live_matches)."""
    return [log.trip(vehicle_id) for log in logs if log.service_date == service_date and log.departed_at < moment]
