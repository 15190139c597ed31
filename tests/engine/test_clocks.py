"""Clock faults are found, not believed (engine.clocks; issue #33, item 3).

The simulated clean day of the sample João Neiva network (seed 21: 0 infractions, 159
trips) with a receipt time on every message, as an ingest adapter writes it (its own
clock, 2 s after the message was made); then one vehicle's unit stamps its messages
wrong: one hour with -02:00 in place of -03:00 keeping the digits (a stale daylight-saving
table), a whole day so, or local time labelled `Z`. Before: 2× D-12; 2× D-12 or a D-13;
D-13, D-19 and 4× D-22, all confirmed. Now the faulty messages are rejected as
`clock_offset` and the stretch they cover is insufficient evidence.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from engine.clocks import ClockFault, judge_clock, whole_hours_behind, with_fault
from engine.loading import load_context
from engine.values import Message
from engine.vehicle import PartitionState, VehicleStage
from fiscaliza.replay import ReplayInputs, replay
from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate
from telemetry import decode_tachograph

FEED_PATH, FLEET_PATH = joao_neiva()
DAY = dt.date(2026, 12, 1)
BRT = dt.timezone(dt.timedelta(hours=-3))
ACCUSING = {"D-12", "D-13", "D-19", "D-22"}


@pytest.fixture(scope="module")
def context():
    return load_context(ReplayInputs(feed=FEED_PATH, fleet=FLEET_PATH, tachograph=FLEET_PATH))


def simulated(directory: Path, faults=()) -> tuple[Path, Path, list]:
    sim = simulate(load_feed(FEED_PATH), load_fleet(FLEET_PATH),
                   SimulationSettings(DAY, DAY, seed=21, faults=tuple(faults)), directory)
    return sim.tachograph, sim.catraca, json.loads(sim.manifest.read_text())["faults"]


@pytest.fixture(scope="module")
def clean_day(tmp_path_factory):
    tachograph, catraca, _ = simulated(tmp_path_factory.mktemp("clean"))
    return tachograph, catraca


def restamped(source: Path, target: Path, vehicle: str | None, mode: str | None, hours=range(24),
              delays=(2,)) -> Path:
    """`source` with every message's receipt (`received_at`, UTC: the adapter's clock) at its
    true time plus a delay (taken in turn from `delays`), then `vehicle`'s messages of the
    local `hours` stamped by a faulty clock: "dst" -02:00 for -03:00 keeping the digits,
    "z" the local digits labelled Z, "ahead" -04:00 (an hour ahead)."""
    lines = []
    for n, line in enumerate(source.read_text().splitlines()):
        message = json.loads(line)
        made = dt.datetime.fromisoformat(message["ts"])
        receipt = made + dt.timedelta(seconds=delays[n % len(delays)])
        message["received_at"] = receipt.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")
        if message["vehicle_id"] == vehicle and made.hour in hours:
            assert message["ts"].endswith("-03:00")
            message["ts"] = message["ts"][:-6] + {"dst": "-02:00", "z": "Z", "ahead": "-04:00"}[mode]
        lines.append(json.dumps(message, separators=(",", ":")))
    target.write_text("\n".join(lines) + "\n")
    return target


def replay_of(tmp: Path, day, vehicle=None, mode=None, hours=range(24), inputs=("tachograph", "catraca"),
              delays=(2,)):
    tachograph, catraca = day
    files = {name: restamped(path, tmp / f"{name}.jsonl", vehicle if name in inputs else None, mode, hours, delays)
             for name, path in (("tachograph", tachograph), ("catraca", catraca))}
    return replay(ReplayInputs(FEED_PATH, FLEET_PATH, files["tachograph"], files["catraca"]))


def offsets_in_details(result) -> set[str]:
    return {r.detail.split("offset ")[1].split(" s")[0] for r in result.rejected}


def clock_passes(result, vehicle: str) -> list[dict]:
    return [p for record in result.insufficient for p in record.evidence.get("unfollowed", [])
            if p["vehicle_id"] == vehicle and "clock_offset_s" in p]


# --- the rule ---------------------------------------------------------------------------


@pytest.mark.parametrize("offset_s,verdict", [
    (0, None), (-5, None), (+5, None),  # a correct clock, received a few seconds after, or before
    (-1500, None), (-3300, None), (-3900, None),  # store and forward: whatever the outage lasted
    (+121, "clock_offset"), (+900, "clock_offset"), (+901, "future"),  # dated after its receipt
    (-3600, "clock_offset"), (-3602, "clock_offset"), (-3480, "clock_offset"),  # 1 h behind, to within 120 s
    (-3479, None), (-3721, None),
    (-10800, "clock_offset"),  # local time labelled Z in Brazil
])
def test_a_message_is_judged_by_its_receipt(context, offset_s, verdict):
    received = dt.datetime(2026, 12, 1, 10, tzinfo=BRT).timestamp()
    judged = judge_clock(received + offset_s, received, context.policy.stream, BRT)
    assert (judged.reason if judged else None) == verdict
    if judged:
        assert f"offset {offset_s:+d} s" in judged.detail


def test_whole_hours_are_timezone_sized():
    assert whole_hours_behind(-26 * 3600, 120) == 26
    assert whole_hours_behind(-27 * 3600, 120) is None  # days of store and forward, not a timezone
    assert whole_hours_behind(+3600, 120) is None


def test_a_stretch_grows_with_the_faulty_messages_that_follow_it_and_a_gap_starts_another():
    faults = with_fault([], "tachograph", 100.0, -3600, "a", gap_s=300, keep_s=86400)
    faults = with_fault(faults, "tachograph", 350.0, -3600, "b", gap_s=300, keep_s=86400)
    faults = with_fault(faults, "catraca", 360.0, -3600, "c", gap_s=300, keep_s=86400)
    assert faults == [ClockFault("tachograph", 100.0, 350.0, -3600, "a", "b"),
                      ClockFault("catraca", 360.0, 360.0, -3600, "c", "c")]
    faults = with_fault(faults, "tachograph", 700.0, -3600, "d", gap_s=300, keep_s=86400)
    assert [(f.first, f.last) for f in faults if f.input == "tachograph"] == [(100.0, 350.0), (700.0, 700.0)]
    assert with_fault(faults, "tachograph", 100.0 + 86400 + 351, -3600, "e", gap_s=300, keep_s=86400)[:-1] == \
        [f for f in faults if f.first == 700.0]  # a stretch of a judged day is forgotten


# --- the clean day ------------------------------------------------------------------------


def test_a_correct_clock_received_a_few_seconds_either_way_or_forwarded_late_is_no_fault(tmp_path, clean_day):
    # receipts 5 s before the time a message carries (the adapter's clock a little behind),
    # 2 s and 40 s after it, and 25 min after it (stored and forwarded): all believed
    result = replay_of(tmp_path, clean_day, delays=(-5, 2, 40, 1500))
    assert list(result.rejected) == []
    assert (result.infractions, result.insufficient, len(result.trips)) == ([], [], 159)


def test_one_hour_stamped_minus_two_hours_is_rejected_and_accuses_no_one(tmp_path, clean_day):
    # JN-2011 (route 201, headway-based) from 10:00 to 11:00: before, 2× D-12 confirmed
    result = replay_of(tmp_path, clean_day, "JN-2011", "dst", hours=range(10, 11))
    assert [r for r in result.infractions if r.code in ACCUSING] == []
    assert result.infractions == []
    assert {r.reason for r in result.rejected} == {"clock_offset"}
    assert len(result.rejected) == 360 + 60  # its hour of pings and catraca readings
    assert offsets_in_details(result) == {"-3602"}
    # the D-12 window it falls in cannot be judged: the bus may have left any number of times
    [d12] = result.insufficient
    assert (d12.code, d12.route_id) == ("D-12", "201")
    [stretch] = {(p["first_fix"], p["last_fix"]) for p in clock_passes(result, "JN-2011")}
    assert stretch[0].startswith("2026-12-01T10:00") and stretch[1].startswith("2026-12-01T10:59")


@pytest.mark.parametrize("vehicle,mode,offset,reason", [
    ("JN-2011", "dst", "-3602", "clock_offset"),  # before: 2× D-12 confirmed
    ("JN-1011", "dst", "-3602", "clock_offset"),  # before: a D-13 confirmed
    ("JN-1011", "z", "-10802", "clock_offset"),  # local time labelled Z; before: D-13, D-19 and 4× D-22 confirmed
    ("JN-2011", "ahead", "+3598", "future"),  # an hour ahead: more than max_clock_jump_s after its receipt
])
def test_a_whole_day_of_a_faulty_clock_is_rejected_and_accuses_no_one(tmp_path, clean_day, vehicle, mode, offset,
                                                                      reason):
    result = replay_of(tmp_path, clean_day, vehicle, mode)
    assert [r for r in result.infractions if r.code in ACCUSING] == []
    assert result.infractions == []
    assert {r.reason for r in result.rejected} == {reason}
    assert {r.raw and json.loads(r.raw)["vehicle_id"] for r in result.rejected} == {vehicle}
    assert offsets_in_details(result) == {offset}
    assert {t.vehicle_id for t in result.trips} == {"JN-1011", "JN-1012", "JN-2011", "JN-2012", "JN-2013",
                                                    "JN-2014"} - {vehicle}
    # what its trips would have been is insufficient evidence, naming its clock
    assert result.insufficient and {r.code for r in result.insufficient} <= {"D-12", "D-22"}
    assert {p["clock_offset_s"] for p in clock_passes(result, vehicle)} == {float(offset)}


def test_a_catraca_clock_an_hour_behind_is_no_silence_of_the_catraca(tmp_path, clean_day):
    # only JN-1011's catraca unit (its own clock) stamps 10:00–11:00 with -02:00: its
    # readings are rejected, the tachograph shows the bus in service, and the catraca looks
    # silent for an hour — a D-19 if the silence were believed
    result = replay_of(tmp_path, clean_day, "JN-1011", "dst", hours=range(10, 11), inputs=("catraca",))
    assert {r.reason for r in result.rejected} == {"clock_offset"}
    assert result.infractions == []
    [d19] = [r for r in result.insufficient if r.code == "D-19"]
    assert d19.vehicle_id == "JN-1011" and d19.evidence["clock_faults"]
    assert len(result.trips) == 159  # the tachograph's trips stand


def test_an_infraction_outside_the_faulty_stretch_is_still_found(tmp_path):
    tachograph, catraca, [late] = simulated(tmp_path / "sim", ["late_departure"])
    # the late departure's bus has a faulty clock for an hour well away from it
    hour = 10 if dt.datetime.fromtimestamp(late["scheduled_departure"], BRT).hour >= 13 else 18
    result = replay_of(tmp_path, (tachograph, catraca), late["vehicle_id"], "dst", hours=range(hour, hour + 1))
    assert {r.reason for r in result.rejected} == {"clock_offset"}
    [d13] = [r for r in result.infractions if r.code == "D-13"]
    assert d13.status == "confirmed"
    assert [(t["trip_id"], t["vehicle_id"]) for t in d13.evidence["trips"]] == [(late["trip_id"], late["vehicle_id"])]
    assert [r for r in result.infractions if r.code in ACCUSING - {"D-13"} and r.status == "confirmed"] == []


# --- a ping dated 2099 ------------------------------------------------------------------------


def with_ping_of_2099(source: Path, target: Path, at_line: int) -> Path:
    lines = source.read_text().splitlines()
    stray = json.loads(next(line for line in lines if '"JN-1011"' in line))
    stray.update(ts="2099-06-01T12:00:00-03:00", seq=999999)
    lines.insert(at_line, json.dumps(stray, separators=(",", ":")))
    target.write_text("\n".join(lines) + "\n")
    return target


def test_a_ping_dated_2099_is_future_in_the_replay(tmp_path, clean_day):
    # before: the replay took it at the end of the input, and the watermark closed every
    # service day up to 2099 (22,603 insufficient-evidence records); the worker rejected it
    tachograph, catraca = clean_day
    stray = with_ping_of_2099(tachograph, tmp_path / "tachograph.jsonl", at_line=15000)
    result = replay(ReplayInputs(FEED_PATH, FLEET_PATH, stray, catraca))
    [dead] = result.rejected
    assert (dead.reason, dead.location) == ("future", "tachograph.jsonl:15001")
    assert "frontier" in dead.detail
    assert (result.infractions, result.insufficient, len(result.trips)) == ([], [], 159)
    assert result.service_dates == [DAY]


def ping(ts: str, n: int, received_at: float | None = None) -> Message:
    line = json.dumps({"vehicle_id": "JN-1011", "ts": ts, "lat": -19.7574776, "lon": -40.3852385, "speed_kmh": 0.0,
                       "seq": n})
    return Message(decode_tachograph(line, f"t:{n}"), f"t:{n}", line, offset=n, received_at=received_at)


def stage_of(context, wall_clock=None):
    states = {}
    return VehicleStage(context, PartitionState(0), states.get, lambda s: states.__setitem__(s.vehicle_id, s),
                        frozenset({"tachograph"}), wall_clock=wall_clock)


def test_a_ping_dated_2099_is_future_in_the_workers_core_live_or_backfilling(context):
    noon = dt.datetime(2026, 12, 1, 12, tzinfo=BRT).timestamp()
    arrival = [ping("2026-12-01T12:00:00-03:00", 1), ping("2099-06-01T12:00:00-03:00", 2),
               ping("2026-12-01T12:00:10-03:00", 3)]
    # live: ahead of the worker's clock, or of the Kafka record's time
    live = stage_of(context, wall_clock=lambda: noon + 15).ingest(arrival)
    assert [(r.location, r.reason) for r in live.rejected] == [("t:2", "future")]
    received = [ping(m.body.ts.isoformat(), m.offset, received_at=noon + 5 * m.offset) for m in arrival]
    assert [(r.location, r.reason) for r in stage_of(context).ingest(received).rejected] == [("t:2", "future")]
    # a backfill (no clock but the stream's): held, and the next ping comes back
    assert [(r.location, r.reason) for r in stage_of(context).ingest(arrival).rejected] == [("t:2", "future")]
    # ... or nothing comes after it: beyond the stream's frontier at the end of the input
    stage = stage_of(context)
    assert stage.ingest(arrival[:2]).rejected == []
    assert [(r.location, r.reason) for r in stage.flush().rejected] == [("t:2", "future")]
    assert stage.partition.max_events["tachograph"] == noon


def test_a_live_worker_checks_a_message_against_the_kafka_records_time(context):
    # the unit's clock an hour behind (a stale daylight-saving table), the records stamped
    # by Kafka as they came: rejected, the offset told; a few seconds off is no fault
    noon = dt.datetime(2026, 12, 1, 12, tzinfo=BRT).timestamp()
    stage = stage_of(context, wall_clock=lambda: noon + 600)
    out = stage.ingest([ping("2026-12-01T12:00:00-03:00", 1, received_at=noon + 3),
                        ping("2026-12-01T12:00:10-02:00", 2, received_at=noon + 13)])
    [dead] = out.rejected
    assert (dead.location, dead.reason) == ("t:2", "clock_offset") and "offset -3603 s" in dead.detail
    assert out.unfollowed == []  # one ping lost is a gap the tracker reads through
    # five minutes more of it: a stretch that may hide a departure, on every line it may run
    seconds = {n: 10 * (n - 1) for n in range(3, 35)}  # made at noon + s, stamped 12:00:20-02:00, ...
    out = stage.ingest([ping(f"2026-12-01T12:{s // 60:02d}:{s % 60:02d}-02:00", n, received_at=noon + s + 3)
                        for n, s in seconds.items()])
    assert {r.reason for r in out.rejected} == {"clock_offset"}
    assert {(m.passage.vehicle_id, m.passage.clock_offset_s) for m in out.unfollowed} == {("JN-1011", -3603)}
    assert {m.passage.route_id for m in out.unfollowed} == {"101"}  # the lines JN-1011 may run
    assert {(m.passage.earliest_departure, m.passage.latest_departure) for m in out.unfollowed} == \
        {(noon + 13, noon + 333)}


def test_the_same_message_received_again_later_is_a_duplicate_not_a_second_version(context):
    # an adapter that sends a message again stamps its new receipt: the content is the same
    def received(seconds: int) -> Message:
        line = json.dumps({"vehicle_id": "JN-1011", "ts": "2026-12-01T12:00:00-03:00", "lat": -19.7574776,
                           "lon": -40.3852385, "speed_kmh": 0.0, "seq": 1,
                           "received_at": f"2026-12-01T15:00:{seconds:02d}Z"})
        return Message(decode_tachograph(line, f"t:{seconds}"), f"t:{seconds}", line)

    [again] = stage_of(context).ingest([received(2), received(40)]).rejected
    assert (again.location, again.reason) == ("t:40", "duplicate")


def test_the_brokers_receipt_wins_over_the_receipt_a_message_carries():
    # a live worker reads the Kafka record's time (the input topics are LogAppendTime: the
    # broker's clock); a `received_at` in the message's body is what its sender wrote, and
    # counts only where no broker stamped it (files)
    from engine.clocks import received_epoch

    ping = decode_tachograph(json.dumps({"vehicle_id": "JN-1011", "ts": "2026-12-01T10:00:00-03:00", "lat": -19.75,
                                         "lon": -40.38, "speed_kmh": 0.0,
                                         "received_at": "2026-12-01T11:00:02-03:00"}))
    stated = dt.datetime(2026, 12, 1, 14, 0, 2, tzinfo=dt.timezone.utc).timestamp()
    assert received_epoch(ping, None) == stated
    assert received_epoch(ping, stated - 3600) == stated - 3600
