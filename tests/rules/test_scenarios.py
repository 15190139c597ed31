"""Simulator-driven scenarios: each injected fault yields exactly its infraction(s).

A weekday of the sample João Neiva network is simulated with one fault at a time,
replayed, and the infractions compared with what the fault must produce, by code,
status, trip and vehicle — and nothing else. Fault-free, the day yields nothing.
"""

import datetime as dt
import json
from pathlib import Path

import pytest

from fiscaliza.replay import ReplayInputs, replay
from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate

FEED_PATH, FLEET_PATH = joao_neiva()
FEED = load_feed(FEED_PATH)
FLEET = load_fleet(FLEET_PATH)
DAY = dt.date(2026, 12, 1)
SEED = 21


def run(tmp: Path, faults=(), input_faults=()):
    sim = simulate(FEED, FLEET, SimulationSettings(DAY, DAY, seed=SEED, faults=tuple(faults),
                                                   input_faults=tuple(input_faults)), tmp)
    manifest = json.loads(sim.manifest.read_text())["faults"]
    result = replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca))
    return manifest, result


def summary(result):
    return sorted((i.code, i.status, i.trip_id, i.vehicle_id) for i in result.infractions)


def test_fault_free_day_yields_nothing(tmp_path):
    _, result = run(tmp_path)
    assert result.infractions == []
    assert result.insufficient == []


# fault -> the infractions it must produce: (code, status) on the faulty trip and vehicle
EXPECTED = {
    # 150 m off the shape for 15 % of it: the itinerary, and the stops in that stretch
    "detour": [("A-07", "confirmed"), ("D-11", "confirmed")],
    "stop_bypass": [("A-07", "confirmed")],
    "en_route_lateness": [("B-04", "confirmed")],
    "speeding": [("C-01", "confirmed")],
}


@pytest.mark.parametrize("fault", sorted(EXPECTED))
def test_trip_fault_yields_exactly_its_infractions(tmp_path, fault):
    manifest, result = run(tmp_path, [fault])
    [injected] = manifest
    expected = sorted((code, status, injected["trip_id"], injected["vehicle_id"]) for code, status in EXPECTED[fault])
    assert summary(result) == expected


def test_speeding_on_speeds_derived_from_displacement_yields_nothing(tmp_path):
    # the speeding fault's day with the speeding vehicle's pings marked as an ingest adapter
    # marks speeds it computed from displacement: the same pings, no proof of a C-01
    sim = simulate(FEED, FLEET, SimulationSettings(DAY, DAY, seed=SEED, faults=("speeding",)), tmp_path)
    [injected] = json.loads(sim.manifest.read_text())["faults"]
    lines = []
    for line in sim.tachograph.read_text().splitlines():
        ping = json.loads(line)
        if ping["vehicle_id"] == injected["vehicle_id"]:
            ping["speed_source"] = "derived"
        lines.append(json.dumps(ping))
    sim.tachograph.write_text("\n".join(lines) + "\n")
    result = replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca))
    assert summary(result) == []  # the reported speeds of this day give one C-01 (the test above)
    [insufficient] = result.insufficient
    assert (insufficient.code, insufficient.vehicle_id) == ("C-01", injected["vehicle_id"])
    assert "velocidade derivada do deslocamento" in insufficient.reason
    assert insufficient.evidence["derived_pings"]


def test_late_departure_yields_one_d13_for_the_route_day(tmp_path):
    manifest, result = run(tmp_path, ["late_departure"])
    [injected] = manifest
    [d13] = result.infractions
    assert (d13.code, d13.status, d13.route_id, d13.trip_id) == ("D-13", "confirmed", injected["route_id"], None)
    # 1 of 69 realized trips of route 101 off schedule: 1.45 % -> 200 × (1 + floor(1.45 / 10)) = 200
    assert d13.evidence["off_schedule_trips"] == 1
    assert d13.evidence["realized_trips"] == 69
    assert d13.fine_ufir == 200
    [late] = d13.evidence["trips"]
    assert (late["trip_id"], late["vehicle_id"]) == (injected["trip_id"], injected["vehicle_id"])
    assert 420 <= late["deviation_s"] <= 450  # 7 min late + ~20 s to leave the 100 m zone


def test_suppressed_trip_yields_d22_exempt_by_art45(tmp_path):
    manifest, result = run(tmp_path, ["suppressed_trip"])
    [injected] = manifest
    [d22] = result.infractions
    assert (d22.code, d22.trip_id) == ("D-22", injected["trip_id"])
    # VNV ran 68 of its 69 trips, all of one shape length ±0.4 %: efficiency ≈ 98.55 % ≥ 98 %,
    # and the suppressed trip is not the first of the day of its direction: exempt
    assert d22.status == "exempt_art45"
    art45 = d22.evidence["art45"]
    assert art45["efficiency_pct"] >= 98 and art45["exempt"] is True
    assert art45["start_of_operation"] is False


def test_frequency_shortfall_yields_one_d12(tmp_path):
    manifest, result = run(tmp_path, ["frequency_shortfall"])
    [injected] = manifest
    [d12] = result.infractions
    assert (d12.code, d12.route_id, d12.direction_id) == ("D-12", injected["route_id"], injected["direction_id"])
    expected = -(-(injected["window_end_s"] - injected["window_start_s"]) // injected["headway_s"])
    assert (d12.evidence["expected_departures"], d12.evidence["realized_departures"]) == (expected, expected - 1)


@pytest.mark.parametrize("fault,code", [("broken_seal", "D-21"), ("silent_catraca", "D-19")])
def test_catraca_fault_yields_one_record_for_the_vehicle(tmp_path, fault, code):
    manifest, result = run(tmp_path, [fault])
    [injected] = manifest
    [record] = result.infractions
    assert (record.code, record.status, record.vehicle_id) == (code, "confirmed", injected["vehicle_id"])


@pytest.mark.parametrize("input_fault,reasons", [
    ("malformed", {"invalid_json", "missing_field", "out_of_range", "timestamp_without_offset"}),
    ("duplicates", {"duplicate"}),
    ("out_of_order", set()),  # the replay orders by event time: nothing to reject
])
def test_input_fault_yields_no_infraction(tmp_path, input_fault, reasons):
    _, result = run(tmp_path, input_faults=[input_fault])
    assert result.infractions == []
    assert {r.reason for r in result.rejected} == reasons


def test_gps_gap_yields_insufficient_evidence_not_an_infraction(tmp_path):
    manifest, result = run(tmp_path, input_faults=["gps_gap"])
    [injected] = manifest
    assert result.infractions == []
    # 240 s without pings mid-trip: stops and timepoints in the gap cannot be judged
    assert result.insufficient
    assert {f.vehicle_id for f in result.insufficient} == {injected["vehicle_id"]}


def test_authorized_detour_occurrence_justifies_the_detour(tmp_path):
    import shapely

    manifest, result = run(tmp_path / "plain", ["detour"])
    [injected] = manifest
    [d11] = [i for i in result.infractions if i.code == "D-11"]
    # the Órgão Gerencial authorized that very detour: its area covers every off-route ping
    area = shapely.MultiPoint(d11.evidence["off_route_lonlat"]).convex_hull.buffer(0.0005)
    occurrence = {
        "id": "OC-1", "kind": "authorized_detour", "route_id": injected["route_id"],
        "start": "2026-12-01T00:00:00-03:00", "end": "2026-12-01T23:59:59-03:00",
        "geometry": shapely.geometry.mapping(area), "note": "obras na via",
    }
    occurrences = tmp_path / "occurrences.jsonl"
    occurrences.write_text(json.dumps(occurrence) + "\n")
    sim = tmp_path / "plain"
    again = replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim / "tachograph.jsonl", sim / "catraca.jsonl",
                                occurrences=occurrences))
    by_code = {i.code: i for i in again.infractions}
    assert by_code["D-11"].status == "justified"
    assert by_code["D-11"].evidence["justified_by"] == ["OC-1"]
    assert by_code["D-11"].infraction_id == d11.infraction_id  # same facts, same id: kept for the audit trail
    assert by_code["A-07"].status == "justified"  # the stops skipped by the authorized detour too


def test_detour_occurrence_elsewhere_justifies_nothing(tmp_path):
    manifest, result = run(tmp_path / "plain", ["detour"])
    [injected] = manifest
    far_away = {"type": "Polygon", "coordinates": [[[-40.0, -19.0], [-39.99, -19.0], [-39.99, -18.99],
                                                    [-40.0, -18.99], [-40.0, -19.0]]]}
    occurrence = {"id": "OC-2", "kind": "authorized_detour", "route_id": injected["route_id"],
                  "start": "2026-12-01T00:00:00-03:00", "end": "2026-12-01T23:59:59-03:00", "geometry": far_away}
    occurrences = tmp_path / "occurrences.jsonl"
    occurrences.write_text(json.dumps(occurrence) + "\n")
    sim = tmp_path / "plain"
    again = replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim / "tachograph.jsonl", sim / "catraca.jsonl",
                                occurrences=occurrences))
    assert {i.code: i.status for i in again.infractions}["D-11"] == "confirmed"


# --- service seen by any sensor is service (issue #33, item 2) -------------------------------
# The clean day with one bus's telemetry cut: JN-1011 runs block DU-101-A of route 101.

LOCAL = dt.timezone(dt.timedelta(hours=-3))
OUTAGE = (dt.datetime(2026, 12, 1, 11, 0, tzinfo=LOCAL), dt.datetime(2026, 12, 1, 12, 30, tzinfo=LOCAL))


@pytest.fixture(scope="module")
def clean_day(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("clean")
    sim = simulate(FEED, FLEET, SimulationSettings(DAY, DAY, seed=SEED), tmp)
    return ([json.loads(line) for line in sim.tachograph.read_text().splitlines()],
            [json.loads(line) for line in sim.catraca.read_text().splitlines()])


def replayed(tmp: Path, tachograph, catraca):
    paths = tmp / "t.jsonl", tmp / "c.jsonl"
    for path, messages in zip(paths, (tachograph, catraca)):
        path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return replay(ReplayInputs(FEED_PATH, FLEET_PATH, *paths))


def without(messages, vehicle_id, start, end=None):
    """The messages but `vehicle_id`'s in [start, end) (end None: to the end of the input)."""
    def cut(m):
        ts = dt.datetime.fromisoformat(m["ts"])
        return m["vehicle_id"] == vehicle_id and start <= ts and (end is None or ts < end)
    return [m for m in messages if not cut(m)]


def accusing_d22(result):
    """D-22 records that accuse or may (confirmed, provisional, exempt_art45), by trip."""
    return {i.trip_id: i.status for i in result.infractions
            if i.code == "D-22" and i.status in ("confirmed", "provisional", "exempt_art45")}


def test_avl_silent_90_min_while_the_catraca_counts_yields_no_d22(tmp_path, clean_day):
    # JN-1011's tachograph silent 11:00-12:30, its catraca counting boardings: before, 2× D-22
    # confirmed (101-DU-0-1130, 101-DU-1-1200); the block's vehicle was in service, unseen
    tachograph, catraca = clean_day
    result = replayed(tmp_path, without(tachograph, "JN-1011", *OUTAGE), catraca)
    assert accusing_d22(result) == {}
    assert result.infractions == []  # nor a provisional one while the day ran
    by_trip = {i.trip_id: i for i in result.insufficient if i.code == "D-22"}
    assert {"101-DU-0-1130", "101-DU-1-1200"} <= set(by_trip)
    assert "catraca contou embarques" in by_trip["101-DU-0-1130"].reason
    assert by_trip["101-DU-0-1130"].evidence["vehicles"][0]["vehicle_id"] == "JN-1011"


def test_tachograph_and_catraca_silent_90_min_yields_no_d22(tmp_path, clean_day):
    # both sensors silent 11:00-12:30, then the bus speaks again: the trips can be neither
    # confirmed nor excluded. A D-22 sent provisional while the day ran is withdrawn at its close
    tachograph, catraca = clean_day
    result = replayed(tmp_path, without(tachograph, "JN-1011", *OUTAGE), without(catraca, "JN-1011", *OUTAGE))
    assert accusing_d22(result) == {}
    assert {i.status for i in result.infractions} <= {"withdrawn"}
    assert {"101-DU-0-1130", "101-DU-1-1200"} <= {i.trip_id for i in result.insufficient if i.code == "D-22"}


def test_tachograph_silent_for_the_rest_of_the_day_while_the_catraca_counts_yields_no_d22(tmp_path, clean_day):
    # the catraca alone: JN-1011's tachograph never speaks again after 20:00, its catraca
    # counts boardings until its last run; its block's trips since are service seen, unfollowed
    tachograph, catraca = clean_day
    since = dt.datetime(2026, 12, 1, 20, 0, tzinfo=LOCAL)
    result = replayed(tmp_path, without(tachograph, "JN-1011", since), catraca)
    assert accusing_d22(result) == {}
    late = [i for i in result.insufficient if i.code == "D-22" and i.evidence.get("vehicles")]
    assert late and all("catraca contou embarques" in i.reason for i in late)


def test_a_parked_bus_reporting_5_minutes_on_a_silent_day_yields_no_d22(tmp_path, clean_day):
    # one VNV bus, parked, reports 09:00-09:05 (a ping every 15 s, its catraca every 60 s,
    # never counting) and nothing else of the day: before, 4× D-22 confirmed with
    # month_complete false in their own evidence
    tachograph, catraca = clean_day
    ping = next(m for m in tachograph if m["vehicle_id"] == "JN-1011")
    reading = next(m for m in catraca if m["vehicle_id"] == "JN-1011")
    start = dt.datetime(2026, 12, 1, 9, 0, tzinfo=LOCAL)
    pings = [{**ping, "ts": (start + dt.timedelta(seconds=s)).isoformat(), "speed_kmh": 0.0, "seq": k}
             for k, s in enumerate(range(0, 300, 15))]
    readings = [{**reading, "ts": (start + dt.timedelta(seconds=s)).isoformat(), "seq": k}
                for k, s in enumerate(range(0, 300, 60))]
    result = replayed(tmp_path, pings, readings)
    assert result.infractions == []
    covered = [i for i in result.insufficient if i.code == "D-22" and i.evidence.get("vehicles")]
    assert {i.trip_id for i in covered} == {"101-DU-0-0900", "101-DU-1-0900", "101-DU-0-0930", "101-DU-1-0930"}


def test_suppressed_trip_while_its_block_vehicle_stands_reporting_yields_d22(tmp_path):
    # the suppressed_trip fault, its vehicle powered on at the terminal through the trip's whole
    # match window (a ping every 15 s from its last one to departure + 1800 s + 300 s): its
    # block's vehicle seen throughout, not running it. A true suppression stays a D-22
    sim = simulate(FEED, FLEET, SimulationSettings(DAY, DAY, seed=SEED, faults=("suppressed_trip",)), tmp_path)
    [injected] = json.loads(sim.manifest.read_text())["faults"]
    tachograph = [json.loads(line) for line in sim.tachograph.read_text().splitlines()]
    catraca = [json.loads(line) for line in sim.catraca.read_text().splitlines()]
    last = max((m for m in tachograph if m["vehicle_id"] == injected["vehicle_id"]),
               key=lambda m: dt.datetime.fromisoformat(m["ts"]))
    since = dt.datetime.fromisoformat(last["ts"])
    until = injected["scheduled_departure"] + 1800 + 300
    standing = [{**last, "ts": (since + dt.timedelta(seconds=s)).isoformat(), "speed_kmh": 0.0, "route_id": None,
                 "seq": last["seq"] + k} for k, s in enumerate(range(15, int(until - since.timestamp()), 15), 1)]
    result = replayed(tmp_path, tachograph + standing, catraca)
    assert accusing_d22(result) == {injected["trip_id"]: "exempt_art45"}
