"""The worker's shell without a broker: what it hands the engine of a Kafka record (the
replay's bound and cut; the record's timestamp as the receipt)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import SimpleNamespace

import msgspec

from engine import Message
from engine.messages import ToVehicle
from kernel.policy import load_policy
from streams.app import received_at, vehicle_inbound
from telemetry import RAW_SHOWN_BYTES, Rejection
from telemetry.files import numbered_lines
from telemetry.validation import decode

BOUND = load_policy().stream.max_message_bytes
PING = {"vehicle_id": "JN-1011", "ts": "2026-12-01T10:00:00-03:00", "lat": -19.7574776, "lon": -40.3852385,
        "speed_kmh": 20.0}


@dataclass
class Record:
    """What the agent reads of a Kafka record."""

    value: bytes
    topic: str = "tachograph"
    partition: int = 3
    offset: int = 42
    key: bytes = b"JN-1011"
    timestamp: float | None = None


def inbound(value: bytes):
    return vehicle_inbound(Record(value), msgspec.json.Decoder(ToVehicle), BOUND, backfill=False)


def test_a_record_longer_than_the_policy_bound_is_dead_lettered_too_long_with_its_raw_cut():
    value = json.dumps({**PING, "note": "x" * BOUND}).encode()
    rejection = inbound(value)
    assert isinstance(rejection, Rejection)
    assert (rejection.reason, rejection.location, rejection.raw_length) == ("too_long", "tachograph/3/42", len(value))
    assert rejection.raw == value[:RAW_SHOWN_BYTES].decode()


def test_the_worker_and_the_replay_reject_a_too_long_message_alike(tmp_path):
    value = bytes(3 * BOUND)  # NULs, no newline
    path = tmp_path / "t.jsonl"
    path.write_bytes(value)
    [(location, line)] = numbered_lines(path, BOUND)
    from_file = decode("tachograph", line, location, BOUND)
    from_topic = inbound(value)
    assert msgspec.structs.replace(from_file, location=None) == msgspec.structs.replace(from_topic, location=None)


def test_an_ordinary_record_is_a_message():
    value = json.dumps(PING).encode()
    message = inbound(value)
    assert isinstance(message, Message) and message.raw == value.decode() and message.offset == 42


def test_a_live_worker_takes_the_records_timestamp_as_the_messages_receipt():
    # the independent clock engine.clocks checks the device's against
    assert received_at(SimpleNamespace(timestamp=1796140800.25), backfill=False) == 1796140800.25


def test_a_backfill_or_a_record_without_a_timestamp_gives_no_receipt():
    # history published today was not received when it was published: no receipt, no check
    assert received_at(SimpleNamespace(timestamp=1796140800.25), backfill=True) is None
    assert received_at(SimpleNamespace(timestamp=-1.0), backfill=False) is None  # Kafka's "no timestamp"
    assert received_at(SimpleNamespace(timestamp=None), backfill=False) is None
