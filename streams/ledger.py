"""Which input records a batch passed over: the worker's own check that the Kafka consumer
handed every record of a partition to the agent.

Faust's consumer can pass over records around a rebalance without a word: a partition
taken over was seen to resume at offset 94, then 96, and a continuous-integration run lost
half an hour of one bus's pings when a second worker joined (a trip, and with it two
infractions, changed). Where in faust-streaming 0.15.3 is not pinned down (its
`_drain_messages` marks as read a record whose delivery a suspended flow abandoned, and
`_add_gap` lets a commit step over offsets it never handed on: either could). Rather than
rely on the consumer's bookkeeping, each partition's state keeps the next offset it expects
of each input topic (`PartitionState.next_offsets`, written with the state the records
made), and a batch that starts past it, or skips an offset inside it, has the records in
between read back from the topic and processed first, in their place (`passed_over`). A
record delivered again (an offset below the expected one) is left to the stage, which knows
it for a duplicate, as before. Records passed over at a partition's very end have no later
record to show them: the worker's timer looks for them while its agents are idle and seeks
the consumer back to them (`TailCheck`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping


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


def tails_passed_over(expected: Mapping[tuple[str, int], int], ends: Mapping[tuple[str, int], int | None]) -> list[
        tuple[str, int, int, int]]:
    """The input partitions `(topic, partition, start, end)` whose records from the offset
    expected next to the partition's end (`ends`: the consumer's high watermarks, the offset
    after the last record) have not been taken yet. A record just fetched and waiting in the
    agent's buffer is one too: `TailWatch` tells those from tails passed over."""
    tails = []
    for (topic, partition), start in sorted(expected.items()):
        end = ends.get((topic, partition))
        if end is not None and end > start:
            tails.append((topic, partition, start, end))
    return tails


class TailWatch:
    """Records left at the end of a partition that the consumer passed over with none after
    them to show it (`passed_over` needs a later record), such as the END_OF_INPUT marker
    closing a backfill. A tail is passed over only once the very same one (same expected
    offset, same end) has stood for `quiet` seconds: records the consumer holds are taken
    within a second, so a tail seen at one check because a record had just arrived is gone
    at the next. A tail is reported once; if the seek back brings nothing, it is not sought
    again until an assignment (the offsets may hold no records: retention, a transaction's
    markers; or its record's batch raises again and again)."""

    def __init__(self, quiet: float) -> None:
        self.quiet = quiet
        self._since: dict[tuple[str, int, int, int], float] = {}
        self._reported: set[tuple[str, int, int, int]] = set()

    def due(self, tails: Iterable[tuple[str, int, int, int]], now: float) -> list[tuple[str, int, int, int]]:
        """The `tails` (from `tails_passed_over`) that have stood for `quiet` seconds and
        were not reported before; forgets the tails no longer standing."""
        standing = set(tails)
        self._since = {tail: self._since.get(tail, now) for tail in standing}
        self._reported &= standing
        due = sorted(tail for tail, since in self._since.items()
                     if now - since >= self.quiet and tail not in self._reported)
        self._reported.update(due)
        return due

    def interrupted(self) -> None:
        """An agent took a batch: the tails' quiet time starts anew at the next look, and
        those reported stay reported (a tail a seek cannot mend, a record whose batch
        raises, would otherwise be sought again after every batch of either agent)."""
        self._since.clear()

    def forget(self) -> None:
        """Every tail looked for again, its quiet time from the next check (after an
        assignment, the consumer resumes at the group's committed offsets)."""
        self._since.clear()
        self._reported.clear()


class AgentActivity:
    """When an agent last finished a batch, and whether it is in one."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock, self.busy, self.last_done = clock, False, clock()

    def start(self) -> None:
        self.busy = True

    def done(self) -> None:
        self.busy, self.last_done = False, self._clock()

    def idle_for(self) -> float:
        return 0.0 if self.busy else self._clock() - self.last_done

    def quiet_from_now(self) -> None:
        """Its idle time counted from now (a batch it is in stays in)."""
        self.last_done = self._clock()


class TailCheck:
    """The worker's look for tails passed over (`TailWatch`), asked only while both agents
    have been idle for `quiet` seconds: Faust hands every agent its records from one loop,
    which waits while any agent's buffer is full, so an agent in a long batch (a day read
    back) leaves the other idle with records standing that were not passed over."""

    def __init__(self, quiet: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.quiet, self._clock = quiet, clock
        self.agents = {"vehicles": AgentActivity(clock), "operators": AgentActivity(clock)}
        self.watch = TailWatch(quiet)

    def due(self, expected: Callable[[], Mapping[tuple[str, int], int]],
            end_of: Callable[[tuple[str, int]], int | None]) -> list[tuple[str, int, int, int]]:
        """The tails to seek back to now: `expected()` (read only while both agents are
        idle: a busy one's states are the core thread's) against `end_of` each partition
        (the consumer's high watermark). An agent at work restarts the tails' quiet time."""
        now = self._clock()
        if any(agent.idle_for() < self.quiet for agent in self.agents.values()):
            self.watch.interrupted()
            return []
        offsets = expected()
        return self.watch.due(tails_passed_over(offsets, {key: end_of(key) for key in offsets}), now)

    def forget(self) -> None:
        self.watch.forget()

    def restart(self) -> None:
        """After an assignment: the tails looked for again, and the agents' quiet time
        counted from now (they have had nothing to take while the group rebalanced)."""
        self.watch.forget()
        for agent in self.agents.values():
            agent.quiet_from_now()
