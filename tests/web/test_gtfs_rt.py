"""The web app serves the GTFS-Realtime feed publicly, from the live tables (#14 part 5,
#28 item 1): decoded with gtfs-realtime-bindings and validated with the PyPI
gtfs-rt-validator as a consumer would fetch it."""

from __future__ import annotations

import datetime as dt

import gtfs_rt_validation
import live_buses
import msgspec
from google.transit import gtfs_realtime_pb2 as rt

from engine.status import VehicleStatus
from ops.db import migrate
from ops.rows import row_of
from ops.sink import write_batch
from samples import joao_neiva


def publish(store, feed) -> dict[str, dict]:
    """live_buses' statuses into live_vehicle_status, as the ops sink writes them."""
    migrate(store.kw["bind"])
    fleet = {"VNV": ("JN-1011", "JN-1012", "JN-1013"), "TRD": ("JN-2011", "JN-2012", "JN-2013", "JN-2014")}
    operator_of = {v: o for o, vehicles in fleet.items() for v in vehicles}
    rows = live_buses.statuses(feed)

    def iso(value):
        return None if value is None else value.astimezone(feed.timezone).isoformat()

    statuses = [VehicleStatus(**{**r, "ts": iso(r["ts"]), "departed_at": iso(r["departed_at"])},
                              operator_id=operator_of[r["vehicle_id"]], off_route_m=None, off_route_since=None,
                              catraca_silent_since=None) for r in rows.values()]
    write_batch(store.kw["bind"], {"vehicle-status": [row_of("vehicle-status", msgspec.json.encode(s), "x", {})
                                                      for s in statuses]})
    return rows


def parsed(response) -> rt.FeedMessage:
    assert response.status_code == 200 and response.headers["content-type"] == "application/x-protobuf"
    message = rt.FeedMessage()
    message.ParseFromString(response.content)
    return message


def test_anyone_fetches_a_feed_that_the_validator_passes(make_app, store, clock, browser, demo_day, tmp_path):
    feed = demo_day.context.feed
    rows = publish(store, feed)
    clock.now = live_buses.now(feed)
    anonymous = browser(application=make_app(feed=feed))
    positions = parsed(anonymous.get("/gtfs-rt/vehicle-positions.pb"))
    updates = parsed(anonymous.get("/gtfs-rt/trip-updates.pb"))
    # every bus that reported in the last 10 min (JN-2014 did 11 min ago), with its plate
    current = {v for v, r in rows.items() if clock.now - r["ts"] <= dt.timedelta(minutes=10)}
    assert {e.vehicle.vehicle.id for e in positions.entity} == current
    assert {e.vehicle.vehicle.label for e in positions.entity} == {demo_day.context.fleet[v].plate for v in current}
    on_trip = {e.vehicle.vehicle.id: e.vehicle.trip for e in positions.entity if e.vehicle.HasField("trip")}
    assert set(on_trip) == {"JN-1011", "JN-2011"}  # timetabled line 101 and frequency-based line 201
    assert {e.trip_update.vehicle.id: e.trip_update.trip for e in updates.entity} == on_trip
    assert all(len(e.trip_update.stop_time_update) > 0 for e in updates.entity)
    found = gtfs_rt_validation.findings(joao_neiva()[0], tmp_path, clock.now, tu=updates.SerializeToString(),
                                        vp=positions.SerializeToString())
    # 0 errors; the one warning left is W003 for the buses between trips (see
    # tests/ops/test_gtfs_rt.py: they are on the map and have no trip to update)
    assert gtfs_rt_validation.errors(found) == {}
    assert set(found) <= {"W003"} and all("is in VehiclePositions but not in TripUpdates" in t
                                          and t.split()[1] not in on_trip for t in found.get("W003", []))
    clock.advance(minutes=15)  # nobody reported since: nothing is current
    assert len(parsed(anonymous.get("/gtfs-rt/vehicle-positions.pb")).entity) == 0
    assert len(parsed(anonymous.get("/gtfs-rt/trip-updates.pb")).entity) == 0


def test_the_age_of_a_published_position_is_a_setting(make_app, store, clock, browser, demo_day):
    feed = demo_day.context.feed
    rows = publish(store, feed)
    clock.now = live_buses.now(feed)
    anonymous = browser(application=make_app(feed=feed, gtfs_rt_max_age_s=15))  # best practice: <= 90 s
    positions = parsed(anonymous.get("/gtfs-rt/vehicle-positions.pb"))
    assert {e.vehicle.vehicle.id for e in positions.entity} == \
        {v for v, r in rows.items() if clock.now - r["ts"] <= dt.timedelta(seconds=15)}


def test_the_public_feeds_are_cacheable_and_readable_from_any_origin(make_app, store, clock, browser, demo_day):
    # before: web.security replaced the router's max-age=15 with no-store, sent
    # Cross-Origin-Resource-Policy: same-origin and no Access-Control-Allow-Origin, and
    # OPTIONS answered 405: a rider's web app on another origin could not read the feed
    feed = demo_day.context.feed
    publish(store, feed)
    clock.now = live_buses.now(feed)
    anonymous = browser(application=make_app(feed=feed))
    cross_origin = {"Origin": "https://app.example.org"}
    for url in ("/gtfs-rt/vehicle-positions.pb", "/gtfs-rt/trip-updates.pb", "/gtfs-rt/alerts.pb"):
        headers = anonymous.get(url, headers=cross_origin).headers
        assert headers["cache-control"] == "max-age=15"
        assert headers["access-control-allow-origin"] == "*"
        assert headers["cross-origin-resource-policy"] == "cross-origin"
        assert headers["x-content-type-options"] == "nosniff" and headers["x-frame-options"] == "DENY"
        assert "default-src 'none'" in headers["content-security-policy"]
        preflight = anonymous.client.options(url, headers={**cross_origin, "Access-Control-Request-Method": "GET"})
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == "*"
        assert "GET" in preflight.headers["access-control-allow-methods"]
    # every other route keeps its headers: never cached, never shared with another origin
    for response in (anonymous.get("/entrar", headers=cross_origin), anonymous.get("/autos", headers=cross_origin)):
        assert response.headers["cache-control"] == "no-store"
        assert response.headers["cross-origin-resource-policy"] == "same-origin"
        assert "access-control-allow-origin" not in response.headers
    assert anonymous.client.options("/entrar", headers=cross_origin).status_code == 405


def test_the_registered_road_closures_and_detours_are_alerts(make_app, store, clock, browser, demo_day, kit,
                                                              tmp_path):
    from dockets.occurrences import register_occurrence

    feed = demo_day.context.feed
    clock.now = live_buses.now(feed)
    hour = dt.timedelta(hours=1)
    with store.begin() as session:
        for occurrence_id, kind, start, end, route in (
                ("oc-obra", "road_closure", clock.now - hour, clock.now + hour, "101"),
                ("oc-desvio", "authorized_detour", clock.now, clock.now + 2 * hour, "201"),
                ("oc-pane", "breakdown", clock.now - hour, clock.now + hour, None),
                ("oc-ontem", "road_closure", clock.now - 26 * hour, clock.now - 24 * hour, "201")):
            register_occurrence(session, kit.actor("fiscal"), occurrence_id=occurrence_id, kind=kind, start=start,
                                end=end, route_id=route, note="Obra da prefeitura.", now=clock.now)
    anonymous = browser(application=make_app(feed=feed))
    alerts = parsed(anonymous.get("/gtfs-rt/alerts.pb"))
    assert [(e.id, [i.route_id for i in e.alert.informed_entity]) for e in alerts.entity] == \
        [("oc-obra", ["101"]), ("oc-desvio", ["201"])]
    assert alerts.entity[0].alert.header_text.translation[0].text.startswith("Via interditada: linha 101")
    found = gtfs_rt_validation.findings(joao_neiva()[0], tmp_path, clock.now, sa=alerts.SerializeToString())
    assert found == {}
