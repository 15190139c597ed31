"""Public (no login): GTFS-Realtime for passengers' and third parties' apps, served only
when the app has the static feed.

A rider's web app on another origin reads these feeds: they are cacheable for 15 s and
readable from any origin (`web.security.PUBLIC_FEEDS` keeps those headers), and they
answer the browser's CORS preflight (OPTIONS)."""

from __future__ import annotations

import datetime as dt

from fastapi import APIRouter
from fastapi.responses import Response
from sqlalchemy import select

from dockets.store import Occurrence
from ops import gtfs_rt
from ops.store import LiveVehicle
from web.dependencies import State
from web.format import as_aware
from web.state import AppState

router = APIRouter()

PROTOBUF = "application/x-protobuf"
VEHICLE_POSITIONS = "/gtfs-rt/vehicle-positions.pb"
TRIP_UPDATES = "/gtfs-rt/trip-updates.pb"
ALERTS = "/gtfs-rt/alerts.pb"
CACHE = {"Cache-Control": "max-age=15"}


def positions(web: AppState) -> list[gtfs_rt.LivePosition]:
    config = web.config
    since = web.now() - dt.timedelta(seconds=config.gtfs_rt_max_age_s)
    with config.sessions() as session:
        rows = session.scalars(select(LiveVehicle).where(LiveVehicle.ts >= since)).all()
    return [gtfs_rt.LivePosition(
        r.vehicle_id, getattr(config.fleet.get(r.vehicle_id), "plate", None), as_aware(r.ts), r.lat, r.lon,
        r.speed_kmh, r.route_id, r.direction_id, r.trip_id, as_aware(r.departed_at) if r.departed_at else None,
        r.schedule_deviation_s, in_service=bool(r.in_service), progress=r.progress,
        layover=r.layover_since is not None) for r in rows]


@router.get(VEHICLE_POSITIONS)
def vehicle_positions(web: State):
    data = gtfs_rt.vehicle_positions(positions(web), web.config.feed, web.now(), web.config.gtfs_rt_max_age_s)
    return Response(data, media_type=PROTOBUF, headers=CACHE)


@router.get(TRIP_UPDATES)
def trip_updates(web: State):
    data = gtfs_rt.trip_updates(positions(web), web.config.feed, web.now(), web.config.gtfs_rt_max_age_s)
    return Response(data, media_type=PROTOBUF, headers=CACHE)


@router.get(ALERTS)
def alerts(web: State):
    """The road closures and authorized detours the fiscais registered, not yet over."""
    now = web.now()
    with web.config.sessions() as session:
        rows = session.scalars(select(Occurrence).where(Occurrence.kind.in_(tuple(gtfs_rt.ALERT_KINDS)),
                                                        Occurrence.end > now)).all()
        notices = [gtfs_rt.Notice(r.id, r.kind, as_aware(r.start), as_aware(r.end), r.route_id, r.note)
                   for r in rows]
    data = gtfs_rt.service_alerts(notices, web.config.feed, now)
    return Response(data, media_type=PROTOBUF, headers=CACHE)


@router.options(ALERTS)
@router.options(VEHICLE_POSITIONS)
@router.options(TRIP_UPDATES)
def preflight():
    """The CORS preflight of a cross-origin GET (Access-Control-Allow-Origin is added with
    the other headers of the public feeds, in web.security)."""
    return Response(status_code=204, headers={"Access-Control-Allow-Methods": "GET, OPTIONS",
                                              "Access-Control-Allow-Headers": "*",
                                              "Access-Control-Max-Age": "86400"})
