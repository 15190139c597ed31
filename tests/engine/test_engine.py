"""Admission of messages by the engine: duplicates, unknown vehicles, late events.

Context: the João Neiva sample network (fleet JN-1011, JN-1012, ...) with the shipped
policy. The hand-written times of the lateness tests below assume its
stream.allowed_lateness_s of 600 s; the test with the policy's lateness at the bound
(and with other values of it) reads the number from the policy. Pings are decoded from
hand-written JSON.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json

import msgspec
import pytest

from engine import Engine, Message
from telemetry import Rejection, decode_catraca, decode_tachograph

VEHICLE = "JN-1011"
# Stop 1001 of the sample feed (Avenida Presidente Vargas – Correios).
LAT, LON = -19.7574776, -40.3852385


@pytest.fixture
def engine(context):
    return Engine(context)


def ping_line(ts: str, vehicle: str = VEHICLE, seq: int | None = 0, **extra) -> str:
    body = {"vehicle_id": vehicle, "ts": ts, "lat": LAT, "lon": LON, "speed_kmh": 0.0, **extra}
    if seq is not None:
        body["seq"] = seq
    return json.dumps(body)


def message(line: str, location: str) -> Message:
    body = decode_tachograph(line, location)
    assert not isinstance(body, Rejection), body
    return Message(body, location, line)


def reasons(rejected: list[Rejection]) -> list[tuple[str | None, str]]:
    return [(r.location, r.reason) for r in rejected]


def with_lateness(context, lateness_s: float):
    """The context with the policy's stream.allowed_lateness_s replaced."""
    policy = context.policy
    stream = msgspec.structs.replace(policy.stream, allowed_lateness_s=lateness_s)
    return dataclasses.replace(context, policy=msgspec.structs.replace(policy, stream=stream))


@pytest.mark.parametrize("lateness_s", [None, 120.0, 1800.0], ids=["shipped", "120-s", "1800-s"])
def test_a_ping_one_second_beyond_the_policys_lateness_is_late_one_at_it_admitted(context, lateness_s):
    # The bound is the policy's, not a constant: with the shipped policy (600 s) the newest
    # ping at 12:00:00 admits 11:50:00 (600 s behind: not *more* than the lateness) and
    # rejects 11:49:59 (601 s); with 120 s, 11:58:00 and 11:57:59; with 1800 s, 11:30:00
    # and 11:29:59 (which the shipped 600 s would reject).
    ctx = context if lateness_s is None else with_lateness(context, lateness_s)
    lateness = dt.timedelta(seconds=ctx.policy.stream.allowed_lateness_s)
    newest = dt.datetime.fromisoformat("2026-12-01T12:00:00-03:00")
    at_bound, beyond = newest - lateness, newest - lateness - dt.timedelta(seconds=1)
    out = Engine(ctx).ingest([
        message(ping_line(newest.isoformat(), seq=1), "t.jsonl:1"),
        message(ping_line(at_bound.isoformat(), seq=2), "t.jsonl:2"),
        message(ping_line(beyond.isoformat(), seq=3), "t.jsonl:3"),
    ])
    assert reasons(out.rejected) == [("t.jsonl:3", "late")]
    assert f"{ctx.policy.stream.allowed_lateness_s:.0f} s behind" in out.rejected[0].detail


def test_duplicate_ping_same_vehicle_ts_seq_rejected_duplicate(engine):
    line = ping_line("2026-12-01T12:00:00-03:00", seq=7)
    out = engine.ingest([message(line, "t.jsonl:1"), message(line, "t.jsonl:2")])
    assert reasons(out.rejected) == [("t.jsonl:2", "duplicate")]  # the first copy is admitted


def test_duplicate_ping_in_later_batch_rejected_duplicate(engine):
    line = ping_line("2026-12-01T12:00:00-03:00", seq=7)
    assert engine.ingest([message(line, "t.jsonl:1")]).rejected == []
    out = engine.ingest([message(line, "t.jsonl:9")])
    assert reasons(out.rejected) == [("t.jsonl:9", "duplicate")]


def test_same_instant_written_with_another_offset_rejected_duplicate(engine):
    # 12:00 at -03:00 is 15:00 UTC: the same event time.
    first = ping_line("2026-12-01T12:00:00-03:00", seq=7)
    second = ping_line("2026-12-01T15:00:00+00:00", seq=7)
    out = engine.ingest([message(first, "t.jsonl:1"), message(second, "t.jsonl:2")])
    assert reasons(out.rejected) == [("t.jsonl:2", "duplicate")]


def test_same_content_laid_out_with_other_key_order_and_spaces_rejected_duplicate(engine):
    # The same message as its sender may lay it out again (another JSON library, a resend):
    # identical content is one message, so the dedup never compares the bytes as received
    # (a resend would otherwise make every record citing it provisional).
    first = ping_line("2026-12-01T12:00:00-03:00", seq=7)
    second = json.dumps(dict(reversed(json.loads(first).items())), indent=2)
    assert second.encode() != first.encode()
    out = engine.ingest([message(first, "t.jsonl:1"), message(second, "t.jsonl:2")])
    assert reasons(out.rejected) == [("t.jsonl:2", "duplicate")]


def _content_digest(line: str) -> str:
    """A ping's content digest as the conflicting_duplicate detail names it: BLAKE2b (8
    bytes) of its content as compact JSON in the contract's field order, its time in UTC,
    without received_at and without the default speed_source."""
    fields = ("vehicle_id", "ts", "lat", "lon", "speed_kmh", "odometer_km", "route_id", "driver_id", "doors_open",
              "seq", "speed_source")
    body = json.loads(line)
    body["ts"] = dt.datetime.fromisoformat(body["ts"]).astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    content = {f: body.get(f) for f in fields}
    if content["speed_source"] in (None, "reported"):
        del content["speed_source"]
    return hashlib.blake2b(json.dumps(content, separators=(",", ":")).encode(), digest_size=8).hexdigest()


@pytest.mark.parametrize("extra", [{}, {"speed_source": "derived", "doors_open": True}], ids=["reported", "derived"])
def test_a_second_version_names_both_content_digests_the_first_counting(engine, extra):
    first = ping_line("2026-12-01T12:00:00-03:00", seq=7, odometer_km=10.5, received_at="2026-12-01T15:00:02Z",
                      **extra)
    second = ping_line("2026-12-01T15:00:00+00:00", seq=7, odometer_km=10.75, **extra)
    out = engine.ingest([message(first, "t.jsonl:1"), message(second, "t.jsonl:2")])
    assert reasons(out.rejected) == [("t.jsonl:2", "conflicting_duplicate")]
    assert _content_digest(first) != _content_digest(second)
    assert (f"(content digest {_content_digest(first)} received first and counts; "
            f"this one {_content_digest(second)})") in out.rejected[0].detail


def test_duplicate_ping_without_seq_rejected_duplicate(engine):
    line = ping_line("2026-12-01T12:00:00-03:00", seq=None)
    out = engine.ingest([message(line, "t.jsonl:1"), message(line, "t.jsonl:2")])
    assert reasons(out.rejected) == [("t.jsonl:2", "duplicate")]


def test_same_vehicle_and_ts_with_other_seq_accepted(engine):
    out = engine.ingest([
        message(ping_line("2026-12-01T12:00:00-03:00", seq=7), "t.jsonl:1"),
        message(ping_line("2026-12-01T12:00:00-03:00", seq=8), "t.jsonl:2"),
    ])
    assert out.rejected == []


def test_same_ts_and_seq_of_another_vehicle_accepted(engine):
    out = engine.ingest([
        message(ping_line("2026-12-01T12:00:00-03:00", vehicle="JN-1011"), "t.jsonl:1"),
        message(ping_line("2026-12-01T12:00:00-03:00", vehicle="JN-1012"), "t.jsonl:2"),
    ])
    assert out.rejected == []


def test_catraca_reading_with_ping_key_is_not_a_duplicate(engine):
    ping = message(ping_line("2026-12-01T12:00:00-03:00", seq=7), "t.jsonl:1")
    raw = json.dumps({"vehicle_id": VEHICLE, "ts": "2026-12-01T12:00:00-03:00", "counter": 10,
                      "seal_intact": True, "status": "ok", "seq": 7})
    reading = Message(decode_catraca(raw, "c.jsonl:1"), "c.jsonl:1", raw)
    assert engine.ingest([ping, reading]).rejected == []


def test_ping_of_vehicle_not_in_fleet_rejected_unknown_vehicle(engine):
    out = engine.ingest([message(ping_line("2026-12-01T12:00:00-03:00", vehicle="XX-9999"), "t.jsonl:1")])
    assert reasons(out.rejected) == [("t.jsonl:1", "unknown_vehicle")]
    assert "XX-9999" in out.rejected[0].detail
    assert out.rejected[0].source == "tachograph"


def test_ping_601_s_behind_newest_event_rejected_late(engine):
    out = engine.ingest([
        message(ping_line("2026-12-01T12:00:00-03:00", seq=1), "t.jsonl:1"),
        message(ping_line("2026-12-01T11:49:59-03:00", seq=2), "t.jsonl:2"),  # 12:00:00 - 11:49:59 = 601 s
    ])
    assert reasons(out.rejected) == [("t.jsonl:2", "late")]


def test_ping_599_s_behind_newest_event_accepted(engine):
    out = engine.ingest([
        message(ping_line("2026-12-01T12:00:00-03:00", seq=1), "t.jsonl:1"),
        message(ping_line("2026-12-01T11:50:01-03:00", seq=2), "t.jsonl:2"),  # 12:00:00 - 11:50:01 = 599 s
    ])
    assert out.rejected == []


def test_ping_exactly_600_s_behind_newest_event_accepted(engine):
    # "more than allowed_lateness_s behind" is late; 12:00:00 - 11:50:00 = 600 s is not more.
    out = engine.ingest([
        message(ping_line("2026-12-01T12:00:00-03:00", seq=1), "t.jsonl:1"),
        message(ping_line("2026-12-01T11:50:00-03:00", seq=2), "t.jsonl:2"),
    ])
    assert out.rejected == []


def test_late_ping_in_later_batch_rejected_late(engine):
    assert engine.ingest([message(ping_line("2026-12-01T12:00:00-03:00", seq=1), "t.jsonl:1")]).rejected == []
    # The same vehicle, later: 12:00:00 - 11:49:00 = 660 s > 600 s behind its newest ping.
    out = engine.ingest([message(ping_line("2026-12-01T11:49:00-03:00", seq=2), "t.jsonl:2")])
    assert reasons(out.rejected) == [("t.jsonl:2", "late")]


def test_other_vehicle_behind_by_more_than_lateness_is_accepted(engine):
    # lateness is per vehicle: another vehicle's 11:49:00 is its first ping, not late
    assert engine.ingest([message(ping_line("2026-12-01T12:00:00-03:00", seq=1), "t.jsonl:1")]).rejected == []
    out = engine.ingest([message(ping_line("2026-12-01T11:49:00-03:00", vehicle="JN-1012"), "t.jsonl:2")])
    assert out.rejected == []


def test_ping_behind_the_stream_by_more_than_a_trip_is_rejected_late(engine):
    # the stream's watermark is 12:00:00 - 600 s = 11:50:00; a trip lasts at most 14 400 s (4 h),
    # so a first ping at 07:49:00 (4 h 1 min before 11:50) may belong to a day already closed
    assert engine.ingest([message(ping_line("2026-12-01T12:00:00-03:00", seq=1), "t.jsonl:1")]).rejected == []
    out = engine.ingest([message(ping_line("2026-12-01T07:49:00-03:00", vehicle="JN-1012"), "t.jsonl:2")])
    assert reasons(out.rejected) == [("t.jsonl:2", "late")]


def test_rejected_future_ping_of_unknown_vehicle_does_not_make_later_pings_late(engine):
    out = engine.ingest([
        message(ping_line("2026-12-01T12:00:00-03:00", seq=1), "t.jsonl:1"),
        message(ping_line("2026-12-02T12:00:00-03:00", vehicle="XX-9999"), "t.jsonl:2"),  # one day ahead
        message(ping_line("2026-12-01T12:00:10-03:00", seq=2), "t.jsonl:3"),
    ])
    # Only the admitted 12:00:00 counts as newest event; 12:00:10 is ahead of it, not late.
    assert reasons(out.rejected) == [("t.jsonl:2", "unknown_vehicle")]


def test_rejection_keeps_location_and_raw_text(engine):
    # Raw text with spacing the decoder does not preserve: the rejection keeps it verbatim.
    raw = '{ "vehicle_id": "XX-9999",  "ts": "2026-12-01T12:00:00-03:00", "lat": -19.7574776, ' \
          '"lon": -40.3852385, "speed_kmh": 12.5, "seq": 3 }'
    out = engine.ingest([Message(decode_tachograph(raw, "t.jsonl:42"), "t.jsonl:42", raw)])
    [rejection] = out.rejected
    assert rejection.location == "t.jsonl:42"
    assert rejection.raw == raw
    assert rejection.source == "tachograph"


def test_rejection_of_message_without_raw_keeps_encoded_body(engine):
    line = ping_line("2026-12-01T12:00:00-03:00", vehicle="XX-9999")
    body = decode_tachograph(line)
    [rejection] = engine.ingest([Message(body, "topic/0/17")]).rejected
    assert rejection.location == "topic/0/17"
    assert decode_tachograph(rejection.raw) == body
