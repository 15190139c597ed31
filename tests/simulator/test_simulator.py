"""The simulator: reproducible, and every injected fault is really in the telemetry.

Whether the detectors then find each fault is the rule catalogue's business; here
each fault is checked against the raw files it was written into.
"""

import datetime as dt
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from fiscaliza.replay import ReplayInputs, replay
from gtfs import load_feed
from gtfs.projection import Projector
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import FAULTS, SimulationError, SimulationSettings, simulate

FEED_PATH, FLEET_PATH = joao_neiva()
FEED = load_feed(FEED_PATH)
FLEET = load_fleet(FLEET_PATH)
DAY = dt.date(2026, 12, 1)  # a Tuesday: weekday (DU) service


def read(path: Path) -> list[dict]:
    """The well-formed records of a JSON Lines file (the malformed-input fault adds others)."""
    records = []
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and dt.datetime.fromisoformat(record["ts"]).tzinfo is not None:
            records.append(record)
    return records


def epoch(record: dict) -> float:
    return dt.datetime.fromisoformat(record["ts"]).timestamp()


# The input faults this file checks; those of on-board units (issue 33) each want a vehicle of
# their own, more than the sample has beside FAULTS: tests/simulator/test_input_faults.py.
LINE_FAULTS = ("malformed", "duplicates", "out_of_order", "gps_gap")


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    out = tmp_path_factory.mktemp("faulty")
    settings = SimulationSettings(DAY, DAY, seed=11, faults=tuple(FAULTS), input_faults=LINE_FAULTS)
    result = simulate(FEED, FLEET, settings, out)
    manifest = {f["fault"]: f for f in json.loads(result.manifest.read_text())["faults"]}
    replayed = replay(ReplayInputs(FEED_PATH, FLEET_PATH, result.tachograph, result.catraca))
    return result, manifest, replayed


def test_same_seed_writes_identical_files(tmp_path):
    settings = SimulationSettings(DAY, DAY, seed=5, faults=("detour",), input_faults=("duplicates",))
    a = simulate(FEED, FLEET, settings, tmp_path / "a")
    b = simulate(FEED, FLEET, settings, tmp_path / "b")
    assert a.tachograph.read_bytes() == b.tachograph.read_bytes()
    assert a.catraca.read_bytes() == b.catraca.read_bytes()


def test_other_seed_writes_other_files(tmp_path):
    a = simulate(FEED, FLEET, SimulationSettings(DAY, DAY, seed=5), tmp_path / "a")
    b = simulate(FEED, FLEET, SimulationSettings(DAY, DAY, seed=6), tmp_path / "b")
    assert a.tachograph.read_bytes() != b.tachograph.read_bytes()


def test_pings_come_every_interval_with_noise_of_a_few_metres(tmp_path):
    result = simulate(FEED, FLEET, SimulationSettings(DAY, DAY, seed=2), tmp_path)
    pings = read(result.tachograph)
    times = defaultdict(list)
    for p in pings:
        times[p["vehicle_id"]].append(epoch(p))
    gaps = np.concatenate([np.diff(sorted(t)) for t in times.values()])
    assert set(gaps.tolist()) == {10.0}  # the default 10 s interval, no fault: no gap
    # standing at a terminal before the first run: the spread is the 3 m GPS noise
    first = [p for p in pings if p["vehicle_id"] == "JN-1011"][:30]
    x, y = Projector(FEED.epsg).to_xy([p["lon"] for p in first], [p["lat"] for p in first])
    assert 1.5 < np.std(x) < 5 and 1.5 < np.std(y) < 5


def test_every_fault_is_injected_once_and_listed(faulty):
    _, manifest, _ = faulty
    assert set(manifest) == set(FAULTS) | set(LINE_FAULTS)


def test_unknown_fault_is_refused(tmp_path):
    with pytest.raises(SimulationError, match="unknown fault"):
        simulate(FEED, FLEET, SimulationSettings(DAY, DAY, faults=("teleport",)), tmp_path)


def test_range_without_service_is_refused(tmp_path):
    sunday = dt.date(2026, 12, 6)
    with pytest.raises(SimulationError, match="no service"):
        simulate(FEED, FLEET, SimulationSettings(sunday, sunday), tmp_path)


def _trip(replayed, fault):
    return [t for t in replayed.trips if t.trip_id == fault["trip_id"] and t.vehicle_id == fault["vehicle_id"]]


def test_late_departure_leaves_seven_minutes_late(faulty):
    _, manifest, replayed = faulty
    fault = manifest["late_departure"]
    [trip] = [t for t in _trip(replayed, fault) if t.departure_deviation_s > 300]
    # 420 s delay + ~20 s to cross the 100 m terminal zone
    assert 420 <= trip.departure_deviation_s <= 450


def test_en_route_lateness_departs_on_time_and_arrives_late(faulty):
    _, manifest, replayed = faulty
    fault = manifest["en_route_lateness"]
    trips = _trip(replayed, fault)
    on_time = [t for t in trips if abs(t.departure_deviation_s) <= 30]
    assert on_time
    trip = on_time[0]
    scheduled = FEED.trips[fault["trip_id"]]
    running = (trip.arrived_at - trip.departed_at).total_seconds()
    planned = scheduled.arrival_s - scheduled.departure_s
    # 420 s waiting at the first intermediate timepoint lengthens the run by about that
    assert 380 <= running - planned <= 440


def test_suppressed_trip_is_not_run(faulty):
    _, manifest, replayed = faulty
    fault = manifest["suppressed_trip"]
    assert [t for t in replayed.trips if t.trip_id == fault["trip_id"]] == []


def test_frequency_shortfall_runs_one_departure_less_in_the_window(faulty):
    _, manifest, replayed = faulty
    fault = manifest["frequency_shortfall"]
    start = dt.datetime.combine(DAY, dt.time(0), FEED.timezone).timestamp()
    in_window = [t for t in replayed.trips
                 if (t.route_id, t.direction_id) == (fault["route_id"], fault["direction_id"])
                 and start + fault["window_start_s"] <= t.departed_at.timestamp() - 30
                 < start + fault["window_end_s"]]
    expected = -(-(fault["window_end_s"] - fault["window_start_s"]) // fault["headway_s"])
    assert len(in_window) == expected - 1


def _pings_of(result, fault, start=None, end=None):
    pings = [p for p in read(result.tachograph) if p["vehicle_id"] == fault["vehicle_id"]]
    return [p for p in pings if (start is None or epoch(p) >= start) and (end is None or epoch(p) < end)]


def _run_window(fault):
    trip = FEED.trips[fault["trip_id"]]
    start = fault["scheduled_departure"]
    return start, start + trip.arrival_s - trip.departure_s + 60


def test_detour_leaves_the_shape_by_about_150_m(faulty):
    result, manifest, _ = faulty
    fault = manifest["detour"]
    pings = _pings_of(result, fault, *_run_window(fault))
    x, y = Projector(FEED.epsg).to_xy([p["lon"] for p in pings], [p["lat"] for p in pings])
    import shapely

    distance = shapely.distance(FEED.shapes[FEED.trips[fault["trip_id"]].shape_id].line, shapely.points(x, y))
    # the offset ramps to 150 m; with 3 m noise the farthest ping is 140-160 m off
    assert 140 < distance.max() < 160
    # 15 % of a ≥ 4 km shape at ≤ 10 m/s lasts well over 60 s: several pings beyond 50 m
    assert (distance > 50).sum() >= 6


def test_stop_bypass_never_comes_within_40_m_of_the_stop(faulty):
    result, manifest, _ = faulty
    fault = manifest["stop_bypass"]
    pings = _pings_of(result, fault, *_run_window(fault))
    x, y = Projector(FEED.epsg).to_xy([p["lon"] for p in pings], [p["lat"] for p in pings])
    stop = FEED.stops[fault["stop_id"]].point
    # 60 m sideways minus a few metres of noise
    assert np.hypot(x - stop.x, y - stop.y).min() > 45


def test_speeding_reports_consecutive_pings_above_67_kmh(faulty):
    result, manifest, _ = faulty
    fault = manifest["speeding"]
    pings = _pings_of(result, fault, *_run_window(fault))
    fast = [epoch(p) for p in pings if p["speed_kmh"] > 60 + 7]
    # two consecutive pings 10 s apart at least: the C-01 episode's minimum
    assert len(fast) >= 2 and any(b - a == 10 for a, b in zip(fast, fast[1:]))


def test_broken_seal_is_reported_from_mid_run(faulty):
    result, manifest, _ = faulty
    fault = manifest["broken_seal"]
    readings = [r for r in read(result.catraca) if r["vehicle_id"] == fault["vehicle_id"]]
    broken = [epoch(r) for r in readings if not r["seal_intact"]]
    assert broken and min(broken) >= fault["from_epoch"] and min(broken) < fault["from_epoch"] + 60


def test_silent_catraca_has_a_15_minute_gap(faulty):
    result, manifest, _ = faulty
    fault = manifest["silent_catraca"]
    times = sorted(epoch(r) for r in read(result.catraca) if r["vehicle_id"] == fault["vehicle_id"])
    # 900 s of silence plus up to one 60 s reporting interval
    assert 900 <= max(np.diff(times)) <= 960


def test_gps_gap_drops_four_minutes_of_pings(faulty):
    result, manifest, _ = faulty
    fault = manifest["gps_gap"]
    start = fault["from_epoch"]
    assert _pings_of(result, fault, start, start + 240) == []
    assert _pings_of(result, fault, start - 60, start)  # pings right before the gap exist


def test_input_faults_reach_the_rejections(faulty):
    result, manifest, replayed = faulty
    reasons = defaultdict(int)
    for rejection in replayed.rejected:
        reasons[rejection.reason] += 1
    assert reasons["duplicate"] == manifest["duplicates"]["count"]
    # 5 malformed lines: 2 unparseable, 1 naive timestamp, 1 latitude out of range, 1 missing field
    assert reasons["invalid_json"] == 2
    assert reasons["timestamp_without_offset"] == 1
    assert reasons["out_of_range"] == 1
    assert reasons["missing_field"] == 1


def test_out_of_order_delivery_is_really_out_of_order(faulty):
    result, _, _ = faulty
    times = [epoch(p) for p in read(result.tachograph)]
    inversions = sum(1 for a, b in zip(times, times[1:]) if b < a)
    assert inversions > 100
