"""A vehicle's live status for the operations room (`vehicle-status`, vehicle_status.jsonl).

Pure: computed from the vehicle's state after each release. A trip is only a realized
trip once it arrives (DESIGN.md, "Trips"); while it runs, the status reads the open
track as an AVL system does: the itinerary whose origin terminal the vehicle left
last (the driver's console line first, when it names one), its progress along the
shape, and its live match (the one D-13 uses while the day runs, not the day's final
matching).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import msgspec
import numpy as np

from engine.assemble import service_date_of
from engine.triplog import arrived_before
from engine.values import Context
from gtfs.schedule import ServiceDay
from trips.matching import live_matches
from trips.memo import TrackMemo, measured
from trips.model import DetectedTrip


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
    # headway-based lines: the time between its departure and that of the bus ahead of it
    # (same line and direction), and the frequency window's headway
    headway_s: float | None = None
    scheduled_headway_s: int | None = None
    vehicle_ahead: str | None = None
    off_route_m: float | None  # farther than D-11's distance from the shape: how far now
    off_route_since: str | None
    catraca_silent_since: str | None  # the last catraca reading, when older than D-19's limit


def vehicle_status(state, ctx: Context, day_of: Callable[[dt.date], ServiceDay],
                   running=None) -> VehicleStatus | None:
    """`running` is `open_trip` of the vehicle's track (computed once by the caller)."""
    track = state.track
    if track is None or not track.fixes:
        return None
    tz = ctx.feed.timezone
    fixes = track.fixes
    last = fixes[-1]

    def iso(epoch: float | None) -> str | None:
        return None if epoch is None else dt.datetime.fromtimestamp(round(epoch), tz).isoformat()

    status = dict(vehicle_id=state.vehicle_id, operator_id=ctx.fleet[state.vehicle_id].operator_id,
                  ts=iso(last.t), lat=last.lat, lon=last.lon, speed_kmh=last.speed_kmh, in_service=False,
                  route_id=None, direction_id=None, trip_id=None, progress=None, departed_at=None,
                  schedule_deviation_s=None, off_route_m=None, off_route_since=None,
                  catraca_silent_since=_catraca_silent_since(state, last.t, ctx, iso))
    if running is not None:
        itinerary, exit_index, distance = running
        departed = fixes[exit_index].t
        scheduled = _live_match(state, itinerary, departed, ctx, day_of)
        off = distance > ctx.policy.d11.max_distance_m
        since = None
        if off[-1]:
            back = np.flatnonzero(~off[exit_index:])
            since = fixes[exit_index + (int(back[-1]) + 1 if len(back) else 0)].t
        progress = float(itinerary.locate(np.array([last.x]), np.array([last.y]))[0]) / itinerary.length_m
        status.update(in_service=True, route_id=itinerary.pattern.route_id,
                      direction_id=itinerary.pattern.direction_id,
                      trip_id=scheduled[0] if scheduled else None, progress=round(min(progress, 1.0), 3),
                      departed_at=iso(departed),
                      schedule_deviation_s=round(departed - scheduled[1], 1) if scheduled else None,
                      off_route_m=round(float(distance[-1]), 1) if off[-1] else None, off_route_since=iso(since))
        status.update(_headway(state))
    else:
        standing = next((log for log in reversed(state.trips) if log.watching and last.t <= log.cap), None)
        if standing is not None:
            itinerary = ctx.geofences.itineraries[f"{standing.route_id}:{standing.direction_id}:{standing.shape_id}"]
            if itinerary.destination.contains(np.array([last.x]), np.array([last.y]))[0]:
                status.update(in_service=True, route_id=standing.route_id, direction_id=standing.direction_id,
                              progress=1.0, departed_at=iso(standing.departed_at))
    return VehicleStatus(**status)


def _headway(state) -> dict:
    """The bus ahead of the running trip, as the operator stage last told it."""
    ahead = state.ahead
    if ahead is None or state.departure is None or ahead.departed_at != state.departure[0]:
        return {}
    headway = None if ahead.ahead_departed_at is None else round(ahead.departed_at - ahead.ahead_departed_at, 1)
    return dict(headway_s=headway, scheduled_headway_s=ahead.scheduled_headway_s, vehicle_ahead=ahead.ahead_vehicle_id)


def open_trip(fixes, ctx: Context, memo: TrackMemo | None = None):
    """The itinerary the vehicle is running: the latest exit from an origin terminal
    zone among the track's fixes (since the last arrival), on the console's line when
    the newest ping names one. None while it stands in a terminal or runs nothing.
    (itinerary, index of the last fix in the origin zone, distance of each fix to the shape).
    `memo`: see trips.memo."""
    measures = measured(fixes, ctx.geofences, memo)
    entered = measures.zones_entered
    declared = fixes[-1].route_id
    best = None
    for itinerary in ctx.geofences.itineraries.values():
        if declared is not None and itinerary.pattern.route_id != declared:
            continue
        if id(itinerary.origin) not in entered:
            continue  # never in its origin: no exit from it
        inside = measures.inside(itinerary.origin)
        if inside[-1]:
            continue  # still in (or back in) its origin terminal
        exits = np.flatnonzero(inside[:-1] & ~inside[1:])
        if not len(exits):
            continue
        e = int(exits[-1])
        distance = measures.distance(itinerary)
        on = int((distance[e:] <= itinerary.corridor_m).sum())
        if best is None or (e, on) > (best[1], best[3]):
            best = (itinerary, e, distance, on)
    return None if best is None else best[:3]


def _live_match(state, itinerary, departed: float, ctx: Context,
                day_of: Callable[[dt.date], ServiceDay]) -> tuple[str, float] | None:
    """The running trip's live match, as D-13's (trips.matching.live_matches): after the
    vehicle's trips of the day that arrived, the next trip of their block, else the
    nearest scheduled departure of the line and direction. (trip_id, scheduled epoch)."""
    pattern = itinerary.pattern
    running = DetectedTrip(state.vehicle_id, pattern.route_id, pattern.direction_id, pattern.shape_id,
                           departed, departed, 0.0, "", "")
    date = service_date_of(running, ctx, day_of)
    earlier = arrived_before(state.vehicle_id, state.trips, date.isoformat(), departed)
    day = day_of(date)
    match = live_matches([*earlier, running], day, ctx.feed.timezone, ctx.policy.trips)[-1]
    if match.scheduled is None:
        return None
    return match.realized.trip_id, day.departure_epoch(match.scheduled)


def _catraca_silent_since(state, now: float, ctx: Context, iso) -> str | None:
    last = max((log.last_reading for log in state.days if log.last_reading is not None), default=None)
    if last is None or now - last <= ctx.policy.d19.max_silence_s:
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
