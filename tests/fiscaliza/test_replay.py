"""Replaying the simulator's fault-free sample network: every scheduled trip realized.

The acceptance criterion of the foundation: each scheduled trip of the day is
realized, matched to its own trip_id (the one the simulator drove), and departs
within ±30 s of its scheduled time. Headway-based departures take their window's
template trip_id and are checked against the departure the simulator drove.
"""

import datetime as dt
import json
from pathlib import Path

import pytest

from fiscaliza.replay import RejectionLog, ReplayInputs, replay, write_outputs
from gtfs import frequency_windows, load_feed, scheduled_trips
from kernel.errors import InputError
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate
from simulator.plan import plan_day
from telemetry import RAW_SHOWN_BYTES, Rejection
from trips.model import trip_record

FEED_PATH, FLEET_PATH = joao_neiva()
FEED = load_feed(FEED_PATH)
FLEET = load_fleet(FLEET_PATH)


def fault_free(tmp_path: Path, start: dt.date, end: dt.date, seed: int = 1):
    sim = simulate(FEED, FLEET, SimulationSettings(start, end, seed=seed), tmp_path / "sim")
    return replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca))


@pytest.mark.parametrize(
    "day",
    [dt.date(2026, 12, 1), dt.date(2026, 12, 5), dt.date(2026, 12, 8)],
    ids=["weekday", "saturday", "municipal-holiday-on-saturday-timetable"],
)
def test_fault_free_day_realizes_every_scheduled_trip_matched_to_itself(tmp_path, day):
    result = fault_free(tmp_path, day, day)
    driven = {(d.vehicle_id, r.trip_id, r.departure) for d in plan_day(FEED, day, FLEET) for r in d.runs}
    realized = {}
    for trip in result.trips:
        realized.setdefault((trip.vehicle_id, trip.trip_id), []).append(trip)
    assert len(result.trips) == len(driven)
    for vehicle, trip_id, departure in driven:
        candidates = realized.get((vehicle, trip_id), [])
        # the trip realized by the vehicle that drove it, leaving within 30 s of the plan
        assert any(abs(t.departed_at.timestamp() - departure) <= 30 for t in candidates), (vehicle, trip_id)
    timetabled = {t.trip_id for t in scheduled_trips(FEED, day)}
    assert {t.trip_id for t in result.trips if t.departure_deviation_s is not None} == timetabled
    deviations = [t.departure_deviation_s for t in result.trips if t.departure_deviation_s is not None]
    assert all(-30 <= d <= 30 for d in deviations)
    headway = [t for t in result.trips if t.departure_deviation_s is None]
    expected = sum(w.expected_departures for w in frequency_windows(FEED, day))
    assert len(headway) == expected and all(t.trip_id for t in headway)
    assert list(result.rejected) == []
    assert result.service_dates == [day]


def test_holiday_runs_the_saturday_timetable(tmp_path):
    # 2026-12-08 (Tuesday) is the sample's municipal holiday: DU removed, SAB added
    result = fault_free(tmp_path, dt.date(2026, 12, 8), dt.date(2026, 12, 8))
    assert {t.trip_id.split("-")[1] for t in result.trips} == {"SAB"}


def test_two_days_are_closed_separately_and_the_late_trip_stays_on_its_day(tmp_path):
    # the 23:50 weekday trip arrives at 24:11, after midnight, but belongs to its service day
    result = fault_free(tmp_path, dt.date(2026, 12, 1), dt.date(2026, 12, 2))
    late = [t for t in result.trips if t.trip_id == "101-DU-0-2350"]
    assert [t.service_date for t in late] == [dt.date(2026, 12, 1), dt.date(2026, 12, 2)]
    assert result.service_dates == [dt.date(2026, 12, 1), dt.date(2026, 12, 2)]


def test_replay_outputs_are_the_same_for_shuffled_duplicated_input(tmp_path):
    day = dt.date(2026, 12, 1)
    sim = simulate(FEED, FLEET, SimulationSettings(day, day, seed=4, input_faults=("duplicates", "out_of_order")),
                   tmp_path / "faulty")
    clean = simulate(FEED, FLEET, SimulationSettings(day, day, seed=4), tmp_path / "clean")
    a = replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca))
    b = replay(ReplayInputs(FEED_PATH, FLEET_PATH, clean.tachograph, clean.catraca))
    assert [trip_record(t) for t in a.trips] == [trip_record(t) for t in b.trips]
    assert {r.reason for r in a.rejected} == {"duplicate"}


def test_written_files_follow_the_contract(tmp_path):
    day = dt.date(2026, 12, 1)
    result = fault_free(tmp_path, day, day)
    out = tmp_path / "nested" / "out"
    write_outputs(result, out)
    lines = (out / "trips.jsonl").read_text().splitlines()
    assert len(lines) == len(result.trips)
    first = json.loads(lines[0])
    assert list(first) == ["vehicle_id", "route_id", "direction_id", "trip_id", "service_date", "departed_at",
                           "arrived_at", "departure_deviation_s", "coverage"]
    assert first["service_date"] == "2026-12-01"
    assert first["departed_at"].endswith("-03:00")
    assert (out / "infractions.jsonl").read_text() == ""
    assert (out / "rejected.jsonl").read_text() == ""


def test_the_external_sort_gives_the_in_memory_sorts_outputs(tmp_path):
    # runs of 997 messages spilled to temporary files and merged, against one run in
    # memory: a day with every fault, duplicated and reordered input and bad lines
    faults = ("detour", "late_departure", "speeding", "broken_seal", "silent_catraca", "suppressed_trip")
    sim = simulate(FEED, FLEET, SimulationSettings(dt.date(2026, 12, 1), dt.date(2026, 12, 1), seed=4, faults=faults,
                                                   input_faults=("duplicates", "out_of_order", "malformed")),
                   tmp_path / "sim")
    inputs = ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca)
    spilled, in_memory = replay(inputs, run_size=997), replay(inputs, run_size=10**9)
    assert spilled.messages == in_memory.messages > 997 * 30
    write_outputs(spilled, tmp_path / "spilled")
    write_outputs(in_memory, tmp_path / "memory")
    for name in ("trips.jsonl", "infractions.jsonl", "rejected.jsonl", "insufficient_evidence.jsonl",
                 "vehicle_status.jsonl", "month_efficiency.jsonl"):
        assert (tmp_path / "spilled" / name).read_bytes() == (tmp_path / "memory" / name).read_bytes(), name
    # of two copies the first in the file is taken and the later one rejected, as a stable
    # in-memory sort does (the spilled runs keep the input order among equal keys)
    first_line: dict[str, int] = {}
    for path in (sim.tachograph, sim.catraca):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            first_line.setdefault(f"{path.name}|{line}", number)
    duplicates = [r for r in spilled.rejected if r.reason == "duplicate"]
    assert duplicates
    for rejection in duplicates:
        name, number = rejection.location.split(":")
        assert int(number) > first_line[f"{name}|{rejection.raw}"], rejection.location


def test_a_small_input_is_decoded_once_and_a_large_one_comes_back_the_same(tmp_path, monkeypatch):
    import fiscaliza.replay as replay_module
    from fiscaliza.replay import read_messages

    sim = simulate(FEED, FLEET, SimulationSettings(dt.date(2026, 12, 1), dt.date(2026, 12, 1), seed=2,
                                                   input_faults=("duplicates", "malformed")), tmp_path / "sim")
    inputs = ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca)
    calls = []
    decode = replay_module.decode
    monkeypatch.setattr(replay_module, "decode", lambda *args: calls.append(args[2]) or decode(*args))
    in_memory, rejected = read_messages(inputs, run_size=10**9)
    lines = sum(1 for path in (sim.tachograph, sim.catraca) for line in path.read_bytes().splitlines() if line.strip())
    assert len(calls) == lines == len(in_memory) + len(rejected)  # once each, the rejected ones too
    calls.clear()
    spilled, spilled_rejected = read_messages(inputs, run_size=997)
    assert spilled == in_memory and spilled_rejected == rejected
    assert len(calls) == lines + len(spilled)  # spilled: decoded again as the runs come back, as before


@pytest.mark.parametrize("order", ["genuine first", "copy first"])
def test_of_two_versions_of_one_message_the_second_received_is_rejected_and_the_track_keeps_one_by_content(tmp_path, order):
    # same vehicle, time and seq; the copy says 100 km/h. Replay reads the files in event-time
    # order with the input order breaking ties, as a worker takes them by arrival: the second
    # received is the rejected one, but which the track uses is chosen by content (the
    # faster), so both orders of arrival judge alike.
    genuine = {"vehicle_id": "JN-1011", "ts": "2026-12-01T10:00:00-03:00", "lat": -19.7574776,
               "lon": -40.3852385, "speed_kmh": 20.0, "seq": 7}
    copy = {**genuine, "speed_kmh": 100.0}
    lines = [genuine, copy] if order == "genuine first" else [copy, genuine]
    tachograph = tmp_path / "t.jsonl"
    tachograph.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = replay(ReplayInputs(FEED_PATH, FLEET_PATH, tachograph))
    [conflict] = result.rejected
    assert (conflict.reason, conflict.location) == ("conflicting_duplicate", "t.jsonl:2")
    assert json.loads(conflict.raw)["speed_kmh"] == lines[1]["speed_kmh"]
    [status] = result.statuses
    assert status.speed_kmh == 100.0  # the version kept, whichever came first


def test_one_stray_ping_late_in_the_month_leaves_the_days_without_telemetry_out_of_art45(tmp_path):
    # Dec 1 with one suppressed trip (a D-22, exempt: the month runs >= 98 %). Two pings of
    # JN-1011 dated Dec 28 close Dec 2-27, with service scheduled and not one message from
    # the fleet: before this they counted as 0 % days and the D-22 lost its exemption, and
    # a stray ping made six D-22 on Dec 28 around 10:00. (One ping alone is beyond the
    # stream's event-time frontier at the end of the input: `future`, it closes nothing.)
    day = dt.date(2026, 12, 1)
    sim = simulate(FEED, FLEET, SimulationSettings(day, day, seed=4, faults=("suppressed_trip",)), tmp_path / "sim")
    alone = replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca))
    stray = tmp_path / "stray.jsonl"
    stray.write_text(sim.tachograph.read_text() + "".join(json.dumps(
        {"vehicle_id": "JN-1011", "ts": f"2026-12-28T10:00:{second:02d}-03:00", "lat": -19.7574776,
         "lon": -40.3852385, "speed_kmh": 0.0}) + "\n" for second in (0, 10)))
    with_stray = replay(ReplayInputs(FEED_PATH, FLEET_PATH, stray, sim.catraca))

    def d22(result):
        return {i.infraction_id: i for i in result.infractions if i.code == "D-22"}

    before, after = d22(alone), d22(with_stray)
    assert before and before.keys() == after.keys()  # no D-22 on Dec 28
    for key, record in before.items():
        assert after[key].status == record.status == "exempt_art45"
        art45 = after[key].evidence["art45"]
        assert art45["efficiency_pct"] == record.evidence["art45"]["efficiency_pct"]
        assert art45["service_dates_considered"] == ["2026-12-01"]
        left_out = art45["days_without_telemetry"]
        # Dec 2-26 (days with service) and Dec 28 itself: one ping is not a fleet at work
        assert left_out[0] == "2026-12-02" and {"2026-12-26", "2026-12-28"} <= set(left_out)
        assert "2026-12-01" not in left_out


def test_a_line_longer_than_the_policy_bound_is_rejected_with_its_location_and_the_next_lines_are_read(tmp_path):
    pings = [{"vehicle_id": "JN-1011", "ts": f"2026-12-01T10:00:{s:02d}-03:00", "lat": -19.7574776,
              "lon": -40.3852385, "speed_kmh": 20.0, "seq": s} for s in (0, 10)]
    tachograph = tmp_path / "t.jsonl"
    long_line = json.dumps({**pings[0], "note": "x" * 100_000}).encode()
    tachograph.write_bytes(json.dumps(pings[0]).encode() + b"\n" + long_line + b"\n" + json.dumps(pings[1]).encode())
    result = replay(ReplayInputs(FEED_PATH, FLEET_PATH, tachograph))
    [too_long] = result.rejected
    assert (too_long.reason, too_long.location, too_long.raw_length) == ("too_long", "t.jsonl:2", len(long_line))
    assert f"{len(long_line)} bytes" in too_long.detail
    assert result.messages == 3
    [status] = result.statuses
    assert status.ts == pings[1]["ts"]  # the line after it was read
    write_outputs(result, tmp_path / "out")
    [written] = (tmp_path / "out" / "rejected.jsonl").read_text().splitlines()
    assert json.loads(written)["raw"] == long_line[:RAW_SHOWN_BYTES].decode()


def test_the_rejection_log_gives_back_what_it_was_given_in_order_before_and_after_reading_it():
    rejections = [Rejection(source="tachograph", reason="invalid_json", detail="d", location=f"t.jsonl:{n}",
                            raw="x" * n) for n in range(1, 4)]
    log = RejectionLog(rejections[:2])
    assert list(log) == rejections[:2]
    log.append(rejections[2])
    assert (list(log), len(log)) == (rejections, 3)


def test_an_input_none_of_whose_lines_is_json_is_a_wrong_file(tmp_path):
    # before: fleet.csv as the catraca was 8 invalid_json rejections and exit 0; the
    # tachograph before it, a good one, spilled runs (run_size=500) the refusal closes
    sim = simulate(FEED, FLEET, SimulationSettings(dt.date(2026, 12, 1), dt.date(2026, 12, 1)), tmp_path / "sim")
    with pytest.raises(InputError, match=rf"^--catraca {FLEET_PATH} is not JSON Lines: none of its 8 line\(s\) is JSON"):
        replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, FLEET_PATH), run_size=500)


def test_a_file_with_one_json_line_among_bad_ones_is_read_with_its_rejections(tmp_path):
    tachograph = tmp_path / "t.jsonl"
    tachograph.write_text("vehicle_id,ts\nJN-1011,06:00\n" + json.dumps(
        {"vehicle_id": "JN-1011", "ts": "2026-12-01T06:00:00-03:00", "lat": -19.75, "lon": -40.38, "speed_kmh": 0})
        + "\n")
    result = replay(ReplayInputs(FEED_PATH, FLEET_PATH, tachograph))
    assert [r.reason for r in result.rejected] == ["invalid_json", "invalid_json"]
