"""The fixes `streams.consumer` makes to Faust's Kafka producer, without a broker."""

from __future__ import annotations

import asyncio

from streams.consumer import Producer


class SlowBuffer:
    """Faust's producer buffer when each message takes longer than its 0.1 s wait:
    one `flush()` hands a single message to the Kafka client and gives up."""

    def __init__(self, messages: int) -> None:
        self.size = messages
        self.flush_calls = 0

    async def flush(self) -> None:
        self.flush_calls += 1
        self.size = max(0, self.size - 1)


def producer_with(buffer: SlowBuffer) -> Producer:
    producer = Producer.__new__(Producer)  # no app, no Kafka client: only `flush` is exercised
    producer.buffer = buffer
    producer._producer = None
    producer._transaction_producers = {}
    return producer


def test_flush_returns_only_once_every_buffered_changelog_record_is_handed_over():
    # 5 records, one handed over per buffer flush: 5 flushes empty it, Faust's own
    # `flush` then calls it once more (on an empty buffer) = 6 calls, 0 left
    buffer = SlowBuffer(5)
    asyncio.run(producer_with(buffer).flush())
    assert buffer.size == 0
    assert buffer.flush_calls == 6


def test_flush_of_an_empty_buffer_does_not_wait():
    buffer = SlowBuffer(0)
    asyncio.run(producer_with(buffer).flush())
    assert buffer.flush_calls == 1  # Faust's own call only
