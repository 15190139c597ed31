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
