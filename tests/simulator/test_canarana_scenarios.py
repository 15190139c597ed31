"""Simulator-driven scenarios for Canarana's Lei 179/1991, both ways: each fault the
simulator injects for one of the pack's detectors yields exactly its record, and the same
days without the fault yield none.

The sample Canarana network (line 10 timetabled in two blocks, operator VCN; line 20 by
frequency, ECL) is simulated and replayed under the shipped policy:
- a weekday with `service_gap` (a line and direction runs nothing 08:00–11:30) and
  `held_at_terminal` (a vehicle skips its next round trip and stands at the terminal):
  one art. 10 § 5º for the period that lies inside the gap, one art. 13 for the held
  vehicle's terminal, and nothing else. Two seeds, so that each fault lands once on the
  timetabled line and once on the frequency line;
- Tuesday to Friday with `line_interruption` (a line runs nothing from Tuesday's midday,
  its buses standing powered on): one art. 6º II, on the first day the interruption
  exceeds 72 h, with fine 0;
- the same weekday and the same four days without faults: no record at all.
"""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest

from fiscaliza.replay import ReplayInputs, replay
from gtfs import load_feed
from gtfs.projection import Projector
from gtfs.schedule import service_day
from kernel.fleet import load_fleet
from kernel.policy import load_policy, shipped_policy_path
from rules.model import Infraction
from samples import canarana
from simulator import SimulationSettings, simulate

FEED_PATH, FLEET_PATH = canarana()
FEED = load_feed(FEED_PATH)
FLEET = load_fleet(FLEET_PATH)
POLICY_PATH = shipped_policy_path("canarana")
POLICY = load_policy(POLICY_PATH)
TUESDAY, FRIDAY = dt.date(2026, 12, 1), dt.date(2026, 12, 4)
WAITING, CROWDING, INTERRUPTION = "art. 10 § 5º", "art. 13", "art. 6º II"


def run(tmp, start, end, faults=(), seed=1, ping_interval_s=10):
    sim = simulate(FEED, FLEET, SimulationSettings(start, end, seed=seed, faults=tuple(faults),
                                                   ping_interval_s=ping_interval_s), tmp)
    manifest = {f["fault"]: f for f in json.loads(sim.manifest.read_text())["faults"]}
    result = replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca, policy=POLICY_PATH))
    result.pings = [json.loads(line) for line in sim.tachograph.read_text().splitlines()]
    return manifest, result


def pings_of(result, vehicles, start: float, end: float) -> list[dict]:
    return [p for p in result.pings if p["vehicle_id"] in vehicles and start <= epoch(p["ts"]) < end]


def metres_from(pings: list[dict], stop_id: str):
    x, y = Projector(FEED.epsg).to_xy([p["lon"] for p in pings], [p["lat"] for p in pings])
    stop = FEED.stops[stop_id].point
    return np.hypot(np.asarray(x) - stop.x, np.asarray(y) - stop.y)


def of(result, code):
    return [i for i in result.infractions if i.code == code]


def epoch(iso: str) -> float:
    return dt.datetime.fromisoformat(iso).timestamp()


@pytest.fixture(scope="module")
def normal_day(tmp_path_factory):
    return run(tmp_path_factory.mktemp("normal-day"), TUESDAY, TUESDAY)[1]


# seed 1: the gap on line 10 (timetabled), the held bus on line 20 (frequency); seed 2: the reverse
@pytest.fixture(scope="module", params=[1, 2])
def faulty_day(request, tmp_path_factory):
    return run(tmp_path_factory.mktemp(f"faulty-day-{request.param}"), TUESDAY, TUESDAY,
               ("service_gap", "held_at_terminal"), seed=request.param)


@pytest.fixture(scope="module")
def normal_days(tmp_path_factory):
    return run(tmp_path_factory.mktemp("normal-days"), TUESDAY, FRIDAY, ping_interval_s=30)[1]


@pytest.fixture(scope="module")
def interrupted_days(tmp_path_factory):
    return run(tmp_path_factory.mktemp("interrupted-days"), TUESDAY, FRIDAY, ("line_interruption",),
               ping_interval_s=30)


def test_a_normal_day_yields_nothing(normal_day):
    assert {t.route_id for t in normal_day.trips} == {"10", "20"} and len(normal_day.trips) > 150  # all run
    assert normal_day.infractions == []
    assert normal_day.insufficient == []


def test_normal_days_yield_nothing(normal_days):
    assert len({t.service_date for t in normal_days.trips}) == 4
    assert normal_days.infractions == []
    assert normal_days.insufficient == []


def test_the_faults_land_on_both_lines(faulty_day):
    # the seeds are chosen so: each fault once on the timetabled line, once on the other
    manifest, _ = faulty_day
    assert {manifest["service_gap"]["route_id"], manifest["held_at_terminal"]["route_id"]} == {"10", "20"}


def test_service_gap_yields_one_waiting_time_infraction_for_the_period_inside_it(faulty_day):
    manifest, result = faulty_day
    gap = manifest["service_gap"]
    # the policy's periods lying wholly inside the gap: a passenger waits (end - start) / 2
    def local(moment: dt.time) -> float:
        return dt.datetime.combine(TUESDAY, moment, FEED.timezone).timestamp()
    inside = [p for p in POLICY.waiting_time.periods
              if gap["from_epoch"] <= local(p.start) and local(p.end) <= gap["to_epoch"]]
    [period] = inside  # 08:30–11:00 inside 08:00–11:30
    [record] = of(result, WAITING)
    assert (record.status, record.route_id, record.direction_id) == ("confirmed", gap["route_id"],
                                                                     gap["direction_id"])
    assert record.evidence["period"] == period.name
    start, end = record.evidence["interval_epoch"]
    assert record.evidence["departures"] == []
    assert record.evidence["mean_wait_s"] == round((end - start) / 2, 1) > POLICY.waiting_time.max_wait_s
    assert record.fine_ufir == 100  # the policy's [fines.table], VR
    # the deadheads ran no trip of the line and direction in the gap
    assert not [t for t in result.trips if (t.route_id, t.direction_id) == (gap["route_id"], gap["direction_id"])
                and gap["from_epoch"] <= t.departed_at.timestamp() < gap["to_epoch"]]


def test_held_at_terminal_yields_one_crowding_infraction_at_its_terminal(faulty_day):
    manifest, result = faulty_day
    held = manifest["held_at_terminal"]
    grace = POLICY.terminal_crowding.grace_s
    assert held["held_s"] > grace
    [record] = of(result, CROWDING)
    assert (record.status, record.route_id) == ("confirmed", held["route_id"])
    evidence = record.evidence
    assert evidence["terminal_stop_id"] == held["terminal_stop_id"]
    assert [p["vehicle_id"] for p in evidence["present"]] == [held["vehicle_id"]]
    # more than 15 % of the line's vehicles (those that ran it) stood there past the grace
    vehicles = {t.vehicle_id for t in result.trips if t.route_id == held["route_id"]}
    assert evidence["line_vehicle_count"] == len(vehicles)
    assert evidence["peak"] / len(vehicles) > POLICY.terminal_crowding.max_share_pct / 100
    # from the grace after its arrival (entering the terminal zone a little before the stop)
    # to its departure (leaving the zone a little after)
    start, end = evidence["interval_epoch"]
    assert held["arrives_epoch"] + grace - 120 <= start <= held["arrives_epoch"] + grace
    assert held["leaves_epoch"] <= end <= held["leaves_epoch"] + 120


def test_the_held_bus_stands_at_the_terminal_reporting_out_of_service(faulty_day):
    manifest, result = faulty_day
    held = manifest["held_at_terminal"]
    pings = pings_of(result, {held["vehicle_id"]}, held["arrives_epoch"] + 60, held["leaves_epoch"])
    assert len(pings) >= (held["leaves_epoch"] - held["arrives_epoch"] - 60) // 10 - 1  # every 10 s
    assert metres_from(pings, held["terminal_stop_id"]).max() < 20  # GPS noise of 3 m
    assert {p["speed_kmh"] for p in pings} == {0.0}


def test_the_faulty_day_yields_nothing_else(faulty_day):
    _, result = faulty_day
    assert sorted(i.code for i in result.infractions) == sorted([CROWDING, WAITING])
    assert result.insufficient == []


def test_line_interruption_yields_one_finding_without_fine_when_72_h_are_exceeded(interrupted_days):
    manifest, result = interrupted_days
    fault = manifest["line_interruption"]
    [record] = of(result, INTERRUPTION)
    assert isinstance(record, Infraction)
    assert (record.status, record.route_id, record.fine_ufir, record.group) == ("confirmed", fault["route_id"],
                                                                                 0, "rescisão")
    # the interruption starts at the first scheduled departure left unserved after the line's
    # last trip; it is recorded on the first day whose last scheduled departure is more than
    # 72 h after that start (Friday's 23:50 for a start on Tuesday afternoon)
    since = epoch(record.evidence["interrupted_since"])
    assert fault["from_epoch"] <= since <= fault["from_epoch"] + POLICY.trips.match_window_s
    limit = POLICY.interruption.max_interruption_s

    def last_departure(date):
        day = service_day(FEED, date)
        return max(day.departure_epoch(t) for t in day.trips if t.route_id == fault["route_id"])
    days = [TUESDAY + dt.timedelta(days=n) for n in range(4)]
    assert record.service_date == next(d for d in days if last_departure(d) - since > limit) == FRIDAY
    assert [i for i in result.insufficient if i.code == INTERRUPTION] == []


def test_line_interruption_leaves_its_buses_reporting_and_runs_nothing_after(interrupted_days):
    manifest, result = interrupted_days
    fault = manifest["line_interruption"]
    assert not [t for t in result.trips if t.route_id == fault["route_id"]
                and t.departed_at.timestamp() >= fault["from_epoch"]]
    assert [t for t in result.trips if t.route_id == fault["route_id"]]  # it ran before
    assert sorted(fault["parked_runs"]) == [str(TUESDAY + dt.timedelta(days=n)) for n in range(4)]
    # its buses keep reporting, standing still out of service: the line is seen not running,
    # which is what tells an interruption from a telemetry outage
    buses = {t.vehicle_id for t in result.trips if t.route_id == fault["route_id"]}
    for n in range(1, 4):
        day = service_day(FEED, TUESDAY + dt.timedelta(days=n))
        scheduled = [day.departure_epoch(t) for t in day.trips if t.route_id == fault["route_id"]]
        pings = pings_of(result, buses, min(scheduled), max(scheduled))
        assert pings and {p["speed_kmh"] for p in pings} == {0.0} and {p["route_id"] for p in pings} == {None}
        assert all(pings_of(result, buses, t - 300, t + 300) for t in scheduled)
    # its passengers waited past the limit (art. 10 § 5º), on that line only; no crowding
    # (nobody ran a trip to stand after) and nothing unproven
    assert {i.route_id for i in of(result, WAITING)} == {fault["route_id"]}
    assert of(result, CROWDING) == []
    assert result.insufficient == []
