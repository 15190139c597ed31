"""The live vehicle status (engine.status) on a simulated weekday of the sample network
with a detour injected: 150 m off the shape over 15 % of one trip of line 101."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Engine
from engine.loading import load_context
from engine.status import open_trip
from geofences import build_geofences
from fiscaliza.replay import ReplayInputs, read_messages, replay, write_outputs
from gtfs import load_feed
from kernel.fleet import load_fleet
from kernel.policy import load_policy
from samples import joao_neiva
from simulator import SimulationSettings, simulate
from simulator.plan import plan_day
from trips import Fix
from trips.memo import TrackMemo

FEED_PATH, FLEET_PATH = joao_neiva()
DAY = dt.date(2026, 12, 1)
T0 = 1_764_576_000.0


@pytest.fixture(scope="module")
def statuses(tmp_path_factory):
    out = tmp_path_factory.mktemp("status")
    feed = load_feed(FEED_PATH)
    sim = simulate(feed, load_fleet(FLEET_PATH), SimulationSettings(DAY, DAY, seed=21, faults=("detour",)), out)
    [injected] = json.loads(sim.manifest.read_text())["faults"]
    inputs = ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca)
    context = load_context(inputs)
    messages, _ = read_messages(inputs)
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    seen = []
    for start in range(0, len(messages), 300):
        seen += engine.ingest(messages[start : start + 300]).statuses
    seen += engine.close().statuses
    return seen, injected, inputs, out


def test_a_running_bus_shows_its_line_live_match_and_progress(statuses):
    seen, injected, *_ = statuses
    running = [s for s in seen if s.vehicle_id == injected["vehicle_id"] and s.trip_id == injected["trip_id"]]
    assert running, "the detoured trip was never seen running"
    mid = running[len(running) // 2]
    assert mid.in_service and mid.route_id == injected["route_id"]
    assert 0.0 < mid.progress < 1.0
    # the simulator drives every trip on time: it leaves the terminal's 100 m zone ~20 s late
    assert 0 <= mid.schedule_deviation_s <= 60
    # forward along the shape: every ping's status is seen now, with the GPS noise of a
    # fix or two a few metres behind the one before (the corridor's 2 x 30 m at most)
    steps = np.diff([s.progress for s in running])
    assert steps.sum() > 0.5 and (steps >= -0.01).all()


def test_a_bus_off_its_itinerary_shows_how_far_and_since_when(statuses):
    seen, injected, *_ = statuses
    off = [s for s in seen if s.vehicle_id == injected["vehicle_id"] and s.off_route_m is not None]
    assert off and all(s.off_route_m > 50 for s in off)  # D-11's distance
    assert all(s.off_route_since <= s.ts for s in off)
    assert max(s.off_route_m for s in off) == pytest.approx(150, abs=30)  # the detour runs 150 m off
    # elsewhere in the day nobody is off route
    assert {s.vehicle_id for s in seen if s.off_route_m is not None} == {injected["vehicle_id"]}


def test_a_bus_between_trips_is_out_of_service_and_replay_writes_each_vehicles_latest(statuses):
    seen, _, inputs, out = statuses
    assert any(not s.in_service and s.route_id is None for s in seen)
    result = replay(inputs)
    write_outputs(result, out / "replay")
    lines = [json.loads(line) for line in (out / "replay" / "vehicle_status.jsonl").read_text().splitlines()]
    used = sorted({d.vehicle_id for d in plan_day(load_feed(FEED_PATH), DAY, load_fleet(FLEET_PATH))})
    assert [line["vehicle_id"] for line in lines] == used  # one line per vehicle that reported
    latest = {s.vehicle_id: s for s in seen}
    assert all(line["ts"] == latest[line["vehicle_id"]].ts for line in lines)


def test_a_bus_that_arrived_is_in_layover_not_running_a_trip(statuses):
    seen, *_ = statuses
    live = {(s.vehicle_id, s.ts[11:19]): s for s in seen}
    # JN-2013 left at 15:20:17 on line 201 and arrived: at 15:41:49 it stands in the
    # terminal (progress 1, in service, as art. 2's 30 min say), in layover since it arrived
    standing = live[("JN-2013", "15:41:49")]
    assert standing.in_service and standing.progress == 1.0 and standing.trip_id is None
    assert standing.departed_at[11:19] == "15:20:17"
    assert standing.departed_at < standing.layover_since <= standing.ts
    # one arrival, one layover: every status of that stay names the same arrival, and a
    # running bus is never in layover
    layovers = [s for s in seen if s.layover_since is not None]
    assert layovers and all(s.in_service and s.progress == 1.0 and s.schedule_deviation_s is None for s in layovers)
    assert all(dt.datetime.fromisoformat(s.ts) - dt.datetime.fromisoformat(s.layover_since)
               <= dt.timedelta(minutes=30) for s in layovers)
    assert live[("JN-1011", "07:00:27")].layover_since is None
    assert not [s for s in seen if s.layover_since is not None and 0 < (s.progress or 0) < 1.0]


def test_a_bus_on_a_headway_line_shows_the_bus_ahead_and_the_time_since_it_left(statuses):
    seen, *_ = statuses
    tz = dt.timezone(dt.timedelta(hours=-3))  # the feed's (America/Sao_Paulo, no DST since 2019)
    # line 201 runs by headway, every 15 min from 06:00 to 09:00 (then 20 min): the
    # simulator departs every bus on time, so each follows the one ahead by ~900 s
    peak = [s for s in seen if s.route_id == "201" and s.headway_s is not None
            and dt.datetime.fromisoformat(s.departed_at).astimezone(tz).time() < dt.time(8, 59)]
    # The bus ahead is the operator stage's answer to the departure, which the live view
    # tells it as soon as it sees the bus leave (engine.messages.LiveDeparture), not at
    # release 600 s later: it joins every trip of the peak, within these calls' 300
    # messages of the fleet (~10 min)
    assert len({(s.vehicle_id, s.departed_at) for s in peak}) >= 12
    for s in peak:
        assert s.scheduled_headway_s == 900 and abs(s.headway_s - 900) <= 60, s
        assert s.vehicle_ahead not in (None, s.vehicle_id)
    assert {s.headway_state for s in peak} == {"regular"}  # within 75-125 % of 900 s


def test_a_bus_on_a_timetabled_line_shows_the_bus_ahead_against_the_timetables_headway(statuses):
    seen, *_ = statuses
    # line 101 leaves every 30 min each way until 22:00, then at 23:50, blocks alternating
    # between JN-1011 and JN-1012: each departure follows the other bus's by the timetable's
    # gap (before: no headway on a timetabled line). The operator stage's latest answer for
    # each departure counts: one heard before the departure ahead of it is told again when
    # that departure comes in (the evening's calls of 300 messages span ~10 min)
    latest = {}
    for s in seen:
        if s.route_id == "101" and s.headway_s is not None:
            latest[(s.vehicle_id, s.departed_at)] = s
    assert len(latest) >= 30
    for s in latest.values():
        assert s.scheduled_headway_s == (6600 if s.trip_id == "101-DU-0-2350" else 1800), s
        assert abs(s.headway_s - s.scheduled_headway_s) <= 60 and s.headway_state == "regular", s
        assert s.vehicle_ahead not in (None, s.vehicle_id)
        assert s.schedule_deviation_s is not None  # and its deviation from the timetable still


# What the status said when it was computed at release (main at 754e56a, over the whole
# open track: engine.status.open_trip), for pings of this day picked across its vehicles,
# lines and states: (vehicle, local time of the ping, in service, route, direction, live
# match, progress, departed at, schedule deviation, off route). The live view reads each
# ping once, at its arrival, and must say the same of the same ping. (The headway is not
# compared: it joins once the operator stage answers the departure seen live, above.)
RELEASED = [
    ('JN-1012', '05:46:11', True, '101', 1, '101-DU-1-0530', 0.776, '05:30:11', 11.0, None),
    ('JN-2011', '05:56:17', False, None, None, None, None, None, None, None),
    ('JN-2012', '05:56:18', False, None, None, None, None, None, None, None),
    ('JN-2013', '06:10:29', False, None, None, None, None, None, None, None),
    ('JN-2014', '06:10:29', False, None, None, None, None, None, None, None),
    ('JN-1011', '07:00:27', True, '101', 1, '101-DU-1-0700', 0.024, '07:00:17', 17.0, None),
    ('JN-1012', '08:18:51', True, '101', 0, '101-DU-0-0800', 0.895, '08:00:11', 11.0, None),
    ('JN-2011', '10:20:27', True, '201', 0, None, 0.039, '10:20:17', None, None),
    ('JN-1011', '10:41:47', True, '101', 0, '101-DU-0-1030', 0.57, '10:30:17', 17.0, None),
    ('JN-2014', '11:31:49', True, '201', 0, None, 0.771, '11:20:09', None, None),
    ('JN-1012', '11:38:51', True, '101', 1, '101-DU-1-1130', 0.43, '11:30:11', 11.0, 146.7),
    ('JN-2011', '12:21:47', True, '201', 1, None, 0.144, '12:20:07', None, None),
    ('JN-1011', '13:33:27', True, '101', 0, '101-DU-0-1330', 0.177, '13:30:17', 17.0, None),
    ('JN-2013', '15:41:49', True, '201', 1, None, 1.0, '15:20:17', None, None),
    ('JN-1012', '15:41:51', True, '101', 1, '101-DU-1-1530', 0.57, '15:30:11', 11.0, None),
    ('JN-2014', '15:48:49', True, '201', 0, None, 1.0, '15:20:18', None, None),
    ('JN-1012', '17:07:31', True, '101', 0, '101-DU-0-1700', 0.367, '17:00:11', 11.0, None),
    ('JN-2013', '17:14:49', True, '201', 0, None, 1.0, '17:00:17', None, None),
    ('JN-2014', '17:21:49', True, '201', 1, None, 1.0, '17:00:17', None, None),
    ('JN-2011', '17:50:27', True, '201', 0, None, 0.397, '17:45:17', None, None),
    ('JN-1011', '18:04:47', True, '101', 1, '101-DU-1-1800', 0.238, '18:00:17', 17.0, None),
    ('JN-1012', '18:11:51', True, '101', 0, '101-DU-0-1800', 0.573, '18:00:11', 11.0, None),
    ('JN-1011', '18:33:27', True, '101', 0, '101-DU-0-1830', 0.178, '18:30:17', 17.0, None),
    ('JN-1012', '18:33:31', True, '101', 1, '101-DU-1-1830', 0.177, '18:30:21', 21.0, None),
    ('JN-1011', '19:31:17', True, '101', 0, '101-DU-0-1930', 0.064, '19:30:17', 17.0, None),
]


def test_the_live_view_says_of_each_ping_what_the_release_said_of_it(statuses):
    seen, *_ = statuses
    live = {(s.vehicle_id, s.ts[11:19]): s for s in seen}
    for vehicle, at, *said in RELEASED:
        s = live[(vehicle, at)]
        now = [s.in_service, s.route_id, s.direction_id, s.trip_id, s.progress,
               s.departed_at[11:19] if s.departed_at else None, s.schedule_deviation_s, s.off_route_m]
        assert now == said, (vehicle, at)


def test_a_catraca_topic_15_min_behind_leaves_each_bus_the_status_of_one_on_time(statuses):
    # #28: the morning up to 09:00, once in event-time order and once with every catraca
    # reading arriving 15 min late (a lagging catraca topic), 300 messages a call. A
    # reading's status comes with the pings', and a lagging one without a ping: the last
    # status of each bus says of its catraca what the on-time one says (before, every bus
    # running at 09:00 stayed "catraca muda" since ~08:45 until its next ping).
    from telemetry import CatracaReading

    _, _, inputs, _ = statuses
    context = load_context(inputs)
    nine = dt.datetime.combine(DAY, dt.time(9), context.feed.timezone).timestamp()
    messages = [m for m in read_messages(inputs)[0] if m.body.epoch < nine]

    def last_statuses(ordered) -> dict:
        engine = Engine(context, frozenset({"tachograph", "catraca"}))
        seen = []
        for start in range(0, len(ordered), 300):
            seen += engine.ingest(ordered[start: start + 300]).statuses
        return {s.vehicle_id: (s.ts, s.catraca_silent_since) for s in seen}

    on_time = last_statuses(messages)
    lagging = last_statuses(sorted(messages, key=lambda m: m.body.epoch + 900 * isinstance(m.body, CatracaReading)))
    heard = [v for v, (_, silent) in on_time.items() if silent is None]
    assert len(heard) >= 3  # buses whose catraca the on-time morning hears at their last ping
    assert lagging == on_time


# open_trip read at every beat of a growing track, against a fresh read of it. The tiny
# fixture feed's shapes: L from terminal A 3000 m east, then 4000 m north to terminal C,
# and R back; 100 m zones. Made to meet every case: F:0:L leaves A along L, and so does
# T:1:R (against its shape: R ends at A), on a corridor of 12 m rather than 30 m, first in
# the order (a tie at one exit that the fixes on the corridor since decide); T:0:L's origin
# is a stop point 1500 m along L that the shape passes by (a fix's origin value then reads
# the next fix: it may have passed the zone between the two); E:1:R leaves C.
def _tiny_context():
    import dataclasses

    from geofences import CircleZone, Geofences

    geofences = build_geofences(TINY, load_policy())
    ours = geofences.itineraries
    by = ours["T:0:L"].line.interpolate(1500.0)
    itineraries = {
        "T:1:R": dataclasses.replace(ours["T:1:R"], origin=ours["F:0:L"].origin, corridor_m=12.0),
        "F:0:L": ours["F:0:L"],
        "T:0:L": dataclasses.replace(ours["T:0:L"], origin=CircleZone("origin", by.x, by.y, 100.0)),
        "E:1:R": ours["E:1:R"],
    }
    return SimpleNamespace(geofences=Geofences(itineraries=itineraries, speed_zones=(), default_speed_limit_kmh=60.0),
                           policy=load_policy())


TINY = load_feed(Path(__file__).parents[1] / "gtfs" / "fixtures" / "tiny")
TINY_CONTEXT = _tiny_context()


def _drive(seed: int, n: int) -> list[Fix]:
    """n fixes 10 s apart: a walk along shape L from either end (steps of -100 to 450 m,
    up to 45 m off the shape each way), turning back at random; the console names T, F, E or none."""
    rng = np.random.default_rng(seed)
    line = TINY.shapes["L"].line
    along = [float(rng.choice([0.0, line.length]))]
    heading = 1.0 if along[0] == 0.0 else -1.0
    for _ in range(n - 1):
        if rng.random() < 0.05:
            heading = -heading
        along.append(min(max(along[-1] + heading * rng.uniform(-100, 450), 0.0), line.length))
    points = shapely.line_interpolate_point(line, np.array(along))
    x = shapely.get_x(points) + rng.uniform(-45, 45, n)
    y = shapely.get_y(points) + rng.uniform(-45, 45, n)
    routes = rng.choice(np.array(["T", "F", "E", ""], dtype=object), n, p=[0.05, 0.05, 0.05, 0.85])
    return [Fix(T0 + 10 * i, float(a), float(b), 30.0, r or None, f"v/{i}")
            for i, (a, b, r) in enumerate(zip(x, y, routes))]


def _read(found):
    return None if found is None else (found[0].pattern.key, found[1])


@given(st.integers(0, 2**32 - 1), st.integers(60, 160), st.lists(st.integers(1, 6), min_size=1, max_size=40),
       st.floats(0.0, 0.2))
@settings(max_examples=60, deadline=None)
def test_the_running_trip_read_beat_by_beat_is_the_one_a_fresh_read_of_the_track_gives(seed, n, beats, cut_rate):
    # the engine's beats: the open track grown by a batch (read as a list of the same fixes),
    # now and then cut at the front (a trip closed); each beat's answer from the vehicle's
    # memo is a fresh memo's (its kept exits read the last fix's origin value again: it
    # reads the fix after it)
    track = _drive(seed, n)
    rng = np.random.default_rng(seed)
    memo = TrackMemo(TINY_CONTEXT.geofences)
    begin, end, k = 0, 0, 0
    while end < len(track):
        end = min(len(track), end + beats[k % len(beats)])
        k += 1
        if rng.random() < cut_rate and end - begin > 3:
            begin += int(rng.integers(1, (end - begin) // 2 + 1))
        fixes = list(track[begin:end])
        assert _read(open_trip(fixes, TINY_CONTEXT, memo)) == _read(open_trip(fixes, TINY_CONTEXT))


def test_a_bus_on_its_way_keeps_its_running_trip_without_reading_each_itinerary_again(monkeypatch):
    # a beat adding fixes none of which is held in an origin zone, with the same itineraries
    # near and the same line named, gives the last beat's answer without reading any
    # itinerary's exits (`_OpenTrip`); every answer is still a fresh read's
    import engine.status as status
    read = []
    real = status._last_exit
    monkeypatch.setattr(status, "_last_exit", lambda *args: read.append(1) or real(*args))
    kept = beats = 0
    for seed in range(12):
        track = _drive(seed, 120)
        memo, fixes = TrackMemo(TINY_CONTEXT.geofences), ()
        for fix in track:
            fixes += (fix,)
            before = len(read)
            found = open_trip(fixes, TINY_CONTEXT, memo)
            kept += len(read) == before
            beats += 1
            assert _read(found) == _read(open_trip(fixes, TINY_CONTEXT))
    assert beats / 4 < kept < beats  # most beats of a bus on its way, not every beat


def test_a_tie_broken_again_by_a_fix_on_the_wider_corridor_only_is_read_at_that_beat():
    # T:1:R (corridor 12 m) and F:0:L (50 m) both leave A at the same fix: T:1:R, first,
    # runs while as many fixes are on both corridors since; the first fix 30 m off the
    # shape (on F:0:L's only) makes it F:0:L at that very beat, though nothing else moved
    # (no origin zone near, the same corridors near): a tie is never kept from a beat before
    x0, y0 = 355999.9997, 7815000.0  # A's centre; both shapes run east from it along y0
    gap = TINY_CONTEXT.policy.trips.max_coverage_gap_s
    # in A, out of it, then past T:0:L's origin zone (at x0 + 1500) after a silence, so
    # that no pass through it is read (T:0:L is never left)
    steps = [(0, 0, 0), (10, 0, 0), (20, 150, 5), (30, 300, 5), (40 + gap, 1900, 5), (50 + gap, 2100, 5),
             (60 + gap, 2300, 5), (70 + gap, 2500, 30), (80 + gap, 2700, 5)]
    track = [Fix(T0 + t, x0 + dx, y0 + dy, 30.0, None, f"v/{i}") for i, (t, dx, dy) in enumerate(steps)]
    memo, fixes, answers = TrackMemo(TINY_CONTEXT.geofences), (), []
    for fix in track:
        fixes += (fix,)
        found = open_trip(fixes, TINY_CONTEXT, memo)
        assert _read(found) == _read(open_trip(fixes, TINY_CONTEXT))
        answers.append(_read(found))
    assert answers[3:] == [("T:1:R", 1)] * 4 + [("F:0:L", 1)] * 2


def test_the_drives_meet_every_case_of_the_running_trip():
    # the random drives above meet every case open_trip has, so the test above reads them:
    # with no line named, T:1:R (first) and F:0:L leave A at the same fix, and each wins
    # (T:1:R when as many fixes are on both corridors since, F:0:L with more on its wider
    # one); T:0:L left at a fix outside its zone (the zone passed by between it and the
    # next: that fix's value changed when the next came); a line named; a bus that was
    # running read as running nothing
    found_as, passed_by, named, stopped = [], 0, 0, 0
    for seed in range(30):
        track = _drive(seed, 120)
        memo, before = TrackMemo(TINY_CONTEXT.geofences), None
        for end in range(1, len(track) + 1):
            found = open_trip(track[:end], TINY_CONTEXT, memo)
            stopped += found is None and before is not None
            before = found
            if found is None:
                continue
            itinerary, e = found
            if track[end - 1].route_id is None:
                found_as.append(itinerary.pattern.key)
            else:
                named += 1
            passed_by += itinerary.pattern.key == "T:0:L" and not memo.inside(itinerary.origin)[e]
    assert {"T:1:R", "F:0:L", "T:0:L", "E:1:R"} <= set(found_as)
    assert passed_by and named and stopped
