"""Late data is judged, not dropped (engine.late): what a vehicle-day judged again sends,
and the policy's bounds on how late and how often.

Context: the João Neiva sample policy (lateness 600 s; a day judged again up to 2 days
late, 3 times); a C-01 of bus JN-1011 on 2026-12-01 at 07:07; for the vehicle stage, that
bus standing at a stop of the sample network, its pings delivered to an engine whose input
is read back from what was delivered.
"""

from __future__ import annotations

import datetime as dt
import json
from zoneinfo import ZoneInfo

import msgspec
import pytest

from engine import Engine, Message
from engine.core import judge_again_from
from engine.late import LateDay, keeps, rejudged_changes, with_late
from engine.loading import load_context
from kernel.inputs import StaticInputs
from kernel.policy import load_policy
from live_buses import on_shape
from rules.model import CONFIRMED, PROVISIONAL, WITHDRAWN, make_infraction
from samples import joao_neiva
from telemetry import decode_tachograph

TZ = ZoneInfo("America/Sao_Paulo")
DAY = dt.date(2026, 12, 1)
POLICY = load_policy()
RULES = POLICY.stream


def at(hh, mm):
    return dt.datetime(2026, 12, 1, hh, mm, tzinfo=TZ)


def c01(minute=7, pings=2, status=CONFIRMED):
    return make_infraction("C-01", POLICY, identity=("JN-1011", at(7, minute)), status=status, operator_id="VNV",
                           vehicle_id="JN-1011", service_date=DAY, occurred_at=at(7, minute), description="…",
                           evidence={"pings": pings})


def sent(*records, moment=at(7, 20)):
    return {r.infraction_id: r for r in (msgspec.structs.replace(r, detected_at=moment) for r in records)}


def test_the_bounds_come_from_the_policy():
    assert (RULES.rejudge_max_late_s, RULES.rejudge_max_times) == (2 * 86400, 3)


def test_a_late_message_within_two_days_of_its_vehicles_newest_is_kept():
    newest = at(18, 0).timestamp()
    assert keeps(None, newest - 86400, newest, RULES.rejudge_max_late_s, RULES.rejudge_max_times) is None


def test_one_later_than_the_bound_is_not_kept_and_says_which_bound():
    newest = at(18, 0).timestamp()
    why = keeps(None, newest - 2 * 86400 - 1, newest, RULES.rejudge_max_late_s, RULES.rejudge_max_times)
    assert "stream.rejudge_max_late_s" in why


def test_a_backlog_two_days_behind_the_stream_is_not_kept_though_it_comes_oldest_first():
    # a bus back after three days offline sends its backlog oldest first: each message is its
    # own newest, but the stream (the other buses) is three days ahead, past the closed days
    # the operator stage keeps for a re-judgment
    newest = at(9, 0).timestamp()
    watermark = newest + 3 * 86400
    why = keeps(None, newest, newest, RULES.rejudge_max_late_s, RULES.rejudge_max_times, watermark)
    assert "stream's progress" in why and "stream.rejudge_max_late_s" in why
    # one day behind the stream it is kept: 86,400 s < 172,800 s
    assert keeps(None, newest, newest, RULES.rejudge_max_late_s, RULES.rejudge_max_times, newest + 86400) is None


def test_a_day_judged_again_three_times_takes_no_more_late_messages():
    day = LateDay(kept=40, newest=at(9, 0).timestamp(), rejudged=3)
    why = keeps(day, at(9, 5).timestamp(), at(18, 0).timestamp(), RULES.rejudge_max_late_s, RULES.rejudge_max_times)
    assert "stream.rejudge_max_times" in why
    assert keeps(msgspec.structs.replace(day, rejudged=2), at(9, 5).timestamp(), at(18, 0).timestamp(),
                 RULES.rejudge_max_late_s, RULES.rejudge_max_times) is None


def test_each_late_message_is_counted_and_waits_for_the_rejudgment():
    day = with_late(with_late(None, at(9, 0).timestamp()), at(8, 0).timestamp())
    assert (day.kept, day.newest, day.waiting, day.rejudged) == (2, at(9, 0).timestamp(), True, 0)


def test_an_unchanged_record_is_not_sent_again():
    before = sent(c01())
    out, after = rejudged_changes(before, [c01()], at(9, 0).timestamp(), TZ)
    assert out == [] and after == before


def test_a_changed_record_is_sent_again_with_the_same_id_and_its_first_detected_at():
    # the late pings make the episode longer: 2 pings -> 5, same episode start, same id
    [update], after = rejudged_changes(sent(c01(pings=2)), [c01(pings=5)], at(9, 0).timestamp(), TZ)
    assert (update.infraction_id, update.evidence["pings"], update.detected_at) == \
        (c01().infraction_id, 5, at(7, 20))
    assert after == {update.infraction_id: update}


def test_a_new_fact_is_sent_detected_when_judged_again():
    [new], _ = rejudged_changes(sent(c01()), [c01(), c01(minute=40)], at(9, 0).timestamp(), TZ)
    assert (new.occurred_at, new.detected_at) == (at(7, 40), at(9, 0))


def test_a_record_the_rejudgment_no_longer_finds_is_withdrawn_once():
    [gone], after = rejudged_changes(sent(c01(status=PROVISIONAL)), [], at(9, 0).timestamp(), TZ)
    assert (gone.status, gone.detected_at) == (WITHDRAWN, at(7, 20))
    again, _ = rejudged_changes(after, [], at(10, 0).timestamp(), TZ)
    assert again == []


def test_a_record_withdrawn_within_the_rejudgment_and_never_sent_is_not_sent():
    out, _ = rejudged_changes({}, [c01(status=WITHDRAWN)], at(9, 0).timestamp(), TZ)
    assert out == []


# --- the vehicle stage keeps late messages and judges their day again (engine.vehicle) ---

BUS = "JN-1011"


@pytest.fixture(scope="module")
def context():
    feed, fleet = joao_neiva()
    return load_context(StaticInputs(feed, fleet))


def ping(ts: str, seq: int) -> Message:
    line = json.dumps({"vehicle_id": BUS, "ts": ts, "lat": -19.7574776, "lon": -40.3852385, "speed_kmh": 0.0,
                       "seq": seq})
    return Message(decode_tachograph(line, f"t.jsonl:{seq}"), f"t.jsonl:{seq}", line)


class Topic:
    """What was delivered, read back as the input topics are (engine.core.ReadBack)."""

    def __init__(self):
        self.messages, self.reads = [], []

    def deliver(self, engine: Engine, *messages: Message):
        self.messages += messages
        return engine.ingest(list(messages))

    def __call__(self, vehicle_id, start, end):
        self.reads.append((vehicle_id, start, end))
        return [m for m in self.messages if m.body.vehicle_id == vehicle_id and start <= m.body.epoch < end]


def test_a_message_beyond_the_lateness_is_kept_not_dead_lettered(context):
    topic = Topic()
    engine = Engine(context, read_back=topic)
    topic.deliver(engine, ping("2026-12-01T12:00:00-03:00", 1), ping("2026-12-01T12:12:00-03:00", 2))
    # 11 min 50 s behind the bus's newest: beyond the 600 s of allowed lateness
    out = topic.deliver(engine, ping("2026-12-01T12:00:10-03:00", 3))
    assert (out.rejected, out.late_kept, out.rejudged) == ([], 1, 0)  # its day is not judged yet


def test_without_a_read_back_it_is_late_as_before(context):
    engine = Engine(context)
    engine.ingest([ping("2026-12-01T12:00:00-03:00", 1), ping("2026-12-01T12:12:00-03:00", 2)])
    [late] = engine.ingest([ping("2026-12-01T12:00:10-03:00", 3)]).rejected
    assert late.reason == "late" and "judged again" not in late.detail


def test_a_message_for_a_day_already_judged_has_it_judged_again_at_once(context):
    topic = Topic()
    engine = Engine(context, read_back=topic)
    topic.deliver(engine, ping("2026-12-01T12:00:00-03:00", 1), ping("2026-12-01T12:05:00-03:00", 2))
    # the next day: the watermark passes the first day's close, which is judged
    topic.deliver(engine, ping("2026-12-02T12:00:00-03:00", 3), ping("2026-12-02T12:01:00-03:00", 4))
    assert "2026-12-01" in engine.vehicle_states()[0].judged
    out = topic.deliver(engine, ping("2026-12-01T12:10:00-03:00", 5))
    assert (out.rejected, out.late_kept, out.rejudged) == ([], 1, 1)
    # its operating day read back: 03:00 to 03:00 (the cutover), and a trip's length and the
    # longest silence a trip may hold on either side, so a night run across 03:00 is read whole
    rules = context.policy.trips
    margin = rules.max_trip_duration_s + rules.max_coverage_gap_s
    assert topic.reads == [(BUS, dt.datetime(2026, 12, 1, 3, tzinfo=TZ).timestamp() - margin,
                            dt.datetime(2026, 12, 2, 3, tzinfo=TZ).timestamp() + margin)]
    assert engine.vehicle_states()[0].late["2026-12-01"].rejudged == 1


def test_one_more_than_two_days_late_is_late_saying_which_bound(context):
    topic = Topic()
    engine = Engine(context, read_back=topic)
    topic.deliver(engine, ping("2026-12-04T12:00:00-03:00", 1), ping("2026-12-04T12:01:00-03:00", 2))
    [late] = topic.deliver(engine, ping("2026-12-02T11:59:00-03:00", 3)).rejected
    assert late.reason == "late" and "stream.rejudge_max_late_s" in late.detail


def test_a_live_message_ahead_of_its_backlog_is_kept_a_jump_to_another_day_is_future(context):
    # no receipts (a backfill): the clock-jump guard holds a message 30 min ahead
    topic = Topic()
    engine = Engine(context, read_back=topic)
    topic.deliver(engine, ping("2026-12-01T12:00:00-03:00", 1))
    topic.deliver(engine, ping("2026-12-01T12:30:00-03:00", 2))  # back from 30 min without coverage
    out = topic.deliver(engine, ping("2026-12-01T12:00:10-03:00", 3))  # the stored backlog's first
    assert (out.rejected, out.late_kept) == ([], 1)
    [future] = topic.deliver(engine, ping("2099-01-01T12:00:00-03:00", 4),
                             ping("2026-12-01T12:00:20-03:00", 5)).rejected
    assert future.reason == "future" and future.location == "t.jsonl:4"


def test_a_night_run_across_the_cutover_is_read_whole_when_its_day_is_judged_again(context):
    # JN-1011 stands 5 min at the origin of line 101 (direction 0), leaves at 02:55 on
    # 2 December and drives the shape at 8 m/s (28.8 km/h), a fix every 10 s, arriving after
    # the 03:00 cutover: the 1 December operating day's trip, its arrival in the next one
    feed = context.feed
    shape = feed.shapes["101-0"]
    leave = dt.datetime(2026, 12, 2, 2, 55, tzinfo=TZ).timestamp()
    times = [leave - 300 + 10 * k for k in range(30)]  # standing at the origin
    along = [0.0] * len(times)
    while along[-1] < shape.length_m:
        times.append(times[-1] + 10)
        along.append(min(along[-1] + 80, shape.length_m))
    times += [times[-1] + 10 * k for k in range(1, 31)]  # standing at the destination
    along += [shape.length_m] * 30
    topic = Topic()
    for seq, (t, metres) in enumerate(zip(times, along)):
        lat, lon = on_shape(feed, "101-0", metres)
        line = json.dumps({"vehicle_id": BUS, "ts": dt.datetime.fromtimestamp(t, TZ).isoformat(), "lat": lat,
                           "lon": lon, "speed_kmh": 0.0 if metres in (0.0, shape.length_m) else 28.8, "seq": seq})
        topic.messages.append(Message(decode_tachograph(line, f"t.jsonl:{seq}"), f"t.jsonl:{seq}", line))
    start = dt.datetime(2026, 12, 1, 3, tzinfo=TZ).timestamp()
    end = dt.datetime(2026, 12, 2, 3, tzinfo=TZ).timestamp()
    assert times[0] < end < times[-1]
    rejudged = judge_again_from(context, frozenset({"tachograph"}), topic)(BUS, start, end, [])
    [trip] = rejudged.revised.trips
    assert start <= trip.departed_at < end < trip.arrived_at
