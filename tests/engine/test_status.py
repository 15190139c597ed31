"""The live vehicle status (engine.status) on a simulated weekday of the sample network
with a detour injected: 150 m off the shape over 15 % of one trip of line 101."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from engine import Engine
from engine.loading import load_context
from fiscaliza.replay import ReplayInputs, read_messages, replay, write_outputs
from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate
from simulator.plan import plan_day

FEED_PATH, FLEET_PATH = joao_neiva()
DAY = dt.date(2026, 12, 1)


@pytest.fixture(scope="module")
def statuses(tmp_path_factory):
    out = tmp_path_factory.mktemp("status")
    feed = load_feed(FEED_PATH)
    sim = simulate(feed, load_fleet(FLEET_PATH), SimulationSettings(DAY, DAY, seed=21, faults=("detour",)), out)
    [injected] = json.loads(sim.manifest.read_text())["faults"]
    inputs = ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca)
    context = load_context(inputs)
    messages, _ = read_messages(inputs)
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    seen = []
    for start in range(0, len(messages), 300):
        seen += engine.ingest(messages[start : start + 300]).statuses
    seen += engine.close().statuses
    return seen, injected, inputs, out


def test_a_running_bus_shows_its_line_live_match_and_progress(statuses):
    seen, injected, *_ = statuses
    running = [s for s in seen if s.vehicle_id == injected["vehicle_id"] and s.trip_id == injected["trip_id"]]
    assert running, "the detoured trip was never seen running"
    mid = running[len(running) // 2]
    assert mid.in_service and mid.route_id == injected["route_id"]
    assert 0.0 < mid.progress < 1.0
    # the simulator drives every trip on time: it leaves the terminal's 100 m zone ~20 s late
    assert 0 <= mid.schedule_deviation_s <= 60
    assert [s.progress for s in running] == sorted(s.progress for s in running)  # forward along the shape


def test_a_bus_off_its_itinerary_shows_how_far_and_since_when(statuses):
    seen, injected, *_ = statuses
    off = [s for s in seen if s.vehicle_id == injected["vehicle_id"] and s.off_route_m is not None]
    assert off and all(s.off_route_m > 50 for s in off)  # D-11's distance
    assert all(s.off_route_since <= s.ts for s in off)
    assert max(s.off_route_m for s in off) == pytest.approx(150, abs=30)  # the detour runs 150 m off
    # elsewhere in the day nobody is off route
    assert {s.vehicle_id for s in seen if s.off_route_m is not None} == {injected["vehicle_id"]}


def test_a_bus_between_trips_is_out_of_service_and_replay_writes_each_vehicles_latest(statuses):
    seen, _, inputs, out = statuses
    assert any(not s.in_service and s.route_id is None for s in seen)
    result = replay(inputs)
    write_outputs(result, out / "replay")
    lines = [json.loads(line) for line in (out / "replay" / "vehicle_status.jsonl").read_text().splitlines()]
    used = sorted({d.vehicle_id for d in plan_day(load_feed(FEED_PATH), DAY, load_fleet(FLEET_PATH))})
    assert [line["vehicle_id"] for line in lines] == used  # one line per vehicle that reported
    latest = {s.vehicle_id: s for s in seen}
    assert all(line["ts"] == latest[line["vehicle_id"]].ts for line in lines)


def test_a_bus_on_a_headway_line_shows_the_bus_ahead_and_the_time_since_it_left(statuses):
    seen, *_ = statuses
    tz = dt.timezone(dt.timedelta(hours=-3))  # the feed's (America/Sao_Paulo, no DST since 2019)
    # line 201 runs by headway, every 15 min from 06:00 to 09:00 (then 20 min): the
    # simulator departs every bus on time, so each follows the one ahead by ~900 s
    peak = [s for s in seen if s.route_id == "201" and s.headway_s is not None
            and dt.datetime.fromisoformat(s.departed_at).astimezone(tz).time() < dt.time(8, 59)]
    assert len({(s.vehicle_id, s.departed_at) for s in peak}) >= 20
    for s in peak:
        assert s.scheduled_headway_s == 900 and abs(s.headway_s - 900) <= 60, s
        assert s.vehicle_ahead not in (None, s.vehicle_id)
    # line 101 runs by timetable: its buses show their schedule deviation, not a headway
    assert not [s for s in seen if s.route_id == "101" and s.scheduled_headway_s is not None]
