"""The live views moved at each call (engine.liveviews), called directly over the states
a vehicle stage built from real pings, with a `LiveViews` of their own (its caches are
not the stage's: a restarted worker builds them again and must find the same).

Context: the João Neiva sample network; JN-1012 leaves terminal 9001 on line 101 at
07:00 (direction 0) and drives along its shape, 100 m every 10 s, one ping per call."""

from __future__ import annotations

import datetime as dt

import msgspec
import numpy as np
import pytest

from engine.liveviews import LiveViews
from engine.messages import VehicleAhead
from engine.servicedays import ServiceDays
from engine.values import Message
from engine.vehicle import PartitionState, VehicleStage
from geofences.zones import Geofences
from gtfs.projection import Projector
from telemetry import decode, message_id
from trips.memo import TakeGeometry
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


def test_a_view_read_from_the_call_s_shared_geometry_moves_as_it_does_measured_alone(context, views, monkeypatch):
    # the stage measures a call's arrived pings with the fixes it releases (one query of each
    # kind, trips.memo.TakeGeometry): the view takes its answers from there, and moves to the
    # same place, on the same itineraries, to the bit, as when it measured its own ping
    alone, shared = driven(context, 30)._load("JN-1012"), driven(context, 30)._load("JN-1012")
    message = ping(context, 30)
    fix = fix_of(context, message)
    released = [fix_of(context, ping(context, k)) for k in (3, 14, 29)]  # in and out of the terminal
    take = TakeGeometry(context.geofences, [fix, *released])
    queried = []
    real = Geofences.near_shapes

    def counted(self, xs, ys):
        queried.append(len(xs))
        return real(self, xs, ys)

    monkeypatch.setattr(Geofences, "near_shapes", counted)
    by_take = views.statuses([(shared, fix)], {}, [], take)
    monkeypatch.undo()
    assert queried == [4]  # the take's one query, for all its fixes
    assert by_take == views.statuses([(alone, fix)], {}, []) and by_take
    assert shared.live == alone.live


def test_a_fault_in_the_call_s_shared_geometry_costs_the_view_nothing(context, views, monkeypatch, caplog):
    # a position among the release's fixes that makes the take's query raise: the view measures
    # its own ping, as it did before the two shared a query, and still gives its status
    alone, shared = driven(context, 30)._load("JN-1012"), driven(context, 30)._load("JN-1012")
    fix = fix_of(context, ping(context, 30))
    expected = views.statuses([(alone, fix)], {}, [])

    def failing(self, xs, ys):
        raise FloatingPointError("simulated fault")

    monkeypatch.setattr(Geofences, "near_shapes", failing)
    take = TakeGeometry(context.geofences, [fix, fix_of(context, ping(context, 3))])
    assert views.statuses([(shared, fix)], {}, [], take) == expected and expected
    assert shared.live == alone.live
    assert "shared geometry failed" in caplog.text


@pytest.mark.parametrize("query", ["near_any_itinerary", "in_terminal_zones", "near_shapes"])
def test_each_shared_query_that_fails_leaves_the_view_to_measure_its_own_ping(context, views, monkeypatch, caplog,
                                                                              query):
    # the network screen, the terminal zones, the itineraries: whichever query of the take a
    # released fix makes fail, the view measures its own ping with its own queries and gives
    # the status it gives alone
    alone, shared = driven(context, 30)._load("JN-1012"), driven(context, 30)._load("JN-1012")
    fix, released = fix_of(context, ping(context, 30)), fix_of(context, ping(context, 3))
    expected = views.statuses([(alone, fix)], {}, [])
    real = getattr(Geofences, query)

    def failing(self, xs, ys, *args):
        if len(xs) > 1:  # the take's query, over the released fix too; the view's own is over its ping
            raise FloatingPointError("simulated fault")
        return real(self, xs, ys, *args)

    monkeypatch.setattr(Geofences, query, failing)
    take = TakeGeometry(context.geofences, [fix, released])
    assert views.statuses([(shared, fix)], {}, [], take) == expected and expected
    assert shared.live == alone.live
    assert "shared geometry failed" in caplog.text


def test_a_store_that_keeps_a_copy_of_what_it_is_given_keeps_what_the_live_view_moved(context):
    # the stage saves a call's admitted states before it plans the release (the plan loads
    # vehicles), and again after the live view moved them: a store that packs what it is
    # given, not a reference to it, keeps every view as a store of references does
    from engine.stored import pack, unpack
    from engine.vehiclestate import VehicleState
    decoder = msgspec.msgpack.Decoder(VehicleState)
    packed: dict[str, bytes] = {}
    copying = VehicleStage(context, PartitionState(0), lambda v: unpack(packed[v], decoder) if v in packed else None,
                           lambda s: packed.__setitem__(s.vehicle_id, pack(s)), frozenset({"tachograph"}))
    reference = new_stage(context)
    for k in range(40):
        message = ping(context, k)
        assert copying.ingest([message]).statuses == reference.ingest([message]).statuses
    assert unpack(packed["JN-1012"], decoder).live == reference._load("JN-1012").live


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
