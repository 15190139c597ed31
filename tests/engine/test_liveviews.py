"""The live views moved at each call (engine.liveviews), called directly over the states
a vehicle stage built from real pings, with a `LiveViews` of their own (its caches are
not the stage's: a restarted worker builds them again and must find the same).

Context: the João Neiva sample network; JN-1012 leaves terminal 9001 on line 101 at
07:00 (direction 0) and drives along its shape, 100 m every 10 s, one ping per call."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from engine.liveviews import LiveViews
from engine.messages import VehicleAhead
from engine.servicedays import ServiceDays
from engine.values import Message
from engine.vehicle import PartitionState, VehicleStage
from gtfs.projection import Projector
from telemetry import decode, message_id
from trips.model import Fix

TZ = dt.timezone(dt.timedelta(hours=-3))
START = dt.datetime(2026, 12, 1, 6, 58, tzinfo=TZ)  # line 101's 07:00 trip from 9001 (direction 0)
STEP_S, STEP_M = 10, 100  # 36 km/h


@pytest.fixture
def views(context):
    days = ServiceDays(context.feed, context.policy.trips.service_day_cutover_s)
    return LiveViews(context, days)


def new_stage(context) -> VehicleStage:
    states = {}
    return VehicleStage(context, PartitionState(0), states.get, lambda s: states.__setitem__(s.vehicle_id, s),
                        frozenset({"tachograph"}))


def ping(context, k: int) -> Message:
    """JN-1012's k-th ping: two minutes standing in the terminal, then along the shape."""
    at = START + dt.timedelta(seconds=STEP_S * k)
    line = context.geofences.itineraries["101:0:101-0"].line
    point = line.interpolate(max(0, k - 12) * STEP_M)
    lon, lat = Projector(context.feed.epsg).to_lonlat([point.x], [point.y])
    raw = (f'{{"vehicle_id":"JN-1012","ts":"{at.isoformat()}","lat":{float(lat[0])!r},"lon":{float(lon[0])!r},'
           f'"speed_kmh":36.0}}')
    location = f"t/JN-1012/{at.timestamp():.0f}"
    return Message(decode("tachograph", raw.encode(), location), location, raw)


def fix_of(context, message: Message) -> Fix:
    """The fix the stage makes of an admitted ping (its position in the feed's metric CRS)."""
    body = message.body
    x, y = Projector(context.feed.epsg).to_xy(np.array([body.lon]), np.array([body.lat]))
    return Fix(body.epoch, float(x[0]), float(y[0]), body.speed_kmh, body.route_id, message_id(body),
               body.lat, body.lon)


def driven(context, pings: int) -> VehicleStage:
    stage = new_stage(context)
    for k in range(pings):
        stage.ingest([ping(context, k)])
    return stage


def test_a_ping_moves_the_view_and_gives_one_status_stamped_with_its_time_as_the_stage_does(context, views):
    by_stage, by_views = driven(context, 30), driven(context, 30)
    message = ping(context, 30)
    told = by_stage.ingest([message]).statuses
    state = by_views._load("JN-1012")
    departed = []
    [status] = views.statuses([(state, fix_of(context, message))], {}, departed)
    assert status.ts == (START + dt.timedelta(seconds=STEP_S * 30)).isoformat()
    assert status.in_service and status.trip_id == "101-DU-0-0700"
    assert state.live.newest == message.body.epoch
    # the departure was told by an earlier call (the 07:00:10 exit): not again
    assert departed == []
    assert told == [status] and by_stage._load("JN-1012").live == state.live


def test_a_ping_older_than_the_views_newest_moves_nothing_and_gives_no_status(context, views):
    state = driven(context, 30)._load("JN-1012")
    before = state.live
    older = ping(context, 25)  # 07:02:10, the view shows 07:02:50
    departed = []
    assert views.statuses([(state, fix_of(context, older))], {}, departed) == []
    assert state.live == before and departed == []


def test_the_departure_a_view_sees_is_told_once(context, views):
    state = driven(context, 14)._load("JN-1012")  # up to 07:00:10, the last ping in 9001's zone
    departed = []
    [status] = views.statuses([(state, fix_of(context, ping(context, 14)))], {}, departed)  # out of it
    [told] = departed  # the exit at 07:00:10, seen at once
    assert told.operator_id == context.fleet["JN-1012"].operator_id
    assert (told.trip.route_id, told.trip.direction_id) == ("101", 0)
    assert told.trip.departed_at == (START + dt.timedelta(seconds=STEP_S * 13)).timestamp()
    assert status.departed_at == (START + dt.timedelta(seconds=STEP_S * 13)).isoformat()
    assert views.statuses([(state, fix_of(context, ping(context, 15)))], {}, departed) != []
    assert departed == [told]


def test_the_bus_ahead_of_an_older_departure_is_not_taken(context, views):
    state = driven(context, 30)._load("JN-1012")
    leg = next(leg for leg in state.live.legs if leg.key == "101:0:101-0")
    ahead = VehicleAhead("JN-1012", leg.departed, "JN-1011", leg.departed - 1200, 1800)
    taken = views.take_ahead(state, ahead)
    assert taken is not None and taken.shown.headway_s is None and state.ahead == ahead
    [status] = views.status_with_ahead(state, ahead, taken)
    assert (status.headway_s, status.vehicle_ahead) == (1200.0, "JN-1011")
    assert views.take_ahead(state, VehicleAhead("JN-1012", leg.departed - 60, None, None, 1800)) is None
    assert state.ahead == ahead
