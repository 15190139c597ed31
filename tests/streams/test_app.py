"""The worker's shell, without a broker: what it hands the engine of a Kafka record."""

from __future__ import annotations

from types import SimpleNamespace

from streams.app import received_at


def test_a_live_worker_takes_the_records_timestamp_as_the_messages_receipt():
    # the independent clock engine.clocks checks the device's against
    assert received_at(SimpleNamespace(timestamp=1796140800.25), backfill=False) == 1796140800.25


def test_a_backfill_or_a_record_without_a_timestamp_gives_no_receipt():
    # history published today was not received when it was published: no receipt, no check
    assert received_at(SimpleNamespace(timestamp=1796140800.25), backfill=True) is None
    assert received_at(SimpleNamespace(timestamp=-1.0), backfill=False) is None  # Kafka's "no timestamp"
    assert received_at(SimpleNamespace(timestamp=None), backfill=False) is None
