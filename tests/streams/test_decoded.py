"""The worker's decoded vehicle and operator states (streams/decoded.py), through the
shell that keeps them: a state this worker wrote is handed out instead of unpacked only
while the table holds its very bytes, a vehicle's once, and only while its partition
stays owned."""

from __future__ import annotations

import datetime as dt
import itertools

import msgspec
import pytest
from faust.types import TP

from engine.loading import load_context
from engine.operator import OperatorState
from engine.routing import operator_step, vehicle_step
from engine.stored import pack, unpack
from engine.vehicle import VehicleState
from fiscaliza.replay import RUN, ReplayInputs, SortedInput
from gtfs import load_feed
from kernel.fleet import load_fleet
from kernel.partitioning import partition_of
from kernel.settings import StreamSettings
from samples import joao_neiva
from simulator import SimulationSettings, simulate
from streams.app import Shell
from streams.decoded import DecodedStates

PARTITIONS = 4
ON_0, ON_2 = "JN-1011", "JN-1013"  # the sample fleet's vehicles on partitions 0 and 2 of 4
OPERATOR_ON_0, OPERATOR_ON_2 = "OP-1", "OP-0"  # operator keys on partitions 0 and 2 of 4
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(VehicleState)
_OPERATOR_DECODER = msgspec.msgpack.Decoder(OperatorState)


class FakeTable(dict):
    """A table that is a dict (no changelog): what the Shell wrote."""

    data = None


@pytest.fixture(scope="module")
def context():
    feed, fleet = joao_neiva()
    return load_context(ReplayInputs(feed=feed, fleet=fleet, tachograph=fleet))


@pytest.fixture
def shell(context):
    shell = Shell(context, StreamSettings(partitions=PARTITIONS), *(FakeTable() for _ in range(4)))
    shell.on_assigned({TP(topic, p) for p in (0, 2) for topic in ("tachograph", "catraca", "operator-events")})
    return shell


def written(shell: Shell, vehicle_id: str, *judged: str) -> VehicleState:
    """A state of `vehicle_id` held and written by the shell, as after a batch."""
    state = VehicleState(vehicle_id, judged=list(judged))
    shell._hold_vehicle(state)
    shell.write_state("vehicles")
    return state


def written_operator(shell: Shell, operator_id: str, *closed: str) -> OperatorState:
    """A state of `operator_id` held and written by the shell, as after a batch."""
    state = OperatorState(operator_id, closed=list(closed))
    shell._hold_operator(state)
    shell.write_state("operators")
    return state


def test_the_sample_vehicles_are_on_the_partitions_these_tests_assume():
    assert (partition_of(ON_0, PARTITIONS), partition_of(ON_2, PARTITIONS)) == (0, 2)
    assert (partition_of(OPERATOR_ON_0, PARTITIONS), partition_of(OPERATOR_ON_2, PARTITIONS)) == (0, 2)


def test_a_state_this_worker_wrote_comes_back_as_the_object_written_equal_to_its_bytes_unpacked(shell):
    state = written(shell, ON_0, "2026-12-01")
    loaded = shell._load_vehicle(ON_0)
    assert loaded is state  # not unpacked again
    assert _ENCODER.encode(loaded) == _ENCODER.encode(unpack(shell.vehicles[ON_0.encode()], _DECODER))


def test_other_bytes_in_the_table_are_unpacked_not_served_from_the_cache(shell):
    state = written(shell, ON_0, "2026-12-01")
    # a changelog recovered (or another writer) put another state there
    shell.vehicles[ON_0.encode()] = pack(VehicleState(ON_0, judged=["2026-11-30"]))
    loaded = shell._load_vehicle(ON_0)
    assert loaded is not state
    assert loaded.judged == ["2026-11-30"]


def test_a_state_loaded_changed_and_not_held_is_read_from_the_table_at_the_next_load(shell):
    state = written(shell, ON_0, "2026-12-01")
    loaded = shell._load_vehicle(ON_0)
    loaded.judged.append("2026-12-02")  # the stage changes what it loads in place, and never held it
    again = shell._load_vehicle(ON_0)
    assert again is not state
    assert again.judged == ["2026-12-01"]  # the table's bytes


def test_a_state_held_again_is_kept_with_its_new_bytes(shell):
    state = written(shell, ON_0, "2026-12-01")
    loaded = shell._load_vehicle(ON_0)
    loaded.judged.append("2026-12-02")
    shell._hold_vehicle(loaded)
    shell.write_state("vehicles")
    assert shell._load_vehicle(ON_0) is state
    assert unpack(shell.vehicles[ON_0.encode()], _DECODER).judged == ["2026-12-01", "2026-12-02"]


def test_an_operator_state_this_worker_wrote_comes_back_at_every_load_as_the_object_written(shell):
    state = written_operator(shell, OPERATOR_ON_0, "2026-11-30")
    # the operator stage loads twice per message (its undo, then the copy it works on)
    assert shell._load_operator(OPERATOR_ON_0) is state
    assert shell._load_operator(OPERATOR_ON_0) is state
    assert _ENCODER.encode(state) == _ENCODER.encode(unpack(shell.operators[OPERATOR_ON_0.encode()],
                                                            _OPERATOR_DECODER))


def test_other_bytes_in_the_operators_table_are_unpacked_and_the_entry_dropped(shell):
    state = written_operator(shell, OPERATOR_ON_0, "2026-11-30")
    shell.operators[OPERATOR_ON_0.encode()] = pack(OperatorState(OPERATOR_ON_0, closed=["2026-11-29"]))
    loaded = shell._load_operator(OPERATOR_ON_0)
    assert loaded is not state and loaded.closed == ["2026-11-29"]
    assert len(shell._decoded_operators) == 0


def test_an_operator_state_written_again_is_kept_with_its_new_bytes(shell):
    written_operator(shell, OPERATOR_ON_0, "2026-11-30")
    again = written_operator(shell, OPERATOR_ON_0, "2026-11-30", "2026-12-01")
    assert shell._load_operator(OPERATOR_ON_0) is again


# (the table, its input topic, a key on partition 0 and one on 2, writing one, loading one, its cache)
_KINDS = {
    "vehicles": ("tachograph", ON_0, ON_2, written, "_load_vehicle", "_decoded_vehicles"),
    "operators": ("operator-events", OPERATOR_ON_0, OPERATOR_ON_2, written_operator, "_load_operator",
                  "_decoded_operators"),
}


@pytest.mark.parametrize("kind", sorted(_KINDS))
def test_a_revoked_partition_s_states_are_dropped_the_others_kept(shell, kind):
    topic, on_0, on_2, write, load, cache = _KINDS[kind]
    kept, revoked = write(shell, on_0), write(shell, on_2)
    shell.on_revoked({TP(topic, 2)})
    assert len(getattr(shell, cache)) == 1
    assert getattr(shell, load)(on_2) is not revoked  # the table's bytes, unpacked
    assert getattr(shell, load)(on_0) is kept


@pytest.mark.parametrize("kind", sorted(_KINDS))
def test_an_assignment_drops_every_state(shell, kind):
    topic, on_0, _, write, load, cache = _KINDS[kind]
    state = write(shell, on_0)
    shell.on_assigned({TP(topic, 0), TP(topic, 2)})
    assert len(getattr(shell, cache)) == 0
    assert getattr(shell, load)(on_0) is not state


def test_read_leaves_the_entry_while_the_bytes_match_and_drops_it_otherwise():
    states = DecodedStates()
    states.keep("a", b"a", ["a"])
    assert states.read("a", b"a") == ["a"] and states.read("a", b"a") == ["a"]
    assert states.read("a", b"other") is None and len(states) == 0
    assert states.read("a", b"a") is None


def test_the_capacity_counts_packed_bytes_and_a_full_cache_keeps_no_new_state():
    states = DecodedStates(capacity_bytes=4)
    states.keep("a", b"a", ["a"])
    states.keep("b", b"b", ["b"])
    states.keep("c", b"ccc", ["c"])  # 1 + 1 + 3 > 4: not kept
    states.keep("b", b"bb", ["b2"])  # written again: its new bytes replace its old (1 + 2)
    assert states.kept_bytes == 3 and len(states) == 2
    assert states.take("c", b"ccc") is None
    states.keep("d", b"d", ["d"])  # 4: fits
    states.keep("e", b"e", ["e"])  # 5: not kept
    assert states.take("e", b"e") is None
    assert states.take("a", b"a") == ["a"] and states.take("b", b"bb") == ["b2"] and states.take("d", b"d") == ["d"]
    assert states.kept_bytes == 0 and len(states) == 0
    states.keep("f", b"fffff", ["f"])  # larger than the whole capacity
    assert states.take("f", b"fffff") is None


def test_a_state_that_no_longer_fits_when_written_again_is_forgotten():
    # the table holds the new bytes: the old entry cannot be served, kept or not
    states = DecodedStates(capacity_bytes=3)
    states.keep("a", b"a", ["a"])
    states.keep("a", b"aaaa", ["a2"])
    assert states.kept_bytes == 0 and states.take("a", b"a") is None and states.take("a", b"aaaa") is None


def test_dropping_entries_gives_their_bytes_back():
    states = DecodedStates(capacity_bytes=2)
    states.keep("a", b"a", ["a"])
    states.keep("b", b"b", ["b"])
    states.drop(keeps=lambda key: key == "a")
    assert states.kept_bytes == 1
    assert states.read("a", b"other") is None and states.kept_bytes == 0  # other bytes: dropped
    states.keep("c", b"cc", ["c"])
    states.drop()
    assert states.kept_bytes == 0 and len(states) == 0


def test_no_capacity_keeps_nothing():
    states = DecodedStates(capacity_bytes=0)
    states.keep("a", b"a", ["a"])
    assert states.take("a", b"a") is None


def _numpy_as_builtin(value):
    return value.item()  # a numpy scalar in an evidence field: JSON gives its value


def _shell_day(feed, fleet, sim, capacity_bytes: int, limit: int) -> tuple[list[bytes], dict[str, int]]:
    """The messages in event-time order, 13 a take, through a shell as benchmarks.shell_run
    drives it, its decoded states kept up to `capacity_bytes`: every send of each take, as JSON,
    and how many loads of vehicles and of operators the caches served. At every load they
    serve, the state handed out must encode as the table's bytes unpacked."""
    inputs = ReplayInputs(feed=feed, fleet=fleet, tachograph=sim.tachograph, catraca=sim.catraca)
    context = load_context(inputs)
    settings = StreamSettings(partitions=1, backfill=True)
    shell = Shell(context, settings, *(FakeTable() for _ in range(4)))
    shell.on_assigned({TP(topic, 0) for topic in ("tachograph", "catraca", "day-matched", "operator-events")})
    shell._decoded_vehicles = cache = DecodedStates(capacity_bytes)
    shell._decoded_operators = operator_cache = DecodedStates(capacity_bytes)
    served = {"vehicles": 0, "operators": 0}

    def checked(load, decoder, name):
        def served_or_none(key, raw):
            state = load(key, raw)
            if state is not None:
                served[name] += 1
                assert _ENCODER.encode(state) == _ENCODER.encode(unpack(raw, decoder)), key
            return state
        return served_or_none

    cache.take = checked(cache.take, _DECODER, "vehicles")
    operator_cache.read = checked(operator_cache.read, _OPERATOR_DECODER, "operators")
    encoder = msgspec.json.Encoder(enc_hook=_numpy_as_builtin)
    sent = []
    with SortedInput(inputs, RUN) as messages:
        stream = itertools.islice(messages, limit)
        while batch := list(itertools.islice(stream, 13)):
            stage = shell.vehicle_stage(0)
            sends = vehicle_step(stage, batch, [], settings.inputs)
            sent.append(encoder.encode(sends))
            shell.write_state("vehicles", "partitions")
            beat = stage.heartbeat(final=False)
            shell.hold_partition(stage.partition)
            shell.write_state("partitions")
            for message in sends.to_operators:
                sent.append(encoder.encode(operator_step(shell.operator_stage, message.operator_id, message, [])))
            for operator_id in sorted(context.feed.agencies):
                sent.append(encoder.encode(operator_step(shell.operator_stage, operator_id, beat, [])))
            shell.write_state("operators")
    return sent, served


def test_a_morning_through_the_shell_sends_the_same_with_the_caches_as_without(tmp_path):
    feed, fleet = joao_neiva()
    day = dt.date(2026, 12, 1)
    sim = simulate(load_feed(feed), load_fleet(fleet), SimulationSettings(day, day, seed=3), tmp_path)
    with_cache, served = _shell_day(feed, fleet, sim, capacity_bytes=2**30, limit=3000)
    without, none_served = _shell_day(feed, fleet, sim, capacity_bytes=0, limit=3000)
    assert none_served == {"vehicles": 0, "operators": 0}
    assert served["vehicles"] > 100  # most loads of a vehicle written at the take before
    assert served["operators"] > 100  # every load of an operator after its first write
    assert with_cache == without


def _written_then_loaded(shell: Shell, state: VehicleState, served_decoded: bool):
    """`state` written by the shell and loaded again at the next batch, served from the
    decoded states or (as after a restart, a rebalance, or the cache full) unpacked from
    the table's bytes: its partition's stage and the state loaded."""
    shell._hold_vehicle(state)
    shell.write_state("vehicles")
    if not served_decoded:
        shell._decoded_vehicles.drop()
    stage = shell.vehicle_stage(partition_of(state.vehicle_id, PARTITIONS))
    loaded = shell._load_vehicle(state.vehicle_id)
    assert (loaded is state) == served_decoded
    return stage, loaded


def _a_sent_record(context, vehicle_id: str, cites: str):
    from rules.model import Infraction
    tz = context.feed.timezone
    return Infraction(infraction_id="x1", code="A-07", group="A", fine_ufir=1, status="confirmed", operator_id="op",
                      route_id="r", direction_id=0, trip_id=None, vehicle_id=vehicle_id,
                      service_date=dt.date(2026, 12, 1), occurred_at=dt.datetime(2026, 12, 1, 7, 5, tzinfo=tz),
                      detected_at=dt.datetime(2026, 12, 1, 7, 6, tzinfo=tz), lat=None, lon=None, description="",
                      legal_basis="", evidence={"pings": [{"msg_id": cites}]})


@pytest.mark.parametrize("served_decoded", [True, False])
def test_a_record_sent_again_at_most_provisional_is_the_same_whether_its_state_was_served_or_unpacked(
        shell, context, served_decoded):
    """A second version of a ping a sent record cites: the record goes again, provisional.
    msgpack gives aware datetimes back in UTC, equal (==) to the feed's but written
    otherwise; the stage sends them in the feed's timezone, so what the worker sends does
    not depend on whether the state came from its decoded states or its table's bytes
    (the review's finding: it did, `-03:00` on a hit and `+00:00` on a miss)."""
    from engine.triplog import TripLog
    from rules.model import infraction_record
    cites = f"{ON_0}/2026-12-01T07:00:00-03:00#1"
    record = _a_sent_record(context, ON_0, cites)
    log = TripLog(1.0, 2.0, "r", 0, "s", "2026-12-01", 3.0, 2.0, infractions=[record])
    state = VehicleState(ON_0, trips=[log], emitted={"x2": msgspec.structs.replace(record, infraction_id="x2")},
                         conflicted={cites: 0.0})
    stage, loaded = _written_then_loaded(shell, state, served_decoded)
    sent = sorted((infraction_record(r)["infraction_id"], infraction_record(r)["occurred_at"],
                   infraction_record(r)["detected_at"], r.status) for r in stage._at_most_provisional(loaded))
    assert sent == [("x1", "2026-12-01T07:05:00-03:00", "2026-12-01T07:06:00-03:00", "provisional"),
                    ("x2", "2026-12-01T07:05:00-03:00", "2026-12-01T07:06:00-03:00", "provisional")]


@pytest.mark.parametrize("served_decoded", [True, False])
def test_an_implausible_reading_is_dead_lettered_alike_whether_its_state_was_served_or_unpacked(
        shell, context, served_decoded):
    """A reading released from the pending ones and rejected as implausible (a counter
    beyond every modulus) is dead-lettered with its fields as JSON: its instants in the
    feed's timezone whether the state came from the decoded states (the offset it was
    sent with) or the table's bytes (msgpack gives UTC) — the third review's finding."""
    from engine.dayfacts import log_day
    from telemetry import CatracaReading
    tz = context.feed.timezone
    reading = CatracaReading(vehicle_id=ON_0, ts=dt.datetime(2026, 12, 1, 7, 0, tzinfo=tz),
                             counter=max(context.policy.d21.counter_moduli) + 1, seal_intact=True, status="ok", seq=3)
    state = VehicleState(ON_0, pending_catraca=[reading])
    stage, loaded = _written_then_loaded(shell, state, served_decoded)
    rejected = []
    log_day(stage._keeping, loaded, [], list(loaded.pending_catraca), rejected)
    assert [(r.reason, msgspec.json.decode(r.raw)["ts"]) for r in rejected] == \
        [("implausible", "2026-12-01T07:00:00-03:00")]
