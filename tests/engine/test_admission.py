"""Admission of a vehicle's messages (engine.admission), as functions of the vehicle's
state, the message and a Gate, without a stage.

Context: the João Neiva sample network and policy: 600 s of allowed lateness, a clock
jump beyond 900 s held, a 120 km/h ceiling; JN-1011 is in the fleet, XX-0000 is not.
"""

from __future__ import annotations

import datetime as dt
import json
import random

from engine.admission import (KEPT_LATE, Gate, admit, content_digest, dedup_key, forget_old_keys, holds,
                              resolve_held)
from engine.servicedays import ServiceDays
from engine.values import Message
from engine.vehiclestate import VehicleState
from telemetry import decode_catraca, decode_tachograph, message_id


def gate(context, rejudging: bool = False) -> Gate:
    return Gate(context, ServiceDays(context.feed, context.policy.trips.service_day_cutover_s),
                lateness_s=context.policy.stream.allowed_lateness_s, rejudging=rejudging)


def ping(ts: str, speed_kmh: float = 20.0, vehicle_id: str = "JN-1011", seq: int | None = None) -> Message:
    fields = {"vehicle_id": vehicle_id, "ts": ts, "lat": -19.7574776, "lon": -40.3852385, "speed_kmh": speed_kmh}
    if seq is not None:
        fields["seq"] = seq
    line = json.dumps(fields)
    return Message(decode_tachograph(line, "tachograph/0/1"), "tachograph/0/1", line)


def test_a_message_is_taken_once_and_a_copy_of_it_is_a_duplicate(context):
    state, first = VehicleState("JN-1011"), ping("2026-12-01T12:00:00-03:00")
    assert admit(state, first, gate(context), watermark=None) is None
    assert state.seen == {dedup_key(first.body): first.body.epoch}
    assert state.max_events == {"tachograph": first.body.epoch}
    copy = admit(state, ping("2026-12-01T12:00:00-03:00"), gate(context), watermark=None)
    assert (copy.reason, copy.location) == ("duplicate", "tachograph/0/1")


def test_a_copy_with_other_content_is_a_conflicting_duplicate_and_what_cites_it_is_recorded(context):
    state = VehicleState("JN-1011")
    admit(state, ping("2026-12-01T12:00:00-03:00", speed_kmh=20.0), gate(context), watermark=None)
    other = ping("2026-12-01T12:00:00-03:00", speed_kmh=80.0)
    rejection = admit(state, other, gate(context), watermark=None)
    assert rejection.reason == "conflicting_duplicate"
    assert message_id(other.body) in state.conflicted


def test_the_digest_is_of_the_content_not_of_the_offset_its_time_is_written_with():
    # 12:00 at -03:00 is 15:00 UTC: the same instant, the same content
    assert content_digest(ping("2026-12-01T12:00:00-03:00").body) == content_digest(ping("2026-12-01T15:00:00Z").body)
    assert content_digest(ping("2026-12-01T12:00:00-03:00").body) != \
        content_digest(ping("2026-12-01T12:00:00-03:00", speed_kmh=21.0).body)


def test_an_unknown_vehicle_and_an_implausible_speed_are_rejected_and_nothing_recorded(context):
    state = VehicleState("XX-0000")
    assert admit(state, ping("2026-12-01T12:00:00-03:00", vehicle_id="XX-0000"), gate(context),
                 watermark=None).reason == "unknown_vehicle"
    mine = VehicleState("JN-1011")
    assert admit(mine, ping("2026-12-01T12:00:00-03:00", speed_kmh=121.0), gate(context),
                 watermark=None).reason == "implausible"
    assert (state.seen, mine.seen, mine.max_events) == ({}, {}, {})


def test_a_message_behind_the_vehicles_newest_by_more_than_the_lateness_is_late_or_kept_for_a_rejudgment(context):
    newest, behind = ping("2026-12-01T12:00:00-03:00"), ping("2026-12-01T11:49:59-03:00")  # 601 s > 600 s
    state = VehicleState("JN-1011")
    admit(state, newest, gate(context), watermark=None)
    assert admit(state, behind, gate(context), watermark=None).reason == "late"
    assert admit(state, behind, gate(context, rejudging=True), watermark=None) is KEPT_LATE
    assert state.late["2026-12-01"].kept == 1


def test_a_message_dated_far_ahead_is_held_and_rejected_as_future_when_the_next_one_comes_back(context):
    state = VehicleState("JN-1011")
    admit(state, ping("2026-12-01T12:00:00-03:00"), gate(context), watermark=None)
    jumped = ping("2026-12-01T14:00:00-03:00")  # 2 h ahead of the newest: more than 900 s
    assert holds(state, jumped, gate(context))
    assert list(state.held) == ["tachograph"]
    taken, copy = resolve_held(state, ping("2026-12-01T12:00:10-03:00"), gate(context), watermark=None)
    [(held, rejection)] = taken
    assert copy is None and held.body.epoch == jumped.body.epoch
    assert rejection.reason == "future" and state.held == {}


def test_a_message_held_is_taken_when_the_next_one_shows_time_moved_on(context):
    state = VehicleState("JN-1011")
    admit(state, ping("2026-12-01T05:00:00-03:00"), gate(context), watermark=None)
    after_a_gap = ping("2026-12-01T07:00:00-03:00")
    assert holds(state, after_a_gap, gate(context))
    [(held, rejection)], copy = resolve_held(state, ping("2026-12-01T07:00:10-03:00"), gate(context), watermark=None)
    assert (held.body.epoch, rejection, copy) == (after_a_gap.body.epoch, None, None)
    assert not holds(state, ping("2026-12-01T05:14:59-03:00"), gate(context))  # 899 s ahead: taken at once


def test_a_time_written_otherwise_is_one_dedup_key():
    assert dedup_key(ping("2026-12-01T12:00:00-03:00", seq=7).body) == \
        dedup_key(ping("2026-12-01T15:00:00Z", seq=7).body) != dedup_key(ping("2026-12-01T15:00:00Z", seq=8).body)


def reading(ts: str, counter: int, vehicle_id: str = "JN-1011") -> Message:
    line = json.dumps({"vehicle_id": vehicle_id, "ts": ts, "counter": counter, "seal_intact": True, "status": "ok"})
    return Message(decode_catraca(line, "catraca/0/1"), "catraca/0/1", line)


def test_the_keys_behind_each_inputs_lateness_go_whatever_order_the_inputs_came_in(context):
    """`seen` is kept in event-time order, so forgetting reads only its front: a catraca
    stream behind the tachograph's, and messages shuffled within a minute, leave exactly
    the keys a look at every key would (each input's newest less the lateness)."""
    rng = random.Random(3)
    start = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone(dt.timedelta(hours=-3)))
    messages = [ping((start + dt.timedelta(seconds=10 * i)).isoformat(), seq=i) for i in range(240)]
    # the catraca 45 s behind the tachograph, a reading a minute
    messages += [reading((start + dt.timedelta(seconds=60 * i + 7)).isoformat(), 100 + i) for i in range(40)]
    arrival = sorted(messages, key=lambda m: m.body.epoch + (45 if m.location.startswith("catraca") else 0)
                     + rng.uniform(0, 50))
    state, taken = VehicleState("JN-1011"), {}
    lateness = context.policy.stream.allowed_lateness_s
    for message in arrival:
        if admit(state, message, gate(context), watermark=None) is None:
            taken[dedup_key(message.body)] = message.body.epoch
        forget_old_keys(state, lateness)
        # what every key looked at would keep: the keys not behind their own input's horizon
        kept = {k: t for k, t in taken.items() if t >= state.max_events[k.split("|")[0]] - lateness}
        assert state.seen == kept and list(state.seen.values()) == sorted(state.seen.values())
        assert state.digests.keys() == state.seen.keys()
    assert len(taken) == len(messages)  # every message taken: the order was within the lateness


def test_a_state_stored_before_seen_was_kept_in_order_forgets_every_key_behind_its_horizon(context):
    """The keys of a state stored by an earlier version are in the order they came, which
    need not be time order: the first forgetting looks at every key (a key kept out of
    place would still make a held message's copy `in seen`, engine.admission.resolve_held)."""
    import msgspec

    state = VehicleState("JN-1011")
    for text in ("12:00", "11:55", *(f"12:0{minute}" for minute in range(1, 9))):
        assert admit(state, ping(f"2026-12-01T{text}:00-03:00"), gate(context), watermark=None) is None
    # as the earlier version stored it: the keys in arrival order, no `seen_in_order`
    fields = msgspec.msgpack.decode(msgspec.msgpack.encode(state))
    del fields["seen_in_order"]
    old = msgspec.msgpack.decode(msgspec.msgpack.encode(fields), type=VehicleState)
    assert not old.seen_in_order and list(old.seen.values()) != sorted(old.seen.values())
    forget_old_keys(old, context.policy.stream.allowed_lateness_s)
    # 12:08 less 600 s is 11:58: 11:55 goes, though 12:00 came before it
    newest = dt.datetime.fromisoformat("2026-12-01T12:08:00-03:00").timestamp()
    assert sorted(old.seen.values()) == [newest - 60 * m for m in range(8, -1, -1)]
    assert list(old.seen.values()) == sorted(old.seen.values()) and old.seen_in_order
    assert old.digests.keys() == old.seen.keys()
