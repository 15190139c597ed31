"""The public GTFS-Realtime feed (#14 part 5, #28 item 1), parsed back with the official
bindings and validated with the PyPI gtfs-rt-validator (MobilityData's rules E/W, the
specification's S rules, the Best Practices' P rules): 0 errors.

The buses are tests/support/live_buses.py's: one on a timetabled trip of line 101, one on
frequency-based line 201 (exact_times=0) with no trip_id in its row, two arrived, one
out of service, one on a trip the static feed lacks, one that stopped reporting."""

from __future__ import annotations

import dataclasses
import datetime as dt

import gtfs_rt_validation
import live_buses
import pytest
from google.transit import gtfs_realtime_pb2 as rt

from gtfs import load_feed
from gtfs.schedule import service_day_start
from ops.gtfs_rt import LivePosition, Notice, service_alerts, trip_updates, vehicle_positions
from samples import joao_neiva

TRIP = rt.TripDescriptor
STOP = rt.TripUpdate.StopTimeUpdate


@pytest.fixture(scope="module")
def feed():
    return load_feed(joao_neiva()[0])


def positions(feed) -> list[LivePosition]:
    return [LivePosition(r["vehicle_id"], f"PLACA-{r['vehicle_id']}", r["ts"], r["lat"], r["lon"], r["speed_kmh"],
                         r["route_id"], r["direction_id"], r["trip_id"], r["departed_at"], r["schedule_deviation_s"],
                         in_service=r["in_service"], progress=r["progress"])
            for r in live_buses.statuses(feed).values()]


def parsed(data: bytes) -> rt.FeedMessage:
    message = rt.FeedMessage()
    message.ParseFromString(data)
    return message


def test_a_timetabled_bus_has_its_remaining_stops_with_the_current_delay_carried_forward(feed):
    now = live_buses.now(feed)
    updates = {e.trip_update.vehicle.id: e for e in parsed(trip_updates(positions(feed), feed, now)).entity}
    update = updates["JN-1011"].trip_update
    trip = feed.trips["101-DU-0-0800"]
    assert (update.trip.trip_id, update.trip.route_id, update.trip.direction_id) == (trip.trip_id, "101", 0)
    assert (update.trip.start_date, update.trip.start_time) == ("20261201", "08:00:00")
    assert update.trip.schedule_relationship == TRIP.SCHEDULED
    # served: the first six stops (it is between the 6th and 7th); the rest, in order
    assert [u.stop_sequence for u in update.stop_time_update] == [s.stop_sequence for s in trip.stops[6:]]
    assert [u.stop_id for u in update.stop_time_update] == [s.stop_id for s in trip.stops[6:]]
    assert {u.schedule_relationship for u in update.stop_time_update} == {STOP.SCHEDULED}
    # the deviation where it is: 08:10:10 against the schedule midway between the 6th stop
    # (arrival 08:06:40) and the 7th (08:08:10), 08:07:25: 165 s late, on every stop ahead
    assert update.delay == 165
    assert {u.arrival.delay for u in update.stop_time_update} == {165}
    assert {u.departure.delay for u in update.stop_time_update} == {165}
    start = service_day_start(live_buses.DATE, feed.timezone).timestamp()
    for u, s in zip(update.stop_time_update, trip.stops[6:]):
        assert u.arrival.time == start + s.arrival_s + 165 and u.departure.time == start + s.departure_s + 165
    assert update.timestamp == int((now - dt.timedelta(seconds=20)).timestamp())  # the fix's own time


def test_a_stop_not_yet_served_is_never_predicted_in_the_past(feed):
    # the fix is 4 min old (now 08:14:30): the 7th stop's 08:10:55 (scheduled 08:08:10, 165 s late) has
    # passed, but the bus has not been seen there; it is due just after now (P008)
    now = live_buses.now(feed) + dt.timedelta(minutes=4)
    updates = {e.trip_update.vehicle.id: e for e in parsed(trip_updates(positions(feed), feed, now)).entity}
    update = updates["JN-1011"].trip_update
    first = update.stop_time_update[0]
    assert first.arrival.time == int(now.timestamp()) + 1 and first.arrival.delay > 165
    assert all(u.arrival.time >= now.timestamp() for u in update.stop_time_update)
    assert update.stop_time_update[-1].arrival.delay == 165  # far enough ahead, the deviation stands
    times = [t for u in update.stop_time_update for t in (u.arrival.time, u.departure.time)]
    assert times == sorted(times)


def test_a_frequency_based_bus_without_trip_id_runs_its_window_template_unscheduled(feed):
    now = live_buses.now(feed)
    updates = {e.trip_update.vehicle.id: e for e in parsed(trip_updates(positions(feed), feed, now)).entity}
    update = updates["JN-2011"].trip_update
    template = feed.trips["201-DU-0-FREQ"]
    # exact_times=0: trip_id, start_date and start_time (its own departure, E006), UNSCHEDULED (E013)
    assert (update.trip.trip_id, update.trip.route_id, update.trip.direction_id) == (template.trip_id, "201", 0)
    assert (update.trip.start_date, update.trip.start_time) == ("20261201", "08:01:00")
    assert update.trip.schedule_relationship == TRIP.UNSCHEDULED
    remaining = [s for s in template.stops if s.shape_dist_m > 0.4 * feed.shapes[template.shape_id].length_m]
    assert [u.stop_sequence for u in update.stop_time_update] == [s.stop_sequence for s in remaining]
    assert {u.schedule_relationship for u in update.stop_time_update} == {STOP.UNSCHEDULED}  # S010
    assert not update.HasField("delay")  # no schedule to be late against (P013)
    assert all(not u.arrival.HasField("delay") and u.arrival.time > now.timestamp() - 10
               for u in update.stop_time_update)
    times = [t for u in update.stop_time_update for t in (u.arrival.time, u.departure.time)]
    assert times == sorted(times)


def test_vehicle_positions_show_every_current_bus_and_a_trip_only_for_a_running_one(feed):
    now = live_buses.now(feed)
    vehicles = {e.id: e.vehicle for e in parsed(vehicle_positions(positions(feed), feed, now)).entity}
    # every bus that reported in the last MAX_AGE_S (JN-2014, 11 min ago, left out); the entity
    # id is the vehicle's, stable from one fetch to the next
    assert set(vehicles) == {"JN-1011", "JN-2011", "JN-1012", "JN-1013", "JN-2012", "JN-2013"}
    assert all(v.vehicle.id == i for i, v in vehicles.items())
    with_trip = {i for i, v in vehicles.items() if v.HasField("trip")}
    # arrived (layover, even with the finished trip still in its row), out of service, or on
    # a trip the static feed lacks: shown without a trip
    assert with_trip == {"JN-1011", "JN-2011"}
    rows = live_buses.statuses(feed)
    assert all(v.timestamp == int(rows[i]["ts"].timestamp()) for i, v in vehicles.items())
    assert round(vehicles["JN-1011"].position.speed, 3) == round(28 / 3.6, 3)
    # the same trip instance as in TripUpdates (W003)
    updates = {e.trip_update.vehicle.id: e.trip_update.trip for e in parsed(trip_updates(positions(feed), feed,
                                                                                           now)).entity}
    assert set(updates) == with_trip
    assert all(vehicles[i].trip == updates[i] for i in with_trip)


def test_a_bus_in_layover_has_no_trip_whatever_its_progress(feed):
    # the engine says when a bus stands in the terminal after its trip (layover_since): its
    # last fix may read short of the shape's end (the terminal zone is 100 m around the stop)
    now = live_buses.now(feed)
    running = next(p for p in positions(feed) if p.vehicle_id == "JN-1011")
    short_of_the_end = dataclasses.replace(running, progress=0.97)
    standing = dataclasses.replace(short_of_the_end, layover=True)
    for shown, has_trip in ((short_of_the_end, True), (standing, False)):
        [vehicle] = parsed(vehicle_positions([shown], feed, now)).entity
        assert vehicle.vehicle.HasField("trip") is has_trip
        assert len(parsed(trip_updates([shown], feed, now)).entity) == int(has_trip)


def test_the_feeds_pass_the_validator(feed, tmp_path):
    """0 errors, and one warning left, explained: W003 for each bus between trips. Upstream's
    W003 wants every vehicle of VehiclePositions in TripUpdates too, and a bus in layover or
    out of service has no trip to update (a TripUpdate without a trip is not one), while
    the issue wants every reporting bus on the map. The W003 that matters to a rider, a
    trip in VehiclePositions without its TripUpdate (line 201 before), does not fire."""
    now = live_buses.now(feed)
    found = gtfs_rt_validation.findings(joao_neiva()[0], tmp_path, now,
                                        tu=trip_updates(positions(feed), feed, now),
                                        vp=vehicle_positions(positions(feed), feed, now),
                                        sa=service_alerts(notices(now), feed, now))
    assert gtfs_rt_validation.errors(found) == {}
    assert set(found) == {"W003"}
    between_trips = {"JN-1012", "JN-1013", "JN-2012", "JN-2013"}
    assert sorted(found["W003"]) == sorted(f"vehicle_id {v} is in VehiclePositions but not in TripUpdates feed"
                                           for v in between_trips)


def notices(now: dt.datetime) -> list[Notice]:
    hour = dt.timedelta(hours=1)
    return [Notice("oc-obra", "road_closure", now - hour, now + 2 * hour, "101", "Obra na Avenida Beira Rio."),
            Notice("oc-desvio", "authorized_detour", now + hour, now + 3 * hour, None, None),
            Notice("oc-pane", "breakdown", now - hour, now + hour, "201", "Pane do JN-2012."),
            Notice("oc-passada", "road_closure", now - 3 * hour, now - hour, "201", None)]


def test_service_alerts_tell_riders_the_road_closures_and_detours_not_yet_over(feed, tmp_path):
    now = live_buses.now(feed)
    message = parsed(service_alerts(notices(now), feed, now))
    alerts = {e.id: e.alert for e in message.entity}
    # a breakdown is the operator's business, and a closure already over tells nothing
    assert list(alerts) == ["oc-obra", "oc-desvio"]
    closure, detour = alerts["oc-obra"], alerts["oc-desvio"]
    assert [e.route_id for e in closure.informed_entity] == ["101"]
    assert sorted(e.agency_id for e in detour.informed_entity) == ["TRD", "VNV"]  # no line named: all of them
    assert (closure.communication_period[0].start, closure.communication_period[0].end) == \
        (int((now - dt.timedelta(hours=1)).timestamp()), int((now + dt.timedelta(hours=2)).timestamp()))
    assert closure.impact_period == closure.communication_period
    assert {closure.effect, detour.effect} == {rt.Alert.DETOUR}
    header = closure.header_text.translation[0]
    assert header.language == "pt" and header.text == "Via interditada: linha 101 (Centro – Santo Antônio)"
    assert closure.description_text.translation[0].text.startswith(
        "Obra na Avenida Beira Rio. De 01/12/2026 07:10 a 01/12/2026 10:10.")
    assert detour.header_text.translation[0].text == "Desvio autorizado: todas as linhas"
    found = gtfs_rt_validation.findings(joao_neiva()[0], tmp_path, now, sa=service_alerts(notices(now), feed, now))
    assert found == {}
