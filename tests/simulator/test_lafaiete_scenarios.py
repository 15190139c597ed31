"""Simulator-driven scenarios of Conselheiro Lafaiete's art. 19 § único (rules.unmarked_stop)
and art. 17 (rules.other_line), both ways: each fault found, exactly, on its vehicle and
trip; the same day without it, or without the door sensors, accuses no one.

The Lafaiete sample on Tuesday 1 Dec 2026, simulated with door sensors and replayed under
the shipped Lafaiete policy (its pack: arts. 14 § único, 17, 19 § único and 42 A).
"""

import datetime as dt
import json
from pathlib import Path

import pytest

from fiscaliza.replay import ReplayInputs, replay
from gtfs import load_feed
from kernel.fleet import load_fleet
from kernel.policy import shipped_policy_path
from samples import conselheiro_lafaiete
from simulator import SimulationSettings, simulate

FEED_PATH, FLEET_PATH = conselheiro_lafaiete()
FEED = load_feed(FEED_PATH)
FLEET = load_fleet(FLEET_PATH, operators=set(FEED.agencies))
POLICY = shipped_policy_path("conselheiro-lafaiete")
DAY = dt.date(2026, 12, 1)
SEED = 21
UNMARKED, OTHER_LINE = "art. 19 § único", "art. 17"


def run(out: Path, faults=()):
    sim = simulate(FEED, FLEET, SimulationSettings(DAY, DAY, seed=SEED, faults=tuple(faults), doors=True), out)
    manifest = {f["fault"]: f for f in json.loads(sim.manifest.read_text())["faults"]}
    return sim, manifest, replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca, policy=POLICY))


@pytest.fixture(scope="module")
def normal(tmp_path_factory):
    return run(tmp_path_factory.mktemp("normal"))


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    return run(tmp_path_factory.mktemp("faulty"), ["unmarked_stop", "other_line"])


@pytest.fixture(scope="module")
def no_sensors(faulty, tmp_path_factory):
    """The faulty day as a fleet without door sensors sends it: no ping reports the doors."""
    sim, manifest, _ = faulty
    tachograph = tmp_path_factory.mktemp("no-sensors") / "tachograph.jsonl"
    lines = []
    for line in sim.tachograph.read_text().splitlines():
        record = json.loads(line)
        del record["doors_open"]
        lines.append(json.dumps(record))
    tachograph.write_text("\n".join(lines) + "\n")
    return manifest, replay(ReplayInputs(FEED_PATH, FLEET_PATH, tachograph, sim.catraca, policy=POLICY))


def test_a_normal_day_with_door_sensors_accuses_no_one(normal):
    sim, _, result = normal
    # the doors were reported, open at every stop and terminal the buses stood at
    assert sum(json.loads(line)["doors_open"] for line in sim.tachograph.read_text().splitlines()) > 1000
    assert result.infractions == []
    assert result.insufficient == []


def test_a_stop_midway_between_two_stops_doors_open_yields_one_art19(faulty):
    _, manifest, result = faulty
    injected = manifest["unmarked_stop"]
    [record] = [i for i in result.infractions if i.code == UNMARKED]
    assert (record.status, record.vehicle_id, record.route_id, record.trip_id) == \
        ("confirmed", injected["vehicle_id"], injected["route_id"], injected["trip_id"])
    # the stand's first ping (pings every 10 s) to its last, 60 s later
    start = record.occurred_at.timestamp()
    assert injected["from_epoch"] <= start < injected["from_epoch"] + 10
    assert 40 <= record.evidence["duration_s"] <= 60
    assert record.evidence["nearest_stop_m"] > 130  # 150 m clear of every stop, less the GPS noise
    assert record.fine_ufir == 5  # art. 42 B's floor, Cr$ 5,00


def test_the_spare_licensed_for_210_carrying_passengers_on_105_yields_one_art17(faulty):
    _, manifest, result = faulty
    injected = manifest["other_line"]
    [record] = [i for i in result.infractions if i.code == OTHER_LINE]
    assert (record.status, record.vehicle_id, record.operator_id, record.route_id, record.trip_id) == \
        ("confirmed", "CL-1054", "VQZ", "105", injected["trip_id"])
    assert record.evidence["licensed_lines"] == ["210"]
    assert record.evidence["boardings"] >= 2
    assert record.fine_ufir == 200  # art. 42 F by analogy (art. 43), Cr$ 200,00


def test_the_faulty_day_yields_those_two_records_and_nothing_else(faulty):
    _, manifest, result = faulty
    assert sorted((i.code, i.vehicle_id, i.trip_id) for i in result.infractions) == sorted([
        (OTHER_LINE, "CL-1054", manifest["other_line"]["trip_id"]),
        (UNMARKED, manifest["unmarked_stop"]["vehicle_id"], manifest["unmarked_stop"]["trip_id"])])
    assert result.insufficient == []


def test_without_door_sensors_the_stop_is_not_claimed(no_sensors):
    manifest, result = no_sensors
    assert [i for i in result.infractions if i.code == UNMARKED] == []
    assert [f for f in result.insufficient if f.code == UNMARKED] == []
    # art. 17 reads the catraca, not the doors: still found
    assert [(i.code, i.vehicle_id) for i in result.infractions] == [(OTHER_LINE, manifest["other_line"]["vehicle_id"])]
