"""The simulator's door sensors and Conselheiro Lafaiete's faults, checked in the raw files
they write (whether the detectors then find them: test_lafaiete_scenarios.py).

The Lafaiete sample on Tuesday 1 Dec 2026 (weekday service): line 105 (VQZ, two blocks)
and 210 (ECJ, headway-based); VQZ's spare CL-1054 is licensed for line 210 only.
"""

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest
import shapely

from gtfs import load_feed
from gtfs.projection import Projector
from kernel.fleet import load_fleet
from samples import conselheiro_lafaiete, joao_neiva
from simulator import SimulationError, SimulationSettings, simulate

FEED_PATH, FLEET_PATH = conselheiro_lafaiete()
FEED = load_feed(FEED_PATH)
FLEET = load_fleet(FLEET_PATH, operators=set(FEED.agencies))
DAY = dt.date(2026, 12, 1)
SEED = 21
TERMINALS = {"9001", "9002", "9003", "9004"}


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def epoch(record: dict) -> float:
    return dt.datetime.fromisoformat(record["ts"]).timestamp()


def nearest_stop(records: list[dict]) -> tuple[np.ndarray, list[str]]:
    """Each ping's distance (m, projected) to the nearest stop of the feed, and that stop."""
    ids = list(FEED.stops)
    stops = shapely.points([(FEED.stops[s].point.x, FEED.stops[s].point.y) for s in ids])
    x, y = Projector(FEED.epsg).to_xy([r["lon"] for r in records], [r["lat"] for r in records])
    tree = shapely.STRtree(stops)
    index, distance = tree.query_nearest(shapely.points(np.column_stack([x, y])), return_distance=True,
                                         all_matches=False)
    return distance, [ids[i] for i in index[1]]


def sim(out: Path, faults=(), doors=True, feed=FEED, fleet=FLEET):
    result = simulate(feed, fleet, SimulationSettings(DAY, DAY, seed=SEED, faults=tuple(faults), doors=doors), out)
    return result, json.loads(result.manifest.read_text())["faults"]


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    return sim(tmp_path_factory.mktemp("plain"), doors=False)[0]


@pytest.fixture(scope="module")
def doors(tmp_path_factory):
    return sim(tmp_path_factory.mktemp("doors"))[0]


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    result, manifest = sim(tmp_path_factory.mktemp("faulty"), ["unmarked_stop", "other_line"])
    return result, {f["fault"]: f for f in manifest}


# --- the door sensors -----------------------------------------------------------------


def test_door_sensors_are_off_by_default_and_no_ping_reports_the_doors(plain):
    assert SimulationSettings(DAY, DAY).doors is False
    assert not any("doors_open" in r for r in read(plain.tachograph))


def test_door_sensors_add_only_the_doors_to_the_same_pings(plain, doors):
    """No random draw of their own: the same pings, readings and manifest's faults."""
    with_doors = read(doors.tachograph)
    assert all(isinstance(r["doors_open"], bool) for r in with_doors)
    assert [{k: v for k, v in r.items() if k != "doors_open"} for r in with_doors] == read(plain.tachograph)
    assert doors.catraca.read_bytes() == plain.catraca.read_bytes()


def test_doors_open_only_standing_at_a_stop_or_a_terminal(doors):
    pings = read(doors.tachograph)
    open_ = [p for p in pings if p["doors_open"]]
    assert all(p["speed_kmh"] == 0 for p in open_)
    assert not any(p["doors_open"] for p in pings if p["speed_kmh"] > 0)  # moving: shut
    distance, stop_ids = nearest_stop(open_)
    # at the stop's point, within the 3 m GPS noise (20 m: more than 6 sigma)
    assert distance.max() < 20
    # dwelling at intermediate stops and standing at every terminal (before, between, after runs)
    assert TERMINALS <= set(stop_ids) and len(set(stop_ids) - TERMINALS) > 20


def test_unmarked_stop_without_door_sensors_is_refused(tmp_path):
    with pytest.raises(SimulationError, match="unmarked_stop need the door sensors"):
        simulate(FEED, FLEET, SimulationSettings(DAY, DAY, faults=("unmarked_stop",)), tmp_path)


# --- the faults -----------------------------------------------------------------------


def test_unmarked_stop_stands_a_minute_doors_open_far_from_every_stop(faulty):
    result, manifest = faulty
    fault = manifest["unmarked_stop"]
    start = fault["from_epoch"]
    stand = [p for p in read(result.tachograph)
             if p["vehicle_id"] == fault["vehicle_id"] and start <= epoch(p) <= start + fault["seconds"]]
    # 60 s at 10 s pings: six pings standing with the doors open
    assert len(stand) >= 5
    assert all(p["speed_kmh"] == 0 and p["doors_open"] for p in stand)
    distance, _ = nearest_stop(stand)
    assert distance.min() > 130  # 150 m clear of every stop, less the GPS noise


def test_other_line_sends_the_spare_licensed_elsewhere_onto_the_last_run(faulty):
    result, manifest = faulty
    fault = manifest["other_line"]
    spare, regular = fault["vehicle_id"], fault["instead_of"]
    assert (spare, fault["licensed_lines"], fault["route_id"]) == ("CL-1054", ["210"], "105")
    assert FLEET[regular].operator_id == FLEET[spare].operator_id == "VQZ"
    departure = fault["scheduled_departure"]
    pings = read(result.tachograph)
    # the spare is out only for that run: from the pre-trip 10 min at the terminal
    spare_times = [epoch(p) for p in pings if p["vehicle_id"] == spare]
    assert departure - 610 <= min(spare_times) and max(spare_times) <= departure + 20 * 60 + 2 * 60 + 300
    # its console on line 105 (none after the run: the day is over)
    assert {p["route_id"] for p in pings if p["vehicle_id"] == spare} - {None} == {"105"}
    # the regular vehicle no longer drives after that departure
    assert not [p for p in pings if p["vehicle_id"] == regular and epoch(p) >= departure and p["speed_kmh"] > 0]
    # its catraca counts passengers boarding on the run
    counters = [r["counter"] for r in read(result.catraca)
                if r["vehicle_id"] == spare and departure <= epoch(r) <= departure + 20 * 60]
    assert counters[-1] - counters[0] >= 2


def test_other_line_on_a_fleet_without_licensed_lines_is_not_injected_and_changes_nothing(tmp_path):
    """João Neiva's fleet lists no lines (every bus its operator's lines): no such spare,
    no random draw, the same files as the day without the fault."""
    feed, fleet = load_feed(joao_neiva()[0]), load_fleet(joao_neiva()[1])
    with_fault, manifest = sim(tmp_path / "a", ["other_line"], doors=False, feed=feed, fleet=fleet)
    without, _ = sim(tmp_path / "b", doors=False, feed=feed, fleet=fleet)
    assert manifest == []
    assert with_fault.tachograph.read_bytes() == without.tachograph.read_bytes()
    assert with_fault.catraca.read_bytes() == without.catraca.read_bytes()
