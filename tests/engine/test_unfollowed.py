"""A trip the vehicle's telemetry could not follow is no D-22 (trips.unfollowed, #12).

The fault-free sample day is replayed with one vehicle's tachograph edited during one
of its timetabled trips (20 min long), from 5 min after its departure to 2 min before
its arrival:
- the lines taken out (the device went silent for 13 min): the bus was seen leaving on
  the trip and seen again near its end, 35 % of the shape seen in all (< 80 %, so not a
  realized trip); it can be neither confirmed nor excluded, so it is insufficient
  evidence, not a D-22;
- the lines kept but 2 km away, driven there and back (the bus seen doing something
  else, a deadhead): the trip was not run, and the telemetry says so: a D-22.
"""

import datetime as dt
import json

import pytest

from fiscaliza.replay import ReplayInputs, replay
from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate

FEED_PATH, FLEET_PATH = joao_neiva()
DAY = dt.date(2026, 12, 1)


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    out = tmp_path_factory.mktemp("unfollowed")
    sim = simulate(load_feed(FEED_PATH), load_fleet(FLEET_PATH), SimulationSettings(DAY, DAY, seed=1), out)
    result = replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca))
    timetabled = sorted((t for t in result.trips if t.departure_deviation_s is not None), key=lambda t: t.departed_at)
    trip = timetabled[len(timetabled) // 2]  # one in the middle of the day
    return out, sim, result, trip


def edited(day, how: str):
    out, sim, _, trip = day
    start, end = trip.departed_at + dt.timedelta(minutes=5), trip.arrived_at - dt.timedelta(minutes=2)
    lines = []
    for line in sim.tachograph.read_text().splitlines():
        record = json.loads(line)
        inside = record["vehicle_id"] == trip.vehicle_id and start <= dt.datetime.fromisoformat(record["ts"]) <= end
        if inside and how == "silent":
            continue
        if inside and how == "elsewhere":
            # 2.2 km north, off every itinerary of the sample, driven there and back in 2 min
            # (66 km/h: a jump there in one ping would be a GPS fault, trips.position)
            when = dt.datetime.fromisoformat(record["ts"])
            record["lat"] += 0.02 * min(1.0, (when - start) / dt.timedelta(minutes=2),
                                        (end - when) / dt.timedelta(minutes=2))
        lines.append(json.dumps(record))
    path = out / f"{how}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return replay(ReplayInputs(FEED_PATH, FLEET_PATH, path, sim.catraca))


def d22(result, trip_id):
    return [i for i in result.infractions if i.code == "D-22" and i.trip_id == trip_id]


def test_the_day_as_simulated_realizes_the_trip(day):
    _, _, result, trip = day
    assert d22(result, trip.trip_id) == []
    assert [i for i in result.infractions if i.code == "D-22"] == []


def test_a_trip_whose_telemetry_went_silent_is_insufficient_evidence_not_d22(day):
    _, _, _, trip = day
    result = edited(day, "silent")
    assert trip.trip_id not in {t.trip_id for t in result.trips}  # not realized: too little of it seen
    assert d22(result, trip.trip_id) == []
    [record] = [f for f in result.insufficient if f.code == "D-22" and f.trip_id == trip.trip_id]
    assert "telemetria interrompida" in record.reason
    [passage] = record.evidence["unfollowed"]
    assert passage["vehicle_id"] == trip.vehicle_id
    # it was seen leaving: the departure is known, the silence is what hides the rest
    assert passage["may_have_departed"][0] == passage["may_have_departed"][1]
    assert [i for i in result.infractions if i.code == "D-22"] == []  # nothing else changed


def test_a_trip_the_bus_was_seen_not_running_yields_d22(day):
    _, _, _, trip = day
    result = edited(day, "elsewhere")
    assert [i.trip_id for i in result.infractions if i.code == "D-22"] == [trip.trip_id]
    assert not [f for f in result.insufficient if f.code == "D-22" and f.trip_id == trip.trip_id]
