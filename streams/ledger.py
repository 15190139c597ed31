"""Which input records a batch passed over: the worker's own check that the Kafka consumer
handed every record of a partition to the agent.

Faust's consumer can pass over records around a rebalance without a word: a partition
taken over was seen to resume at offset 94, then 96, and a continuous-integration run lost
half an hour of one bus's pings when a second worker joined (a trip, and with it two
infractions, changed). Where in faust-streaming 0.15.3 is not pinned down (its
`_drain_messages` marks as read a record whose delivery a suspended flow abandoned, and
`_add_gap` lets a commit step over offsets it never handed on: either could). Rather than rely on the consumer's bookkeeping, each partition's
state keeps the next offset it expects of each input topic (`PartitionState.next_offsets`,
written with the state the records made), and a batch that starts past it, or skips an
offset inside it, has the records in between read back from the topic and processed first,
in their place. A record delivered again (an offset below the expected one) is left to the
stage, which knows it for a duplicate, as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def passed_over(next_offsets: Mapping[str, int], taken: Iterable[tuple[str, int]]) -> tuple[
        list[tuple[str, int, int]], dict[str, int]]:
    """The offset ranges `(topic, start, end)` (end excluded) that the records `taken`, in
    the order the consumer handed them, pass over: from the offset expected next to the
    first record past it, and between two records of a topic. Then the offsets expected
    next once those records are processed. A topic not expected yet (a partition state that
    never took a record of it) starts at its first record: nothing before it is known to be
    missing."""
    expected = dict(next_offsets)
    ranges = []
    for topic, offset in taken:
        start = expected.get(topic)
        if start is not None and offset < start:
            continue  # delivered again: the stage finds it a duplicate
        if start is not None and offset > start:
            ranges.append((topic, start, offset))
        expected[topic] = offset + 1
    return ranges, expected
