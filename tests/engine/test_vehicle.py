"""The vehicle stage settling a day against what left while it ran.

Context: the João Neiva sample network and policy; one C-01 record of JN-2014 was
emitted live, then the day closes.
"""

from __future__ import annotations

import datetime as dt

import msgspec
import numpy as np
import pytest

from engine.arrival import Arrivals
from engine.messages import DayMatched
from engine.sends import Sends
from engine.vehicle import PartitionState, VehicleStage, VehicleState
from fiscaliza.replay import ReplayInputs
from samples import joao_neiva
from sent_records import sent_c01

DAY = dt.date(2026, 12, 1)


def stage_with(context, state):
    states = {state.vehicle_id: state}
    return VehicleStage(context, PartitionState(0), states.get, lambda s: states.__setitem__(s.vehicle_id, s)), states


def test_a_live_record_the_settled_day_does_not_support_is_withdrawn_not_deleted(context):
    record = sent_c01(context, DAY)
    stage, states = stage_with(context, VehicleState("JN-2014", emitted={record.infraction_id: record}))
    # the day closes with nothing of this vehicle's (no trips, no telemetry kept)
    [withdrawn] = stage.on_day_matched(DayMatched("JN-2014", "TRD", DAY, [], closed_at=1.8e9), [])
    assert withdrawn.status == "withdrawn"
    assert (withdrawn.infraction_id, withdrawn.detected_at) == (record.infraction_id, record.detected_at)
    assert withdrawn.evidence == record.evidence  # kept for the audit trail
    assert states["JN-2014"].emitted == {}  # the day is settled: nothing more to follow


def test_a_day_judged_again_after_a_restart_emits_nothing(context):
    record = sent_c01(context, DAY)
    stage, _ = stage_with(context, VehicleState("JN-2014", emitted={record.infraction_id: record}))
    message = DayMatched("JN-2014", "TRD", DAY, [], closed_at=1.8e9)
    assert len(stage.on_day_matched(message, [])) == 1
    assert stage.on_day_matched(message, []) == []


def _replayed_in_calls_of_1000(engine, messages) -> tuple[list, list]:
    """The engine over `messages`, 1,000 a call, then closed: what it rejected and the trips."""
    rejected, trips = [], []
    for start in range(0, len(messages), 1000):
        out = engine.ingest(messages[start : start + 1000])
        rejected += out.rejected
        trips += out.trips
    out = engine.close()
    return rejected + out.rejected, trips + out.trips


def _a_day_and_a_moving_ping(tmp_path):
    """The sample network's simulated day: its replay, its messages, and one ping of a bus
    on its way (JN-1011 above 20 km/h), the message a fault is made to trip over."""
    from fiscaliza.replay import read_messages, replay
    from gtfs import load_feed
    from kernel.fleet import load_fleet
    from simulator import SimulationSettings, simulate

    feed_path, fleet_path = joao_neiva()
    sim = simulate(load_feed(feed_path), load_fleet(fleet_path), SimulationSettings(DAY, DAY, seed=3), tmp_path)
    inputs = ReplayInputs(feed_path, fleet_path, sim.tachograph, sim.catraca)
    messages, _ = read_messages(inputs)
    culprit = next(m for m in messages if getattr(m.body, "speed_kmh", 0) > 20 and m.body.vehicle_id == "JN-1011")
    return replay(inputs), messages, culprit


def test_an_engine_exception_dead_letters_the_message_and_the_stream_goes_on(context, tmp_path, monkeypatch):
    import engine.vehicle as vehicle_module
    from engine import Engine

    reference, messages, culprit = _a_day_and_a_moving_ping(tmp_path)
    culprit_id = vehicle_module.message_id(culprit.body)
    real = vehicle_module.advance_track

    def failing(track, batch, *args):  # a bug the engine trips over on one ping only
        if any(f.msg_id == culprit_id for f in batch):
            raise ZeroDivisionError("simulated bug")
        return real(track, batch, *args)

    monkeypatch.setattr(vehicle_module, "advance_track", failing)
    rejected, trips = _replayed_in_calls_of_1000(Engine(context, frozenset({"tachograph", "catraca"})), messages)
    [dead] = rejected
    assert (dead.reason, dead.location, dead.source) == ("engine_error", culprit_id, "tachograph")
    assert "ZeroDivisionError: simulated bug" in dead.detail
    # one ping fewer in the middle of a trip (10 s apart): every trip is still realized
    assert sorted((t.vehicle_id, t.trip_id) for t in trips) == sorted((t.vehicle_id, t.trip_id)
                                                                      for t in reference.trips)


def test_a_fault_in_the_release_s_shared_geometry_loses_only_the_message_that_makes_it(context, tmp_path,
                                                                                      monkeypatch):
    # A release measures every vehicle's fixes in one query (trips.memo.TakeGeometry). A
    # fix that makes that query raise must cost its own message only, as when each vehicle
    # queried alone: the other vehicles of the release query their own fixes, and the
    # faulty vehicle's messages are measured one by one (engine.vehicle _isolate)
    import engine.vehicle as vehicle_module
    from engine import Engine
    from geofences.zones import Geofences

    reference, messages, culprit = _a_day_and_a_moving_ping(tmp_path)
    culprit_id = vehicle_module.message_id(culprit.body)
    # the culprit's metric x, as the engine projects it
    culprit_x = vehicle_module.Projector(context.feed.epsg).to_xy([culprit.body.lon], [culprit.body.lat])[0]
    real = Geofences.near_shapes
    queried = []

    def failing(self, xs, ys):  # the corridor query trips over one position
        xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
        queried.append(len(xs))
        if np.any(np.isin(xs, culprit_x)):
            raise FloatingPointError("simulated fault")
        return real(self, xs, ys)

    # (the query the call's shared geometry makes, and `near_corridors` over it)
    monkeypatch.setattr(Geofences, "near_shapes", failing)
    rejected, trips = _replayed_in_calls_of_1000(Engine(context, frozenset({"tachograph", "catraca"})), messages)
    [dead] = rejected
    assert (dead.reason, dead.location, dead.source) == ("engine_error", culprit_id, "tachograph")
    assert "FloatingPointError: simulated fault" in dead.detail
    assert max(queried) > 50  # the releases did measure many vehicles' fixes at once
    assert sorted((t.vehicle_id, t.trip_id) for t in trips) == sorted((t.vehicle_id, t.trip_id)
                                                                      for t in reference.trips)

def test_a_release_that_raises_is_undone_by_the_snapshot_of_what_processing_changes(context, tmp_path, monkeypatch):
    # The snapshot a release takes (in case it raises) holds only the fields `_process`
    # changes, and of the trip logs only those still watching (a settled one is kept as
    # it is). At every beat of a day with faults (trips arriving, C-01, D-19, D-21, B-04
    # while a trip runs, unfollowed passes), the release is run, undone from the snapshot,
    # and the state compared with the whole state encoded before; then run for real. It
    # fails if processing changes a field or a log the snapshot leaves out.
    import engine.vehicle as vehicle_module
    from engine import Engine
    from fiscaliza.replay import read_messages
    from gtfs import load_feed
    from kernel.fleet import load_fleet
    from simulator import SimulationSettings, simulate

    feed_path, fleet_path = joao_neiva()
    settings = SimulationSettings(DAY, DAY, seed=5, faults=("speeding", "silent_catraca", "broken_seal",
                                                              "en_route_lateness", "detour"), input_faults=("gps_gap",))
    sim = simulate(load_feed(feed_path), load_fleet(fleet_path), settings, tmp_path)
    messages, _ = read_messages(ReplayInputs(feed_path, fleet_path, sim.tachograph, sim.catraca))
    real = VehicleStage._process
    changed, undone, settled = [], [], []

    def undone_then_run(self, state, batch, readings, occurrences, out):
        whole = vehicle_module._STATE.encode(state)
        snapshot = vehicle_module._snapshot(state)
        # trip logs the snapshot keeps as they are, not encoded (settled: nothing changes them)
        settled.append(sum(not log.watching for log in state.trips))
        real(self, state, batch, readings, occurrences, Sends())
        changed.append(vehicle_module._STATE.encode(state) != whole)
        # recorded, not asserted here: the engine would take an AssertionError for a bug
        # and dead-letter the messages
        undone.append(vehicle_module._STATE.encode(vehicle_module._restored(state, snapshot)) == whole)
        if undone[-1]:
            real(self, state, batch, readings, occurrences, out)

    monkeypatch.setattr(VehicleStage, "_process", undone_then_run)
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    findings = []
    for start in range(0, len(messages), 500):
        findings += engine.ingest(messages[start : start + 500]).infractions
        if not all(undone):
            break
    findings += engine.close().infractions
    assert all(undone)
    assert sum(changed) > 300 and findings  # the claim was put to the test on a busy day
    assert sum(n > 0 for n in settled) > 300  # and on settled trip logs kept by reference


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
    from fiscaliza.replay import read_messages
    from gtfs import load_feed
    from kernel.fleet import load_fleet
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
    import engine.settling
    record = sent_c01(context, DAY)
    stage, states = stage_with(context, VehicleState("JN-2014", emitted={record.infraction_id: record}))
    before = msgspec.msgpack.encode(states["JN-2014"])
    real = engine.settling.evaluate_vehicle_day

    def broken(*args, **kwargs):
        raise ValueError("a bug in a vehicle-day rule")

    monkeypatch.setattr(engine.settling, "evaluate_vehicle_day", broken)
    message = DayMatched("JN-2014", "TRD", DAY, [], closed_at=1.8e9)
    out = stage.judge_day(message, [], location="day-matched/1/3")
    [dead] = out.rejected
    assert (dead.source, dead.reason, dead.location) == ("day-matched", "engine_error", "day-matched/1/3")
    assert "ValueError: a bug in a vehicle-day rule" in dead.detail and not out.findings
    assert msgspec.msgpack.encode(states["JN-2014"]) == before  # not judged, nothing of it lost
    # once fixed, the same message settles the day as it would have
    monkeypatch.setattr(engine.settling, "evaluate_vehicle_day", real)
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


def _catraca_day_with(context, tmp_path, vehicle: str, change):
    """A simulated weekday whose `vehicle` catraca counters go through `change(readings)`
    (a list of decoded readings in time order -> new list), replayed in batches (`_run`)."""
    from engine.values import Message
    from fiscaliza.replay import read_messages
    from gtfs import load_feed
    from kernel.fleet import load_fleet
    from simulator import SimulationSettings, simulate
    from telemetry import CatracaReading

    feed_path, fleet_path = joao_neiva()
    sim = simulate(load_feed(feed_path), load_fleet(fleet_path), SimulationSettings(DAY, DAY, seed=3), tmp_path)
    messages, _ = read_messages(ReplayInputs(feed_path, fleet_path, sim.tachograph, sim.catraca))
    mine = [k for k, m in enumerate(messages) if isinstance(m.body, CatracaReading) and m.body.vehicle_id == vehicle]
    changed = change([messages[k].body for k in mine])
    for k, body in zip(mine, changed):
        messages[k] = Message(body, messages[k].location, None)
    infractions, rejected, _ = _run(context, messages)
    return infractions, rejected, changed


def test_a_catraca_counter_rolling_over_its_register_is_no_d21(context, tmp_path):
    # JN-2012's counter shown on a 6-digit register that rolls over at noon: ... 999,9xx -> 0, 1, ...
    # (before this, "contador voltou de 999998 para 0", D-21, 200 UFIR)
    def roll_over(readings):
        noon = next(r.counter for r in readings if r.ts.hour >= 12)
        return [msgspec.structs.replace(r, counter=(r.counter - noon + 999_990) % 1_000_000) for r in readings]

    infractions, rejected, changed = _catraca_day_with(context, tmp_path, "JN-2012", roll_over)
    drops = [(a.counter, b.counter) for a, b in zip(changed, changed[1:]) if b.counter < a.counter]
    assert len(drops) == 1 and drops[0][0] >= 990_000 and drops[0][1] < 10_000  # the roll-over is there
    assert [i for i in infractions if i.code == "D-21"] == [] and rejected == []


def test_a_counter_set_back_far_from_any_register_top_is_still_d21(context, tmp_path):
    # the same day, the counter set back from ~500,000 to 0 at noon: no register of the
    # policy's sizes has 500,000 in its top 1 % (1,000,000's starts at 990,000)
    def set_back(readings):
        return [msgspec.structs.replace(r, counter=r.counter + (500_000 if r.ts.hour < 12 else 0)) for r in readings]

    infractions, _, _ = _catraca_day_with(context, tmp_path, "JN-2012", set_back)
    latest = {i.infraction_id: i for i in infractions}  # a change log: the last record of each id stands
    [d21] = [i for i in latest.values() if i.code == "D-21" and i.status == "confirmed"]
    assert d21.evidence["facts"][0]["fact"].startswith("contador voltou de 5")
    assert d21.evidence["facts"][0]["previous_counter"] >= 500_000


def test_a_counter_no_register_holds_or_rising_faster_than_people_board_is_rejected_never_d21(context, tmp_path):
    # one reading says 10^30 (before this: D-21 on the next reading, and D-19); another,
    # at 15:00, jumps by 5,000 in a minute and the next is back on the count
    def glitches(readings):
        out = list(readings)
        i = next(k for k, r in enumerate(out) if r.ts.hour >= 11)
        out[i] = msgspec.structs.replace(out[i], counter=10**30)
        j = next(k for k, r in enumerate(out) if r.ts.hour >= 15)
        out[j] = msgspec.structs.replace(out[j], counter=out[j].counter + 5_000)
        return out

    infractions, rejected, changed = _catraca_day_with(context, tmp_path, "JN-2012", glitches)
    assert sorted(r.reason for r in rejected) == ["implausible", "implausible"]
    assert {r.detail.split()[0] for r in rejected} == {"contador"}
    assert any("além de qualquer registro" in r.detail for r in rejected)
    assert any("passagens por minuto" in r.detail for r in rejected)
    assert [i for i in infractions if i.code in ("D-21", "D-19")] == []


def _run(context, messages, batch=500):
    from engine import Engine
    from fiscaliza.replay import final_state

    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    infractions, rejected, trips = [], [], []
    for start in range(0, len(messages), batch):
        out = engine.ingest(messages[start : start + batch])
        infractions += out.infractions
        rejected += out.rejected
        trips += out.trips
    out = engine.close()
    return final_state(infractions + out.infractions), rejected + out.rejected, trips + out.trips


def _jumped(message, seconds: float):
    from engine.values import Message
    body = msgspec.structs.replace(message.body, ts=message.body.ts + dt.timedelta(seconds=seconds))
    return Message(body, "jumped:1", None)


@pytest.fixture(scope="module")
def clean_day(context, tmp_path_factory):
    from fiscaliza.replay import read_messages
    from gtfs import load_feed
    from kernel.fleet import load_fleet
    from simulator import SimulationSettings, simulate

    feed_path, fleet_path = joao_neiva()
    sim = simulate(load_feed(feed_path), load_fleet(fleet_path), SimulationSettings(DAY, DAY, seed=3),
                   tmp_path_factory.mktemp("clock"))
    messages, _ = read_messages(ReplayInputs(feed_path, fleet_path, sim.tachograph, sim.catraca))
    return messages, _run(context, messages)


def test_one_ping_dated_the_next_day_arriving_mid_morning_is_future_and_costs_nothing(context, clean_day):
    # JN-1011's clock jumps 20 h ahead for one ping at 10:00, then goes on right. Taken, it
    # made every later message of the vehicle `late` (5,593 of them: 34 false D-22, ...)
    from telemetry import TachographPing

    messages, (infractions, rejected, trips) = clean_day
    ten = dt.datetime(2026, 12, 1, 10, 0, tzinfo=context.feed.timezone).timestamp()
    i = next(k for k, m in enumerate(messages) if isinstance(m.body, TachographPing)
             and m.body.vehicle_id == "JN-1011" and m.body.epoch >= ten)
    arrived = messages[: i + 1] + [_jumped(messages[i], 20 * 3600)] + messages[i + 1 :]
    got_infractions, got_rejected, got_trips = _run(context, arrived)
    [future] = [r for r in got_rejected if r not in rejected]
    assert (future.reason, future.location) == ("future", "jumped:1")
    assert "1200 min ahead" in future.detail  # 20 h = 1,200 min
    assert got_infractions == infractions and got_trips == trips  # nothing else moved


def test_a_vehicle_silent_for_hours_is_taken_at_its_next_message(context, clean_day):
    # the same day with JN-1011 silent 10:00-14:00 (an outage): its first message after it
    # is 4 h ahead of its newest, held, and taken with the next one; nothing is rejected
    messages, (_, rejected, _) = clean_day
    tz = context.feed.timezone
    ten, two = (dt.datetime(2026, 12, 1, h, 0, tzinfo=tz).timestamp() for h in (10, 14))
    silent = [m for m in messages if not (m.body.vehicle_id == "JN-1011" and ten <= m.body.epoch < two)]
    _, got_rejected, got_trips = _run(context, silent)
    assert got_rejected == rejected
    assert any(t.vehicle_id == "JN-1011" and t.departed_at.timestamp() > two for t in got_trips)  # on after 14:00


def test_a_held_message_is_taken_at_the_end_of_input_and_not_confirmed_by_its_own_redelivery(context):
    import json

    from engine import Engine, Message
    from telemetry import decode_tachograph

    def ping(hhmm: str, n: int, offset: int | None = None, vehicle: str = "JN-1011") -> Message:
        line = json.dumps({"vehicle_id": vehicle, "ts": f"2026-12-01T{hhmm}:00-03:00", "lat": -19.7574776,
                           "lon": -40.3852385, "speed_kmh": 0.0})
        return Message(decode_tachograph(line, f"t:{n}"), f"t:{n}", line, offset)

    engine = Engine(context)
    engine.ingest([ping("10:00", 1, 1), ping("13:00", 2, 2)])  # 13:00 is 3 h ahead: held
    assert engine._vehicles["JN-1011"].held
    out = engine.ingest([ping("13:00", 2, 2)])  # delivered again: a duplicate, not its own proof
    assert engine._vehicles["JN-1011"].held and [r.reason for r in out.rejected] == ["duplicate"]
    out = engine.ingest([ping("10:01", 3, 3)])  # the vehicle's clock is back at 10:01: it jumped
    assert [(r.reason, r.location) for r in out.rejected] == [("future", "t:2")]
    engine.ingest([ping("16:00", 4, 4)])  # held again (6 h ahead of 10:01)
    engine.ingest([ping("15:59", 5, 5, vehicle="JN-1012")])  # the stream got there (another bus)
    out = engine.close()  # nothing came back, and it is within the stream's frontier: taken
    assert out.rejected == [] and not engine._vehicles["JN-1011"].held
    assert engine._vehicle_stage.partition.max_events["tachograph"] == ping("16:00", 4).body.epoch


def _copy(message, location: str, **changes):
    from engine.values import Message
    return Message(msgspec.structs.replace(message.body, **changes), location, None)


def _a_reading_in_service(context, messages, vehicle="JN-1011", hour=11):
    from telemetry import CatracaReading
    at = dt.datetime(2026, 12, 1, hour, 0, tzinfo=context.feed.timezone).timestamp()
    return next(k for k, m in enumerate(messages) if isinstance(m.body, CatracaReading)
                and m.body.vehicle_id == vehicle and m.body.epoch >= at)


def test_a_copy_with_the_seal_broken_after_the_genuine_reading_is_a_conflicting_duplicate_never_d21(context, clean_day):
    # the same vehicle, time and seq, other content: before this the copy silently replaced
    # the original (labelled a plain duplicate) and gave a D-21
    messages, (infractions, rejected, _) = clean_day
    i = _a_reading_in_service(context, messages)
    arrived = messages[: i + 1] + [_copy(messages[i], "copy:1", seal_intact=False)] + messages[i + 1 :]
    got_infractions, got_rejected, _ = _run(context, arrived)
    [conflict] = [r for r in got_rejected if r not in rejected]
    assert (conflict.reason, conflict.location) == ("conflicting_duplicate", "copy:1")
    assert "received first and counts" in conflict.detail and '"seal_intact":false' in conflict.raw
    assert got_infractions == infractions  # the genuine reading, received first, counts


def test_a_copy_with_the_seal_broken_before_the_genuine_reading_is_a_conflicting_duplicate_never_d21(context,
                                                                                                   clean_day):
    # the copy (seal broken) arrives first, the genuine reading next, which is dead-lettered.
    # Before, the first received counted: the copy's D-21 was sent, provisional. Now both
    # versions are judged (rules.versions): only one shows the seal broken, so no D-21, in
    # either order (tests/engine/test_catraca_versions.py: the insufficient evidence)
    messages, (infractions, _, _) = clean_day
    i = _a_reading_in_service(context, messages)
    copy = _copy(messages[i], "copy:1", seal_intact=False)
    arrived = messages[:i] + [copy] + messages[i:]
    got_infractions, got_rejected, _ = _run(context, arrived)
    assert [(r.reason, r.location) for r in got_rejected if r.reason == "conflicting_duplicate"] == \
        [("conflicting_duplicate", messages[i].location)]
    assert got_infractions == infractions


def test_a_catraca_clock_falling_10_min_behind_at_noon_accuses_no_one(context, tmp_path):
    # JN-2012's catraca clock falls 10 min behind at noon; its readings still arrive in the
    # order they were made. In event time the afternoon's first readings interleave with
    # the late morning's (a count that dips and comes back above): before, a D-21
    # ("contador voltou"); and the service's last 10 min looked silent: a D-19. That
    # silence after the day's last reading is within the limit plus the clock offset the
    # stream tolerates (600 + 900 s): insufficient evidence
    def behind(readings):
        return [msgspec.structs.replace(r, ts=r.ts - dt.timedelta(minutes=10)) if r.ts.hour >= 12 else r
                for r in readings]

    infractions, rejected, _ = _catraca_day_with(context, tmp_path, "JN-2012", behind)
    assert [i for i in infractions if i.code in ("D-21", "D-19") and i.vehicle_id == "JN-2012"] == []
    assert rejected == []


def test_a_live_worker_quarantines_a_message_dated_ahead_of_its_clock(context):
    # the worker's clock reads 12:00; a ping dated 12:15:01 is more than 900 s (policy
    # stream.max_clock_jump_s) ahead of it: a device clock in the future, rejected as
    # `future`, and it moves no frontier; 12:15:00 is within the bound and taken
    import json

    from engine.values import Message
    from telemetry import decode_tachograph

    def ping(ts: str, n: int) -> Message:
        line = json.dumps({"vehicle_id": "JN-1011", "ts": ts, "lat": -19.7574776, "lon": -40.3852385,
                           "speed_kmh": 0.0})
        return Message(decode_tachograph(line, f"t:{n}"), f"t:{n}", line)

    noon = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=-3))).timestamp()
    states = {}
    stage = VehicleStage(context, PartitionState(0), states.get, lambda s: states.__setitem__(s.vehicle_id, s),
                         frozenset({"tachograph"}), wall_clock=lambda: noon)
    out = stage.ingest([ping("2026-12-01T12:15:01-03:00", 1), ping("2026-12-01T12:15:00-03:00", 2)])
    [dead] = out.rejected
    assert (dead.reason, dead.location) == ("future", "t:1") and "worker's clock" in dead.detail
    assert stage.partition.max_events["tachograph"] == noon + 900


def test_a_d13_citing_a_departure_ping_that_came_in_two_versions_is_at_most_provisional(context, tmp_path):
    # the operator stage judges D-13 from departures; the vehicle stage tells it which of a
    # departure's pings came in two versions (same vehicle, time and seq, other content)
    from fiscaliza.replay import read_messages
    from gtfs import load_feed
    from kernel.fleet import load_fleet
    from simulator import SimulationSettings, simulate
    from telemetry import message_id

    feed_path, fleet_path = joao_neiva()
    sim = simulate(load_feed(feed_path), load_fleet(fleet_path),
                   SimulationSettings(DAY, DAY, seed=21, faults=("late_departure",)), tmp_path)
    messages, _ = read_messages(ReplayInputs(feed_path, fleet_path, sim.tachograph, sim.catraca))
    infractions, _, _ = _run(context, messages)
    [d13] = [i for i in infractions if i.code == "D-13"]
    assert d13.status == "confirmed"
    cited = d13.evidence["trips"][0]["departure_pings"][1]
    i = next(k for k, m in enumerate(messages) if message_id(m.body) == cited)
    arrived = messages[: i + 1] + [_copy(messages[i], "copy:1", speed_kmh=messages[i].body.speed_kmh + 1)] \
        + messages[i + 1:]
    got, _, _ = _run(context, arrived)
    [tainted] = [r for r in got if r.code == "D-13"]
    assert tainted.status == "provisional" and tainted.evidence["conflicting_duplicates"] == [cited]


def test_the_heartbeat_tells_when_each_vehicles_tachograph_and_catraca_boardings_were_heard(context):
    # JN-1011's fixes at 12:00:00, 12:05:00 (300 s <= max_coverage_gap_s = 300 s: one run) and
    # 12:10:01 (301 s > 300 s: a new run); its catraca at 12:00 (counter 10, the first: no rise
    # known), 12:01 (12: boardings), 12:02 (12: none), 12:03 (15: boardings). End of input
    # releases them all.
    import json

    from engine import Engine, Message
    from telemetry import decode_catraca, decode_tachograph

    def ping(ts: str, n: int) -> Message:
        line = json.dumps({"vehicle_id": "JN-1011", "ts": f"2026-12-01T{ts}-03:00", "lat": -19.7574776,
                           "lon": -40.3852385, "speed_kmh": 0.0})
        return Message(decode_tachograph(line, f"t.jsonl:{n}"), f"t.jsonl:{n}", line)

    def reading(ts: str, counter: int, n: int) -> Message:
        line = json.dumps({"vehicle_id": "JN-1011", "ts": f"2026-12-01T{ts}-03:00", "counter": counter,
                           "seal_intact": True, "status": "ok"})
        return Message(decode_catraca(line, f"c.jsonl:{n}"), f"c.jsonl:{n}", line)

    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    stage = engine._vehicle_stage
    stage.ingest([ping("12:00:00", 1), ping("12:05:00", 2), ping("12:10:01", 3), reading("12:00:00", 10, 1),
                  reading("12:01:00", 12, 2), reading("12:02:00", 12, 3), reading("12:03:00", 15, 4)])
    stage.flush()
    beat = stage.heartbeat()
    noon = dt.datetime(2026, 12, 1, 12, tzinfo=context.feed.timezone).timestamp()
    heard = beat.coverage["JN-1011"]
    assert heard.tachograph == ((noon, noon + 300), (noon + 601, noon + 601))
    assert heard.boarding == ((noon + 60, noon + 180),)  # 12:01 and 12:03, 120 s apart: one run
    assert stage.heartbeat().coverage == {}  # told once


def test_a_release_reads_only_the_vehicles_with_a_message_at_or_before_the_watermark(context):
    """A worker unpacks each vehicle state it loads: a release loads the vehicles with
    something due, not every vehicle waiting (VehicleStage._due). A message that comes
    earlier than what a vehicle waits with makes it due sooner."""
    import json

    from engine import Message
    from telemetry import decode_tachograph

    def ping(vehicle_id: str, ts: str, seq: int) -> Message:
        line = json.dumps({"vehicle_id": vehicle_id, "ts": f"2026-12-01T{ts}-03:00", "lat": -19.7574776,
                           "lon": -40.3852385, "speed_kmh": 0.0, "seq": seq})
        return Message(decode_tachograph(line, f"tachograph/0/{seq}"), f"tachograph/0/{seq}", line, offset=seq)

    def at(ts: str) -> float:
        return dt.datetime.fromisoformat(f"2026-12-01T{ts}-03:00").timestamp()

    stage, states, loaded = _recording_stage(context)
    stage.ingest([ping("JN-1011", "12:00:00", 1), ping("JN-1013", "12:09:00", 2)])  # no catraca yet: no watermark
    assert stage.partition.dirty == ["JN-1011", "JN-1013"]
    loaded.clear()
    stage.release(at("12:05:00"))  # JN-1011's ping goes; JN-1013 is read once, and its 12:09 learnt
    assert sorted(loaded) == ["JN-1011", "JN-1013"] and stage.partition.dirty == ["JN-1013"]
    assert states["JN-1011"].track.fixes[-1].t == at("12:00:00")
    loaded.clear()
    stage.release(at("12:06:00"))  # nothing due: JN-1013 not loaded, still waiting
    # (JN-1011 is, silent 6 min: the release tells its silence, trips.unfollowed)
    assert "JN-1013" not in loaded and stage.partition.dirty == ["JN-1013"]
    stage.ingest([ping("JN-1013", "12:07:00", 3)])
    loaded.clear()
    stage.release(at("12:08:00"))  # its new 12:07 is due, its 12:09 not yet
    assert "JN-1013" in loaded and [f.t for f in states["JN-1013"].pending] == [at("12:09:00")]
    assert states["JN-1013"].track.fixes[-1].t == at("12:07:00")


def test_a_release_undone_after_a_restart_under_new_rules_still_finds_the_stored_tracks_trip(context, tmp_path,
                                                                                           monkeypatch):
    """A worker restarted under a new policy reads a stored track whole once (trips.tracker:
    its fixes were not read under these rules). When that first release fails after its
    detection and is undone, the track restored is the stored one again: the stage forgets
    its memo, so the messages taken again one by one (`_isolate`) still find the trip the
    stored fixes hold, at once, as a stage without the fault does (the review's finding)."""
    import dataclasses

    replayed, messages, _ = _a_day_and_a_moving_ping(tmp_path)
    from telemetry import TachographPing

    mine = sorted((m for m in messages if m.body.vehicle_id == "JN-1011" and isinstance(m.body, TachographPing)),
                  key=lambda m: m.body.epoch)
    trips = sorted((t for t in replayed.trips if t.vehicle_id == "JN-1011"), key=lambda t: t.departed_at)
    cut = trips[1].departed_at.timestamp() + 300  # the first trip arrived; the stored track still holds it
    before = [m for m in mine if m.body.epoch <= cut]
    after = [m for m in mine if cut < m.body.epoch <= cut + 600]
    old_rules = dataclasses.replace(context, policy=msgspec.structs.replace(
        context.policy, trips=msgspec.structs.replace(context.policy.trips, min_coverage=1.5)))  # no trip meets it

    def stage(ctx, states, partition):
        return VehicleStage(ctx, partition, states.get, lambda s: states.__setitem__(s.vehicle_id, s),
                            frozenset({"tachograph"}))

    old_states: dict[str, VehicleState] = {}
    old = stage(old_rules, old_states, PartitionState(0))
    for start in range(0, len(before), 13):
        assert not old.ingest(before[start: start + 13]).detected
    stored = msgspec.msgpack.encode(old_states["JN-1011"]), msgspec.msgpack.encode(old.partition)

    def restarted(fault: bool) -> list:
        states = {"JN-1011": msgspec.msgpack.decode(stored[0], type=VehicleState)}
        again = stage(context, states, msgspec.msgpack.decode(stored[1], type=PartitionState))
        judge, fired = Arrivals.judge, []

        def failing_once(self, *args, **kwargs):
            if fault and not fired:
                fired.append(True)
                raise RuntimeError("a fault judging the arrival")
            return judge(self, *args, **kwargs)

        monkeypatch.setattr(Arrivals, "judge", failing_once)
        found = []
        for start in range(0, len(after), 13):
            found.append([d.trip.departed_at for d in again.ingest(after[start: start + 13]).detected])
        assert fired or not fault
        return found

    # the stored trip is found at the first release, with the fault as without it
    without, with_fault = restarted(fault=False), restarted(fault=True)
    assert len(without[0]) == 1 and with_fault == without


def test_a_reading_dead_lettered_by_an_engine_error_is_named_alike_kept_or_read_back(context):
    """`_describe` names a catraca reading by its id in the feed's timezone: one the stage
    kept as admitted carries the offset it was sent with, one read back from stored state
    (msgpack) comes back in UTC, and the rejection's location must not depend on which."""
    from engine.vehicle import _describe
    from telemetry import CatracaReading
    tz = context.feed.timezone
    admitted = CatracaReading(vehicle_id="JN-1011", ts=dt.datetime(2026, 12, 1, 7, 0, tzinfo=tz), counter=5,
                              seal_intact=True, status="ok", seq=3)
    read_back = msgspec.msgpack.decode(msgspec.msgpack.encode(admitted), type=CatracaReading)
    assert read_back.ts.utcoffset() == dt.timedelta(0)  # what the stored state gives back
    assert _describe(admitted, tz) == _describe(read_back, tz) == "JN-1011/2026-12-01T07:00:00-03:00#3"


def test_the_undo_snapshot_keeps_every_log_as_it_was_whatever_the_release_appends():
    # The snapshot copies the day logs and the watching trip logs instead of encoding
    # them (vehicle._log_copy): every list their writers append to (a day's doors, catraca
    # gaps and notable readings, a trip's checkpoint fixes) and the other catraca's log a
    # day with readings in two versions holds must be the snapshot's own. The busy day
    # above has no doors and no second versions; this day has both. Fails if a list or
    # the other log is shared with the state.
    import json

    import engine.vehicle as vehicle_module
    from engine.daylog import DayLog, KeptFix, add_door, add_fix, add_reading, other_catraca
    from engine.triplog import TripLog
    from rules.facts import DoorFix
    from telemetry import decode_catraca
    from trips.model import Fix

    t0, silence = 1_796_121_600.0, 600.0

    def fix(s, speed=80.0):
        return Fix(t0 + s, 0.0, 0.0, speed, None, f"V/{s}", doors_open=True)

    def reading(s, counter, status="ok"):
        ts = dt.datetime.fromtimestamp(t0 + s, dt.timezone(dt.timedelta(hours=-3))).isoformat()
        return decode_catraca(json.dumps({"vehicle_id": "V", "ts": ts, "counter": counter, "seal_intact": True,
                                          "status": status}))

    day = DayLog("2026-12-01", previous_counter=9, counter=9)
    add_fix(day, KeptFix(fix(0), 60.0), 7.0)
    add_door(day, DoorFix(fix(0), 80.0, "S1", False), True)
    add_reading(day, reading(10, 10), silence)
    day.other = other_catraca(day, (t0 + 10, 10))
    trip = TripLog(t0 - 900, t0 - 60, "R", 0, "S", "2026-12-01", t0 + 600, t0 - 60, checkpoint_fixes=[fix(-60)],
                   infractions=[])
    state = VehicleState("V", days=[day], trips=[trip])
    whole = vehicle_module._STATE.encode(state)
    snapshot = vehicle_module._snapshot(state)
    # what a release does to the logs in place
    add_fix(day, KeptFix(fix(20), 60.0), 7.0)
    add_door(day, DoorFix(fix(20), 90.0, "S1", False), True)
    add_reading(day, reading(900, 8, status="fault"), silence)  # a silence, and a notable reading
    add_reading(day.other.log, reading(900, 8, status="fault"), silence)
    day.other.last_reading = (t0 + 900, 8)
    trip.checkpoint_fixes += [fix(30)]
    trip.pending_marks.append(100.0)
    assert vehicle_module._STATE.encode(state) != whole
    assert vehicle_module._STATE.encode(vehicle_module._restored(state, snapshot)) == whole


def _parked_ping(vehicle_id: str, ts: str, seq: int):
    """A ping of a bus standing at João Neiva's terminal, at `ts` on DAY (-03:00)."""
    import json

    from engine import Message
    from telemetry import decode_tachograph

    line = json.dumps({"vehicle_id": vehicle_id, "ts": f"2026-12-01T{ts}-03:00", "lat": -19.7574776,
                       "lon": -40.3852385, "speed_kmh": 0.0, "seq": seq})
    return Message(decode_tachograph(line, f"tachograph/0/{seq}"), f"tachograph/0/{seq}", line, offset=seq)


def _recording_stage(context) -> tuple[VehicleStage, dict[str, VehicleState], list[str]]:
    """A stage over a dict of stored states that records each vehicle it loads, in order."""
    states: dict[str, VehicleState] = {}
    loaded: list[str] = []

    def load(vehicle_id: str) -> VehicleState | None:
        loaded.append(vehicle_id)
        return states.get(vehicle_id)

    return VehicleStage(context, PartitionState(0), load, lambda s: states.__setitem__(s.vehicle_id, s)), states, loaded


def _at(ts: str) -> float:
    return dt.datetime.fromisoformat(f"2026-12-01T{ts}-03:00").timestamp()


def test_a_release_loads_the_due_vehicles_in_order_and_a_vehicle_that_left_comes_back_due(context):
    """The release picks its vehicles from the dirty ones in one array over `_due`
    (VehicleStage._due_at): the due ones are loaded in the partition's order, the waiting
    ones stay dirty unread, a vehicle with nothing left leaves, and one that left and
    speaks again is due at its new ping (no catraca: the releases are called by hand)."""
    stage, states, loaded = _recording_stage(context)
    stage.ingest([_parked_ping("JN-1011", "12:00:00", 1), _parked_ping("JN-1012", "12:09:00", 2),
                  _parked_ping("JN-1013", "12:05:00", 3), _parked_ping("JN-1013", "12:10:00", 4)])
    assert stage.partition.dirty == ["JN-1011", "JN-1012", "JN-1013"]
    loaded.clear()
    stage.release(_at("12:05:00"))  # none known yet: all read; JN-1011 left with nothing, JN-1013 keeps 12:10
    assert loaded == ["JN-1011", "JN-1012", "JN-1013"]
    assert stage.partition.dirty == ["JN-1012", "JN-1013"]
    assert [f.t for f in states["JN-1013"].pending] == [_at("12:10:00")]
    loaded.clear()
    stage.release(_at("12:05:00"))  # the same limit (a call the watermark did not move): none read
    assert loaded == [] and stage.partition.dirty == ["JN-1012", "JN-1013"]
    stage.ingest([_parked_ping("JN-1011", "12:07:00", 5)])  # it comes back
    assert stage.partition.dirty == ["JN-1011", "JN-1012", "JN-1013"]
    loaded.clear()
    stage.release(_at("12:09:30"))  # JN-1011's 12:07 and JN-1012's 12:09 go, in that order; JN-1013 waits
    assert loaded == ["JN-1011", "JN-1012"] and stage.partition.dirty == ["JN-1013"]
    assert states["JN-1011"].track.fixes[-1].t == _at("12:07:00")
    assert states["JN-1012"].track.fixes[-1].t == _at("12:09:00")


def test_vehicles_fall_silent_while_others_speak_and_again_after_they_come_back(context):
    """`_fall_silent` finds the vehicles silent past `max_coverage_gap_s` (300 s) by the
    release's limit in one array over the partition's newest fixes: exactly at the gap a
    vehicle is not silent yet; one that speaks stays; one silent that speaks again is
    followed again and can fall silent a second time (it is then last in `quiet`)."""
    states: dict[str, VehicleState] = {}
    stage = VehicleStage(context, PartitionState(0), states.get, lambda s: states.__setitem__(s.vehicle_id, s))
    stage.ingest([_parked_ping("JN-1011", "12:00:00", 1), _parked_ping("JN-1012", "12:02:00", 2),
                  _parked_ping("JN-1013", "12:01:00", 3)])
    stage.release(_at("12:03:00"))
    assert stage.partition.quiet == {"JN-1011": _at("12:00:00"), "JN-1012": _at("12:02:00"),
                                     "JN-1013": _at("12:01:00")}
    stage.release(_at("12:05:00"))  # JN-1011's gap is 300 s to the second: not silent yet
    assert set(stage.partition.quiet) == {"JN-1011", "JN-1012", "JN-1013"}
    stage.ingest([_parked_ping("JN-1012", "12:04:00", 4)])  # JN-1012 speaks
    stage.release(_at("12:06:00"))  # JN-1011 silent; JN-1013 exactly at its gap
    assert stage.partition.quiet == {"JN-1012": _at("12:04:00"), "JN-1013": _at("12:01:00")}
    stage.ingest([_parked_ping("JN-1011", "12:06:30", 5)])  # JN-1011 comes back
    stage.release(_at("12:07:00"))  # JN-1013 silent now
    assert list(stage.partition.quiet.items()) == [("JN-1012", _at("12:04:00")), ("JN-1011", _at("12:06:30"))]
    stage.release(_at("12:09:30"))  # JN-1012 silent, JN-1011 (the dict's last) not
    assert stage.partition.quiet == {"JN-1011": _at("12:06:30")}
    stage.release(_at("12:11:31"))
    assert stage.partition.quiet == {}
