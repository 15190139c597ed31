"""The Faust workers: thin shells around the engine's two stages.

Agents decode raw bytes with msgspec, hand batches to the same `engine` stages the
replay runs, and send what comes out. Per-vehicle and per-operator state lives in
changelog-backed Faust tables (keys partitioned like the input topics), occurrences in
a global table. Nothing is built at import time: `create_app` makes everything.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import faust
import msgspec
from faust.sensors.prometheus import setup_prometheus_sensors
from faust.types import TP
from faust.stores.memory import Store as MemoryStore
from prometheus_client import CollectorRegistry

from engine.core import judge_again_from
from engine.messages import DayMatched, OperatorInput, ToVehicle
from engine.operator import OperatorStage, OperatorState
from engine.routing import EndOfInput, Matched, VehicleInbound, judges_a_day, operator_step, vehicle_step
from engine.sends import Sends
from engine.stored import pack, unpack
from engine.triplog import TripLog
from engine.values import Context, Message
from engine.vehicle import PartitionState, VehicleStage, VehicleState
from kernel.partitioning import partition_of
from kernel.settings import VEHICLE_INPUTS, StreamSettings
from rules.model import Infraction, InsufficientEvidence, infraction_record
from streams.consumer import Transport
from streams.decoded import DecodedStates
from streams.ledger import TailCheck, passed_over
from streams.metrics import WorkerMetrics
from streams.readback import KafkaReadBack, read_offsets
from streams.topics import END_OF_INPUT_KEY
from telemetry import Occurrence, Rejection, decode, to_builtins
from trips.model import trip_record

log = logging.getLogger("fiscaliza.worker")

STATE_MAX_BYTES = 16 * 1024 * 1024


def partition_key(partition: int, partitions: int, prefix: str = "__partition__") -> str:
    """A table key that the partitioner sends to `partition` (for per-partition state; no
    vehicle or operator id starts with underscores)."""
    i = 0
    while partition_of(f"{prefix}{partition}__{i}", partitions) != partition:
        i += 1
    return f"{prefix}{partition}__{i}"


# How often the worker looks for records passed over at the end of a partition, and how
# long an agent must have been idle for records left there to count (streams.ledger)
TAIL_CHECK_S = 5.0
TAIL_QUIET_S = 10.0


def ledger_key(partition: int, partitions: int) -> str:
    """The operators table's key of an operator-events partition's `InputLedger`."""
    return partition_key(partition, partitions, prefix="__operator_events__")


class InputLedger(msgspec.Struct):
    """An operator-events partition's next offset expected (streams.ledger), kept in the
    operators table beside the states its records made."""

    next_offsets: dict[str, int] = msgspec.field(default_factory=dict)


# The topic whose partitions say which keys of a table this worker owns: a table's
# changelog partition is its key's partition (raw bytes keys, the same murmur2), and
# Faust assigns a partition number of every co-partitioned topic to one worker.
OWNER_TOPIC = {"vehicles": "tachograph", "partitions": "tachograph", "operators": "operator-events"}


class Shell:
    """The stages of one worker, their state in Faust tables.

    State changes are held back until a batch's outputs are sent and then written to
    the tables (changelogs): a crash in between makes the batch be processed again and
    its outputs sent again (at least once; downstream everything is idempotent), never
    state that moved ahead of outputs that were lost.

    Only the worker that owns a partition writes its keys. When a rebalance takes a
    partition away, whatever this worker still holds for it is dropped, never written:
    the new owner has recovered the partition from the changelog and carries on from
    the committed offsets, and a late write from here would land in the changelog
    behind its back (state from one worker, progress from the other).
    """

    def __init__(self, ctx: Context, settings: StreamSettings, vehicles, operators, partitions, occurrences):
        self.ctx, self.settings = ctx, settings
        self.vehicles, self.operators, self.partitions, self.occurrences = vehicles, operators, partitions, occurrences
        self._vehicle_decoder = msgspec.msgpack.Decoder(VehicleState)
        self._operator_decoder = msgspec.msgpack.Decoder(OperatorState)
        self._partition_decoder = msgspec.msgpack.Decoder(PartitionState)
        self._to_vehicle_decoder = msgspec.json.Decoder(ToVehicle)
        self._ledger_decoder = msgspec.msgpack.Decoder(InputLedger)
        # (table, key) -> state not yet written; the two agents interleave at their sends,
        # so each holds back its own tables only
        self._held: dict[tuple[str, str], object] = {}
        # vehicle states this worker wrote, decoded, until next loaded (streams.decoded): a
        # state written by this worker is not unpacked again at the next batch
        self._decoded_vehicles = DecodedStates()
        # operator states likewise, handed out as often as loaded: the operator stage never
        # changes a state it loads (streams.decoded)
        self._decoded_operators = DecodedStates()
        # topic -> partitions this worker owns; the rebalance signals keep it current
        self.owned: dict[str, set[int]] = {topic: set() for topic in set(OWNER_TOPIC.values())}
        self.operator_stage = OperatorStage(ctx, settings.partitions, self._load_operator, self._hold_operator)
        # partition -> its vehicle stage, kept from batch to batch while this worker owns
        # the partition: its caches (each open track's measured geometry, the service days)
        # are not state, and a stage built anew per batch read every released vehicle's
        # whole open track again at each batch (the replay keeps one stage throughout)
        self._vehicle_stages: dict[int, VehicleStage] = {}
        # an assignment came: the day's counts kept in memory (streams.metrics) are to be
        # recounted from the tables once they are recovered, before the next batch
        self.recount_due = False
        self._trips_decoder = msgspec.msgpack.Decoder(StoredTrips)
        # a vehicle-day that late messages came for, judged again from the input topics (engine.late)
        self.judge_again = judge_again_from(ctx, settings.inputs, KafkaReadBack(
            settings.bootstrap, settings.inputs, ctx.policy.stream.max_message_bytes, settings.backfill))

    # --- ownership ------------------------------------------------------------------

    def owns(self, topic: str, partition: int) -> bool:
        return partition in self.owned.get(topic, ())

    def _owns_key(self, name: str, key: str | bytes) -> bool:
        return self.owns(OWNER_TOPIC[name], partition_of(key, self.settings.partitions))

    def on_revoked(self, revoked) -> list[tuple[str, str]]:
        """Partitions taken away (Kafka's eager rebalance revokes all of them, the kept
        ones come back with the assignment): forget what is held for them."""
        for tp in revoked:
            if tp.topic in self.owned:
                self.owned[tp.topic].discard(tp.partition)
            if tp.topic == OWNER_TOPIC["partitions"]:
                self._vehicle_stages.pop(tp.partition, None)
        dropped = [k for k in list(self._held) if not self._owns_key(*k)]
        for k in dropped:
            del self._held[k]
        self._decoded_vehicles.drop(keeps=lambda key: self._owns_key("vehicles", key))
        self._decoded_operators.drop(keeps=lambda key: self._owns_key("operators", key))
        return dropped

    def on_assigned(self, assigned) -> None:
        """The new assignment. A memory store keeps the keys this worker wrote itself
        after their partition went to another worker (Faust only drops the keys it
        recovered from a changelog): drop them, so a partition that comes back is read
        from its changelog only, never mixed with a stale local copy."""
        for topic in self.owned:
            self.owned[topic] = {tp.partition for tp in assigned if tp.topic == topic}
        self.recount_due = True
        # a partition that comes back starts from its changelog: its stage's caches go too
        self._vehicle_stages.clear()
        self._decoded_vehicles.drop()
        self._decoded_operators.drop()
        for name, table in (("vehicles", self.vehicles), ("operators", self.operators),
                            ("partitions", self.partitions)):
            store = table.data
            if isinstance(store, MemoryStore):
                for key in [k for k in store.data if not self._owns_key(name, k)]:
                    store.data.pop(key, None)
                    store._key_partition.pop(key, None)

    def take_stored_trips(self) -> list[tuple[str, list[TripLog]]]:
        """Each owned vehicle's arrived trips of the days not matched yet, as its stored
        state has them (only that field decoded), for the metrics' recount after an
        assignment; the recount is then no longer due."""
        self.recount_due = False
        stored = []
        for key, raw in list(self.vehicles.items()):
            if not raw or not self._owns_key("vehicles", key):
                continue
            held = self._held.get(("vehicles", key.decode()))
            trips = held.trips if held is not None else unpack(raw, self._trips_decoder).trips
            stored.append((key.decode(), trips))
        return stored

    def _load(self, table, name: str, key: str, decoder, decoded: Callable[[str, bytes], object | None] | None = None):
        """The state held for the batch, else the table's, unpacked unless `decoded` (a
        streams.decoded lookup) has the very object its bytes were packed from."""
        held = self._held.get((name, key))
        if held is not None:
            return held
        raw = table.get(key.encode())
        if not raw:
            return None
        kept = decoded(key, raw) if decoded is not None else None
        return kept if kept is not None else unpack(raw, decoder)

    def _load_vehicle(self, vehicle_id: str) -> VehicleState | None:
        return self._load(self.vehicles, "vehicles", vehicle_id, self._vehicle_decoder, self._decoded_vehicles.take)

    def _hold_vehicle(self, state: VehicleState) -> None:
        self._held[("vehicles", state.vehicle_id)] = state

    def _load_operator(self, operator_id: str) -> OperatorState | None:
        return self._load(self.operators, "operators", operator_id, self._operator_decoder,
                          self._decoded_operators.read)

    def _hold_operator(self, state: OperatorState) -> None:
        self._held[("operators", state.operator_id)] = state

    def hold_partition(self, state: PartitionState) -> None:
        self._held[("partitions", partition_key(state.partition, self.settings.partitions))] = state

    def write_state(self, *names: str) -> None:
        """After a batch's outputs were sent: its state changes go to the tables, for
        the partitions this worker still owns."""
        tables = {"vehicles": self.vehicles, "operators": self.operators, "partitions": self.partitions}
        # a copy of the keys: the vehicle step's thread may hold a state meanwhile
        for (name, key) in [k for k in list(self._held) if k[0] in names]:
            state = self._held.pop((name, key))
            if self._owns_key(name, key):
                tables[name][key.encode()] = raw = pack(state)
                if name == "vehicles":
                    self._decoded_vehicles.keep(key, raw, state)
                elif name == "operators":
                    self._decoded_operators.keep(key, raw, state)
            else:
                log.warning("not writing %s %r: its partition was reassigned", name, key)

    def take(self, stage: VehicleStage, records: list, occurrences: list[Occurrence]) -> tuple[Sends, list]:
        """One partition's records of a batch, as the consumer handed them, through its
        vehicle stage, with first what the consumer passed over read back from the topics
        and put in its place (streams.ledger). The stage's outputs, and the offset ranges
        read back. The partition expects the offsets after these records only once they are
        through: a read-back or a step that raises leaves it expecting them, so the next
        batch reads them back (the agent acks a batch it crashed on)."""
        partition = stage.partition
        passed, expected = passed_over(partition.next_offsets, [(r.topic, r.offset) for r in records])
        if passed:
            records = self.with_passed_over(partition.partition, records, passed)
        inbound = [vehicle_inbound(record, self._to_vehicle_decoder, self.ctx.policy.stream.max_message_bytes,
                                   self.settings.backfill) for record in records]
        sends = vehicle_step(stage, inbound, occurrences, self.settings.inputs)
        partition.next_offsets = expected
        return sends, passed

    def operator_records(self, partition: int, records: list) -> tuple[list, list, InputLedger]:
        """An operator-events partition's records of a batch, as the consumer handed them,
        with what it passed over read back in its place (streams.ledger); the offset ranges
        read back; the partition's ledger once the records are through, for `hold_ledger`
        after the agent processed them (a batch it crashed on stays expected)."""
        ledger = self._load(self.operators, "operators", ledger_key(partition, self.settings.partitions),
                            self._ledger_decoder) or InputLedger()
        passed, expected = passed_over(ledger.next_offsets, [(r.topic, r.offset) for r in records])
        return (self.with_passed_over(partition, records, passed) if passed else records), passed, \
            InputLedger(expected)

    def hold_ledger(self, partition: int, ledger: InputLedger) -> None:
        """An operator-events partition's ledger, its records processed: written with the
        operator states, after the batch's outputs."""
        self._held[("operators", ledger_key(partition, self.settings.partitions))] = ledger

    def expected_offsets(self) -> dict[tuple[str, int], int]:
        """The next offset each owned input partition's state expects (streams.ledger),
        by (topic, partition): the vehicle partitions' states' and the operator-events
        ledgers'. In a backfill (a partition that has seen an input's END_OF_INPUT), an
        input its state never took a record of is expected from the start: its marker,
        sent to every partition, may be the first record of its topic there. (A partition
        whose only records were passed over has no state, and is not seen.)"""
        expected = {}
        for partition in sorted(self.owned.get(OWNER_TOPIC["partitions"], ())):
            state = self._load(self.partitions, "partitions", partition_key(partition, self.settings.partitions),
                               self._partition_decoder)
            if state is not None:
                # (a state from before the ledger expects nothing: it is not asked to read
                # its inputs from their start)
                if state.ends_seen and state.next_offsets:
                    expected.update({(topic, partition): 0 for topic in sorted(VEHICLE_INPUTS)})
                expected.update({(topic, partition): offset for topic, offset in state.next_offsets.items()})
        for partition in sorted(self.owned.get("operator-events", ())):
            ledger = self._load(self.operators, "operators", ledger_key(partition, self.settings.partitions),
                                self._ledger_decoder)
            if ledger is not None:
                expected.update({(topic, partition): offset for topic, offset in ledger.next_offsets.items()})
        return expected

    def with_passed_over(self, partition: int, records: list, passed: list[tuple[str, int, int]]) -> list:
        """`records` (of `partition`, as the consumer handed them) with the records of the
        `passed` offset ranges (streams.ledger.passed_over) read back from their topics, each
        range before the record that came after it. A range that cannot be read raises
        (ReadBackTimeout, KafkaError): the caller then leaves its partition expecting it."""
        recovered = {}
        for topic, start, end in passed:
            found = read_offsets(self.settings.bootstrap, topic, partition, start, end)
            log.warning("read back %d records of %s/%s at offsets [%s, %s): the consumer passed over them",
                        len(found), topic, partition, start, end)
            recovered[(topic, end)] = found
        out = []
        for record in records:
            out.extend(recovered.pop((record.topic, record.offset), ()))
            out.append(record)
        return out

    def current_occurrences(self) -> list[Occurrence]:
        decoder = msgspec.json.Decoder(Occurrence)
        return sorted((decoder.decode(raw) for raw in self.occurrences.values()), key=lambda o: o.id)

    def vehicle_stage(self, partition: int) -> VehicleStage:
        key = partition_key(partition, self.settings.partitions)
        state = self._load(self.partitions, "partitions", key, self._partition_decoder) or PartitionState(partition)
        self._held[("partitions", key)] = state  # the stage updates it in place; written after the batch
        stage = self._vehicle_stages.get(partition)
        if stage is None:
            stage = self._vehicle_stages[partition] = VehicleStage(
                self.ctx, state, self._load_vehicle, self._hold_vehicle, self.settings.inputs,
                wall_clock=None if self.settings.backfill else time.time, judge_again=self.judge_again)
        stage.partition = state  # the partition's state as stored or held, not a copy the stage kept
        return stage


class StoredTrips(msgspec.Struct):
    """The part of a stored VehicleState the realized-trip count needs (msgspec skips the
    rest of the record): its arrived trips of the days not matched yet."""
    trips: list[TripLog] = msgspec.field(default_factory=list)


def vehicle_inbound(message, to_vehicle: msgspec.json.Decoder, max_message_bytes: int,
                    backfill: bool) -> VehicleInbound:
    """A record of the vehicle agent's topics, decoded: telemetry by `telemetry.decode`
    under the replay's bound on a message, so a longer one is dead-lettered as `too_long`;
    the record's timestamp is its receipt (`received_at`)."""
    location = f"{message.topic}/{message.partition}/{message.offset}"
    if message.topic == "day-matched":
        decoded = to_vehicle.decode(message.value)
        return Matched(decoded, location) if isinstance(decoded, DayMatched) else decoded
    if message.key == END_OF_INPUT_KEY:
        return EndOfInput(message.topic)
    body = decode(message.topic, message.value, location, max_message_bytes)
    if isinstance(body, Rejection):
        return body
    return Message(body, location, message.value.decode("utf-8", "replace"), message.offset,
                   received_at=received_at(message, backfill))


def received_at(message, backfill: bool) -> float | None:
    """The Kafka record's timestamp (epoch s) as the message's receipt, a clock the device
    does not control (engine.clocks). Not in a backfill: history published today was not
    received when it was published."""
    timestamp = getattr(message, "timestamp", None)
    if backfill or timestamp is None or timestamp <= 0:
        return None
    return float(timestamp)


class App(faust.App):
    """Faust's app, with the Kafka consumer and producer of `streams.consumer` (its fixes)."""

    def _new_transport(self):
        return Transport(self.conf.broker_consumer, self)


def create_app(ctx: Context, settings: StreamSettings) -> faust.App:
    app = App(
        settings.app_id,
        broker=f"kafka://{settings.bootstrap}",
        store=settings.store,
        topic_partitions=settings.partitions,
        topic_replication_factor=settings.replication,
        key_serializer="raw",
        value_serializer="raw",
        web_enabled=settings.web_port > 0,
        web_port=settings.web_port or 6066,
        web_bind="0.0.0.0",
        # On a rebalance (and on shutdown) Faust first lets the agents finish the events
        # they took, flushes the producer and commits, then gives the partitions up.
        # Without it, a batch taken before a rebalance was processed after it, its state
        # written to a partition the other worker had already recovered (issue #4).
        stream_wait_empty=True,
        processing_guarantee=settings.processing_guarantee,
        # a vehicle's state is its open trip and the day's compact facts (tens of KB); the
        # limit stays generous for a backlog's pending pings
        producer_max_request_size=STATE_MAX_BYTES,
        broker_session_timeout=settings.session_timeout_s,
        broker_heartbeat_interval=min(3.0, settings.session_timeout_s / 3),
        **({"datadir": settings.datadir} if settings.datadir else {}),
    )
    big = {"max.message.bytes": str(STATE_MAX_BYTES)}
    vehicle_topics = app.topic("tachograph", "catraca", "day-matched", key_type=bytes, value_type=bytes)
    operator_topic = app.topic("operator-events", key_type=bytes, value_type=bytes)
    occurrence_topic = app.topic("occurrences", key_type=bytes, value_type=bytes)
    out = {name: app.topic(name, key_type=bytes, value_type=bytes)
           for name in ("trips", "infractions", "insufficient-evidence", "rejected", "vehicle-status", "month-efficiency",
                        "operator-events",
                         "day-matched")}
    # Keys are raw bytes: the changelog partition of b"JN-1011" is then the partition its
    # pings are on (str keys would be JSON-serialized, '"JN-1011"', and hash elsewhere:
    # after a rebalance another worker than the pings' would recover the state).
    vehicles = app.Table("vehicles", partitions=settings.partitions, use_partitioner=True,
                         key_type=bytes, value_type=bytes, extra_topic_configs=big)
    operators = app.Table("operators", partitions=settings.partitions, use_partitioner=True,
                          key_type=bytes, value_type=bytes, extra_topic_configs=big)
    partitions = app.Table("partitions", partitions=settings.partitions, use_partitioner=True,
                           key_type=bytes, value_type=bytes)
    occurrences = app.GlobalTable("occurrences-table", partitions=settings.partitions, use_partitioner=True,
                                  key_type=bytes, value_type=bytes)
    shell = Shell(ctx, settings, vehicles, operators, partitions, occurrences)
    # the core's steps, off the event loop (a vehicle step may read a day back: seconds)
    core_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fiscaliza-core")
    # a registry per app: tests build several apps in one process
    registry = CollectorRegistry()
    metrics = WorkerMetrics(registry, ctx, settings.partitions,
                            owns_vehicle=lambda vehicle_id: shell.owns("tachograph",
                                                                       partition_of(vehicle_id, settings.partitions)),
                            clock=None if settings.backfill else time.time)
    json_encoder = msgspec.json.Encoder()
    operator_decoder = msgspec.json.Decoder(OperatorInput)
    max_message_bytes = ctx.policy.stream.max_message_bytes  # the replay's bound on a line

    async def send(sends: Sends) -> None:
        """A step's outputs to their topics (engine.routing decides what goes where)."""
        metrics.observe(sends)
        for rejection in sends.rejected:
            await out["rejected"].send(key=rejection.source.encode(), value=json_encoder.encode(to_builtins(rejection)))
        for finding in sends.findings:
            if isinstance(finding, Infraction):
                await out["infractions"].send(key=finding.infraction_id.encode(),
                                              value=json_encoder.encode(infraction_record(finding)))
            elif isinstance(finding, InsufficientEvidence):
                await out["insufficient-evidence"].send(key=(finding.vehicle_id or finding.route_id or "").encode(),
                                                        value=json_encoder.encode(finding))
        for month in sends.months:
            await out["month-efficiency"].send(key=f"{month.operator_id}:{month.month}".encode(),
                                               value=json_encoder.encode(month))
        for status in sends.statuses:
            await out["vehicle-status"].send(key=status.vehicle_id.encode(), value=json_encoder.encode(status))
        for message in sends.to_operators:
            await out["operator-events"].send(key=message.operator_id.encode(), value=json_encoder.encode(message))
        for trip in sends.trips:
            await out["trips"].send(key=trip.vehicle_id.encode(), value=json_encoder.encode(trip_record(trip)))
        for trip in sends.trips_withdrawn:  # a day judged again: a trip it no longer finds
            await out["trips"].send(key=trip.vehicle_id.encode(),
                                    value=json_encoder.encode({**trip_record(trip), "withdrawn": True}))
        for message in sends.to_vehicles:
            await out["day-matched"].send(key=message.vehicle_id.encode(), value=json_encoder.encode(message))

    # when each agent last took a batch, and the tails standing (streams.ledger.TailCheck)
    tail_check = TailCheck(quiet=TAIL_QUIET_S)

    @app.timer(interval=TAIL_CHECK_S)
    async def look_for_passed_over_tails() -> None:
        """Records left at the end of an owned input partition, the same ones for
        TAIL_QUIET_S while both agents have been idle: the consumer passed over them with
        none after them to show it (streams.ledger.TailCheck). It is sought back to them
        (`seek_wait`, on the consumer's thread, resets Faust's read offset too), so they
        come again. Not under exactly_once: a transaction's markers take offsets that hold
        no records, so a partition's end is not after its last record."""
        if app.rebalancing or app.in_recovery or settings.processing_guarantee == "exactly_once":
            return
        for topic, partition, start, end in tail_check.due(
                shell.expected_offsets, lambda key: app.consumer.highwater(TP(*key))):
            if app.rebalancing:  # began while an earlier tail's seek was awaited
                tail_check.forget()
                return
            log.warning("the consumer passed over %s/%s offsets [%s, %s) with no record after them: "
                        "seeking back to them", topic, partition, start, end)
            metrics.observe_passed_over([(topic, start, end)])
            try:
                await app.consumer.seek_wait({TP(topic, partition): start})
            except Exception:  # noqa: BLE001 - the next check finds the tail standing and reports it again
                log.exception("seeking %s/%s back to %s failed", topic, partition, start)
                tail_check.forget()

    async def take_vehicle_batch(events) -> None:
        if shell.recount_due:  # the first batch after an assignment: the tables are recovered
            metrics.recount_realized(await asyncio.get_running_loop().run_in_executor(
                core_thread, shell.take_stored_trips))
        by_partition = defaultdict(list)
        for event in events:
            if shell.owns("tachograph", event.message.partition):
                by_partition[event.message.partition].append(event)
            else:  # taken before a rebalance gave the partition away: its new owner reads it
                log.warning("skipping %s/%s/%s: partition not owned", event.message.topic,
                            event.message.partition, event.message.offset)
        stages = []
        for partition, batch in sorted(by_partition.items()):
            stage = shell.vehicle_stage(partition)
            stages.append(stage)
            # the step runs off the event loop: a re-judgment reads its day back from the
            # input topics (seconds), and a loop held that long misses the group's
            # heartbeats and starts a rebalance
            sends, passed = await asyncio.get_running_loop().run_in_executor(
                core_thread, shell.take, stage, [event.message for event in batch], shell.current_occurrences())
            metrics.observe_passed_over(passed)
            await send(sends)
            metrics.observe_watermarks(partition, stage.partition.max_events)
        shell.write_state("vehicles", "partitions")
        await app.producer.flush()
        for stage in stages:
            beat = stage.heartbeat(final=stage.partition.final)
            for operator_id in sorted(ctx.feed.agencies):
                await out["operator-events"].send(key=operator_id.encode(), value=json_encoder.encode(beat))
            shell.hold_partition(stage.partition)  # its reporting minutes are now sent
        shell.write_state("partitions")

    async def take_operator_batch(events) -> None:
        occurrences_now = None
        by_partition = defaultdict(list)
        for event in events:
            message = event.message
            if shell.owns("operator-events", message.partition):
                by_partition[message.partition].append(message)
            else:
                log.warning("skipping %s/%s/%s: partition not owned", message.topic, message.partition,
                            message.offset)
        # each partition's in its order (an operator's messages are all on one partition),
        # with what the consumer passed over read back in its place (streams.ledger)
        for partition, messages in sorted(by_partition.items()):
            messages, passed, ledger = await asyncio.get_running_loop().run_in_executor(
                core_thread, shell.operator_records, partition, messages)
            metrics.observe_passed_over(passed)
            for message in messages:
                location = f"{message.topic}/{message.partition}/{message.offset}"
                decoded = operator_decoder.decode(message.value)
                if judges_a_day(decoded) and occurrences_now is None:
                    occurrences_now = shell.current_occurrences()
                # on the vehicle step's thread: the core runs on one thread, never two at once
                await send(await asyncio.get_running_loop().run_in_executor(
                    core_thread, operator_step, shell.operator_stage, message.key.decode(), decoded,
                    occurrences_now or [], location))
            shell.hold_ledger(partition, ledger)
        shell.write_state("operators")

    @app.agent(vehicle_topics)
    async def vehicle_agent(stream):
        # Order within a batch, for at-least-once without losing anything on a crash:
        # 1. send the outputs, 2. hold back then write the states, 3. flush, and only
        # then 4. tell the operator stage how far the partition got (a heartbeat may
        # close a day, which must not happen before its pings are safely stored).
        # Each batch rewrites the state of every vehicle it touched (its open trip and the
        # day's compact facts, tens of KB): batches of up to 10,000 events (or 1 s of live input) instead of
        # 1,000 (0.5 s) took the sustained rate from ~4,900 to ~6,700 events/s.
        async for events in stream.take_events(10000, within=1.0):
            tail_check.agents["vehicles"].start()
            try:
                await take_vehicle_batch(events)
            finally:
                tail_check.agents["vehicles"].done()

    @app.agent(operator_topic)
    async def operator_agent(stream):
        async for events in stream.take_events(1000, within=0.5):
            tail_check.agents["operators"].start()
            try:
                await take_operator_batch(events)
            finally:
                tail_check.agents["operators"].done()

    @app.agent(occurrence_topic)
    async def occurrence_agent(stream):
        async for event in stream.events():
            message = event.message
            location = f"{message.topic}/{message.partition}/{message.offset}"
            body = decode("occurrences", message.value, location, max_message_bytes)
            if isinstance(body, Rejection):
                await send(Sends(rejected=[body]))
            else:
                occurrences[body.id.encode()] = message.value

    @app.on_partitions_revoked.connect
    async def on_partitions_revoked(app, revoked, **kwargs) -> None:
        # Faust has let the agents finish the batches they took (stream_wait_empty) and
        # flushed the producer; their offsets are committed once this returns
        dropped = shell.on_revoked(revoked)
        if dropped:
            log.warning("dropped held state of reassigned partitions: %s", sorted(dropped))
        # the new owner recovers from the changelogs once this returns: nothing of ours in flight
        await app.producer.flush()

    @app.on_partitions_assigned.connect
    async def on_partitions_assigned(app, assigned, **kwargs) -> None:
        shell.on_assigned(assigned)
        # the consumer resumes at the group's committed offsets: a tail sought before is
        # looked for again, and a tail's quiet time starts now
        tail_check.restart()

    if settings.web_port > 0:
        # Faust's own sensors (events, lag, commits, table sizes) and ours on /metrics
        setup_prometheus_sensors(app, registry=registry, name_prefix="fiscaliza")
    app.fiscaliza_shell = shell  # for tests and the startup banner
    app.fiscaliza_metrics, app.fiscaliza_registry = metrics, registry
    return app
