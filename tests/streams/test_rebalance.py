"""What a worker does when a rebalance moves partitions (issue #4), without a broker.

A worker writes the state of the partitions it owns only: what it holds for a partition
taken away is dropped, and the keys of such a partition that it wrote into its memory
store are forgotten. A message Kafka delivers again to the partition's next owner is a
duplicate, whatever its age.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections import Counter, defaultdict

import pytest
from faust.types import TP
from prometheus_client import CollectorRegistry

from engine import Engine, Message
from engine.loading import load_context
from engine.routing import vehicle_step
from engine.stored import pack
from engine.vehicle import PartitionState, VehicleState
from fiscaliza.replay import ReplayInputs
from kernel.partitioning import partition_of
from kernel.settings import StreamSettings
from samples import joao_neiva
from streams.app import Shell, create_app, partition_key
from streams.metrics import WorkerMetrics
from telemetry import Rejection, decode_tachograph

PARTITIONS = 4
# the sample fleet's vehicles on partitions 0 and 2 of 4 (murmur2 of the vehicle id)
ON_0, ON_2 = "JN-1011", "JN-1013"


@pytest.fixture(scope="module")
def context():
    feed, fleet = joao_neiva()
    return load_context(ReplayInputs(feed=feed, fleet=fleet, tachograph=fleet))


class FakeTable(dict):
    """A table that is a dict (no changelog): what the Shell wrote."""

    data = None


@pytest.fixture
def shell(context):
    tables = [FakeTable() for _ in range(4)]
    return Shell(context, StreamSettings(partitions=PARTITIONS), *tables)


def assigned(*partitions: int) -> set[TP]:
    return {TP(topic, p) for p in partitions
            for topic in ("tachograph", "catraca", "day-matched", "operator-events")}


def test_the_sample_vehicles_are_on_the_partitions_these_tests_assume():
    assert (partition_of(ON_0, PARTITIONS), partition_of(ON_2, PARTITIONS)) == (0, 2)
    assert partition_of(b"JN-1011", PARTITIONS) == partition_of("JN-1011", PARTITIONS)


def test_state_is_written_for_the_owned_partitions_only(shell, caplog):
    shell.on_assigned(assigned(0, 1))
    shell.vehicle_stage(0)
    shell._hold_vehicle(VehicleState(ON_0))
    shell._hold_vehicle(VehicleState(ON_2))  # its partition went to another worker mid-batch
    with caplog.at_level(logging.WARNING, "fiscaliza.worker"):
        shell.write_state("vehicles", "partitions")
    assert set(shell.vehicles) == {ON_0.encode()}
    assert set(shell.partitions) == {partition_key(0, PARTITIONS).encode()}
    assert "JN-1013" in caplog.text
    assert shell._held == {}


def test_a_revoked_partition_s_held_state_is_dropped(shell):
    shell.on_assigned(assigned(0, 2))
    shell.vehicle_stage(0)
    shell.vehicle_stage(2)
    shell._hold_vehicle(VehicleState(ON_0))
    shell._hold_vehicle(VehicleState(ON_2))
    dropped = shell.on_revoked({TP("tachograph", 2), TP("operator-events", 2)})
    assert sorted(dropped) == [("partitions", partition_key(2, PARTITIONS)), ("vehicles", ON_2)]
    assert not shell.owns("tachograph", 2) and shell.owns("tachograph", 0)
    shell.write_state("vehicles", "partitions")
    assert set(shell.vehicles) == {ON_0.encode()}


def test_the_operator_state_follows_the_operator_events_partition(shell):
    operator = "VNV"  # murmur2: partition 0
    assert partition_of(operator, PARTITIONS) == 0
    shell.on_assigned(assigned(1))
    shell._hold_operator(shell.operator_stage._state(operator))
    shell.write_state("operators")
    assert shell.operators == {}
    shell.on_assigned(assigned(0))
    shell._hold_operator(shell.operator_stage._state(operator))
    shell.write_state("operators")
    assert set(shell.operators) == {b"VNV"}


def test_keys_written_locally_for_a_partition_given_away_are_forgotten(context):
    app = create_app(context, StreamSettings(partitions=PARTITIONS))
    shell = app.fiscaliza_shell
    store = shell.vehicles.data  # Faust's memory store
    for vehicle in (ON_0, ON_2):
        store.data[vehicle.encode()] = b"written by this worker"
    store.data[partition_key(2, PARTITIONS).encode()] = b"elsewhere: not this table's key"
    partitions = shell.partitions.data
    partitions.data[partition_key(0, PARTITIONS).encode()] = b"0"
    partitions.data[partition_key(2, PARTITIONS).encode()] = b"2"
    shell.on_assigned(assigned(0, 1))
    assert set(store.data) == {ON_0.encode()}
    assert set(partitions.data) == {partition_key(0, PARTITIONS).encode()}


def ping(ts: str, seq: int) -> Message:
    line = json.dumps({"vehicle_id": ON_0, "ts": ts, "lat": -19.7574776, "lon": -40.3852385,
                       "speed_kmh": 0.0, "seq": seq})
    body = decode_tachograph(line, f"tachograph/0/{seq}")
    assert not isinstance(body, Rejection)
    return Message(body, f"tachograph/0/{seq}", line, offset=seq)


def test_a_message_delivered_again_long_after_is_a_duplicate_not_late(context):
    # the next owner reads again what the previous one processed but had not committed:
    # 12 minutes behind the vehicle's newest ping, more than the allowed lateness (its dedup
    # key is gone by then; its offset, behind the newest admitted, tells it is a redelivery).
    # (12 min, not more than 15: a ping that far ahead would wait for the next, the clock guard)
    engine = Engine(context)
    first = ping("2026-12-01T12:00:00-03:00", 1)
    assert engine.ingest([first, ping("2026-12-01T12:12:00-03:00", 2)]).rejected == []
    [again] = engine.ingest([first]).rejected
    assert again.reason == "duplicate"
    # a message never seen that far behind is still late
    [late] = engine.ingest([ping("2026-12-01T12:00:10-03:00", 3)]).rejected
    assert late.reason == "late"


def test_partition_state_round_trips_through_the_shell(shell):
    shell.on_assigned(assigned(0))
    stage = shell.vehicle_stage(0)
    stage.partition.max_events["tachograph"] = 1.0
    shell.write_state("partitions")
    assert shell.vehicle_stage(0).partition == PartitionState(0, max_events={"tachograph": 1.0})




def test_a_partition_s_vehicle_stage_is_kept_while_owned_and_reads_the_partition_as_stored(context):
    """Its caches (each open track's measured geometry) last from batch to batch; its
    state never: each batch's stage reads the partition's state from the table, and a
    rebalance starts the partition afresh from its changelog, caches and all."""
    shell = Shell(context, StreamSettings(partitions=PARTITIONS, inputs=frozenset({"tachograph"})),
                  *[FakeTable() for _ in range(4)])
    shell.on_assigned(assigned(0, 2))
    stage = shell.vehicle_stage(0)
    # 12:12 less the allowed lateness releases 12:00 and 12:01
    pings = [ping("2026-12-01T12:00:00-03:00", 1), ping("2026-12-01T12:01:00-03:00", 2),
             ping("2026-12-01T12:12:00-03:00", 3)]
    vehicle_step(stage, pings, [], frozenset({"tachograph"}))
    shell.write_state("vehicles", "partitions")
    assert stage._track_memos  # the open track's geometry, measured at the release
    assert shell.vehicle_stage(0) is stage
    shell.write_state("partitions")
    # the partition as stored, whatever the stage held before
    shell.partitions[partition_key(0, PARTITIONS).encode()] = pack(PartitionState(0, max_events={"tachograph": 7.0}))
    assert shell.vehicle_stage(0).partition == PartitionState(0, max_events={"tachograph": 7.0})
    assert shell.vehicle_stage(2) is not stage
    shell.on_revoked({TP("tachograph", 0)})
    shell.on_assigned(assigned(0))
    assert shell.vehicle_stage(0) is not stage

def test_a_redelivery_after_a_long_silence_does_not_make_a_clock_jump(context):
    # 20 min of silence, then the new owner reads 12:00 again: a message seen before tells
    # nothing of the device's clock now, so 12:20 stays held (not `future`) and is taken
    # with the vehicle's next ping
    engine = Engine(context)
    first = ping("2026-12-01T12:00:00-03:00", 1)
    assert engine.ingest([first, ping("2026-12-01T12:20:00-03:00", 2)]).rejected == []
    assert [r.reason for r in engine.ingest([first]).rejected] == ["duplicate"]
    assert engine.ingest([ping("2026-12-01T12:20:10-03:00", 3)]).rejected == []
    assert engine._vehicles[ON_0].max_events["tachograph"] == ping("2026-12-01T12:20:10-03:00", 3).body.epoch


def _morning(demo_day, until: str) -> list[Message]:
    """The demo day's tachograph messages before `until` (local time), in input order; a
    malformed one (an injected input fault) left out."""
    from telemetry import decode

    end = dt.datetime.fromisoformat(f"2026-12-01T{until}-03:00").timestamp()
    messages = []
    for offset, line in enumerate(demo_day.inputs.tachograph.read_bytes().splitlines()):
        body = decode("tachograph", line, f"tachograph/{offset}")
        if not isinstance(body, Rejection) and body.epoch < end:
            messages.append(Message(body, f"tachograph/{offset}", line.decode(), offset=offset))
    return messages


class _Worker:
    """A worker's shell over tables shared with the workers before it (what a restarted
    worker, or one given a partition, recovers from the changelogs) and its own metrics
    (what it kept in memory is lost); it takes a batch as the vehicle agent does."""

    def __init__(self, context, tables: list, *partitions: int):
        self.shell = Shell(context, StreamSettings(partitions=PARTITIONS, inputs=frozenset({"tachograph"})), *tables)
        self.metrics = WorkerMetrics(CollectorRegistry(), context, PARTITIONS, clock=None, owns_vehicle=lambda v: (
            self.shell.owns("tachograph", partition_of(v, PARTITIONS))))
        self.shell.on_assigned(assigned(*partitions))

    def take(self, batch: list[Message]) -> None:
        if self.shell.recount_due:
            self.metrics.recount_realized(self.shell.take_stored_trips())
        by_partition = defaultdict(list)
        for message in batch:
            partition = partition_of(message.body.vehicle_id, PARTITIONS)
            if self.shell.owns("tachograph", partition):
                by_partition[partition].append(message)
        for partition, messages in sorted(by_partition.items()):
            stage = self.shell.vehicle_stage(partition)
            self.metrics.observe(vehicle_step(stage, messages, [], frozenset({"tachograph"})))
            self.metrics.observe_watermarks(partition, stage.partition.max_events)
        self.shell.write_state("vehicles", "partitions")

    def realized(self) -> Counter:
        return Counter({line: n for line, n in self.metrics.fleet_counts().realized_so_far.items() if n})


def _run(workers: list[_Worker], messages: list[Message]) -> None:
    for start in range(0, len(messages), 500):
        for worker in workers:
            worker.take(messages[start:start + 500])


def test_a_worker_restarted_or_given_the_partitions_mid_day_counts_the_days_realized_trips(demo_day):
    # before: the count was in memory only, so a worker restarted at 09:00 (or the one a
    # rebalance gave the partitions to) counted the day's trips from 09:00
    morning = _morning(demo_day, "12:00:00")
    nine = dt.datetime.fromisoformat("2026-12-01T09:00:00-03:00").timestamp()
    before_nine = [m for m in morning if m.body.epoch < nine]
    after_nine = morning[len(before_nine):]
    everything = range(PARTITIONS)

    steady = _Worker(demo_day.context, [FakeTable() for _ in range(4)], *everything)
    _run([steady], morning)

    tables = [FakeTable() for _ in range(4)]
    first = _Worker(demo_day.context, tables, *everything)
    _run([first], before_nine)
    told_before_nine = first.realized()
    restarted = _Worker(demo_day.context, tables, *everything)
    _run([restarted], after_nine)

    tables = [FakeTable() for _ in range(4)]
    kept = _Worker(demo_day.context, tables, *everything)
    _run([kept], before_nine)
    kept.shell.on_revoked(assigned(*everything))
    kept.shell.on_assigned(assigned(0, 1))  # a second worker joins: partitions 2 and 3 are its
    joined = _Worker(demo_day.context, tables, 2, 3)
    _run([kept, joined], after_nine)

    assert told_before_nine and steady.realized() != told_before_nine  # trips on both sides of the restart
    assert restarted.realized() == steady.realized() == kept.realized() + joined.realized()
    assert kept.realized() and joined.realized()  # each counts its own vehicles
