"""Carrying passengers on another line (rules.other_line, art. 17) through the engine
(replay; the workers run the same stages): the fleet's `lines` column and the catraca
readings reach the trip rule at each arrival.

The fault-free sample day (João Neiva's feed: line 101 run by VNV, 201 by TRD), replayed
with the test law of tests/rules/shared_law.py, its pack listing only rules.other_line,
and a fleet whose JN-1011 (VNV) is licensed for line 201 only and JN-1012 for 101. The
simulator's catraca counts about one boarding a minute during a trip, so each of
JN-1011's trips on 101 carries passengers on a line it is not licensed for."""

import datetime as dt
import sys
from pathlib import Path

import pytest

from fiscaliza.replay import ReplayInputs, replay
from gtfs import load_feed
from kernel.fleet import load_fleet
from kernel.policy import shipped_policy_path
from rules import laws, other_line, packs
from rules.pack import Pack
from samples import joao_neiva
from simulator import SimulationSettings, simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rules"))
from shared_law import LAW, OTHER_LINE  # noqa: E402

FEED_PATH, FLEET_PATH = joao_neiva()
DAY = dt.date(2026, 12, 1)
SECTION = """
[other_line]
min_boardings = 2
max_silence_s = 600
"""


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    out = tmp_path_factory.mktemp("other_line")
    policy = out / "policy.toml"
    policy.write_text(shipped_policy_path().read_text().replace('code = "joao-neiva"', f'code = "{LAW.code}"')
                      + SECTION)
    rows = FLEET_PATH.read_text().splitlines()
    lines = {"JN-1011": "201", "JN-1012": "101"}
    fleet = out / "fleet.csv"
    fleet.write_text("\n".join([rows[0] + ",lines"] + [f"{r},{lines.get(r.split(',')[0], '')}" for r in rows[1:]])
                     + "\n")
    sim = simulate(load_feed(FEED_PATH), load_fleet(FLEET_PATH), SimulationSettings(DAY, DAY, seed=1), out)
    pack = Pack(law=LAW, catalogue={OTHER_LINE: other_line.rule(OTHER_LINE)})
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(laws.LAWS, LAW.code, LAW)
        patch.setitem(packs.PACKS, LAW.code, pack)
        yield replay(ReplayInputs(FEED_PATH, fleet, sim.tachograph, sim.catraca, policy=policy))


def test_trips_on_a_line_the_vehicle_is_not_licensed_for_yield_infraction(day):
    records = [i for i in day.infractions if i.code == OTHER_LINE]
    trips = [t for t in day.trips if t.vehicle_id == "JN-1011"]
    assert trips and all(t.route_id == "101" for t in trips)
    # one record per trip of JN-1011, each with boardings counted and the line it may run
    assert sorted(r.evidence["departed_at"] for r in records) == \
        sorted(t.departed_at.isoformat(timespec="seconds") for t in trips)
    for record in records:
        assert (record.vehicle_id, record.route_id, record.status) == ("JN-1011", "101", "confirmed")
        assert record.evidence["licensed_lines"] == ["201"]
        assert record.evidence["boardings"] >= 2
        # the arrival's trip_id, filled in when the day's matching settled
        assert record.trip_id is not None and record.detected_at is not None


def test_licensed_vehicles_and_those_of_the_operators_lines_yield_nothing(day):
    # JN-1012 licensed for 101; the others, no lines: every line of their operator
    assert {i.vehicle_id for i in day.infractions if i.code == OTHER_LINE} == {"JN-1011"}
    assert [f for f in day.insufficient if f.code == OTHER_LINE] == []
