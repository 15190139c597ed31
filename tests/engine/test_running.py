"""The trip a vehicle is running (engine.running): its departure told once, B-04 judged
while it runs, and the caches that spare asking either again at every beat.

Context: the João Neiva sample network and policy, over simulated weekdays.
"""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.running import RunningTrips
from engine.servicedays import ServiceDays
from engine.status import open_trip
from engine.vehicle import VehicleState
from fiscaliza.replay import ReplayInputs
from gtfs.projection import Projector
from samples import joao_neiva
from trips.memo import TrackMemo

DAY = dt.date(2026, 12, 1)


def running_trips(context) -> RunningTrips:
    """A partition's running trips as a worker just started has them: no cache."""
    return RunningTrips(context, ServiceDays(context.feed, context.policy.trips.service_day_cutover_s),
                        Projector(context.feed.epsg))


@pytest.fixture(scope="module")
def busy_day(tmp_path_factory):
    """The sample network's simulated day: its replay and its messages."""
    from fiscaliza.replay import read_messages, replay
    from gtfs import load_feed
    from kernel.fleet import load_fleet
    from simulator import SimulationSettings, simulate

    feed_path, fleet_path = joao_neiva()
    sim = simulate(load_feed(feed_path), load_fleet(fleet_path), SimulationSettings(DAY, DAY, seed=3),
                   tmp_path_factory.mktemp("busy-day"))
    inputs = ReplayInputs(feed_path, fleet_path, sim.tachograph, sim.catraca)
    messages, _ = read_messages(inputs)
    return replay(inputs), messages


def test_a_running_trip_s_live_match_is_asked_once_not_at_every_beat(context, busy_day, monkeypatch):
    """B-04 reads the running trip's live match at every beat; the match is a function of
    the vehicle's trips of the day and the day alone, so it is asked again only when they
    change (RunningTrips.match), and the records are the replay's."""
    import engine.running as running_module

    replayed, messages = busy_day
    asked = []
    real = running_module.live_matches

    def counting(trips, *args):
        asked.append(tuple(trips))
        return real(trips, *args)

    monkeypatch.setattr(running_module, "live_matches", counting)
    from engine import Engine

    engine = Engine(context)
    infractions = []
    for start in range(0, len(messages), 13):  # a live worker's takes: many beats per trip
        infractions += engine.ingest(messages[start: start + 13]).infractions
    infractions += engine.close().infractions
    assert asked and len(asked) == len(set(asked))  # never the same trips twice
    assert {r.infraction_id for r in infractions} == {r.infraction_id for r in replayed.infractions}


def test_a_running_trip_s_departure_is_measured_once_not_at_every_beat(context, busy_day, monkeypatch):
    """The release tells the running trip's departure (RunningTrips.departure) at every
    beat; the crossing is a function of the itinerary and the two fixes around the exit
    alone, so it is measured again only when they change, and the records are the replay's."""
    import engine.running as running_module

    replayed, messages = busy_day
    asked = []
    real = running_module.departure_time

    def counting(itinerary, t, x, y, e):
        asked.append((itinerary.pattern.key, *t.tolist(), *x.tolist(), *y.tolist()))
        return real(itinerary, t, x, y, e)

    monkeypatch.setattr(running_module, "departure_time", counting)
    from engine import Engine

    engine = Engine(context)
    out = []
    for start in range(0, len(messages), 13):  # a live worker's takes: many beats per trip
        out.append(engine.ingest(messages[start: start + 13]))
    out.append(engine.close())
    assert asked and len(asked) == len(set(asked))  # never the same crossing twice
    assert {r.infraction_id for o in out for r in o.infractions} == {r.infraction_id for r in replayed.infractions}
    assert sorted((t.vehicle_id, t.departed_at) for o in out for t in o.trips) == \
        sorted((t.vehicle_id, t.departed_at) for t in replayed.trips)


@pytest.fixture(scope="module")
def late_en_route(tmp_path_factory):
    """A simulated weekday where a trip departs on time and runs late at a timepoint (B-04
    while it runs): its inputs, messages and replay."""
    import json

    from fiscaliza.replay import read_messages, replay
    from gtfs import load_feed
    from kernel.fleet import load_fleet
    from simulator import SimulationSettings, simulate

    out = tmp_path_factory.mktemp("b04-running")
    feed_path, fleet_path = joao_neiva()
    sim = simulate(load_feed(feed_path), load_fleet(fleet_path),
                   SimulationSettings(DAY, DAY, seed=21, faults=("en_route_lateness",)), out)
    [injected] = json.loads(sim.manifest.read_text())["faults"]
    inputs = ReplayInputs(feed_path, fleet_path, sim.tachograph, sim.catraca)
    messages, rejected = read_messages(inputs)
    assert not rejected
    return inputs, messages, injected, replay(inputs), out


def test_a_worker_without_the_caches_tells_the_departure_and_finds_the_b04_the_stage_sent(context, late_en_route):
    """RunningTrips called directly over the state the stage left at the beat the running
    trip's B-04 came out, read back as a restarted worker reads it (msgpack), with that
    record and the departure told forgotten: a RunningTrips and a track memo with nothing
    kept tell the departure the stage told and find the very record it sent, once."""
    from engine import Engine

    _, messages, _, _, _ = late_en_route
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    for start in range(0, len(messages), 13):
        b04 = [r for r in engine.ingest(messages[start: start + 13]).infractions if r.code == "B-04"]
        if b04:
            break
    [sent] = b04
    kept = engine._vehicle_stage._load(sent.vehicle_id)
    state = msgspec.msgpack.decode(msgspec.msgpack.encode(kept), type=VehicleState)
    del state.emitted[sent.infraction_id]
    state.departure = None
    memo = TrackMemo(context.geofences)
    running = open_trip(state.track.fixes, context, memo)
    assert running is not None  # judged while the trip runs, not at its arrival
    trips = running_trips(context)

    [departed] = trips.departure(state, running)
    assert (departed.trip.vehicle_id, departed.conflicted) == (sent.vehicle_id, ())
    assert state.departure == kept.departure == (departed.trip.departed_at, running[0].pattern.key)
    assert trips.departure(state, running) == []  # told once
    assert trips.judge(state, running, (), memo) == [sent]
    assert state.emitted[sent.infraction_id] == sent
    assert trips.judge(state, running, (), memo) == []  # sent once: nothing changed


def test_a_pattern_s_checkpoint_marks_hold_every_timepoint_mark_of_its_scheduled_trips(context):
    # where a trip log watches for B-04's passages (RunningTrips.checkpoint_marks): every
    # mark B-04 reads on any scheduled trip of the pattern, in order along the shape
    from rules import b04
    from trips.matching import live_matches
    from trips.model import Departure

    trips = running_trips(context)
    day = trips._days(DAY)
    start = dt.datetime.combine(DAY, dt.time(6), context.feed.timezone).timestamp()
    checked = 0
    for itinerary in context.geofences.itineraries.values():
        marks = trips.checkpoint_marks(itinerary.pattern)
        assert list(marks) == sorted(set(marks))
        trip = Departure.of("JN-2014", itinerary.pattern, start).trip()
        scheduled = live_matches([trip], day, context.feed.timezone, context.policy.trips)[-1].scheduled
        if scheduled is not None:
            assert set(b04.passage_marks(scheduled, context.policy)) <= set(marks)
            checked += 1
    assert checked


def _live_in_takes_of_13(context, messages, cached: bool = True, after_b04=()):
    """The change log of a live run taking 13 messages per call, as (call, record), and
    the watermark after each call; `after_b04`: messages taken in a call of their own right
    after the first B-04 came out. `cached=False`: the running trip judged at every beat."""
    from engine import Engine

    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    engine._vehicle_stage._running._b04_alone = cached
    log, watermarks = [], []
    for start in range(0, len(messages), 13):
        log += [(len(watermarks), r) for r in engine.ingest(messages[start: start + 13]).infractions]
        watermarks.append(engine._vehicle_stage.watermark)
        if after_b04 and any(r.code == "B-04" for _, r in log):
            log += [(len(watermarks), r) for r in engine.ingest(list(after_b04)).infractions]
            watermarks.append(engine._vehicle_stage.watermark)
            after_b04 = ()
    log += [(len(watermarks), r) for r in engine.close().infractions]
    return log, watermarks


def test_a_running_trip_is_judged_again_only_when_a_fix_passes_a_timepoint_mark(context, late_en_route, monkeypatch):
    """B-04 over a running trip reads, of its fixes, each timepoint's first fix past its
    mark: at a beat whose fixes pass no new mark, with nothing else changed, the trip is
    not judged again (RunningTrips._unchanged_since), and the change log is the one
    judging at every beat gives."""
    from rules.b04 import timepoint_passages
    from rules.model import Live

    _, messages, _, _, _ = late_en_route
    judged = []
    import engine.running

    real = engine.running.detect_live

    def counting(live, facts, pack, policy, date):
        if live == Live.RUNNING_TRIP:
            passed = [p.get("pings") or p.get("reason") for p in timepoint_passages(facts, context.policy)]
            judged.append((facts.realized.vehicle_id, facts.fixes[0].msg_id, facts.itinerary.pattern.key,
                           facts.scheduled.key, repr(passed)))
        return real(live, facts, pack, policy, date)

    monkeypatch.setattr(engine.running, "detect_live", counting)
    log, _ = _live_in_takes_of_13(context, messages)
    cached, judged[:] = list(judged), []
    every_beat, _ = _live_in_takes_of_13(context, messages, cached=False)
    assert any(r.code == "B-04" for _, r in log)
    assert log == every_beat
    assert len(cached) == len(set(cached))  # never judged twice on the same passages
    assert len(set(judged)) < len(judged) and set(cached) == set(judged)


def test_an_occurrence_registered_while_the_trip_runs_justifies_its_b04_at_the_next_beat(context, late_en_route):
    """The occurrences are an input of the running trip's judgment: one registered between
    two beats of the trip, past no new timepoint, justifies the B-04 at the next beat as
    judging at every beat does, and the day settles to the replay's record."""
    import dataclasses
    import json

    from engine import Message
    from fiscaliza.replay import replay
    from telemetry import decode

    inputs, messages, injected, _, out = late_en_route
    start = dt.datetime.combine(DAY, dt.time(4, 0), context.feed.timezone).isoformat()
    end = dt.datetime.combine(DAY, dt.time(23, 0), context.feed.timezone).isoformat()
    line = json.dumps({"id": "OC-1", "kind": "other", "start": start, "end": end, "route_id": injected["route_id"]})
    occurrence = Message(decode("occurrences", line.encode(), "o.jsonl:1"), "o.jsonl:1", line)
    log, watermarks = _live_in_takes_of_13(context, messages, after_b04=[occurrence])
    assert log == _live_in_takes_of_13(context, messages, cached=False, after_b04=[occurrence])[0]
    b04 = [(call, r) for call, r in log if r.code == "B-04"]
    (_, first), (call, justified) = b04[:2]
    assert (first.status, justified.status) == ("provisional", "justified")
    assert justified.infraction_id == first.infraction_id and justified.detected_at == first.detected_at
    path = out / "occurrences.jsonl"
    path.write_text(line + "\n")
    [settled] = [r for r in replay(dataclasses.replace(inputs, occurrences=path)).infractions if r.code == "B-04"]
    [trip] = [t for t in replay(inputs).trips if t.trip_id == settled.trip_id]
    assert watermarks[call] < trip.arrived_at.timestamp()  # judged while the trip ran, not at its arrival
    # the replay's record, but when it was detected: as the trip ran, not at the day's close
    assert b04[-1][1] == msgspec.structs.replace(settled, detected_at=first.detected_at)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([-3.5, 0.0, 5.25, 6.0, 13.5, 23.75, 27.0]),
                          st.booleans()), min_size=1, max_size=12))
def test_the_running_match_asked_beat_by_beat_is_the_one_a_fresh_worker_finds(context, asks):
    # the running trip's live match, kept per vehicle with its service date and day
    # (RunningTrips.match), asked as the beats ask it: the same departure again, another
    # departure of the same itinerary (hours apart, across the service day's cutover),
    # another itinerary, a trip arrived in between; each answer is the one a RunningTrips
    # with nothing kept gives (a cache keyed on too little would give the last departure's match)
    from engine.triplog import TripLog

    itineraries = [it for it in context.geofences.itineraries.values()][:4]
    start = dt.datetime.combine(DAY, dt.time(0), context.feed.timezone).timestamp()
    state = VehicleState("JN-2014")
    trips = running_trips(context)
    for which, hours, arrived in asks:
        itinerary, departed = itineraries[which], start + 3600 * hours
        if arrived:
            pattern = itinerary.pattern
            state.trips.append(TripLog(departed - 3600, departed - 600, pattern.route_id, pattern.direction_id,
                                       pattern.shape_id, DAY.isoformat(), departed, departed - 600))
        kept = trips.match(state, itinerary, departed)
        fresh = running_trips(context).match(state, itinerary, departed)
        assert (kept.date, kept.day.date, kept.trips) == (fresh.date, fresh.day.date, fresh.trips)
        assert kept.match == fresh.match
