"""What a batch passed over (streams.ledger), and the worker's shell reading it back from
the topic in its place (streams.app.Shell.take), against a real Kafka broker."""

from __future__ import annotations

import msgspec
import pytest
from faust.types import TP

from kernel.partitioning import partition_of
from kernel.settings import StreamSettings
from streams.admin import publish
from streams.app import InputLedger, Shell
from streams.ledger import AgentActivity, TailCheck, TailWatch, passed_over, tails_passed_over
from streams.readback import ReadBackTimeout, read_offsets

PARTITIONS = 4


def test_a_batch_that_starts_past_the_expected_offset_passed_over_the_offsets_between():
    # the state expects offset 94 next (it took 0..93); the consumer hands 96, 97
    assert passed_over({"day-matched": 94}, [("day-matched", 96), ("day-matched", 97)]) == \
        ([("day-matched", 94, 96)], {"day-matched": 98})


def test_a_batch_that_skips_an_offset_inside_it_passed_over_that_offset():
    assert passed_over({}, [("tachograph", 100), ("catraca", 7), ("tachograph", 101), ("tachograph", 103)]) == \
        ([("tachograph", 102, 103)], {"tachograph": 104, "catraca": 8})


def test_records_delivered_again_and_a_topic_not_expected_yet_pass_over_nothing():
    # 40..41 delivered again after a seek back (the stage finds them duplicates); catraca
    # was never taken by this partition's state: nothing before its first record is known
    assert passed_over({"tachograph": 42}, [("tachograph", 40), ("tachograph", 41), ("tachograph", 42),
                                            ("catraca", 500)]) == ([], {"tachograph": 43, "catraca": 501})


@pytest.fixture(scope="module")
def published(kafka_bootstrap, reset_topics, demo_day, tmp_path_factory):
    """The demo day's first 3,000 tachograph lines on the broker; the records of the
    partition with the most of them, as the topic holds them."""
    reset_topics(kafka_bootstrap)
    path = tmp_path_factory.mktemp("ledger") / "tachograph.jsonl"
    path.write_bytes(b"".join(demo_day.inputs.tachograph.read_bytes().splitlines(keepends=True)[:3000]))
    publish(kafka_bootstrap, "tachograph", path)
    partition = max(range(PARTITIONS), key=lambda p: len(read_offsets(kafka_bootstrap, "tachograph", p, 0, 10**9)))
    return partition, read_offsets(kafka_bootstrap, "tachograph", partition, 0, 10**9)


def shell_on(bootstrap: str, context) -> Shell:
    tables = [type("Table", (dict,), {"data": None})() for _ in range(4)]
    shell = Shell(context, StreamSettings(bootstrap=bootstrap, partitions=PARTITIONS, inputs=frozenset({"tachograph"}),
                                          backfill=True), *tables)
    shell.on_assigned({TP(topic, p) for p in range(PARTITIONS)
                       for topic in ("tachograph", "catraca", "day-matched", "operator-events")})
    return shell


def taken(shell: Shell, partition: int, *batches: list, forget_offsets: bool = False) -> tuple[bytes, list]:
    """The stage's outputs for the batches, encoded, and what each batch read back."""
    sends, passed = [], []
    for batch in batches:
        stage = shell.vehicle_stage(partition)
        if forget_offsets:
            stage.partition.next_offsets = {}
        out, read = shell.take(stage, batch, [])
        sends.append(out)
        passed.append(read)
        shell.write_state("vehicles", "partitions")
    return msgspec.json.encode(sends), passed


@pytest.mark.kafka
def test_offsets_are_read_back_from_the_topic_exactly(kafka_bootstrap, published):
    partition, records = published
    assert len(records) > 1000 and [r.offset for r in records] == list(range(len(records)))
    assert read_offsets(kafka_bootstrap, "tachograph", partition, 300, 480) == records[300:480]
    assert read_offsets(kafka_bootstrap, "tachograph", partition, len(records), len(records) + 5) == []


@pytest.mark.kafka
def test_what_the_consumer_passed_over_is_read_back_and_processed_in_its_place(kafka_bootstrap, published, demo_day):
    partition, records = published
    assert partition_of(records[0].key, PARTITIONS) == partition
    # a partition taken in two batches: 0..599, then 600 on; the consumer passed over 600..779
    # (half an hour of a bus's pings, 10 s apart, over the vehicles of the partition)
    whole, passed = taken(shell_on(kafka_bootstrap, demo_day.context), partition, records[:600], records[600:])
    assert passed == [[], []]
    holed, passed = taken(shell_on(kafka_bootstrap, demo_day.context), partition, records[:600], records[780:])
    assert passed == [[], [("tachograph", 600, 780)]]
    assert holed == whole
    # without the partition's expected offsets the same batches lose those records
    lost, passed = taken(shell_on(kafka_bootstrap, demo_day.context), partition, records[:600], records[780:],
                         forget_offsets=True)
    assert passed == [[], []] and lost != whole


@pytest.fixture(scope="module")
def operator_events(kafka_bootstrap, published, tmp_path_factory):
    """300 operator-events records on the broker (after `published` reset the topics;
    unkeyed: publish keys operator-events by nothing, so they spread over the partitions);
    the records of the partition with the most."""
    path = tmp_path_factory.mktemp("ledger") / "operator-events.jsonl"
    path.write_text("".join(f'{{"operator_id": "OP-{n % 3}", "n": {n}}}\n' for n in range(300)))
    publish(kafka_bootstrap, "operator-events", path)
    partition = max(range(PARTITIONS),
                    key=lambda p: len(read_offsets(kafka_bootstrap, "operator-events", p, 0, 10**9)))
    records = read_offsets(kafka_bootstrap, "operator-events", partition, 0, 10**9)
    assert len(records) >= 60
    return partition, records


@pytest.mark.kafka
def test_an_operator_events_partition_s_passed_over_records_are_read_back_in_order_across_a_restart(
        kafka_bootstrap, operator_events, demo_day):
    partition, records = operator_events
    shell = shell_on(kafka_bootstrap, demo_day.context)
    taken_first, passed, ledger = shell.operator_records(partition, records[:40])
    assert (taken_first, passed, ledger.next_offsets) == (records[:40], [], {"operator-events": 40})
    shell.hold_ledger(partition, ledger)
    shell.write_state("operators")
    # a restarted worker (the tables as written); the consumer resumes at 55, not 40
    restarted = Shell(demo_day.context, shell.settings, shell.vehicles, shell.operators, shell.partitions,
                      shell.occurrences)
    restarted.on_assigned({TP("operator-events", partition)})
    again, passed, _ = restarted.operator_records(partition, records[55:])
    assert (again, passed) == (records[40:], [("operator-events", 40, 55)])


def failing_once(monkeypatch):
    """`streams.app.read_offsets` raising ReadBackTimeout at its first call (the broker not
    answering), then reading again."""
    import streams.app

    calls = []

    def read(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            raise ReadBackTimeout("tachograph/0: read back to offset 600 of 780 in 60 s")
        return read_offsets(*args, **kwargs)
    monkeypatch.setattr(streams.app, "read_offsets", read)
    return calls


@pytest.mark.kafka
def test_a_read_back_that_fails_leaves_its_records_expected_and_the_next_batch_reads_them_back(
        kafka_bootstrap, published, demo_day, monkeypatch):
    # before: the partition expected 900 once the read-back of 600..779 raised (the agent
    # crashes, Faust restarts it and acks the batch): 600..899 were lost without a word
    partition, records = published
    calls = failing_once(monkeypatch)
    shell = shell_on(kafka_bootstrap, demo_day.context)
    first, _ = taken(shell, partition, records[:600])
    with pytest.raises(ReadBackTimeout):
        taken(shell, partition, records[780:900])
    assert shell.vehicle_stage(partition).partition.next_offsets == {"tachograph": 600}
    rest, passed = taken(shell, partition, records[900:])
    assert passed == [[("tachograph", 600, 900)]] and len(calls) == 2
    # what was sent: the first batch's, then the rest's, which holds what 600..899 made
    assert msgspec.json.decode(first) + msgspec.json.decode(rest) == \
        msgspec.json.decode(taken(shell_on(kafka_bootstrap, demo_day.context), partition, records[:600],
                                  records[600:])[0])


@pytest.mark.kafka
def test_an_operator_events_read_back_that_fails_leaves_the_ledger_expecting_its_records(
        kafka_bootstrap, operator_events, demo_day, monkeypatch):
    partition, records = operator_events
    shell = shell_on(kafka_bootstrap, demo_day.context)
    _, _, ledger = shell.operator_records(partition, records[:40])
    shell.hold_ledger(partition, ledger)
    shell.write_state("operators")
    failing_once(monkeypatch)
    with pytest.raises(ReadBackTimeout):
        shell.operator_records(partition, records[55:])
    # the agent crashed before it held the ledger: the next batch reads back from 40
    again, passed, ledger = shell.operator_records(partition, records[60:])
    assert (again, passed, ledger.next_offsets) == \
        (records[40:], [("operator-events", 40, 60)], {"operator-events": records[-1].offset + 1})


def test_records_left_at_the_end_of_a_partition_are_a_tail_passed_over():
    # tachograph/2 expects 795 and ends at 796 (its END_OF_INPUT marker was passed over);
    # catraca/2 took everything; day-matched/2's end is not known yet
    assert tails_passed_over({("tachograph", 2): 795, ("catraca", 2): 765, ("day-matched", 2): 30},
                             {("tachograph", 2): 796, ("catraca", 2): 765, ("day-matched", 2): None}) == \
        [("tachograph", 2, 795, 796)]


def test_a_tail_is_passed_over_once_the_same_one_has_stood_for_the_quiet_time():
    watch = TailWatch(quiet=10.0)
    fetched = ("tachograph", 2, 795, 796)
    # a record just fetched, waiting in the agent's buffer: seen at one check, gone at the next
    assert watch.due([fetched], now=100.0) == []
    assert watch.due([], now=105.0) == []
    # the same offsets left from 110 on: passed over at 120 (10 s), reported once
    assert watch.due([fetched], now=110.0) == []
    assert watch.due([fetched], now=115.0) == []
    assert watch.due([fetched], now=120.0) == [fetched]
    assert watch.due([fetched], now=125.0) == []  # sought back with nothing come: not again
    # more records after it: another tail, with its own clock
    longer = ("tachograph", 2, 795, 800)
    assert watch.due([longer], now=130.0) == []
    assert watch.due([longer], now=140.0) == [longer]


def test_an_agent_is_idle_only_between_batches_and_since_its_last():
    now = [100.0]
    activity = AgentActivity(clock=lambda: now[0])
    now[0] = 112.0
    assert activity.idle_for() == 12.0
    activity.start()
    now[0] = 130.0
    assert activity.idle_for() == 0.0  # a long batch (a day read back) is not idleness
    activity.done()
    now[0] = 133.0
    assert activity.idle_for() == 3.0
    activity.quiet_from_now()  # an assignment: idle from now
    assert activity.idle_for() == 0.0


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


STANDING = {("operator-events", 0): 3}  # the operator-events ledger expects offset 3
END = {("operator-events", 0): 43}.get  # and the partition holds records up to 42


def test_a_tail_is_looked_for_only_while_both_agents_have_been_idle():
    # Review M's F1: the vehicle agent in a 40 s batch (a day read back) holds Faust's
    # one hand-over loop, so operator-events records stand with the operator agent idle:
    # not passed over. Checks every 5 s from 100; the vehicle batch runs 100-140
    clock = Clock(100.0)
    check = TailCheck(quiet=10.0, clock=clock)
    asked = []
    expected = lambda: asked.append(clock.now) or STANDING  # noqa: E731
    check.agents["vehicles"].start()
    for clock.now in (110.0, 115.0, 120.0, 125.0, 130.0, 135.0, 140.0):
        assert check.due(expected, END) == []
    check.agents["vehicles"].done()  # 140; the records come within a second
    check.agents["operators"].start()
    clock.now = 141.0
    check.agents["operators"].done()
    for clock.now in (145.0, 150.0):  # idle for 4 and 9 s: nothing asked
        assert check.due(expected, END) == []
    assert asked == []  # the states were never read while an agent was busy (or just was)
    # had nothing come: standing from 155 (both idle 10 s), passed over at 165
    for clock.now in (155.0, 160.0):
        assert check.due(expected, END) == []
    clock.now = 165.0
    assert check.due(expected, END) == [("operator-events", 0, 3, 43)]
    assert asked == [155.0, 160.0, 165.0]


def test_a_tail_a_seek_cannot_mend_is_reported_once_whatever_batches_come_between():
    # Review N's 1: offsets retention emptied (or a record whose batch raises each time):
    # sought at 120; then an operator batch every minute on another partition. Each one
    # restarts the tail's quiet time, none reports it again (it was 11 times in 10 minutes)
    clock = Clock(100.0)
    check = TailCheck(quiet=10.0, clock=clock)
    reports = []
    for tick in range(2, 124):  # 110 to 715, every 5 s
        clock.now = 100.0 + 5 * tick
        if tick % 12 == 0:
            check.agents["operators"].start()
            check.agents["operators"].done()
        reports += check.due(lambda: STANDING, END)
    assert reports == [("operator-events", 0, 3, 43)]


def test_after_an_assignment_a_tail_is_looked_for_again_from_a_new_quiet_time():
    # Review M's F2 and F3: sought at 120, then a rebalance (1,000 s later the records
    # have not come: the consumer resumed at the group's committed offsets, past them).
    # Without forgetting, the tail stays reported and is never sought again; and a tail
    # seen before a rebalance must stand its quiet time after it, not be due at once
    clock = Clock(100.0)
    check = TailCheck(quiet=10.0, clock=clock)
    for clock.now in (110.0, 115.0, 120.0):
        due = check.due(lambda: STANDING, END)
    assert due == [("operator-events", 0, 3, 43)]
    clock.now = 1120.0
    assert check.due(lambda: STANDING, END) == []  # reported once
    clock.now = 1125.0
    check.restart()  # partitions assigned
    for clock.now in (1130.0, 1135.0, 1140.0):  # the agents idle for 5, 10, 15 s
        assert check.due(lambda: STANDING, END) == []
    clock.now = 1145.0  # standing since 1135 (both idle 10 s), 10 s on
    assert check.due(lambda: STANDING, END) == [("operator-events", 0, 3, 43)]


def test_the_shell_expects_the_offsets_its_owned_partitions_states_and_ledgers_hold(demo_day):
    shell = shell_on("127.0.0.1:1", demo_day.context)
    stage = shell.vehicle_stage(1)
    stage.partition.next_offsets = {"tachograph": 40, "catraca": 7}
    shell.write_state("partitions")
    shell.hold_ledger(3, InputLedger({"operator-events": 12}))
    shell.write_state("operators")
    assert shell.expected_offsets() == {("tachograph", 1): 40, ("catraca", 1): 7, ("operator-events", 3): 12}
    # review M's F5: a backfill's partition whose state never took a catraca record (its
    # END_OF_INPUT marker, sent to every partition, may be the first one there)
    stage = shell.vehicle_stage(2)
    stage.partition.next_offsets, stage.partition.ends_seen = {"tachograph": 95}, ["tachograph"]
    shell.write_state("partitions")
    assert shell.expected_offsets()[("catraca", 2)] == 0 and shell.expected_offsets()[("tachograph", 2)] == 95
    stage.partition.next_offsets = {}  # review N's 2: a state from before the ledger: not read from 0
    shell.hold_partition(stage.partition)
    shell.write_state("partitions")
    assert ("catraca", 2) not in shell.expected_offsets() and ("tachograph", 2) not in shell.expected_offsets()
    stage.partition.next_offsets = {"tachograph": 95}
    stage.partition.ends_seen = []  # live: an input never heard is not expected
    shell.hold_partition(stage.partition)
    shell.write_state("partitions")
    assert ("catraca", 2) not in shell.expected_offsets()
    shell.on_revoked({TP(topic, p) for topic in ("tachograph", "catraca", "day-matched", "operator-events")
                      for p in (1, 2)})
    assert shell.expected_offsets() == {("operator-events", 3): 12}
