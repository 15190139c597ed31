"""Clock faults: a device's clock checked against one it does not control (issue #33, item 3).

A message's `ts` is the on-board unit's clock. Units get it wrong in ways that look like
service: a stale daylight-saving table (Brazil abolished DST in 2019) stamps an hour
early, local time labelled `Z` stamps three hours early, a dead RTC battery stamps 2099.
Believed, such a stretch moves a bus's trips in time and the schedule accuses the
operator (D-12, D-13, D-19, D-22) of what the clock did.

The clock checked against is the message's receipt: its `received_at` (the ingest
adapter's or AVL server's clock, a field of the contract) or, in a live worker, the
Kafka record's timestamp. A message is received after it is made, by the transport
delay, or much later when a unit stores and forwards after losing coverage. So:
- dated more than `stream.max_clock_offset_s` ahead of its receipt: the clock runs ahead
  (`clock_offset`); more than `stream.max_clock_jump_s` ahead: `future`, as a message
  ahead of a live worker's own clock is;
- dated a whole number of hours behind its receipt, to within `max_clock_offset_s`: a
  timezone fault (`clock_offset`). A store-and-forward delay is whatever the outage
  lasted: not a fault (late data is judged as late data, item 5 of the issue).

A faulty message is rejected, never re-timed. Reading it as "the clock shifted by an
hour" would be the engine rewriting the evidence the auto rests on: the tachograph's
gráficos would show times no device recorded, and an operator's lawyer could fairly ask
which hour the bus really ran. Rejecting loses data that might prove a trip, so the
stretch the faulty messages cover (`clock_offset` or `future` by their receipt), in
receipt time (the true time to within the transport delay), is kept as a `ClockFault` of
the vehicle: the trips the vehicle may have run in a stretch longer than a gap the
tracker reads through (`trips.max_coverage_gap_s`) are insufficient evidence (unfollowed passes to the operator stage: D-12, D-22; no
realized trip comes from rejected messages: D-13), and so is its catraca's silence there
(D-19).

The vehicle's other sensor is not used as a clock: two inputs of one bus can only be
compared in the order they arrive, which the replay (event-time order) does not have; a
rule the worker alone could apply would make replay and worker disagree.

Pure functions over frozen values.
"""

from __future__ import annotations

import datetime as dt

import msgspec

from geofences.zones import Itinerary
from kernel.policy import StreamRules
from trips.unfollowed import UnfollowedPass

HOUR_S = 3600
# UTC offsets run from -12:00 to +14:00: no timezone mistake is wider
MAX_TIMEZONE_ERROR_H = 26


class ClockVerdict(msgspec.Struct, frozen=True):
    reason: str  # "clock_offset" | "future"
    offset_s: float  # event time minus receipt: negative, the clock is behind
    detail: str


class ClockFault(msgspec.Struct, frozen=True):
    """A stretch of one vehicle's input whose messages were dated by a faulty clock, in
    receipt time: [first, last]."""

    input: str
    first: float
    last: float
    offset_s: float  # of the stretch's first message
    first_msg_id: str
    last_msg_id: str


def received_epoch(body, received_at: float | None) -> float | None:
    """The message's receipt: the one its shell saw (a live worker's Kafka record
    timestamp, the broker's LogAppendTime on the input topics: a clock the sender does not
    set), else its own `received_at` field (an ingest adapter's, in files)."""
    if received_at is not None:
        return received_at
    return body.received_at.timestamp() if body.received_at is not None else None


def whole_hours_behind(offset_s: float, tolerance_s: float) -> int | None:
    """The whole number of hours (1 or more) an offset is behind by, to within the tolerance."""
    hours = round(-offset_s / HOUR_S)
    if 1 <= hours <= MAX_TIMEZONE_ERROR_H and abs(-offset_s - hours * HOUR_S) <= tolerance_s:
        return hours
    return None


def judge_clock(event: float, received: float, rules: StreamRules, tz: dt.tzinfo) -> ClockVerdict | None:
    """The clock fault a message dated `event` and received at `received` shows, if any."""
    offset = event - received
    seen = (f"event time {dt.datetime.fromtimestamp(event, tz).isoformat()} against its receipt at "
            f"{dt.datetime.fromtimestamp(received, tz).isoformat()}: offset {offset:+.0f} s")
    if offset > rules.max_clock_jump_s:
        return ClockVerdict("future", offset, f"{seen}, more than {rules.max_clock_jump_s:.0f} s ahead of when it was "
                                              "received (policy stream.max_clock_jump_s)")
    if offset > rules.max_clock_offset_s:
        return ClockVerdict("clock_offset", offset, f"{seen}: dated after it was received, the device clock runs "
                                                    "ahead (policy stream.max_clock_offset_s)")
    hours = whole_hours_behind(offset, rules.max_clock_offset_s)
    if hours is not None:
        return ClockVerdict("clock_offset", offset, f"{seen}: {hours} h behind to within "
                                                    f"{rules.max_clock_offset_s:.0f} s, a timezone or daylight-saving "
                                                    "fault of the device clock (policy stream.max_clock_offset_s)")
    return None


def with_fault(faults: list[ClockFault], input: str, received: float, offset_s: float, msg_id: str,
               gap_s: float, keep_s: float) -> list[ClockFault]:
    """`faults` with a faulty message received at `received` added: it extends the input's
    latest stretch when it follows it within `gap_s`, else starts a new one. Stretches
    ending more than `keep_s` before it are forgotten (their days are judged)."""
    kept = [f for f in faults if f.last >= received - keep_s]
    latest = max((f for f in kept if f.input == input), key=lambda f: f.last, default=None)
    if latest is not None and latest.first - gap_s <= received <= latest.last + gap_s:
        grown = msgspec.structs.replace(latest, first=min(latest.first, received), last=max(latest.last, received),
                                        last_msg_id=msg_id if received >= latest.last else latest.last_msg_id)
        return [grown if f is latest else f for f in kept]
    return [*kept, ClockFault(input, received, received, offset_s, msg_id, msg_id)]


def clock_passes(vehicle_id: str, fault: ClockFault, itineraries: list[Itinerary]) -> list[UnfollowedPass]:
    """A tachograph's clock-fault stretch as the operator stage reads a stretch of service
    the telemetry could not follow: on each itinerary the vehicle may run, it may have
    departed any time in it, any number of times (`clock_offset_s`)."""
    return [UnfollowedPass(vehicle_id, it.pattern.route_id, it.pattern.direction_id, it.pattern.shape_id,
                           fault.first, fault.last, fault.first_msg_id, fault.last_msg_id, 0.0, 0.0,
                           fault.first, fault.last, ((fault.first, fault.last),), clock_offset_s=fault.offset_s)
            for it in itineraries]

