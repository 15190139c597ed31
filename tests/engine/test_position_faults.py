"""GPS position faults on the simulated clean day accuse no one (issue: no false fine from
a fault real devices make every day).

The weekday of the sample João Neiva network, fault-free, replays to no infraction. A run
of one bus's fixes is then thrown kilometres off mid-trip, as real units do (a cold
start's (0,0)-style fix, multipath, a cell tower's position). Before the position screen
the 30 fixes lost the trip to a confirmed D-12; the 6-fix runs here accused no one then
either (issue 33 saw an A-07 from such a run elsewhere in the day), but were taken as
positions. Now every thrown fix is dead-lettered as `position_fault` and the day accuses
no one.
"""

import datetime as dt
import json
import math

import pytest

from fiscaliza.replay import ReplayInputs, replay
from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate

FEED_PATH, FLEET_PATH = joao_neiva()
DAY = dt.date(2026, 12, 1)
METRES_PER_DEGREE_LAT = 111_320.0
ACCUSING = ("confirmed", "provisional", "exempt_art45")


@pytest.fixture(scope="module")
def clean_day(tmp_path_factory):
    out = tmp_path_factory.mktemp("clean-day")
    sim = simulate(load_feed(FEED_PATH), load_fleet(FLEET_PATH), SimulationSettings(DAY, DAY, seed=21), out)
    result = replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca))
    assert result.infractions == [] and len(result.trips) == 159  # the day the faults are laid on
    return sim


def thrown(sim, tmp_path, vehicle_id: str, count: int, metres: float) -> tuple[ReplayInputs, list[str]]:
    """`count` consecutive fixes of the vehicle thrown `metres` north, centred on its first
    pass by a stop after 10:00 at speed (mid-trip): the stretch A-07 reads."""
    feed = load_feed(FEED_PATH)
    stops = [(stop.lat, stop.lon) for stop in feed.stops.values()]
    lines = sim.tachograph.read_bytes().splitlines()
    mine = [k for k, line in enumerate(lines) if json.loads(line)["vehicle_id"] == vehicle_id]

    def at_a_stop(ping) -> bool:
        return ping["speed_kmh"] > 5 and any(
            math.hypot(ping["lat"] - lat, (ping["lon"] - lon) * math.cos(math.radians(lat))) * METRES_PER_DEGREE_LAT
            < 40 for lat, lon in stops)

    centre = next(n for n, k in enumerate(mine)
                  if (ping := json.loads(lines[k]))["ts"] >= f"{DAY}T10:00" and at_a_stop(ping))
    picked = mine[centre - count // 2: centre - count // 2 + count]
    for k in picked:
        ping = json.loads(lines[k])
        ping["lat"] += metres / METRES_PER_DEGREE_LAT
        lines[k] = json.dumps(ping).encode()
    path = tmp_path / "tachograph.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    stamps = [json.loads(lines[k])["ts"] for k in picked]
    return ReplayInputs(FEED_PATH, FLEET_PATH, path, sim.catraca), stamps


@pytest.mark.parametrize(("vehicle_id", "count", "metres"), [
    ("JN-2012", 6, 3_000.0),  # headway-based line 201: multipath, a cell tower's position
    ("JN-2012", 6, 50_000.0),  # a cold start's fix
    ("JN-2012", 30, 50_000.0),  # five minutes of it: lost the trip, a D-12
    ("JN-1011", 6, 3_000.0),  # timetabled line 101, by a stop: the stretch A-07 reads
])
def test_a_run_of_fixes_kilometres_off_accuses_no_one(clean_day, tmp_path, vehicle_id, count, metres):
    inputs, stamps = thrown(clean_day, tmp_path, vehicle_id, count, metres)
    result = replay(inputs)
    assert [(i.code, i.status) for i in result.infractions if i.status in ACCUSING] == []
    faults = [r for r in result.rejected if r.reason == "position_fault"]
    # each thrown fix is dead-lettered with its reason; the `ts` of each is the one sent
    assert sorted(json.loads(r.raw)["ts"] for r in faults) == sorted(
        dt.datetime.fromisoformat(s).isoformat() for s in stamps)
    assert all(r.location.startswith(vehicle_id) and "position fault" in r.detail for r in faults)
