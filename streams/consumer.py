"""Faust's Kafka consumer and producer, with three fixes (faust-streaming 0.15.3, aiokafka).

1. On a rebalance Faust forgets the offsets acked since its last periodic commit
   (`Consumer.on_partitions_revoked` drops them) before its own commit on the way out,
   so the partitions' next owner reads up to `broker_commit_interval` of input again.
   Here they are committed too, before the consumer joins the group again: the work
   done is handed over with the partitions.

2. Records fetched while Faust finishes a rebalance are dropped, and Faust then seeks
   every partition back to its committed offset. A partition without a committed
   offset (a topic the workers write and read, `day-matched` or `operator-events`,
   before its first commit) is not sought back (aiokafka seeks only to offsets > 0):
   the consumer went on after the records it dropped, which were never processed (a
   closed day's matches, trips detected before the rebalance). Here such a partition
   is sought back to the last record Faust handed to the agents, or to its beginning
   (where a partition without a committed offset starts: `consumer_auto_offset_reset`
   is "earliest").

3. `Producer.flush()` gives up as soon as one buffered message (a table's changelog
   record) takes more than 0.1 s to hand to the Kafka client, leaving the rest in the
   buffer: offsets were then committed, a heartbeat sent or partitions handed over
   before the state they follow was written (and, on shutdown, that state lost). Here
   it returns once the buffer is empty.
"""

from __future__ import annotations

from faust.transport.consumer import ensure_TP
from faust.transport.drivers import aiokafka


class Consumer(aiokafka.Consumer):
    async def on_partitions_revoked(self, revoked) -> None:
        # What was acked before the rebalance (Faust forgets it as the next call starts),
        # then Faust lets the agents finish the events they took and commits those.
        acked = self._filter_committable_offsets(revoked)
        await super().on_partitions_revoked(revoked)
        behind = {tp: offset for tp, offset in acked.items() if offset > (self._committed_offset[tp] or 0)}
        if behind:  # the partitions are still ours until the consumer joins the group again
            await self._commit_offsets(behind)

    async def perform_seek(self) -> None:
        committed = await self.seek_to_committed()
        unset = [tp for tp, offset in committed.items() if not offset and not self._is_changelog_tp(tp)]
        # back to the last record handed to the agents (it comes again: at least once),
        # or to the beginning when none was since the partition was assigned
        delivered = {tp: self._read_offset.get(tp) for tp in unset}
        fresh = [tp for tp in unset if delivered[tp] is None]
        earliest = await self.earliest_offsets(*fresh) if fresh else {}
        for tp in unset:
            await self.seek(tp, delivered[tp] if delivered[tp] is not None else earliest[tp])
        self._read_offset.update(
            {tp: offset if offset is not None and offset >= 0 else None for tp, offset in committed.items()})
        self._committed_offset.update(
            {ensure_TP(tp): offset or None for tp, offset in committed.items() if offset is not None})


class Producer(aiokafka.Producer):
    async def flush(self) -> None:
        while self.buffer.size:
            await self.buffer.flush()
        await super().flush()


class Transport(aiokafka.Transport):
    Consumer = Consumer
    Producer = Producer
