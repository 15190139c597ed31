"""The day's compact facts and the episodes judged while the day runs (engine.dayfacts),
called directly over states the vehicle stage built from real messages (taken, still
pending: the allowed lateness, 600 s, holds them back from a release).

Context: the João Neiva sample network and policy; JN-1011 at stop 1001, where the speed
limit is the default 60 km/h. C-01: above 60 + 7 km/h on ≥ 2 consecutive pings spanning
≥ 10 s, over once no later fix can join it (300 s after its last fix over the limit).
"""

from __future__ import annotations

import copy
import datetime as dt
import json

from engine import Engine, Message
from engine.dayfacts import judge_over_episodes, keep_around, log_day
from telemetry import decode_catraca, decode_tachograph

VEHICLE = "JN-1011"
LAT, LON = -19.7574776, -40.3852385  # stop 1001


def ping(ts: str, n: int, speed: float = 0.0, north_m: float = 0.0) -> Message:
    line = json.dumps({"vehicle_id": VEHICLE, "ts": f"2026-12-01T{ts}-03:00", "lat": LAT + north_m / 111_000,
                       "lon": LON, "speed_kmh": speed})
    return Message(decode_tachograph(line, f"t.jsonl:{n}"), f"t.jsonl:{n}", line)


def reading(ts: str, counter: int, n: int) -> Message:
    line = json.dumps({"vehicle_id": VEHICLE, "ts": f"2026-12-01T{ts}-03:00", "counter": counter,
                       "seal_intact": True, "status": "ok"})
    return Message(decode_catraca(line, f"c.jsonl:{n}"), f"c.jsonl:{n}", line)


def taken(context, messages):
    """The vehicle stage and the state it made of `messages`, all of them still pending."""
    stage = Engine(context, frozenset({"tachograph", "catraca"}))._vehicle_stage
    stage.ingest(messages)
    state = stage._load(VEHICLE)
    assert len(state.pending) + len(state.pending_catraca) == len(messages)  # none released
    return stage, state


def noon(context) -> float:
    return dt.datetime(2026, 12, 1, 12, tzinfo=context.feed.timezone).timestamp()


def test_log_day_returns_when_the_sensors_were_heard_and_leaves_the_partition_to_the_stage(context):
    # fixes at 12:00:00, 12:05:00 (300 s <= max_coverage_gap_s = 300 s: one run) and 12:10:01
    # (301 s: a new run); the counter 10 (the first: no rise known), 12 (boardings), 12, 15
    stage, state = taken(context, [ping("12:00:00", 1), ping("12:05:00", 2), ping("12:10:01", 3),
                                   reading("12:00:00", 10, 1), reading("12:01:00", 12, 2),
                                   reading("12:02:00", 12, 3), reading("12:03:00", 15, 4)])
    rejected = []
    heard = log_day(stage._keeping, state, list(state.pending), list(state.pending_catraca), rejected)
    t = noon(context)
    assert heard.tachograph == ((t, t + 300), (t + 601, t + 601))
    assert heard.boarding == ((t + 60, t + 180),)  # 12:01 and 12:03, 120 s apart: one run
    assert stage.partition.coverage == {}  # the heartbeat's coverage is the stage's to merge
    [day] = state.days
    assert (day.date, day.readings, day.counter, state.last_counter, rejected) == ("2026-12-01", 4, 15, 15, [])


def test_an_over_speed_episode_is_judged_once_it_is_over_and_once_only(context):
    # 100 km/h (> 60 + 7) at 12:00:00, :10 and :20, driving north (278 m per 10 s), then
    # standing every 30 s from 12:00:50: the episode is over at 12:00:20 + 300 s = 12:05:20
    fast = [ping(f"12:00:{s:02d}", k, 100.0, north_m=278.0 * k) for k, s in enumerate((0, 10, 20))]
    standing = [ping(f"12:{(50 + 30 * k) // 60:02d}:{(50 + 30 * k) % 60:02d}", 3 + k, north_m=556.0)
                for k in range(11)]  # 12:00:50 ... 12:05:50
    stage, state = taken(context, fast + standing)
    fixes = list(state.pending)
    t = noon(context)
    before_over = [f for f in fixes if f.t < t + 320]  # up to 12:05:20 exclusive
    log_day(stage._keeping, state, before_over, [], [])
    assert judge_over_episodes(stage._keeping, state) == []  # a fix may still join it
    log_day(stage._keeping, state, fixes[len(before_over):], [], [])
    [c01] = judge_over_episodes(stage._keeping, state)
    assert (c01.code, c01.occurred_at.timestamp(), c01.detected_at.timestamp()) == ("C-01", t, t + 320)
    assert state.emitted[c01.infraction_id] == c01
    assert judge_over_episodes(stage._keeping, state) == []  # the same record: sent already


def test_keep_around_keeps_the_fixes_on_either_side_of_a_moment_in_their_day(context):
    # standing fixes at 12:00, 12:01, 12:02, 12:03: none kept by the day (none over the
    # limit); a moment at 12:01:30 keeps the ones at 12:01 and 12:02
    stage, state = taken(context, [ping(f"12:0{m}:00", m) for m in range(4)])
    fixes = list(state.pending)
    log_day(stage._keeping, state, fixes, [], [])
    assert state.days[0].kept == []
    keep_around(stage._keeping, state, fixes, noon(context) + 90)
    assert [k.fix.t - noon(context) for k in state.days[0].kept] == [60, 120]
    assert [k.limit_kmh for k in state.days[0].kept] == [60.0, 60.0]


def test_d19_judged_again_when_the_standing_after_an_arrived_trip_grows(context):
    # catraca readings at 11:59 and 12:40: a silence of 41 min (> max_silence_s = 600 s);
    # a trip 12:00 -> 12:30, arrival ping 12:30. In service 12:00-12:30: D-19 over that
    # silence, proven at 12:00 + 600 + 900 (max_clock_jump_s) = 12:25, complete at the
    # arrival ping, 12:30. Then the pings after the arrival show the vehicle standing in the
    # destination zone until 12:35 (out at 12:36): in service until 12:35, the same record
    # (same id, same detected_at) with the longer silence. The trips' in-service time is
    # kept between judgments (Keeping.day_trips): kept from before the standing grew, it
    # would find the record unchanged and send nothing. Last, the trip's log replaced by
    # one of the same departure arriving 12:32: the silence runs to 12:32.
    from engine.dayfacts import Keeping, judge_catraca_episodes
    from engine.triplog import TripLog
    from rules.facts import Standing

    from engine.vehiclestate import VehicleState

    stage = Engine(context, frozenset({"tachograph", "catraca"}))._vehicle_stage
    state = VehicleState(VEHICLE)
    log_day(stage._keeping, state, [], [reading("11:59:00", 10, 1).body, reading("12:40:00", 12, 2).body], [])
    t = noon(context)
    pattern = next(iter(context.geofences.itineraries.values())).pattern
    trip = TripLog(t, t + 1800, pattern.route_id, pattern.direction_id, pattern.shape_id, "2026-12-01",
                   t + 1800 + 1800, t + 1800)
    state.trips = [trip]
    [first] = judge_catraca_episodes(stage._keeping, state, ())
    assert (first.code, first.detected_at.timestamp()) == ("D-19", t + 1800)
    assert [s["seconds"] for s in first.evidence["silences"]] == [1800.0]
    assert judge_catraca_episodes(stage._keeping, state, ()) == []  # nothing changed: nothing sent

    trip.standing = Standing(t + 1800, t + 2100, t + 2160)
    fresh = Keeping(stage._keeping.judging, stage._keeping.reads_doors, stage._keeping.reads_trip_catraca)
    unkept = copy.deepcopy(state)
    [second] = judge_catraca_episodes(stage._keeping, state, ())
    assert (second.infraction_id, second.detected_at) == (first.infraction_id, first.detected_at)
    assert [s["seconds"] for s in second.evidence["silences"]] == [2100.0]
    assert judge_catraca_episodes(fresh, unkept, ()) == [second]  # a worker without the cache

    # the trip's log again, arriving at 12:32 with no ping after it yet (as a release undone
    # and done again may leave it): its context is built from its new arrival, in service
    # until it arrived
    state.trips = [TripLog(t, t + 1920, pattern.route_id, pattern.direction_id, pattern.shape_id, "2026-12-01",
                           t + 1920 + 1800, t + 1920)]
    [third] = judge_catraca_episodes(stage._keeping, state, ())
    assert [s["seconds"] for s in third.evidence["silences"]] == [1920.0]
