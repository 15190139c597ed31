"""The vehicle stage settling a day against what left while it ran.

Context: the João Neiva sample network and policy; one C-01 record of JN-2014 was
emitted live, then the day closes.
"""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest

from engine.messages import DayMatched
from engine.vehicle import PartitionState, VehicleStage, VehicleState
from fiscaliza.replay import ReplayInputs, load_context
from fiscaliza.samples import joao_neiva
from rules.model import make_infraction

DAY = dt.date(2026, 12, 1)


@pytest.fixture(scope="module")
def context():
    feed, fleet = joao_neiva()
    return load_context(ReplayInputs(feed=feed, fleet=fleet, tachograph=fleet))


def stage_with(context, state):
    states = {state.vehicle_id: state}
    return VehicleStage(context, PartitionState(0), states.get, lambda s: states.__setitem__(s.vehicle_id, s)), states


def emitted(context):
    tz = context.feed.timezone
    record = make_infraction("C-01", context.policy, identity=(DAY, "JN-2014", 1.0), operator_id="TRD",
                             vehicle_id="JN-2014", service_date=DAY,
                             occurred_at=dt.datetime(2026, 12, 1, 6, 49, tzinfo=tz), description="…",
                             evidence={"interval_epoch": [1.0, 2.0]})
    return msgspec.structs.replace(record, detected_at=dt.datetime(2026, 12, 1, 6, 55, tzinfo=tz))


def test_a_live_record_the_settled_day_does_not_support_is_withdrawn_not_deleted(context):
    record = emitted(context)
    stage, states = stage_with(context, VehicleState("JN-2014", emitted={record.infraction_id: record}))
    # the day closes with nothing of this vehicle's (no trips, no telemetry kept)
    [withdrawn] = stage.on_day_matched(DayMatched("JN-2014", "TRD", DAY, [], closed_at=1.8e9), [])
    assert withdrawn.status == "withdrawn"
    assert (withdrawn.infraction_id, withdrawn.detected_at) == (record.infraction_id, record.detected_at)
    assert withdrawn.evidence == record.evidence  # kept for the audit trail
    assert states["JN-2014"].emitted == {}  # the day is settled: nothing more to follow


def test_a_day_judged_again_after_a_restart_emits_nothing(context):
    record = emitted(context)
    stage, _ = stage_with(context, VehicleState("JN-2014", emitted={record.infraction_id: record}))
    message = DayMatched("JN-2014", "TRD", DAY, [], closed_at=1.8e9)
    assert len(stage.on_day_matched(message, [])) == 1
    assert stage.on_day_matched(message, []) == []


def test_an_engine_exception_dead_letters_the_message_and_the_stream_goes_on(context, tmp_path, monkeypatch):
    import engine.vehicle as vehicle_module
    from engine import Engine
    from fiscaliza.fleet import load_fleet
    from fiscaliza.replay import read_messages, replay
    from gtfs import load_feed
    from simulator import SimulationSettings, simulate

    feed_path, fleet_path = joao_neiva()
    sim = simulate(load_feed(feed_path), load_fleet(fleet_path), SimulationSettings(DAY, DAY, seed=3), tmp_path)
    inputs = ReplayInputs(feed_path, fleet_path, sim.tachograph, sim.catraca)
    reference = replay(inputs)
    messages, _ = read_messages(inputs)
    culprit = next(m for m in messages if getattr(m.body, "speed_kmh", 0) > 20 and m.body.vehicle_id == "JN-1011")
    culprit_id = vehicle_module.message_id(culprit.body)
    real = vehicle_module.advance_track

    def failing(track, batch, *args):  # a bug the engine trips over on one ping only
        if any(f.msg_id == culprit_id for f in batch):
            raise ZeroDivisionError("simulated bug")
        return real(track, batch, *args)

    monkeypatch.setattr(vehicle_module, "advance_track", failing)
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    rejected, trips = [], []
    for start in range(0, len(messages), 1000):
        out = engine.ingest(messages[start : start + 1000])
        rejected += out.rejected
        trips += out.trips
    out = engine.close()
    rejected += out.rejected
    trips += out.trips
    [dead] = rejected
    assert (dead.reason, dead.location, dead.source) == ("engine_error", culprit_id, "tachograph")
    assert "ZeroDivisionError: simulated bug" in dead.detail
    # one ping fewer in the middle of a trip (10 s apart): every trip is still realized
    assert sorted((t.vehicle_id, t.trip_id) for t in trips) == sorted((t.vehicle_id, t.trip_id)
                                                                      for t in reference.trips)


def test_an_exception_admitting_a_message_dead_letters_it_with_its_location(context, monkeypatch):
    import json

    from engine import Engine, Message
    from telemetry import decode_tachograph

    def failing(self, state, message):
        raise ValueError("simulated bug")

    monkeypatch.setattr(VehicleStage, "_admit", failing)
    line = json.dumps({"vehicle_id": "JN-1011", "ts": "2026-12-01T12:00:00-03:00", "lat": -19.7574776,
                       "lon": -40.3852385, "speed_kmh": 0.0})
    [dead] = Engine(context).ingest([Message(decode_tachograph(line, "tachograph/0/42"), "tachograph/0/42", line,
                                             offset=42)]).rejected
    assert (dead.reason, dead.location, dead.raw) == ("engine_error", "tachograph/0/42", line)


def test_a_vehicles_stream_behind_the_partition_is_taken_in_order_never_a_false_d21(context, tmp_path):
    # JN-2012's catraca arrives 15 min behind everything else (a modem backlog): each reading
    # is behind the partition's watermark, so it is released as soon as it is admitted. Two
    # consecutive readings come swapped, in separate batches: taken as they came, the counter
    # would seem to go back (a D-21). The later-arriving, earlier reading is late instead.
    from engine import Engine
    from fiscaliza.fleet import load_fleet
    from fiscaliza.replay import read_messages
    from gtfs import load_feed
    from simulator import SimulationSettings, simulate
    from telemetry import CatracaReading

    feed_path, fleet_path = joao_neiva()
    sim = simulate(load_feed(feed_path), load_fleet(fleet_path), SimulationSettings(DAY, DAY, seed=3), tmp_path)
    messages, _ = read_messages(ReplayInputs(feed_path, fleet_path, sim.tachograph, sim.catraca))
    ten = dt.datetime(2026, 12, 1, 10, 0, tzinfo=context.feed.timezone).timestamp()
    lagging = [m for m in messages if isinstance(m.body, CatracaReading) and m.body.vehicle_id == "JN-2012"
               and m.body.epoch >= ten]
    # two consecutive readings between which passengers boarded
    k = next(i for i in range(len(lagging) - 1) if lagging[i].body.counter < lagging[i + 1].body.counter)
    first, second = lagging[k], lagging[k + 1]
    def arrives(m) -> float:
        if m is second:
            return first.body.epoch + 900  # the later reading first
        if m is first:
            return first.body.epoch + 901
        return m.body.epoch + (900 if m in lagging else 0)

    ordered = sorted(messages, key=arrives)
    cut = ordered.index(second) + 1  # a batch ends between the two
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    infractions, rejected = [], []
    for batch in (ordered[:cut], ordered[cut:]):
        out = engine.ingest(batch)
        infractions += out.infractions
        rejected += out.rejected
    out = engine.close()
    infractions += out.infractions
    assert [(r.reason, r.location) for r in rejected] == [("late", first.location)]
    assert [i for i in infractions if i.code == "D-21"] == []


def test_a_day_match_the_vehicle_stage_fails_on_is_dead_lettered_and_the_state_kept(context, monkeypatch):
    import engine.vehicle
    record = emitted(context)
    stage, states = stage_with(context, VehicleState("JN-2014", emitted={record.infraction_id: record}))
    before = msgspec.msgpack.encode(states["JN-2014"])
    real = engine.vehicle.evaluate_vehicle_day

    def broken(*args, **kwargs):
        raise ValueError("a bug in a vehicle-day rule")

    monkeypatch.setattr(engine.vehicle, "evaluate_vehicle_day", broken)
    message = DayMatched("JN-2014", "TRD", DAY, [], closed_at=1.8e9)
    out = stage.judge_day(message, [], location="day-matched/1/3")
    [dead] = out.rejected
    assert (dead.source, dead.reason, dead.location) == ("day-matched", "engine_error", "day-matched/1/3")
    assert "ValueError: a bug in a vehicle-day rule" in dead.detail and not out.findings
    assert msgspec.msgpack.encode(states["JN-2014"]) == before  # not judged, nothing of it lost
    # once fixed, the same message settles the day as it would have
    monkeypatch.setattr(engine.vehicle, "evaluate_vehicle_day", real)
    assert [r.status for r in stage.judge_day(message, []).findings] == ["withdrawn"]


def test_a_ping_faster_than_a_bus_can_go_is_rejected_as_implausible_and_moves_nothing(context):
    import json

    from engine import Engine, Message
    from telemetry import decode_tachograph

    def ping(ts: str, speed: float, n: int) -> Message:
        line = json.dumps({"vehicle_id": "JN-1011", "ts": ts, "lat": -19.7574776, "lon": -40.3852385,
                           "speed_kmh": speed})
        return Message(decode_tachograph(line, f"t.jsonl:{n}"), f"t.jsonl:{n}", line)

    engine = Engine(context)
    out = engine.ingest([ping("2026-12-01T12:00:00-03:00", 40.0, 1), ping("2026-12-01T12:00:10-03:00", 120.0, 2),
                         ping("2026-12-01T12:00:20-03:00", 999.0, 3)])
    [dead] = out.rejected  # 999 km/h > the 120 km/h ceiling (policy); 120 itself is plausible
    assert (dead.reason, dead.location) == ("implausible", "t.jsonl:3")
    assert "999 km/h" in dead.detail and "120 km/h" in dead.detail
    # the rejected ping is not the stream's newest event: it moves no watermark
    assert engine._vehicle_stage.partition.max_events["tachograph"] == ping("2026-12-01T12:00:10-03:00", 0, 2).body.epoch
