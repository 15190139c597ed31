"""`fiscaliza replay`: the input files as one event-time-ordered stream through the engine.

This is a shell: it reads and decodes files, hands batches to `engine.Engine` (the
same core the Faust workers run), and writes the outputs of DESIGN.md's contract.
"""

from __future__ import annotations

import datetime as dt
import heapq
import io
import itertools
import shutil
import struct
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from engine import Engine, Message, Sends
from engine.loading import load_context
from gtfs import Feed
from kernel.errors import InputError
from kernel.fleet import Vehicle
from kernel.inputs import StaticInputs
from kernel.policy import Policy, load_policy
from rules.model import Infraction, InsufficientEvidence, infraction_record
from telemetry import SOURCE_ORDER, Rejection, decode, event_order
from telemetry.validation import INVALID_JSON
from telemetry.files import TelemetryFiles, numbered_lines
from trips.model import RealizedTrip, trip_key, trip_record

BATCH = 2000  # messages per engine call; results do not depend on it


@dataclass(frozen=True)
class ReplayInputs:
    """The replay's arguments: its static inputs and its telemetry files, in one value."""

    feed: Path
    fleet: Path
    tachograph: Path
    catraca: Path | None = None
    occurrences: Path | None = None
    policy: Path | None = None
    geofences: Path | None = None

    @classmethod
    def of(cls, static: StaticInputs, telemetry: TelemetryFiles) -> ReplayInputs:
        return cls(static.feed, static.fleet, telemetry.tachograph, telemetry.catraca, telemetry.occurrences,
                   static.policy, static.geofences)

    @property
    def static(self) -> StaticInputs:
        return StaticInputs(self.feed, self.fleet, self.policy, self.geofences)

    @property
    def telemetry(self) -> TelemetryFiles:
        return TelemetryFiles(self.tachograph, self.catraca, self.occurrences)


class RejectionLog:
    """The replay's rejections as the lines of rejected.jsonl, kept in a temporary file
    rather than in memory (a file of garbage gives one per line), with their count per
    reason. Iterates in the order they were added (not while adding)."""

    def __init__(self, rejections: Iterable[Rejection] = ()):
        self._file = tempfile.TemporaryFile(prefix="fiscaliza-replay-rejected-")
        self._encoder = msgspec.json.Encoder()
        self.reasons: Counter[str] = Counter()
        self._at_end = True  # a seek flushes the buffer: only after reading
        self.extend(rejections)

    def extend(self, rejections: Iterable[Rejection]) -> None:
        if not self._at_end:
            self._file.seek(0, io.SEEK_END)
            self._at_end = True
        for rejection in rejections:
            self._file.write(self._encoder.encode(rejection))
            self._file.write(b"\n")
            self.reasons[rejection.reason] += 1

    def append(self, rejection: Rejection) -> None:
        self.extend((rejection,))

    def __len__(self) -> int:
        return self.reasons.total()

    def __iter__(self) -> Iterator[Rejection]:
        decoder = msgspec.json.Decoder(Rejection)
        return (decoder.decode(line) for line in self._rewound())

    def write_to(self, handle) -> None:
        """The rejections as JSON Lines, in the order they were added."""
        shutil.copyfileobj(self._rewound(), handle)

    def _rewound(self):
        self._file.seek(0)
        self._at_end = False
        return self._file


@dataclass
class ReplayResult:
    feed: Feed
    policy: Policy
    fleet: dict[str, Vehicle]
    trips: list[RealizedTrip] = field(default_factory=list)
    infractions: list[Infraction] = field(default_factory=list)  # final state, one per id
    insufficient: list[InsufficientEvidence] = field(default_factory=list)
    rejected: RejectionLog = field(default_factory=RejectionLog)
    statuses: list = field(default_factory=list)  # each vehicle's latest live status
    months: list = field(default_factory=list)  # each operator's art. 45 month, latest per operator and month
    messages: int = 0
    service_dates: list[dt.date] = field(default_factory=list)
    # the arrival-order run's (replay_in_arrival_order): the change log as sent, late messages
    # kept and vehicle-days judged again
    changes: list[Infraction] = field(default_factory=list)
    late_kept: int = 0
    rejudged: int = 0


RUN = 20_000  # messages sorted in memory before they are spilled to a temporary file
_FRAME = struct.Struct("<I")


class SortedInput:
    """The input files' messages in event-time order, sorted outside memory: sorted runs
    of `run_size` messages are spilled to temporary files, then merged (heapq.merge) as
    they are read, so replay's memory does not grow with the input.

    Among equal times of one vehicle and input the input order counts (a shuffled input
    is replayed the same way unless it holds two versions of one message: the first
    received counts, as in the workers). Use as a context manager: the runs are deleted on
    exit.

    An input smaller than a third of a run is decoded once, when it is read: its entries keep
    their decoded messages, which makes each about 2.2 times as large (what a run holds is
    the memory bound, so no more of them fit in it). A larger input keeps only lines, as
    before, and decodes them again as they come back: carrying the decoded message through a
    spilled run instead would cost more (its struct is built again, its invariants checked
    again, and the time must keep its offset: about 1.7 times the second decode, measured on
    the João Neiva demo).

    A file none of whose lines is JSON (a CSV given as the tachograph) is not an input of
    the contract but a wrong argument: an InputError, before the engine sees anything. A
    bad line among JSON ones, or a line too long to be parsed, is a rejection as ever."""

    def __init__(self, inputs: ReplayInputs, run_size: int = RUN, max_message_bytes: int | None = None):
        self.inputs, self.run_size = inputs, run_size
        # the policy's bound on a line (replay passes the one it loaded)
        self.max_message_bytes = max_message_bytes or load_policy(inputs.policy).stream.max_message_bytes
        self.rejected = RejectionLog()
        self.count = 0
        self._runs: list = []
        self._last: list[tuple] = []
        self._encoder = msgspec.msgpack.Encoder()

    def __enter__(self) -> "SortedInput":
        buffer: list[tuple] = []
        keep = self.run_size // 3  # entries that may keep their decoded message (see above)
        try:
            for source, path in self.inputs.telemetry.present().items():
                lines = not_json = 0
                for location, line in numbered_lines(path, self.max_message_bytes):
                    lines += 1
                    body = decode(source, line, location, self.max_message_bytes)
                    if isinstance(body, Rejection):
                        self.rejected.append(body)
                        not_json += body.reason == INVALID_JSON
                        continue
                    # the input order breaks ties (a stable sort): of two versions of one message
                    # (same vehicle, time and seq, other content) the first received counts, as in
                    # the workers
                    entry = event_order(source, body, self.count) + (line, source, location)
                    buffer.append(entry + (body,) if self.count < keep else entry)
                    self.count += 1
                    if self.count == keep:  # a large input: lines only, the ones kept so far too
                        for i, kept in enumerate(buffer):  # in place: each message let go at once
                            buffer[i] = kept[:-1]
                    if len(buffer) >= self.run_size:
                        self._spill(buffer)
                        buffer = []
                if lines and not_json == lines:
                    raise InputError(f"--{source} {path} is not JSON Lines: none of its {lines} line(s) is JSON "
                                     f"(one {source} message per line is expected)")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        buffer.sort()
        self._last = buffer
        return self

    def _spill(self, buffer: list[tuple]) -> None:
        buffer.sort()
        run = tempfile.TemporaryFile(prefix="fiscaliza-replay-run-")
        for entry in buffer:
            frame = self._encoder.encode(entry)
            run.write(_FRAME.pack(len(frame)))
            run.write(frame)
        run.seek(0)
        self._runs.append(run)

    def __exit__(self, *exc) -> None:
        for run in self._runs:
            run.close()
        self._runs = []

    def __iter__(self) -> Iterator[Message]:
        # the sort key ends at the input's count, unique: entries are never compared past it
        for _, _, _, _, line, source, location, *kept in heapq.merge(*map(_read_run, self._runs),
                                                                      _consumed(self._last)):
            body = kept[0] if kept else decode(source, line, location)
            yield Message(body, location, line.decode("utf-8", errors="replace"))


def _consumed(entries: list[tuple]) -> Iterator[tuple]:
    """The entries in order, each let go of once yielded: the run in memory shrinks as the
    replay reads it rather than staying whole to the end."""
    entries.reverse()
    while entries:
        yield entries.pop()


def _read_run(run) -> Iterator[tuple]:
    decoder = msgspec.msgpack.Decoder(tuple[float, int, str, int, bytes, str, str])
    while header := run.read(_FRAME.size):
        yield decoder.decode(run.read(_FRAME.unpack(header)[0]))


def read_messages(inputs: ReplayInputs, run_size: int = RUN) -> tuple[list[Message], list[Rejection]]:
    """Every message of the input files, sorted by event time, in memory (for tests and
    small inputs; `replay` streams them through `SortedInput`)."""
    with SortedInput(inputs, run_size) as messages:
        return list(messages), list(messages.rejected)


def replay(
    inputs: ReplayInputs, progress: Callable[[int, int], None] | None = None, run_size: int = RUN
) -> ReplayResult:
    context = load_context(inputs.static)
    engine = Engine(context, frozenset({"tachograph"} | ({"catraca"} if inputs.catraca else set())))
    with SortedInput(inputs, run_size, context.policy.stream.max_message_bytes) as messages:
        read = messages.count + len(messages.rejected)
        rejected = messages.rejected  # the engine's rejections follow the files' own
        out = Sends()
        done = 0
        stream = iter(messages)
        while batch := list(itertools.islice(stream, BATCH)):
            out.merge(engine.ingest(batch))
            rejected.extend(out.rejected)
            out.rejected.clear()
            done += len(batch)
            if progress:
                progress(done, messages.count)
    out.merge(engine.close())
    rejected.extend(out.rejected)
    return ReplayResult(
        feed=context.feed,
        policy=context.policy,
        fleet=context.fleet,
        trips=sorted(out.trips, key=_trip_order),
        infractions=final_state(out.infractions),
        insufficient=out.insufficient,
        rejected=rejected,
        statuses=sorted({s.vehicle_id: s for s in out.statuses}.values(), key=lambda s: s.vehicle_id),
        months=sorted({(m.operator_id, m.month): m for m in out.months}.values(), key=lambda m: (m.operator_id, m.month)),
        messages=read,
        service_dates=engine.covered_dates(),
    )


def read_in_arrival_order(inputs: ReplayInputs) -> tuple[list[Message], list[Rejection]]:
    """The input files' messages as a worker fed them would take them: each file in its own
    line order (its arrival order: a late line is late there), the files interleaved by
    their arrival clocks (a line arrives when the newest event time before it, its own
    included, was made). Occurrences first, as the workers hold them in a table."""
    bound = load_policy(inputs.policy).stream.max_message_bytes
    streams, rejected = [], []
    for source, path in inputs.telemetry.present().items():
        entries, clock = [], -float("inf")
        for location, line in numbered_lines(path, bound):
            body = decode(source, line, location, bound)
            if isinstance(body, Rejection):
                rejected.append(body)
                continue
            epoch = body.start_epoch if source == "occurrences" else body.epoch
            clock = max(clock, epoch) if source != "occurrences" else -float("inf")
            entries.append((clock, SOURCE_ORDER[source], len(entries), Message(body, location, line.decode())))
        streams.append(entries)
    return [entry[-1] for entry in heapq.merge(*streams, key=lambda e: e[:3])], rejected


def replay_in_arrival_order(inputs: ReplayInputs, batch: int = BATCH, judge_late: bool = True) -> ReplayResult:
    """The input files through the engine in their arrival order (`read_in_arrival_order`),
    `batch` messages per call, as a worker's agent hands them over: the stages the Faust
    agents run, without a broker. With `judge_late`, the input read back (what was delivered
    so far) lets a vehicle-day that late messages came for be judged again (engine.late), as
    a worker reads its input topics back; without it, they are rejected as `late`."""
    context = load_context(inputs.static)
    messages, rejected = read_in_arrival_order(inputs)
    delivered: dict[str, list[Message]] = {}

    def read_back(vehicle_id: str, start: float, end: float) -> list[Message]:
        return [m for m in delivered.get(vehicle_id, ()) if start <= m.body.epoch < end]

    engine = Engine(context, frozenset({"tachograph"} | ({"catraca"} if inputs.catraca else set())),
                    read_back if judge_late else None)
    out = Sends()
    trips: dict = {}  # the trips as they stand: the latest per vehicle and departure (trip_key)

    def take(sends: Sends) -> None:
        # a day judged again sends its trips that changed again, and withdraws the ones it
        # no longer finds (sent in an earlier call)
        trips.update({trip_key(t): t for t in sends.trips})
        for trip in sends.trips_withdrawn:
            trips.pop(trip_key(trip), None)
        out.merge(sends)

    for start in range(0, len(messages), batch):
        chunk = messages[start: start + batch]
        for message in chunk:
            vehicle_id = getattr(message.body, "vehicle_id", None)
            if vehicle_id is not None:
                delivered.setdefault(vehicle_id, []).append(message)
        take(engine.ingest(chunk))
    take(engine.close())
    return ReplayResult(
        feed=context.feed, policy=context.policy, fleet=context.fleet,
        trips=sorted(trips.values(), key=_trip_order),
        infractions=final_state(out.infractions),
        insufficient=out.insufficient, rejected=RejectionLog([*rejected, *out.rejected]),
        statuses=sorted({s.vehicle_id: s for s in out.statuses}.values(), key=lambda s: s.vehicle_id),
        months=sorted({(m.operator_id, m.month): m for m in out.months}.values(), key=lambda m: (m.operator_id, m.month)),
        messages=len(messages) + len(rejected), service_dates=engine.covered_dates(),
        changes=out.infractions, late_kept=out.late_kept, rejudged=out.rejudged)


def rerun(static: StaticInputs, telemetry: TelemetryFiles) -> ReplayResult:
    """The replay over static inputs and telemetry files given apart (an evidence
    bundle's re-run: `dockets.bundle.verify_bundle` receives it)."""
    return replay(ReplayInputs.of(static, telemetry))


def final_state(changes: list[Infraction]) -> list[Infraction]:
    """The change log reduced to the latest record per infraction_id, in a stable order."""
    latest = {i.infraction_id: i for i in changes}
    return sorted(latest.values(), key=lambda i: (i.service_date, i.code, i.occurred_at, i.infraction_id))


def _trip_order(trip: RealizedTrip):
    return (trip.service_date, trip.route_id, trip.direction_id, trip.departed_at, trip.vehicle_id)


def write_outputs(result: ReplayResult, out_dir: Path) -> None:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create output directory {out_dir}: {exc.strerror}") from None
    _write_jsonl(out_dir / "trips.jsonl", (trip_record(t) for t in result.trips))
    _write_jsonl(out_dir / "infractions.jsonl", (infraction_record(i) for i in result.infractions))
    with open(out_dir / "rejected.jsonl", "wb") as handle:
        result.rejected.write_to(handle)
    _write_jsonl(out_dir / "insufficient_evidence.jsonl", (msgspec.to_builtins(f) for f in result.insufficient))
    _write_jsonl(out_dir / "vehicle_status.jsonl", (msgspec.to_builtins(s) for s in result.statuses))
    _write_jsonl(out_dir / "month_efficiency.jsonl", (msgspec.to_builtins(m) for m in result.months))


def _write_jsonl(path: Path, records) -> None:
    encoder = msgspec.json.Encoder()
    with open(path, "wb") as handle:
        for record in records:
            handle.write(encoder.encode(record))
            handle.write(b"\n")
