"""Public (no login): GTFS-Realtime for passengers' and third parties' apps, served only
when the app has the static feed."""

from __future__ import annotations

import datetime as dt

from fastapi import APIRouter
from fastapi.responses import Response
from sqlalchemy import select

from ops import gtfs_rt
from ops.store import LiveVehicle
from web.dependencies import State
from web.format import as_aware
from web.state import AppState

router = APIRouter()


"""Public (no login): GTFS-Realtime for passengers' and third parties' apps."""
PROTOBUF = "application/x-protobuf"


def positions(web: AppState) -> list[gtfs_rt.LivePosition]:
    config = web.config
    since = web.now() - dt.timedelta(seconds=gtfs_rt.MAX_AGE_S)
    with config.sessions() as session:
        rows = session.scalars(select(LiveVehicle).where(LiveVehicle.ts >= since)).all()
    return [gtfs_rt.LivePosition(
        r.vehicle_id, getattr(config.fleet.get(r.vehicle_id), "plate", None), as_aware(r.ts), r.lat, r.lon,
        r.speed_kmh, r.route_id, r.direction_id, r.trip_id, as_aware(r.departed_at) if r.departed_at else None,
        r.schedule_deviation_s) for r in rows]


@router.get("/gtfs-rt/vehicle-positions.pb")
def vehicle_positions(web: State):
    data = gtfs_rt.vehicle_positions(positions(web), web.config.feed, web.now())
    return Response(data, media_type=PROTOBUF, headers={"Cache-Control": "max-age=15"})


@router.get("/gtfs-rt/trip-updates.pb")
def trip_updates(web: State):
    data = gtfs_rt.trip_updates(positions(web), web.config.feed, web.now())
    return Response(data, media_type=PROTOBUF, headers={"Cache-Control": "max-age=15"})
