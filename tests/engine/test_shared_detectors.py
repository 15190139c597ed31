"""The shared detectors through the engine (replay; the workers run the same stages):
a pack listing them gets their records, from the open track (a turn back) and from the
day's door episodes (a stop outside the marked stops).

The fault-free sample day, replayed with the test law of tests/rules/shared_law.py (its
pack lists rules.turn_back and rules.unmarked_stop) and one vehicle's tachograph edited
during one of its timetabled trips: from the trip's middle on, every ping takes the
position the bus had as long before the middle as it is after it (the bus retraces its
way back), and three pings 10 s apart an hour earlier stand still with the doors open
where the bus was, each a copy of the position of the first. After the retraced stretch the
vehicle is seen no more that day."""

import datetime as dt
import json
import sys
from pathlib import Path

import pytest

from fiscaliza.replay import ReplayInputs, replay
from gtfs import load_feed
from kernel.fleet import load_fleet
from kernel.policy import shipped_policy_path
from rules import laws, packs, turn_back, unmarked_stop
from rules.pack import Pack
from samples import joao_neiva
from simulator import SimulationSettings, simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rules"))
from shared_law import LAW, TURN_BACK, UNMARKED_STOP  # noqa: E402

FEED_PATH, FLEET_PATH = joao_neiva()
DAY = dt.date(2026, 12, 1)
SECTIONS = """
[turn_back]
min_reversal_m = 200
min_consecutive_pings = 3
max_ping_gap_s = 120

[unmarked_stop]
max_speed_kmh = 3
min_stop_distance_m = 80
min_consecutive_pings = 3
min_duration_s = 20
max_ping_gap_s = 60
"""


@pytest.fixture(scope="module")
def law():
    pack = Pack(law=LAW, catalogue={TURN_BACK: turn_back.rule(TURN_BACK),
                                    UNMARKED_STOP: unmarked_stop.rule(UNMARKED_STOP)})
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(laws.LAWS, LAW.code, LAW)
        patch.setitem(packs.PACKS, LAW.code, pack)
        yield


@pytest.fixture(scope="module")
def day(tmp_path_factory, law):
    out = tmp_path_factory.mktemp("shared")
    policy = out / "policy.toml"
    policy.write_text(shipped_policy_path().read_text().replace('code = "joao-neiva"', f'code = "{LAW.code}"')
                      + SECTIONS)
    sim = simulate(load_feed(FEED_PATH), load_fleet(FLEET_PATH), SimulationSettings(DAY, DAY, seed=1), out)
    plain = replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca, policy=policy))
    timetabled = sorted((t for t in plain.trips if t.departure_deviation_s is not None), key=lambda t: t.departed_at)
    trip = timetabled[len(timetabled) // 2]
    middle = trip.departed_at + (trip.arrived_at - trip.departed_at) / 2
    records = [json.loads(line) for line in sim.tachograph.read_text().splitlines()]
    mine = [r for r in records if r["vehicle_id"] == trip.vehicle_id]
    at = {dt.datetime.fromisoformat(r["ts"]): r for r in mine}
    times = sorted(at)
    retraced_until = trip.arrived_at + dt.timedelta(minutes=10)
    for when in times:
        if middle < when <= retraced_until:
            mirror = middle - (when - middle)
            source = at[min(times, key=lambda t: abs(t - mirror))]
            at[when]["lat"], at[when]["lon"] = source["lat"], source["lon"]
    # then the bus is seen no more that day: it could not be seen next where it really was,
    # kilometres from where the retraced pings left it a ping before (a GPS fault, dropped
    # by trips.position, as the pings after it until they outvote the retraced run)
    silent = {when for when in times if when > retraced_until}
    # an hour before the trip: three pings 10 s apart standing with the doors open
    stand = [t for t in times if t >= trip.departed_at - dt.timedelta(hours=1)][:3]
    for when in stand:
        at[when].update(lat=at[stand[0]]["lat"], lon=at[stand[0]]["lon"], speed_kmh=0.0, doors_open=True)
    path = out / "edited.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records
                            if r["vehicle_id"] != trip.vehicle_id or dt.datetime.fromisoformat(r["ts"]) not in silent))
    edited = replay(ReplayInputs(FEED_PATH, FLEET_PATH, path, sim.catraca, policy=policy))
    return plain, edited, trip, stand


def test_the_day_as_simulated_yields_nothing(day):
    plain, _, _, _ = day
    assert [i for i in plain.infractions if i.code in (TURN_BACK, UNMARKED_STOP)] == []
    assert [f for f in plain.insufficient if f.code in (TURN_BACK, UNMARKED_STOP)] == []


def test_a_bus_retracing_its_way_from_the_middle_of_a_trip_yields_infraction(day):
    _, edited, trip, _ = day
    [record] = [i for i in edited.infractions if i.code == TURN_BACK]
    assert (record.vehicle_id, record.route_id, record.direction_id) == (trip.vehicle_id, trip.route_id,
                                                                       trip.direction_id)
    assert record.status == "confirmed"
    # turned at the middle of the trip (the farthest point), detected once held
    middle = trip.departed_at + (trip.arrived_at - trip.departed_at) / 2
    assert abs((record.occurred_at - middle).total_seconds()) <= 60
    assert record.detected_at > record.occurred_at
    assert record.evidence["reversal_m"] >= 200 and record.evidence["short_of_terminal_m"] > 0


def test_three_pings_standing_with_the_doors_open_away_from_the_stops_yield_infraction(day):
    _, edited, trip, stand = day
    records = [i for i in edited.infractions if i.code == UNMARKED_STOP]
    assert [r.occurred_at for r in records] == [stand[0]]
    assert records[0].evidence["nearest_stop_m"] > 80
