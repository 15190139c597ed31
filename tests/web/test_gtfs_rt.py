"""The web app serves the GTFS-Realtime feed publicly, from the live tables (#14 part 5)."""

from __future__ import annotations

import datetime as dt

import msgspec
from google.transit import gtfs_realtime_pb2 as rt

from ops.db import migrate
from ops.rows import row_of
from ops.sink import write_batch


def test_anyone_fetches_current_positions_consistent_with_the_static_feed(make_app, store, clock, browser,
                                                                          demo_day):
    feed = demo_day.context.feed
    migrate(store.kw["bind"])
    trip = next(iter(feed.trips.values()))
    statuses = [msgspec.structs.replace(s, ts=(clock.now - dt.timedelta(minutes=1)).isoformat(), in_service=True,
                                        route_id=trip.route_id, direction_id=trip.direction_id, trip_id=trip.trip_id,
                                        departed_at=(clock.now - dt.timedelta(minutes=10)).isoformat(),
                                        schedule_deviation_s=-30.0)
                for s in demo_day.result.statuses]
    write_batch(store.kw["bind"], {"vehicle-status": [row_of("vehicle-status", msgspec.json.encode(s), "x", {})
                                                      for s in statuses]})
    anonymous = browser(application=make_app(feed=feed))
    response = anonymous.get("/gtfs-rt/vehicle-positions.pb")
    assert response.status_code == 200 and response.headers["content-type"] == "application/x-protobuf"
    positions = rt.FeedMessage()
    positions.ParseFromString(response.content)
    assert {e.vehicle.vehicle.id for e in positions.entity} == {s.vehicle_id for s in statuses}
    assert all(e.vehicle.trip.trip_id in feed.trips and e.vehicle.trip.route_id in feed.routes
               for e in positions.entity)
    assert {e.vehicle.vehicle.label for e in positions.entity} == \
        {demo_day.context.fleet[s.vehicle_id].plate for s in statuses}
    updates = rt.FeedMessage()
    updates.ParseFromString(anonymous.get("/gtfs-rt/trip-updates.pb").content)
    assert len(updates.entity) == len(statuses) and {e.trip_update.delay for e in updates.entity} == {-30}
    clock.advance(minutes=15)  # nobody reported since: nothing is current
    positions.ParseFromString(anonymous.get("/gtfs-rt/vehicle-positions.pb").content)
    assert len(positions.entity) == 0
