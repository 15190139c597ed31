"""The on-board unit faults of issue 33 (`simulate --input-fault`): each is in the files
exactly as its manifest entry says, and the same seed writes the same bytes.

Each kind is simulated on its own beside a speeding fault (the conflicting duplicates'
preferred target) and compared line by line with the same day without it. What the engine
makes of these faults is the engine's tests' business, not this file's.
"""

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest

from gtfs import load_feed
from gtfs.projection import Projector
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import INPUT_FAULTS, SimulationSettings, simulate
from simulator.input_faults import ALLOWED_LATENESS_S, SHUFFLED_DELAY_S, UNIT_FAULTS, stray_minutes

FEED_PATH, FLEET_PATH = joao_neiva()
FEED = load_feed(FEED_PATH)
FLEET = load_fleet(FLEET_PATH)
DAY = dt.date(2026, 12, 1)  # a Tuesday
SEED = 11
PROJECTOR = Projector(FEED.epsg)


def _simulate(out: Path, input_faults=(), faults=("speeding",), **settings):
    result = simulate(FEED, FLEET, SimulationSettings(DAY, DAY, seed=SEED, faults=faults,
                                                      input_faults=input_faults, **settings), out)
    return result, json.loads(result.manifest.read_text())["faults"]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    result, manifest = _simulate(tmp_path_factory.mktemp("baseline"))
    return result.tachograph.read_bytes().splitlines(), result.catraca.read_bytes().splitlines(), manifest


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    """kind -> (its result, its manifest entry, the whole manifest)"""
    out = {}
    for kind in [*UNIT_FAULTS, "stray_minutes"]:
        result, manifest = _simulate(tmp_path_factory.mktemp(kind), (kind,))
        [entry] = [f for f in manifest if f["fault"] == kind]
        out[kind] = (result, entry, manifest)
    return out


def lines(result) -> list[bytes]:
    return result.tachograph.read_bytes().splitlines()


def records(raw: list[bytes]) -> list[dict]:
    return [json.loads(line) for line in raw]


def instant(ts: str) -> float:
    return dt.datetime.fromisoformat(ts).timestamp()


def xy(record: dict) -> np.ndarray:
    x, y = PROJECTOR.to_xy([record["lon"]], [record["lat"]])
    return np.array([x[0], y[0]])


def test_every_new_input_fault_is_an_input_fault():
    assert set(UNIT_FAULTS) | {"stray_minutes"} <= set(INPUT_FAULTS)


@pytest.mark.parametrize("kind", [*UNIT_FAULTS, "stray_minutes"])
def test_same_seed_writes_the_same_bytes(kind, simulated, tmp_path):
    result, _, manifest = simulated[kind]
    again, manifest_again = _simulate(tmp_path, (kind,))
    assert again.tachograph.read_bytes() == result.tachograph.read_bytes()
    assert again.catraca.read_bytes() == result.catraca.read_bytes()
    assert manifest_again == manifest


def test_the_other_faults_stay_where_they_were(simulated, baseline):
    *_, speeding = baseline
    for kind, (_, _, manifest) in simulated.items():
        assert [f for f in manifest if f["fault"] != kind] == speeding, kind


def test_each_fault_takes_a_vehicle_no_other_fault_has(tmp_path):
    _, manifest = _simulate(tmp_path, ("gps_teleport", "avl_outage", "stale_timezone", "late_upload"))
    vehicles = [f["vehicle_id"] for f in manifest]
    assert len(manifest) == 5 and len(set(vehicles)) == 5


@pytest.mark.parametrize("kind, fixes, metres", [("gps_teleport", 6, 3_000.0), ("gps_teleport_far", 6, 50_000.0),
                                                 ("gps_teleport_long", 30, 50_000.0)])
def test_teleport_throws_consecutive_fixes_off_and_only_their_positions(kind, fixes, metres, simulated, baseline):
    result, entry, _ = simulated[kind]
    before, after = baseline[0], lines(result)
    assert len(before) == len(after)
    changed = [k for k, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(changed) == fixes == entry["fixes"] and entry["offset_m"] == metres
    mine = [k for k, line in enumerate(before) if json.loads(line)["vehicle_id"] == entry["vehicle_id"]]
    at = mine.index(changed[0])
    assert mine[at:at + fixes] == changed  # consecutive fixes of the vehicle
    for k, moved in zip(changed, entry["moved"]):
        true, thrown = json.loads(before[k]), json.loads(after[k])
        assert (thrown["ts"], thrown["seq"], thrown["lat"], thrown["lon"]) == (
            moved["ts"], moved["seq"], moved["lat"], moved["lon"])
        assert (true["lat"], true["lon"]) == (moved["true_lat"], moved["true_lon"])
        assert {**thrown, "lat": 0, "lon": 0} == {**true, "lat": 0, "lon": 0}  # speed, odometer: the vehicle's own
        assert abs(np.hypot(*(xy(thrown) - xy(true))) - metres) < 1.0
        assert entry["from_epoch"] <= instant(thrown["ts"]) <= entry["to_epoch"]
    # the fixes on either side are true, and where the bus was: within a few hundred metres
    # of the first and last of the true positions the run of thrown fixes replaced
    first_true, last_true = json.loads(before[changed[0]]), json.loads(before[changed[-1]])
    neighbour_before, neighbour_after = json.loads(after[mine[at - 1]]), json.loads(after[mine[at + fixes]])
    assert np.hypot(*(xy(neighbour_before) - xy(first_true))) < 200
    assert np.hypot(*(xy(neighbour_after) - xy(last_true))) < 200
    assert abs(np.hypot(*(xy(json.loads(after[changed[0]])) - xy(neighbour_before))) - metres) < 300


@pytest.mark.parametrize("kind", ["avl_outage", "total_outage"])
def test_outage_silences_90_minutes_of_the_vehicle(kind, simulated, baseline):
    result, entry, _ = simulated[kind]
    vehicle, start, end = entry["vehicle_id"], entry["from_epoch"], entry["to_epoch"]
    assert end - start == entry["seconds"] == 5400

    def inside(raw):
        return [r for r in records(raw) if r["vehicle_id"] == vehicle and start <= instant(r["ts"]) < end]

    pings_before, readings_before = baseline[0], baseline[1]
    pings, readings = lines(result), result.catraca.read_bytes().splitlines()
    assert inside(pings) == [] and len(inside(pings_before)) == entry["pings_dropped"] == 540
    kept = set(pings)
    assert [line for line in pings_before if line in kept] == pings  # nothing else went
    # telemetry up to the silence and from its end: an outage mid-day, not the day's edge
    mine = [instant(r["ts"]) for r in records(pings) if r["vehicle_id"] == vehicle]
    assert any(start - 10 <= t < start for t in mine) and any(end <= t < end + 10 for t in mine)
    assert entry["trips"] and all(start <= trip["scheduled_departure"] < end for trip in entry["trips"])
    if kind == "avl_outage":  # the catraca goes on counting boardings
        assert readings == readings_before
        counted = inside(readings)
        assert len(counted) == entry["catraca_readings"] >= 89
        assert entry["boardings"] > 0 and counted[-1]["counter"] - counted[0]["counter"] <= entry["boardings"]
    else:
        assert inside(readings) == [] and len(inside(readings_before)) == entry["catraca_dropped"] >= 89
        assert len(readings_before) - len(readings) == entry["catraca_dropped"]


@pytest.mark.parametrize("kind, offset, shift", [("stale_timezone", "-02:00", -3600),
                                                 ("stale_timezone_day", "-02:00", -3600),
                                                 ("local_as_utc", "Z", -10800)])
def test_restamped_lines_keep_their_digits_and_place_and_move_their_instant(kind, offset, shift, simulated,
                                                                           baseline):
    result, entry, _ = simulated[kind]
    before, after = baseline[0], lines(result)
    assert len(before) == len(after)  # each line where the unit delivered it
    changed = [k for k, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(changed) == entry["restamped"] and entry["shift_s"] == shift and entry["offset"] == offset
    vehicle = entry["vehicle_id"]
    for k in changed:
        true, stamped = json.loads(before[k]), json.loads(after[k])
        assert stamped["vehicle_id"] == vehicle and {**stamped, "ts": 0} == {**true, "ts": 0}
        assert stamped["ts"].endswith(offset) and stamped["ts"][:19] == true["ts"][:19]  # the wall clock's digits
        assert instant(stamped["ts"]) - instant(true["ts"]) == shift
    stamped = [json.loads(after[k])["ts"] for k in changed]
    assert (stamped[0], stamped[-1]) == (entry["first_ts"], entry["last_ts"])
    theirs = [k for k, line in enumerate(before) if json.loads(line)["vehicle_id"] == vehicle]
    if kind == "stale_timezone":  # exactly the vehicle's lines of one hour
        assert changed == [k for k in theirs if entry["from_epoch"] <= instant(json.loads(before[k])["ts"])
                           < entry["to_epoch"]]
        assert entry["to_epoch"] - entry["from_epoch"] == 3600 and 350 <= len(changed) <= 360
    else:  # the vehicle's whole day (the simulation's one day)
        assert changed == theirs


@pytest.mark.parametrize("kind, first", [("conflicting_duplicate_first", True), ("conflicting_duplicate_after", False)])
def test_conflicting_duplicates_of_the_speeding_pings_in_the_stated_order(kind, first, simulated, baseline):
    result, entry, manifest = simulated[kind]
    [speeding] = [f for f in manifest if f["fault"] == "speeding"]
    assert entry["of_fault"] == "speeding" and entry["vehicle_id"] == speeding["vehicle_id"]
    assert entry["placed"] == ("before the original" if first else "after the original")
    after = records(lines(result))
    assert len(after) == len(baseline[0]) + len(entry["pings"]) >= len(baseline[0]) + 2
    seqs = [p["seq"] for p in entry["pings"]]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # consecutive pings
    for ping in entry["pings"]:
        versions = [k for k, r in enumerate(after) if (r["vehicle_id"], r["ts"], r["seq"])
                    == (entry["vehicle_id"], ping["ts"], ping["seq"])]
        assert len(versions) == 2 and versions[1] == versions[0] + 1  # side by side
        original, other = (after[versions[1]], after[versions[0]]) if first else (after[versions[0]],
                                                                                 after[versions[1]])
        assert original["speed_kmh"] == ping["speed_kmh"] > 67  # a speeding ping
        assert other["speed_kmh"] == ping["other_speed_kmh"] == 50.0
        assert {**other, "speed_kmh": 0} == {**original, "speed_kmh": 0}
    # every speeding ping of the episode has its second version
    fast = [r for r in records(baseline[0]) if r["vehicle_id"] == speeding["vehicle_id"] and r["speed_kmh"] > 67]
    assert [(r["ts"], r["seq"]) for r in fast] == [(p["ts"], p["seq"]) for p in entry["pings"]]


def test_conflicting_duplicate_without_speeding_takes_two_consecutive_moving_pings(tmp_path):
    _, manifest = _simulate(tmp_path, ("conflicting_duplicate_first",), faults=())
    [entry] = manifest
    assert entry["of_fault"] is None and len(entry["pings"]) == 2
    assert entry["pings"][1]["seq"] == entry["pings"][0]["seq"] + 1
    assert all(p["speed_kmh"] > 0 and p["other_speed_kmh"] != p["speed_kmh"] for p in entry["pings"])


def test_late_upload_moves_the_backlog_after_the_first_live_ping(simulated, baseline):
    result, entry, _ = simulated["late_upload"]
    before, after = baseline[0], lines(result)
    assert sorted(before) == sorted(after)
    vehicle, start, end = entry["vehicle_id"], entry["from_epoch"], entry["to_epoch"]
    assert end - start == entry["seconds"] == 1800

    def in_backlog(line):
        record = json.loads(line)
        return record["vehicle_id"] == vehicle and start <= instant(record["ts"]) < end

    backlog = [line for line in before if in_backlog(line)]
    assert len(backlog) == entry["backlog"] == 180
    # the rest of the file keeps its order: the live pings after the gap keep their place
    assert [line for line in after if not in_backlog(line)] == [line for line in before if not in_backlog(line)]
    named = (vehicle, entry["uploaded_after"]["ts"], entry["uploaded_after"]["seq"])
    live = next(k for k, r in enumerate(records(after)) if (r["vehicle_id"], r["ts"], r["seq"]) == named)
    assert instant(json.loads(after[live])["ts"]) >= end
    assert after[live + 1:live + 1 + len(backlog)] == backlog  # uploaded at once, in its own order
    newest = max(instant(json.loads(line)["ts"]) for line in after[:live + 1])
    assert newest - instant(json.loads(backlog[0])["ts"]) == entry["lateness_s"] > ALLOWED_LATENESS_S


def test_shuffled_late_delays_a_few_percent_beyond_the_lateness(simulated, baseline):
    result, entry, _ = simulated["shuffled_late"]
    before, after = baseline[0], lines(result)
    assert sorted(before) == sorted(after) and before != after
    times = np.array([instant(json.loads(line)["ts"]) for line in after])
    lateness = np.maximum.accumulate(times) - times
    late = lateness[lateness > 0]
    assert len(late) == entry["count"] == round(0.03 * len(before))
    assert late.min() > ALLOWED_LATENESS_S and late.max() <= SHUFFLED_DELAY_S[1]
    assert [round(late.min()), round(late.max())] == entry["lateness_s"]


def test_stray_minutes_helper_parks_a_bus_five_minutes_on_the_date(tmp_path):
    wednesday = DAY + dt.timedelta(days=1)
    rows, entry = stray_minutes(FEED, FLEET, wednesday, np.random.default_rng(3), PROJECTOR)
    again, _ = stray_minutes(FEED, FLEET, wednesday, np.random.default_rng(3), PROJECTOR)
    assert rows == again
    pings = [json.loads(line) for _, _, line in rows]
    assert len(pings) == entry["pings"] == 30
    assert {p["vehicle_id"] for p in pings} == {entry["vehicle_id"]}
    assert {p["ts"][:10] for p in pings} == {wednesday.isoformat()} == {entry["service_date"]}
    assert instant(pings[-1]["ts"]) - instant(pings[0]["ts"]) == entry["to_epoch"] - entry["from_epoch"] == 290
    assert all(p["speed_kmh"] == 0 and p["route_id"] is None for p in pings)
    stop = FEED.stops[entry["stop_id"]].point
    assert all(np.hypot(*(xy(p) - np.array([stop.x, stop.y]))) < 20 for p in pings)  # parked: GPS noise only
    assert FEED.operator_of(next(t.route_id for t in FEED.trips.values() if t.stops[0].stop_id == entry["stop_id"])) \
        == FLEET[entry["vehicle_id"]].operator_id  # a terminal of its operator


def test_stray_minutes_lands_on_the_next_service_date_alone(simulated, baseline):
    result, entry, _ = simulated["stray_minutes"]
    after = lines(result)
    assert after[:len(baseline[0])] == baseline[0]  # the simulated day as it was, the stray minutes after it
    extra = records(after[len(baseline[0]):])
    assert entry["service_date"] == "2026-12-02" and len(extra) == entry["pings"]
    assert all(r["ts"].startswith("2026-12-02") for r in extra)
    # the simulated service day ends past midnight, hours before the bus stands there
    last = max(instant(r["ts"]) for r in records(baseline[0]))
    assert entry["from_epoch"] - last > 6 * 3600


def test_thirty_fixes_a_minute_apart_outlast_a_run_and_are_still_thrown(tmp_path):
    result, manifest = _simulate(tmp_path, ("gps_teleport_long",), ping_interval_s=60)
    [entry] = [f for f in manifest if f["fault"] == "gps_teleport_long"]
    thrown = {(m["ts"], m["seq"]) for m in entry["moved"]}
    mine = [r for r in records(lines(result)) if r["vehicle_id"] == entry["vehicle_id"]]
    at = [k for k, r in enumerate(mine) if (r["ts"], r["seq"]) in thrown]
    assert len(at) == 30 and at == list(range(at[0], at[0] + 30)) and 0 < at[0] and at[-1] < len(mine) - 1
    assert entry["to_epoch"] - entry["from_epoch"] == 29 * 60


def test_receipts_stamp_every_message_with_its_true_time_before_a_clock_lies(tmp_path, baseline):
    # --receipts: received_at = the true instant + 2 s on every line of both files; a stale
    # timezone table then moves only `ts` (one hour early), so the receipt tells it
    result, manifest = _simulate(tmp_path, ("stale_timezone",), receipts=True)
    [entry] = [f for f in manifest if f["fault"] == "stale_timezone"]
    gaps = []
    for path in (result.tachograph, result.catraca):
        for record in records(path.read_bytes().splitlines()):
            ts, received = (dt.datetime.fromisoformat(record[k]) for k in ("ts", "received_at"))
            gaps.append((received - ts).total_seconds())
    lied = [g for g in gaps if g > 60]
    assert len(lied) == entry["restamped"] and {round(g) for g in lied} <= {3601, 3602}  # 3600 + 2 s, ± truncation
    assert {round(g) for g in gaps if g <= 60} <= {1, 2}
    # without --receipts no line carries the key: the files of every other test are unchanged
    assert all("received_at" not in r for r in records(baseline[0]) + records(baseline[1]))
