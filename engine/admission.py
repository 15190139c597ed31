"""Admission: whether a vehicle's telemetry message is taken into its pending messages
(engine.vehicle releases them when the watermark passes), or dead-lettered, and why —
unknown vehicle, implausible, a device clock off or in the future, duplicate, a second
version with other content (`conflicting_duplicate`), late — or kept for its vehicle-day's
re-judgment (engine.late). The clock-jump guard holds a message dated far ahead of its
vehicle's newest until the next one tells whether the clock jumped.

Each function takes the vehicle's state and a `Gate`, the static values admission reads,
and records in the state what admission keeps for the vehicle (its dedup keys and
content digests, newest event times and offsets, messages held or in two versions, late
messages kept, clock-fault stretches); the partition's progress is the stage's to note.
A reading written back into a dead letter is written in the feed's time (`in_feed_time`),
whether the stage holds it as admitted or read it back from stored state.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import operator
from collections.abc import Callable
from dataclasses import dataclass

import msgspec

from engine.clocks import judge_clock, received_epoch, with_fault
from engine.late import keeps, with_late
from engine.servicedays import ServiceDays
from engine.values import Context, Message
from engine.vehiclestate import Held, VehicleState
from rules import d21
from telemetry import CatracaReading, Rejection, TachographPing, decode, encode, message_id

# admit's verdict on a late message kept for its vehicle-day's re-judgment (not a rejection)
KEPT_LATE = Rejection(source="", reason="kept_late", detail="", location=None, raw="")
# a clock-fault stretch is kept this long after its last message: past its day's close
_CLOCK_FAULTS_KEPT_S = 2 * 86400
_CONTENT = msgspec.json.Encoder()


@dataclass(frozen=True)
class Gate:
    """What admitting a vehicle's message reads besides its state: the static context,
    the feed's service days, the allowed lateness, whether a re-judgment is wired (then a
    late message is kept for its vehicle-day's, engine.late, as far as the policy allows),
    and the processing clock (epoch s) of a live worker, which replay has not."""

    ctx: Context
    days: ServiceDays
    lateness_s: float
    rejudging: bool
    wall_clock: Callable[[], float] | None = None


def source_of(body: TachographPing | CatracaReading) -> str:
    return "tachograph" if isinstance(body, TachographPing) else "catraca"


def dedup_key(body: TachographPing | CatracaReading) -> str:
    """A message's identity: its input, event time and seq."""
    return f"{source_of(body)}|{body.epoch!r}|{body.seq}"


def content_digest(body: TachographPing | CatracaReading) -> str:
    """The content of a message, whatever its bytes' layout (key order, spaces), the
    offset its time is written with (12:00-03:00 is 15:00Z) and when it was received (a
    copy received again is the same message). Never a digest of the bytes as received:
    a resend laid out otherwise, or stamped with its new receipt, would then be a second
    version, and every record citing it provisional (DESIGN.md: `conflicting_duplicate`
    is other content). Once per admitted message: the fields read off the decoded body
    (no struct rebuilt, which would check its invariants again)."""
    canonical = msgspec.structs.asdict(body)
    canonical["ts"] = body.ts.astimezone(dt.timezone.utc)
    del canonical["received_at"]  # the fields before it, in order: the digest the contract had without it
    if canonical.get("speed_source") == "reported":  # the default, as before the field existed
        del canonical["speed_source"]
    return hashlib.blake2b(_CONTENT.encode(canonical), digest_size=8).hexdigest()


def lateness_limit(state: VehicleState, source: str, lateness_s: float) -> float | None:
    """A message is late when it is behind its vehicle's newest message of the same
    input by more than the lateness (a restarted worker whose partition progress
    survived but not every vehicle's state still takes that vehicle's redelivery)."""
    newest = state.max_events.get(source)
    return None if newest is None else newest - lateness_s


def admit(state: VehicleState, message: Message, gate: Gate, watermark: float | None) -> Rejection | None:
    """None if the message is taken (its dedup key, digest, offset and event time are
    recorded in the state), `KEPT_LATE` if it is kept for its vehicle-day's re-judgment,
    else its rejection. `watermark`: the partition's now."""
    body = message.body
    source = source_of(body)
    ctx = gate.ctx

    def reject(reason: str, detail: str) -> Rejection:
        raw = message.raw if message.raw is not None else encode(body).decode()
        return Rejection(source=source, reason=reason, detail=detail, location=message.location, raw=raw)

    if body.vehicle_id not in ctx.fleet:
        return reject("unknown_vehicle", f"vehicle {body.vehicle_id!r} is not in fleet.csv")
    ceiling = ctx.policy.trips.max_plausible_speed_kmh
    if isinstance(body, TachographPing) and body.speed_kmh > ceiling:
        # a sensor fault: never used, so it can neither accuse nor move the watermark
        return reject("implausible", f"speed {body.speed_kmh:g} km/h is above the physical ceiling of "
                                     f"{ceiling:g} km/h for a bus (policy trips.max_plausible_speed_kmh)")
    if isinstance(body, CatracaReading):
        beyond = d21.implausible(None, body.epoch, body.counter, ctx.policy)
        if beyond is not None:  # no register holds it (policy d21.counter_moduli)
            return reject("implausible", beyond)
    epoch = body.epoch
    skew = ctx.policy.stream.max_clock_jump_s
    if gate.wall_clock is not None and epoch > gate.wall_clock() + skew:
        # a device clock in the future: never taken, so it moves no frontier or watermark
        return reject("future", f"event time {body.ts.isoformat()} is more than {skew:.0f} s ahead of the "
                                "worker's clock (policy stream.max_clock_jump_s)")
    received = received_epoch(body, message.received_at)
    if received is not None:
        verdict = judge_clock(epoch, received, ctx.policy.stream, ctx.feed.timezone)
        if verdict is not None:
            note_clock_fault(state, source, body, received, verdict.offset_s, gate)
            return reject(verdict.reason, verdict.detail)
    key = dedup_key(body)
    limit = lateness_limit(state, source, gate.lateness_s)
    # Keys are forgotten once behind the lateness (whenever that happens): a copy that
    # old is late, so the verdict never depends on when they were forgotten.
    seen = key in state.seen and (limit is None or epoch >= limit)
    digest = content_digest(body)
    if seen and state.digests.get(key, digest) != digest:
        # two versions of one message: the first received counts (replay reads the
        # files in their order for that), and what cites it is at most provisional
        return reject("conflicting_duplicate", record_conflict(state, body, state.digests[key], digest,
                                                               ctx.feed.timezone))
    if seen or (message.offset is not None and message.offset <= state.offsets.get(source, -1)):
        # before the lateness checks: a message Kafka delivers again after a worker
        # restart or a rebalance is behind its vehicle's newest one, and is a duplicate
        return reject("duplicate", f"same vehicle, time and seq as an earlier message ({message_id(body)})")
    if limit is not None and epoch < limit:
        return late(state, body, reject("late", f"event time {body.ts.isoformat()} is more than "
                                                f"{gate.lateness_s:.0f} s behind the vehicle's newest event"),
                    gate, watermark)
    released = state.released.get(source)
    # a reading at the very instant of one released shares its order (counter) too late
    if released is not None and (epoch < released or (epoch == released and source == "catraca")):
        return late(state, body, reject(
            "late", f"event time {body.ts.isoformat()} is behind this vehicle's {source} messages "
                    "already taken into the day's facts (its stream runs behind the partition's)"), gate, watermark)
    horizon = ctx.policy.trips.max_trip_duration_s
    if watermark is not None and epoch < watermark - horizon:
        # its service day may already be closed and judged
        return late(state, body, reject("late", f"event time {body.ts.isoformat()} is more than "
                                                f"{horizon:.0f} s behind the stream's progress: its "
                                                "service day may be closed"), gate, watermark)
    seen = state.seen
    if seen and epoch < next(reversed(seen.values())):
        # older than the last one admitted (another input's stream behind, a late copy):
        # `forget_old_keys` looks at every key next time, and puts them in order
        state.seen_in_order = False
    seen[key] = epoch
    state.digests[key] = digest
    if message.offset is not None:
        state.offsets[source] = message.offset
    state.max_events[source] = max(state.max_events.get(source, epoch), epoch)
    return None


def late(state: VehicleState, body: TachographPing | CatracaReading, rejection: Rejection, gate: Gate,
         watermark: float | None) -> Rejection:
    """A message too late for the day's compact facts: kept for its vehicle-day's
    re-judgment (engine.late) when one is wired and the policy's bounds allow, else
    rejected as `late`, saying which bound."""
    if not gate.rejudging:
        return rejection
    why = keep_for_rejudgment(state, body, gate, watermark)
    if why is not None:
        return msgspec.structs.replace(rejection, detail=f"{rejection.detail}; not judged again: {why}")
    return KEPT_LATE


def keep_for_rejudgment(state: VehicleState, body: TachographPing | CatracaReading, gate: Gate,
                        watermark: float | None) -> str | None:
    """The message's vehicle-day to be judged again from its raw input, if the policy's
    bounds allow (noted in `state.late`); else why not."""
    rules = gate.ctx.policy.stream
    date = gate.days.operating_date(body.epoch).isoformat()
    day = state.late.get(date)
    why = keeps(day, body.epoch, state.max_events.get(source_of(body)), rules.rejudge_max_late_s,
                rules.rejudge_max_times, watermark)
    if why is None:
        state.late = {**state.late, date: with_late(day, body.epoch)}
    return why


def record_conflict(state: VehicleState, body: TachographPing | CatracaReading, first: str, this: str, tz) -> str:
    """A second version of a message: recorded, so that what cites it is at most
    provisional (under its id as sent, and in the feed's time, as evidence read back
    from state cites it); the rejection's detail."""
    state.conflicted[message_id(body)] = state.conflicted[message_id(body, tz)] = body.epoch
    return (f"same vehicle, time and seq as {message_id(body)} received before, with other content "
            f"(content digest {first} received first and counts; this one {this})")


def note_clock_fault(state: VehicleState, source: str, body, received: float, offset_s: float, gate: Gate) -> None:
    """A message a faulty clock dated, rejected: its stretch of the vehicle's day grows."""
    state.clock_faults = with_fault(state.clock_faults, source, received, offset_s, message_id(body),
                                    gap_s=gate.ctx.policy.trips.max_coverage_gap_s, keep_s=_CLOCK_FAULTS_KEPT_S)


def forget_old_keys(state: VehicleState, lateness_s: float) -> None:
    """Dedup keys behind the lateness go: a message that old is late anyway. While `seen`
    is in event-time order (`state.seen_in_order`) only its front is read, up to the first
    key not older than the newest horizon: a look at every key cost ~15 µs a beat (a
    vehicle's state is cold in the cache at its beat), as much as the rest of its
    admission. Otherwise (a key admitted out of order since, a state stored before the
    order was kept) every key is looked at and the ones kept are put in order, once: the
    keys that go are the same either way."""
    if not state.seen or not state.max_events:
        return
    horizon = {source: newest - lateness_s for source, newest in state.max_events.items()}
    # only a key older than the newest horizon can go: those few are read by source
    latest = max(horizon.values())
    gone = []
    for k, t in state.seen.items():
        if t >= latest:
            if state.seen_in_order:
                break
            continue
        if t < horizon.get(k.split("|", 1)[0], float("-inf")):
            gone.append(k)
    for k in gone:  # in place: the keys kept keep their order
        del state.seen[k]
        state.digests.pop(k, None)
    if not state.seen_in_order:
        # ties in the order they came (a stable sort)
        state.seen = dict(sorted(state.seen.items(), key=operator.itemgetter(1)))
        state.seen_in_order = True


# --- the clock-jump guard (DESIGN.md: a message dated beyond the frontier is `future`) ---
# A device whose clock jumps ahead sends one message (or a few) dated hours later, then
# goes on with the right time. Taken, the jumped message would move the vehicle's
# lateness frontier and the watermark ahead, and every genuine message after it would be
# `late` (one ping dated the next day cost a vehicle 5,593 messages and ~7,000 UFIR of
# verdicts). So a message more than `stream.max_clock_jump_s` ahead of the vehicle's
# newest (same input) waits for the vehicle's next message on that input: one dated
# back near the old time shows the jump (the held one is rejected as `future`); one at
# or after it shows that time moved on (a night, an outage), and the held one is taken
# first. In event-time order (replay) nothing comes back, so every held message is taken
# at the next one: the guard only ever rejects what arrived out of its place in time.


def holds(state: VehicleState, message: Message, gate: Gate) -> bool:
    """Whether the message is held (into `state.held`) to wait for the vehicle's next one."""
    body = message.body
    if received_epoch(body, message.received_at) is not None:
        return False  # its receipt is a clock to check it against (admit): no need to wait
    source = source_of(body)
    newest = state.max_events.get(source)
    if newest is None or body.epoch <= newest + gate.ctx.policy.stream.max_clock_jump_s:
        return False
    raw = message.raw if message.raw is not None else encode(body).decode()
    state.held[source] = Held(raw, message.location, message.offset)
    return True


def resolve_held(state: VehicleState, message: Message, gate: Gate,
                 watermark: float | None) -> tuple[list[tuple[Message, Rejection | None]], Rejection | None]:
    """The message held for this input, judged by the one that arrives now: what to
    take (the held message, admitted or rejected), or the rejection of the arriving
    message if it is a copy of the held one (which then stays held)."""
    body = message.body
    source = source_of(body)
    if source not in state.held:
        return [], None
    held = state.held[source]
    suspect = held_message(source, held)
    if not isinstance(suspect.body, (TachographPing, CatracaReading)):
        del state.held[source]
        return [], None
    if (message.offset is not None and message.offset == held.offset) or \
            (suspect.body.epoch == body.epoch and suspect.body.seq == body.seq):
        # a copy of the held message (or the same one delivered again after a restart):
        # no proof that time moved on; the held one waits for the next
        return [], copy_of_held(state, suspect, message, gate.ctx.feed.timezone)
    if dedup_key(body) in state.seen or (message.offset is not None and message.offset <= state.offsets.get(source, -1)):
        return [], None  # a message seen before (a redelivery): it tells nothing of the clock now
    del state.held[source]
    bound = gate.ctx.policy.stream.max_clock_jump_s
    if body.epoch >= suspect.body.epoch - bound:
        return [(suspect, None)], None
    newest = state.max_events.get(source)
    before = dt.datetime.fromtimestamp(newest, suspect.body.ts.tzinfo).isoformat() if newest else "?"
    future = Rejection(
        source=source, reason="future", location=held.location, raw=held.raw,
        detail=(f"event time {suspect.body.ts.isoformat()} is {(suspect.body.epoch - (newest or 0)) / 60:.0f} min "
                f"ahead of the vehicle's message before it ({before}) and the one after it "
                f"({body.ts.isoformat()}) came back: the device clock jumped (policy stream.max_clock_jump_s)"))
    if gate.days.operating_date(suspect.body.epoch) == gate.days.operating_date(body.epoch):
        # A unit back from a coverage loss sends its first live message before its stored
        # backlog (store and forward), which looks like a clock that jumped and came back.
        # Within one operating day, where a re-judgment is wired, the held message is kept
        # as late: the day judged again in event-time order takes it where the replay
        # does, jumped clock or not (engine.late); a jump across days stays `future`.
        return [(suspect, late(state, suspect.body, future, gate, watermark))], None
    return [(suspect, future)], None


def copy_of_held(state: VehicleState, held: Message, message: Message, tz) -> Rejection:
    """A message with the held one's time and seq: a `duplicate`, or a `conflicting_duplicate`
    (recorded) if its content differs."""
    body = message.body
    raw = message.raw if message.raw is not None else encode(body).decode()
    first, this = content_digest(held.body), content_digest(body)
    if first == this:
        return Rejection(source=source_of(body), reason="duplicate", location=message.location, raw=raw,
                         detail=f"same vehicle, time and seq as an earlier message ({message_id(body)})")
    return Rejection(source=source_of(body), reason="conflicting_duplicate", location=message.location, raw=raw,
                     detail=record_conflict(state, body, first, this, tz))


def held_message(source: str, held: Held) -> Message:
    """A held message decoded again, as it arrived."""
    return Message(decode(source, held.raw, held.location), held.location, held.raw, held.offset)


def in_feed_time(reading: CatracaReading, tz) -> CatracaReading:
    """The reading with its instants in the feed's timezone, for a dead letter's `raw`: one
    the stage kept as admitted carries the offset it was sent with, one read back from
    stored state (msgpack keeps no offset) UTC, and what is written must not depend on
    which (a worker's state served decoded or unpacked, streams.decoded)."""
    return msgspec.structs.replace(reading, ts=reading.ts.astimezone(tz), received_at=None
                                   if reading.received_at is None else reading.received_at.astimezone(tz))
