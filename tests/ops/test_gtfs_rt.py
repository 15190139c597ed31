"""The public GTFS-Realtime feed (#14 part 5), parsed back with the official bindings:
current positions only, and every trip and route id one the static feed has."""

from __future__ import annotations

import datetime as dt

from google.transit import gtfs_realtime_pb2 as rt

from ops.gtfs_rt import LivePosition, trip_updates, vehicle_positions


def _positions(demo_day, now: dt.datetime) -> list[LivePosition]:
    """The demo day's vehicles as if each had reported a minute ago, every other one on a
    trip the static feed has (with a departure 4 min late), one on a trip it does not."""
    feed = demo_day.context.feed
    trip = next(t for t in feed.trips.values())
    positions = []
    for i, status in enumerate(demo_day.result.statuses):
        on_trip = i % 2 == 1
        positions.append(LivePosition(
            status.vehicle_id, demo_day.context.fleet[status.vehicle_id].plate, now - dt.timedelta(minutes=1),
            status.lat, status.lon, 36.0, trip.route_id if on_trip else None, trip.direction_id if on_trip else None,
            trip.trip_id if on_trip else None, now - dt.timedelta(minutes=20) if on_trip else None,
            240.0 if on_trip else None))
    first = positions[0]  # matched to a trip id the static feed does not have
    positions[0] = LivePosition(first.vehicle_id, None, first.ts, first.lat, first.lon, 0.0, trip.route_id, 0,
                                "NAO-EXISTE", now - dt.timedelta(minutes=5), 60.0)
    stale = LivePosition("JN-VELHO", None, now - dt.timedelta(minutes=11), -19.76, -40.39, 0.0, None, None, None,
                         None, None)
    return [*positions, stale]


def test_vehicle_positions_are_current_and_consistent_with_the_static_feed(demo_day):
    now = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
    message = rt.FeedMessage()
    message.ParseFromString(vehicle_positions(_positions(demo_day, now), demo_day.context.feed, now))
    feed = demo_day.context.feed
    assert message.header.gtfs_realtime_version == "2.0" and message.header.timestamp == int(now.timestamp())
    ids = {e.vehicle.vehicle.id for e in message.entity}
    assert ids == {s.vehicle_id for s in demo_day.result.statuses}  # the 11-minute-old one left out
    with_trip = [e for e in message.entity if e.vehicle.HasField("trip")]
    assert with_trip and all(e.vehicle.trip.trip_id in feed.trips and e.vehicle.trip.route_id in feed.routes
                             for e in with_trip)
    assert all(e.vehicle.vehicle.id != demo_day.result.statuses[0].vehicle_id for e in with_trip)  # unknown trip
    assert {round(e.vehicle.position.speed, 3) for e in with_trip} == {10.0}  # 36 km/h in m/s


def test_trip_updates_carry_the_departure_delay_of_known_trips_only(demo_day):
    now = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
    message = rt.FeedMessage()
    message.ParseFromString(trip_updates(_positions(demo_day, now), demo_day.context.feed, now))
    feed = demo_day.context.feed
    assert message.entity and {e.trip_update.delay for e in message.entity} == {240}
    for entity in message.entity:
        update = entity.trip_update
        assert update.trip.trip_id in feed.trips and update.trip.route_id in feed.routes
        # scheduled start = departure 20 min ago minus 4 min late, in the feed's time zone
        assert update.trip.start_date == "20261201"
        if update.trip.trip_id in {f.trip_id for f in feed.frequencies}:
            assert update.trip.start_time == (now - dt.timedelta(minutes=24)).astimezone(feed.timezone).strftime(
                "%H:%M:%S")
