"""A vehicle's live status for the operations room (`vehicle-status`, vehicle_status.jsonl).

Pure. A trip is only a realized trip once it arrives (DESIGN.md, "Trips"); while it
runs, the vehicle is read as an AVL system reads it: the itinerary whose origin terminal
it left last (the driver's console line first, when it names one), its progress along
the shape, and its live match (the one D-13 uses while the day runs, not the day's final
matching). Two readers of that one meaning:
- `live_status`: the `vehicle-status` record, from the vehicle's live view
  (engine.live), moved at each ping's arrival (and given again when a catraca reading
  changes what it shows of the catraca), never evidence;
- `open_trip`: over the released open track, for the legal side (the departure told to
  the operator stage, B-04 while the trip runs).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import NamedTuple

import msgspec
import numpy as np

from engine.assemble import service_date_of
from engine.live import LiveMatch, iso
from engine.triplog import arrived_before
from engine.values import Context
from gtfs.schedule import ServiceDay
from kernel.policy import Headway
from trips.detection import may_pass_a_span, origin_fixes_from
from trips.headways import HeadwayState, headway_state
from trips.matching import live_matches
from trips.memo import TrackMemo, measured
from trips.model import Departure


class VehicleStatus(msgspec.Struct, kw_only=True):
    vehicle_id: str
    operator_id: str
    ts: str  # event time of the newest position, ISO-8601 with the feed's offset
    lat: float
    lon: float
    speed_kmh: float
    in_service: bool  # running a trip, or standing in its destination terminal less than 30 min after it
    route_id: str | None
    direction_id: int | None
    trip_id: str | None  # the live match: the scheduled trip nearest to the departure
    progress: float | None  # fraction of the itinerary's shape run
    departed_at: str | None
    schedule_deviation_s: float | None  # departure against the live match's scheduled departure
    # the time between its departure and that of the bus ahead of it (same line and
    # direction), the headway scheduled there (the frequency window's, or the timetable's
    # gap between departures), and whether that is bunched or gapped (policy [headway])
    headway_s: float | None = None
    scheduled_headway_s: int | None = None
    vehicle_ahead: str | None = None
    headway_state: HeadwayState | None = None
    off_route_m: float | None  # farther than D-11's distance from the shape: how far now
    off_route_since: str | None
    catraca_silent_since: str | None  # the last catraca reading, when older than D-19's limit
    # in layover: standing in the destination terminal after its trip arrived (in service,
    # between trips, running none): since that arrival
    layover_since: str | None = None


def live_status(state, ctx: Context) -> VehicleStatus | None:
    """The vehicle's status as its live view stands (engine.live): read at the ping's
    arrival, not at release. The same content as `open_trip` over the open track gives:
    the itinerary whose origin terminal it left last, its progress, its live match."""
    view = state.live
    last = view.position
    if last is None:
        return None
    tz = ctx.feed.timezone
    common = dict(vehicle_id=state.vehicle_id, operator_id=ctx.fleet[state.vehicle_id].operator_id,
                  ts=iso(last.t, tz), lat=last.lat, lon=last.lon, speed_kmh=last.speed_kmh,
                  catraca_silent_since=_catraca_silent_since(state, last.t, ctx, lambda e: iso(e, tz)))
    running = None
    if view.running is not None:
        running = next((leg for leg in view.legs if leg.key == view.running), None)
    if running is not None:
        itinerary = ctx.geofences.itineraries[running.key]
        pattern = itinerary.pattern
        match = view.match if view.match is not None and (view.match.key, view.match.exit_t) == \
            (running.key, running.exit_t) else None
        off = running.distance_m > ctx.policy.d11.max_distance_m
        return VehicleStatus(
            **common, in_service=True, route_id=pattern.route_id, direction_id=pattern.direction_id,
            trip_id=match.trip_id if match else None,
            progress=round(min(running.progress_m / itinerary.length_m, 1.0), 3),
            departed_at=iso(running.exit_t, tz),
            schedule_deviation_s=round(running.exit_t - match.scheduled, 1)
            if match and match.scheduled is not None else None,
            off_route_m=round(running.distance_m, 1) if off else None,
            off_route_since=iso(running.off_since, tz) if off else None,
            **_headway(state.ahead, running.departed, ctx.policy.headway))
    if view.arrivals and view.arrivals[-1].standing and \
            last.t <= view.arrivals[-1].arrived + ctx.policy.trips.in_service_terminal_s:
        # standing in the destination zone after it arrived, less than the terminal time
        arrival = view.arrivals[-1]
        pattern = ctx.geofences.itineraries[arrival.key].pattern
        return VehicleStatus(**common, in_service=True, route_id=pattern.route_id, direction_id=pattern.direction_id,
                             trip_id=None, progress=1.0, departed_at=iso(arrival.departed, tz),
                             schedule_deviation_s=None, off_route_m=None, off_route_since=None,
                             layover_since=iso(arrival.arrived, tz))
    return VehicleStatus(**common, in_service=False, route_id=None, direction_id=None, trip_id=None, progress=None,
                         departed_at=None, schedule_deviation_s=None, off_route_m=None, off_route_since=None)


def live_match(state, ctx: Context, day_of: Callable[[dt.date], ServiceDay]) -> LiveMatch | None:
    """The live view's running trip's live match: kept while the trip is the same one and
    no arrival was seen since, else computed again (once per departure, not per ping)."""
    view = state.live
    running = next((leg for leg in view.legs if leg.key == view.running), None)
    if running is None:
        return None
    if view.match is not None and (view.match.key, view.match.exit_t, view.match.arrivals) == \
            (running.key, running.exit_t, len(view.arrivals)):
        return view.match
    itinerary = ctx.geofences.itineraries[running.key]
    # the trips it arrived from that the release has not detected yet (it runs ~10 min behind)
    seen = [(log.route_id, log.direction_id, log.shape_id, log.departed_at) for log in state.trips]
    recent = []
    for arrival in view.arrivals:
        pattern = ctx.geofences.itineraries[arrival.key].pattern
        mine = (pattern.route_id, pattern.direction_id, pattern.shape_id)
        if not any((r, d, s) == mine and abs(t - arrival.departed) < 1 for r, d, s, t in seen):
            recent.append(Departure.of(state.vehicle_id, pattern, arrival.departed).trip(arrival.arrived))
    scheduled = _live_match(state, itinerary, running.exit_t, ctx, day_of, recent)
    return LiveMatch(running.key, running.exit_t, len(view.arrivals), scheduled[0] if scheduled else None,
                     scheduled[1] if scheduled else None)


def _headway(ahead, departed: float | None, policy: Headway) -> dict:
    """The bus ahead of the running trip, as the operator stage last told it (for the
    departure the live view runs: the same crossing the release tells the operator stage)."""
    if ahead is None or departed is None or ahead.departed_at != departed:
        return {}
    headway = None if ahead.ahead_departed_at is None else round(ahead.departed_at - ahead.ahead_departed_at, 1)
    return dict(headway_s=headway, scheduled_headway_s=ahead.scheduled_headway_s, vehicle_ahead=ahead.ahead_vehicle_id,
                headway_state=None if headway is None else headway_state(headway, ahead.scheduled_headway_s, policy))


def open_trip(fixes, ctx: Context, memo: TrackMemo | None = None):
    """The itinerary the vehicle is running: the latest exit from an origin terminal
    zone among the track's fixes (since the last arrival), on the console's line when
    the newest ping names one; of two itineraries left at the same fix, the one with
    more fixes on its corridor since. None while it stands in a terminal or runs nothing.
    (itinerary, index of the last fix in the origin zone): its distances to the shape are
    the memo's to read when wanted, not measured at every beat.
    `memo`: see trips.memo; each itinerary's exits are kept in its `grown` store
    (`_OriginExits`), so a beat reads only the fixes new since the last one."""
    measures = measured(fixes, ctx.geofences, memo)
    entered = measures.zones_entered
    near = measures.corridors()
    declared = fixes[-1].route_id
    rules = ctx.policy.trips
    kept = measures.grown.get(_OPEN_TRIP)
    if kept is not None and not kept.tied and kept.declared == declared and kept.rules is rules \
            and _nothing_left_from(measures, kept.read - 1):
        return kept.found  # a bus on its way: no itinerary's exit can have moved (`_OpenTrip`)
    left = []  # (exit index, itinerary), in the geofences' order (the tie break)
    for itinerary in ctx.geofences.itineraries_near(near, entered):
        if declared is not None and itinerary.pattern.route_id != declared:
            continue
        if id(itinerary.origin) not in entered and itinerary.pattern.key not in near:
            continue  # never in its origin nor on its corridor: no exit from it
        e = _last_exit(measures, itinerary, rules)
        if e is not None:
            left.append((e, itinerary))
    found, tied = None, []
    if left:
        latest = max(e for e, _ in left)
        tied = [itinerary for e, itinerary in left if e == latest]
        best = tied[0]
        if len(tied) > 1:
            # the first of the most fixes on its corridor since the exit (only ties read distances)
            on = [int((measures.distance(itinerary)[latest:] <= itinerary.corridor_m).sum()) for itinerary in tied]
            best = tied[on.index(max(on))]
        found = best, latest
    measures.grown[_OPEN_TRIP] = _OpenTrip(len(measures.t), declared, rules, len(tied) > 1, found)
    return found


class _OpenTrip(NamedTuple):
    """`open_trip`'s last reading of a growing track (kept in `TrackMemo.grown`). Its answer
    stands at a later beat with the same line named when no fix from the last one it read
    on is held in an origin zone (`_nothing_left_from`) and it broke no tie (the tie break
    counts the fixes since the exit: a new one can turn it). Each itinerary's exit is then
    what it was: `_last_exit` reads origin values all out from its last fix read on (that
    fix, read again, was out then too, or it was inside a terminal zone, which
    `_nothing_left_from` sees). An itinerary read now and not then (a corridor newly near,
    a zone newly entered) has no exit: one needs a fix held in its origin, new or not
    (an old one would have made it read then: its zone entered, its corridor near)."""

    read: int  # the fixes read
    declared: str | None  # the line the newest fix named
    rules: object  # the trip rules it was read under
    tied: bool
    found: tuple | None


_OPEN_TRIP = ("open_trip", "answer")  # memo.grown key
_LEFT_SPAN_STARTS = ("open_trip", "left spans")  # memo.grown: itinerary key -> its last left span's start, or None


def _nothing_left_from(measures: TrackMemo, done: int) -> bool:
    """Whether no fix from index `done` on is held in any itinerary's origin zone as
    `origin_fixes` reads it: `_none_held` for every itinerary at once, read from the new
    slots as Python values. No fix of them is inside a terminal zone (every origin zone
    is one), and no pair of them on an itinerary's corridor at both ends starts short of
    its last left span's start (`may_pass_a_span`'s test, for every corridor near: a
    superset of the itineraries read, so still exact when True). A beat's fixes only."""
    if done < 0 or len(measures.t) - done > 9:
        return False
    if measures.last_inside_any() >= done:
        return False
    starts = measures.grown.get(_LEFT_SPAN_STARTS)
    if starts is None:
        starts = measures.grown[_LEFT_SPAN_STARTS] = {}
    itineraries = measures.geofences.itineraries
    for key, on, along in measures.corridor_tails(done):
        pairs = [k for k in range(len(on) - 1) if on[k] and on[k + 1]]
        if not pairs:
            continue
        if key not in starts:
            spans = itineraries[key].left_spans_m
            starts[key] = float(spans[-1, 0]) if len(spans) else None  # (in order: `_spans_between`)
        if starts[key] is not None and any(along[k] <= starts[key] for k in pairs):
            return False
    return True


class _OriginExits(NamedTuple):
    """One itinerary's origin exits over the settled part of a growing track (kept in
    `TrackMemo.grown`, which holds only while the track grows at its end with the same
    fixes): `origin_fixes` of a fix reads the fix after it, so the values of the fixes
    before the last are settled and the last one's is read again at the next beat."""

    settled: int  # fixes whose origin value is settled (all but the last of the track read)
    last_in: bool  # the origin value of fix `settled - 1`
    last_exit: int  # the last i < settled - 1 in the zone with fix i + 1 out of it; -1: none


def _last_exit(measures: TrackMemo, itinerary, rules) -> int | None:
    """Where the track last left the itinerary's origin zone (the last fix in it before
    one out of it), as `origin_fixes` reads the whole track; None while its last fix is
    in the zone or it never left. Reads the origin values of the new fixes only, and
    not even those at a beat where none can hold (`_none_held`)."""
    key = ("open_trip.exits", id(itinerary), id(rules))
    known = measures.grown.get(key) or _OriginExits(0, False, -1)
    n = len(measures.t)
    # the values of fixes settled..n-2 are settled now: their exits with the fix before
    # (its value kept) and between them
    last_exit, last_in = known.last_exit, known.last_in
    if known.settled and n - known.settled <= 8 and _none_held(measures, itinerary, known.settled):
        # every new value is False: the only exit is from the last fix kept, when it was in
        if n - known.settled > 1 and last_in:
            last_exit, last_in = known.settled - 1, False
        newest_in = False
    else:
        values = origin_fixes_from(measures, itinerary, rules, known.settled)
        if len(values) > 8:  # a track read whole (a fresh memo, a cut): at numpy's pace
            pairs = np.concatenate(([last_in], values[:-1])) if known.settled else values[:-1]
            exits = np.flatnonzero(pairs[:-1] & ~pairs[1:])
            if len(exits):
                last_exit = int(exits[-1]) + known.settled - (1 if known.settled else 0)
            last_in = bool(values[-2])
        else:  # a beat's fix or two: numpy's calls would cost more than the reading
            i = known.settled
            for value in values[:-1].tolist():
                if i and last_in and not value:
                    last_exit = i - 1
                last_in, i = value, i + 1
        newest_in = bool(values[-1])
    settled = n - 1
    measures.grown[key] = _OriginExits(settled, last_in, last_exit)
    if newest_in:
        return None  # still in (or back in) its origin terminal
    if settled and last_in:
        return settled - 1  # left it at the newest fix
    return last_exit if last_exit >= 0 else None


def _none_held(measures: TrackMemo, itinerary, done: int) -> bool:
    """Whether no fix from index `done` on is in the itinerary's origin zone as
    `origin_fixes` reads it, known without reading their values: none is inside the zone
    (the memo keeps the last fix inside each terminal zone) and no pair of them may pass
    through the zone between its two fixes (`may_pass_a_span`)."""
    origin = itinerary.origin
    if id(origin) not in measures.geofences.terminal_zone_ids or measures.last_inside(origin) >= done:
        return False
    return not may_pass_a_span(measures, itinerary, done)


def _live_match(state, itinerary, departed: float, ctx: Context,
                day_of: Callable[[dt.date], ServiceDay], recent=()) -> tuple[str, float] | None:
    """The running trip's live match, as D-13's (trips.matching.live_matches): after the
    vehicle's trips of the day that arrived, the next trip of their block, else the
    nearest scheduled departure of the line and direction. (trip_id, scheduled epoch).
    `recent`: arrived trips not in the trip logs yet (the live view's)."""
    pattern = itinerary.pattern
    running = Departure.of(state.vehicle_id, pattern, departed).trip()
    date = service_date_of(running, ctx, day_of)
    earlier = arrived_before(state.vehicle_id, state.trips, date.isoformat(), departed)
    earlier += [t for t in recent if t.departed_at < departed and service_date_of(t, ctx, day_of) == date]
    day = day_of(date)
    match = live_matches([*earlier, running], day, ctx.feed.timezone, ctx.policy.trips)[-1]
    if match.scheduled is None:
        return None
    return match.realized.trip_id, day.departure_epoch(match.scheduled)


def _catraca_silent_since(state, now: float, ctx: Context, iso) -> str | None:
    """The last catraca reading heard (admitted, or released into the day's facts), when
    older than D-19's limit."""
    limit = ctx.policy.d19.max_silence_s
    if state.live.catraca_at is not None and now - state.live.catraca_at <= limit:
        return None  # heard within the limit: the newest reading is at least as recent
    heard = [log.last_reading for log in state.days if log.last_reading is not None]
    if state.live.catraca_at is not None:
        heard.append(state.live.catraca_at)
    last = max(heard, default=None)
    if last is None or now - last <= limit:
        return None
    return iso(last)


class MonthEfficiency(msgspec.Struct, kw_only=True):
    """An operator's art. 45 month as its days close (topic month-efficiency, the latest
    per operator and month wins): realized over programmed km of the closed days."""

    operator_id: str
    month: str  # YYYY-MM
    programmed_km: float
    realized_km: float
    efficiency_pct: float
    min_efficiency_pct: float
    days_closed: int  # closed days with telemetry (what the efficiency is over)
    days_without_telemetry: int  # closed days with service and no telemetry at all: left out
    as_of: str  # the last day closed, ISO date
    month_closed: bool  # the month itself closed: art. 45 applied to its D-22


def month_efficiency(operator_id: str, month: str, programmed_m: float, realized_m: float, service_dates,
                     without_telemetry, as_of: dt.date, min_efficiency: float, month_closed: bool) -> MonthEfficiency:
    efficiency = realized_m / programmed_m if programmed_m else 1.0
    return MonthEfficiency(operator_id=operator_id, month=month, programmed_km=round(programmed_m / 1000, 3),
                           realized_km=round(realized_m / 1000, 3), efficiency_pct=round(100 * efficiency, 3),
                           min_efficiency_pct=round(100 * min_efficiency, 3), days_closed=len(service_dates),
                           days_without_telemetry=len(without_telemetry), as_of=as_of.isoformat(),
                           month_closed=month_closed)
