"""What a worker does when a rebalance moves partitions (issue #4), without a broker.

A worker writes the state of the partitions it owns only: what it holds for a partition
taken away is dropped, and the keys of such a partition that it wrote into its memory
store are forgotten. A message Kafka delivers again to the partition's next owner is a
duplicate, whatever its age.
"""

from __future__ import annotations

import json
import logging

import pytest
from faust.types import TP

from engine import Engine, Message
from engine.loading import load_context
from engine.vehicle import PartitionState, VehicleState
from fiscaliza.replay import ReplayInputs
from kernel.partitioning import partition_of
from kernel.settings import StreamSettings
from samples import joao_neiva
from streams.app import Shell, create_app, partition_key
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
