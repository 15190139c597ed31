"""The operator stage's verdicts while the day runs (DESIGN.md, Timing): D-13 and D-22
provisional, D-12 at the end of its frequency window, each settled at day close.

The stage is driven directly with the messages the vehicle stage sends it
(tests/support/operator_run.py: trips departed and arrived, heartbeats with the
watermark), on the sample network's schedule: line 101 leaves every 30 min in each
direction (blocks alternating), line 201 runs by headway (06:00-09:00 every 15 min).
"""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.messages import Heartbeat, LiveDeparture, TripDeparted, TripDetected
from engine.operator import OperatorStage, OperatorState
from operator_run import DAY, Run, at, eleven_of_twelve, sample_context, trip
from rules.facts import SensorRuns
from trips.matching import live_matches


@pytest.fixture(scope="module")
def context(tmp_path_factory):
    return sample_context(tmp_path_factory.mktemp("live"))


def test_a_scheduled_trip_without_a_departure_yields_a_provisional_d22_once_its_match_window_passed(context):
    # 09:00 of line 101 (direction 0): JN-1011 leaves 09:20, JN-1012 09:28. Live, each
    # departure goes to the nearest scheduled one (09:20 -> 09:30: 10 min against 20), so
    # nothing departed for 09:00 by 09:00 + 30 min. The fleet reports from 08:25: each
    # vehicle seen throughout the window [08:30, 09:30] (its end within 300 s of 09:25).
    run = Run(context, "VNV")
    run.beat(at(context, 9, 25), reporting_from=at(context, 8, 25))
    for vehicle, minute in (("JN-1011", 20), ("JN-1012", 28)):
        run.stage.on_departed(TripDeparted("VNV", trip(vehicle, "101", 0, at(context, 9, minute))))
    run.beat(at(context, 9, 29, 59))
    assert not run.records("D-22", "101-DU-0-0900")  # its match window has not passed yet
    run.beat(at(context, 9, 31))
    [(d22, _)] = run.records("D-22", "101-DU-0-0900")
    assert d22.status == "provisional"
    assert d22.detected_at.timestamp() == at(context, 9, 30)  # 09:00 + the 1,800 s match window
    # the later departure of 09:30 was matched live: no D-22 for it, whenever
    run.beat(at(context, 10, 5))
    assert not run.records("D-22", "101-DU-0-0930")


def test_a_provisional_d22_the_days_matching_contradicts_is_withdrawn_with_its_first_detected_at(context):
    run = Run(context, "VNV")
    run.beat(at(context, 9, 25), reporting_from=at(context, 8, 25))
    for vehicle, minute in (("JN-1011", 20), ("JN-1012", 28)):
        run.stage.on_departed(TripDeparted("VNV", trip(vehicle, "101", 0, at(context, 9, minute))))
    run.beat(at(context, 9, 31))
    for vehicle, minute in (("JN-1011", 20), ("JN-1012", 28)):
        run.stage.on_detected(TripDetected("VNV", trip(vehicle, "101", 0, at(context, 9, minute),
                                                       at(context, 9, minute + 25))))
    run.beat(at(context, 10, 5), final=True)  # end of input: the day closes
    d22 = run.records("D-22", "101-DU-0-0900")
    # the day's matching is one-to-one and keeps the order: 09:20 -> 09:00 (20 min late,
    # inside the 30 min window), 09:28 -> 09:30, so 09:00 was run after all
    assert [r.status for r, _ in d22] == ["provisional", "withdrawn"]
    assert d22[0][0].infraction_id == d22[1][0].infraction_id
    assert d22[1][0].detected_at == d22[0][0].detected_at


def test_d13_is_provisional_from_the_first_departure_off_schedule_and_confirmed_at_day_close(context):
    run = Run(context, "VNV")
    run.beat(at(context, 9, 25), reporting_from=at(context, 8, 45))
    run.stage.on_departed(TripDeparted("VNV", trip("JN-1011", "101", 0, at(context, 9, 20))))
    run.beat(at(context, 9, 26))
    [(d13, _)] = run.records("D-13")
    # live: 09:20 against 09:30 is 600 s early (limit 60 s); proven by the first ping
    # outside the origin zone, 10 s after the crossing
    assert d13.status == "provisional"
    assert d13.detected_at.timestamp() == at(context, 9, 20, 10)
    run.stage.on_detected(TripDetected("VNV", trip("JN-1011", "101", 0, at(context, 9, 20), at(context, 9, 45))))
    run.beat(at(context, 10, 5), final=True)
    last, _ = run.records("D-13")[-1]
    # settled: 09:20 against 09:00 is 1,200 s late (limit 300 s), still off schedule
    assert last.status == "confirmed" and last.infraction_id == d13.infraction_id
    assert last.detected_at == d13.detected_at


def test_nothing_is_provisional_while_departures_keep_to_the_schedule(context):
    run = Run(context, "VNV")
    run.beat(at(context, 8, 25), reporting_from=at(context, 8, 25))
    run.stage.on_departed(TripDeparted("VNV", trip("JN-1011", "101", 0, at(context, 8, 30, 20))))
    run.stage.on_departed(TripDeparted("VNV", trip("JN-1012", "101", 1, at(context, 8, 30, 40))))
    run.beat(at(context, 9, 5))
    # both left 20-40 s after 08:30 (within 60 s early / 300 s late); their match windows
    # passed at 09:00 with a departure each
    assert not [r for r, _ in run.sent if r.code == "D-13"]
    assert not [r for r, _ in run.sent if r.code == "D-22" and r.occurred_at.time() >= dt.time(8, 30)]


def test_d12_comes_out_confirmed_when_its_frequency_window_ends_short(context):
    # line 201 direction 0, 06:00-09:00 every 15 min: ceil(10,800 / 900) = 12 departures
    # required; 11 run, one every 16 min from 06:00
    run = eleven_of_twelve(context)
    run.beat(at(context, 8, 59, 59))
    assert not run.records("D-12")  # the window has not ended: a 12th departure may come
    run.beat(at(context, 9, 0, 30))
    [(d12, _)] = run.records("D-12", direction=0)
    assert d12.status == "confirmed" and d12.evidence["realized_departures"] == 11
    assert d12.detected_at.timestamp() == at(context, 9, 0)  # the window's end
    run.beat(at(context, 9, 30), final=True)
    assert [r for r, _ in run.records("D-12", direction=0)] == [d12]  # the day close agrees: not sent again


def test_d12_is_not_emitted_when_the_twelfth_departure_comes_before_the_window_ends(context):
    # 12 departures every 15 min from 06:00: the last at 08:45, running when the window ends
    run = Run(context, "TRD")
    run.beat(at(context, 6, 0), reporting_from=at(context, 5, 55))
    for k in range(11):
        departed = at(context, 6, 0) + k * 15 * 60
        run.stage.on_detected(TripDetected("TRD", trip("JN-2011", "201", 0, departed, departed + 600)))
    run.stage.on_departed(TripDeparted("TRD", trip("JN-2012", "201", 0, at(context, 8, 45))))
    run.beat(at(context, 9, 0, 30))
    assert not run.records("D-12", direction=0)


def test_a_message_the_operator_stage_fails_on_is_dead_lettered_and_the_stream_goes_on(context, monkeypatch):
    import engine.operator
    run = Run(context, "VNV")
    run.beat(at(context, 9, 25), reporting_from=at(context, 8, 45))
    run.stage.handle("VNV", TripDeparted("VNV", trip("JN-1011", "101", 0, at(context, 9, 20))), [])
    before = msgspec.msgpack.encode(run.states["VNV"])
    real = engine.operator.live_matches
    calls = []

    def fails_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug in live matching")
        return real(*args, **kwargs)

    monkeypatch.setattr(engine.operator, "live_matches", fails_once)
    beat = Heartbeat(0, at(context, 9, 26), at(context, 8, 45), at(context, 9, 36), {"VNV": []})
    out = run.stage.handle("VNV", beat, [], location="operator-events/0/7")
    [dead] = out.rejected
    assert (dead.source, dead.reason, dead.location) == ("operator-events", "engine_error", "operator-events/0/7")
    assert "RuntimeError: a bug in live matching" in dead.detail and '"heartbeat"' in dead.raw
    assert not out.findings
    assert msgspec.msgpack.encode(run.states["VNV"]) == before  # the state as it was before the message
    # the next heartbeat is handled: the D-13 of the early departure comes out
    run.beat(at(context, 9, 27))
    assert [r.status for r, _ in run.records("D-13")] == ["provisional"]


def test_a_departure_on_a_headway_line_is_told_the_bus_ahead_of_it(context):
    # line 201 direction 0 every 15 min from 06:00: JN-2011 leaves 06:00, JN-2013 06:17
    run = Run(context, "TRD")
    [first] = run.stage.on_departed(TripDeparted("TRD", trip("JN-2011", "201", 0, at(context, 6, 0))))
    assert (first.vehicle_id, first.ahead_vehicle_id, first.scheduled_headway_s) == ("JN-2011", None, 900)
    [second] = run.stage.on_departed(TripDeparted("TRD", trip("JN-2013", "201", 0, at(context, 6, 17))))
    assert (second.vehicle_id, second.ahead_vehicle_id) == ("JN-2013", "JN-2011")
    assert second.departed_at - second.ahead_departed_at == 17 * 60
    # the other direction has nobody ahead to tell of
    assert run.stage.on_departed(TripDeparted("TRD", trip("JN-2012", "201", 1, at(context, 6, 1))))[0].ahead_vehicle_id is None


def test_a_departure_on_a_timetabled_line_is_told_the_bus_ahead_and_the_timetables_headway(context):
    # line 101 direction 0 leaves every 30 min (blocks alternating): JN-1011 runs the 09:00,
    # JN-1012 leaves 09:12 for the 09:30, 12 min behind it where 30 are scheduled (bunched)
    run = Run(context, "VNV")
    [first] = run.stage.on_departed(TripDeparted("VNV", trip("JN-1011", "101", 0, at(context, 9, 0))))
    assert (first.vehicle_id, first.ahead_vehicle_id, first.scheduled_headway_s) == ("JN-1011", None, 1800)
    [second] = run.stage.on_departed(TripDeparted("VNV", trip("JN-1012", "101", 0, at(context, 9, 12))))
    assert (second.vehicle_id, second.ahead_vehicle_id, second.scheduled_headway_s) == ("JN-1012", "JN-1011", 1800)
    assert second.departed_at - second.ahead_departed_at == 12 * 60
    # the day's first departure (05:30) has no scheduled headway: nothing to tell
    assert Run(context, "VNV").stage.on_departed(TripDeparted("VNV", trip("JN-1013", "101", 0,
                                                                          at(context, 5, 31)))) == []


def test_a_departure_heard_of_late_becomes_the_bus_ahead_of_the_one_running_behind_it(context):
    # JN-2013 runs (06:17, behind JN-2011's 06:00); JN-2014's 06:09 departure is first heard
    # of when its trip arrives (its partition lagged): JN-2013 now follows JN-2014, 8 min
    run = Run(context, "TRD")
    run.stage.on_departed(TripDeparted("TRD", trip("JN-2011", "201", 0, at(context, 6, 0))))
    run.stage.on_departed(TripDeparted("TRD", trip("JN-2013", "201", 0, at(context, 6, 17))))
    [update] = run.stage.on_detected(TripDetected("TRD", trip("JN-2014", "201", 0, at(context, 6, 9),
                                                               at(context, 6, 40))))
    assert (update.vehicle_id, update.ahead_vehicle_id) == ("JN-2013", "JN-2014")
    assert update.departed_at - update.ahead_departed_at == 8 * 60
    # a trip seen running before it arrived was told already
    assert run.stage.on_detected(TripDetected("TRD", trip("JN-2011", "201", 0, at(context, 6, 0),
                                                           at(context, 6, 30)))) == []


def test_a_departure_seen_live_is_told_the_bus_ahead_at_once(context):
    # JN-1011 runs the 09:00 (told at release); JN-1012's 09:12 departure is seen by its
    # live view ~10 min before the release tells it: the bus ahead is answered at once
    run = Run(context, "VNV")
    run.stage.on_departed(TripDeparted("VNV", trip("JN-1011", "101", 0, at(context, 9, 0))))
    [live] = run.stage.on_live_departed(LiveDeparture("VNV", trip("JN-1012", "101", 0, at(context, 9, 12))))
    assert (live.vehicle_id, live.ahead_vehicle_id, live.scheduled_headway_s) == ("JN-1012", "JN-1011", 1800)
    assert live.departed_at - live.ahead_departed_at == 12 * 60
    # delivered again: nothing new to tell
    assert run.stage.on_live_departed(LiveDeparture("VNV", trip("JN-1012", "101", 0, at(context, 9, 12)))) == []
    # JN-1013 leaves 09:20, seen live too: behind JN-1012's live departure, 8 min
    [third] = run.stage.on_live_departed(LiveDeparture("VNV", trip("JN-1013", "101", 0, at(context, 9, 20))))
    assert (third.ahead_vehicle_id, third.departed_at - third.ahead_departed_at) == ("JN-1012", 8 * 60)
    # the release tells JN-1012's departure: the same answers (its own, and JN-1013's,
    # which runs behind it), and the live one is let go
    assert run.stage.on_departed(TripDeparted("VNV", trip("JN-1012", "101", 0, at(context, 9, 12)))) == [live, third]
    assert "JN-1012" not in run.states["VNV"].live_running
    # a departure seen live that the release told already is not told again
    assert run.stage.on_live_departed(LiveDeparture("VNV", trip("JN-1012", "101", 0, at(context, 9, 12)))) == []


def test_a_departure_seen_live_is_never_evidence(context):
    # JN-1011 leaves 09:20 for the 09:30, 600 s early: told at release it is a provisional
    # D-13 (test_d13_is_provisional_from_the_first_departure_off_schedule...); seen live
    # only, it is not a departure any rule counts, and the operator stage's legal
    # departures stay untouched
    run = Run(context, "VNV")
    run.beat(at(context, 9, 19), reporting_from=at(context, 8, 45))
    run.stage.on_live_departed(LiveDeparture("VNV", trip("JN-1011", "101", 0, at(context, 9, 20))))
    assert run.states["VNV"].running == {} and DAY.isoformat() not in run.states["VNV"].live
    run.beat(at(context, 9, 26))
    assert run.records("D-13") == []
    run.stage.on_departed(TripDeparted("VNV", trip("JN-1011", "101", 0, at(context, 9, 20))))
    run.beat(at(context, 9, 27))
    assert [r.status for r, _ in run.records("D-13")] == ["provisional"]


def test_a_departure_seen_live_that_the_release_never_confirms_leaves_the_headways_after_the_allowed_lateness(context):
    # line 201 direction 0: JN-2011 leaves 06:00, seen live and confirmed at release;
    # JN-2013's 06:08 is seen live only (its exit ping dead-lettered, say); JN-2014 leaves
    # 06:15, seen live, 7 min behind JN-2013. The allowed lateness is 600 s: JN-2013's
    # departure stays in the headways while the watermark is at most 06:08 + 600 s = 06:18
    margin = context.policy.stream.allowed_lateness_s
    assert margin == 600
    run = Run(context, "TRD")
    run.beat(at(context, 5, 59), reporting_from=at(context, 5, 55))
    run.stage.on_live_departed(LiveDeparture("TRD", trip("JN-2011", "201", 0, at(context, 6, 0))))
    run.stage.on_departed(TripDeparted("TRD", trip("JN-2011", "201", 0, at(context, 6, 0))))
    run.stage.on_live_departed(LiveDeparture("TRD", trip("JN-2013", "201", 0, at(context, 6, 8))))
    [behind_it] = run.stage.on_live_departed(LiveDeparture("TRD", trip("JN-2014", "201", 0, at(context, 6, 15))))
    assert (behind_it.vehicle_id, behind_it.ahead_vehicle_id) == ("JN-2014", "JN-2013")
    run.beat(at(context, 6, 18), reporting_from=at(context, 5, 55))
    assert "JN-2013" in run.states["TRD"].live_running and run.told == []  # not past the margin yet
    run.beat(at(context, 6, 18, 1), reporting_from=at(context, 5, 55))
    assert set(run.states["TRD"].live_running) == {"JN-2014"}  # 06:15 + 600 s is still ahead
    # JN-2014 is told its bus ahead again: the confirmed JN-2011, 15 min ahead
    [retold] = run.told
    assert (retold.vehicle_id, retold.ahead_vehicle_id, retold.departed_at - retold.ahead_departed_at) == \
        ("JN-2014", "JN-2011", 15 * 60)
    # the confirmed departure is unaffected, and a departure after it no longer sees JN-2013
    assert set(run.states["TRD"].running) == {"JN-2011"}
    # (JN-2012's 06:10, seen live: behind JN-2011, not JN-2013's 06:08; and now JN-2014's bus ahead)
    [later, follower] = run.stage.on_live_departed(LiveDeparture("TRD", trip("JN-2012", "201", 0,
                                                                              at(context, 6, 10))))
    assert (later.vehicle_id, later.ahead_vehicle_id) == ("JN-2012", "JN-2011")
    assert (follower.vehicle_id, follower.ahead_vehicle_id) == ("JN-2014", "JN-2012")


def test_dropping_an_unconfirmed_live_departure_changes_no_legal_record(context):
    # the same day twice, once with a departure seen live that the release never confirms
    # (JN-2013's 06:08): the records sent and the legal state are the same
    def day(seen_live: bool) -> Run:
        run = Run(context, "TRD")
        run.beat(at(context, 5, 59), reporting_from=at(context, 5, 55))
        run.stage.on_departed(TripDeparted("TRD", trip("JN-2011", "201", 0, at(context, 6, 0))))
        if seen_live:
            run.stage.on_live_departed(LiveDeparture("TRD", trip("JN-2013", "201", 0, at(context, 6, 8))))
        for minute in (10, 18, 19, 40):
            run.beat(at(context, 6, minute), reporting_from=at(context, 5, 55))
        run.beat(at(context, 9, 30), reporting_from=at(context, 5, 55))
        return run
    with_it, without = day(True), day(False)
    assert with_it.states["TRD"].live_running == {}  # dropped on the way
    assert [r for r, _ in with_it.records("D-12")]  # the day had legal records to compare
    assert with_it.sent == without.sent
    legal = ("detected", "running", "emitted", "suppressions", "months")
    assert [getattr(with_it.states["TRD"], f) for f in legal] == [getattr(without.states["TRD"], f) for f in legal]


def test_a_trip_delivered_again_with_a_field_filled_in_is_still_one_trip(context):
    # detected by an engine before DetectedTrip.at_origin_since, then again after a restart
    # on a newer one that fills it in (the stay at the terminal): one trip, the first kept
    run = Run(context, "VNV")
    first = trip("JN-1011", "101", 0, at(context, 9, 20), at(context, 9, 45))
    run.stage.on_detected(TripDetected("VNV", first))
    run.stage.on_detected(TripDetected("VNV", msgspec.structs.replace(first, at_origin_since=at(context, 9, 5))))
    assert run.states["VNV"].detected[DAY.isoformat()] == [first]


# --- undo by keeping the old value ---------------------------------------------------------


def _day_of_messages(context):
    """A day of the operator stage's input: departures (seen live, then released), arrivals, heartbeats past the
    day's close and the end of input (the day and its month closed)."""
    vehicles = [v.vehicle_id for v in context.fleet.values() if v.operator_id == "VNV"]
    first = at(context, 8, 45)
    messages = []
    for minute, watermark in ((0, 9, ), (30, 10), (60, 11)):
        departed = at(context, watermark - 1, 20) if minute else at(context, 9, 20)
        messages.append(LiveDeparture("VNV", trip(vehicles[0], "101", 0, departed)))  # seen live first
        messages.append(TripDeparted("VNV", trip(vehicles[0], "101", 0, departed)))
        messages.append(TripDetected("VNV", trip(vehicles[0], "101", 0, departed, departed + 1500)))
        minutes = list(range(int(first // 60), int(at(context, watermark, 30) // 60) + 1))
        messages.append(Heartbeat(0, at(context, watermark, 30), first, at(context, watermark, 40), {"VNV": minutes},
                                  False, {v: SensorRuns(tachograph=((first, at(context, watermark, 30)),))
                                          for v in vehicles}))
    messages.append(Heartbeat(0, at(context, 23, 59), first, at(context, 23, 59), {"VNV": []}, True))
    return messages


def test_a_message_never_changes_the_state_it_loaded(context):
    # what makes undo a matter of keeping the old value: each message works on a copy
    run = Run(context, "VNV")
    loaded = []
    load = run.stage._load
    run.stage._load = lambda key: loaded.append((state := load(key), msgspec.msgpack.encode(state))) or state
    for message in _day_of_messages(context):
        out = run.stage.handle("VNV", message, [])
        assert not out.rejected
    assert run.states["VNV"].closed == [DAY.isoformat()] and run.states["VNV"].closed_months  # all paths ran
    for state, encoded in loaded:
        assert state is None or msgspec.msgpack.encode(state) == encoded


@pytest.mark.parametrize("fails_in", ["_headways", "_judge_live", "_close"])
def test_a_failed_message_leaves_the_state_exactly_as_before(context, monkeypatch, fails_in):
    # each failure comes after the message has changed its copy (and, for a departure or
    # an arrival, after the copy was saved): the state stays the one loaded, unchanged
    run = Run(context, "VNV")
    real = getattr(OperatorStage, fails_in)

    def changes_then_fails(self, *args, **kwargs):
        real(self, *args, **kwargs)
        raise RuntimeError("a bug")

    messages = _day_of_messages(context)
    failed = 0
    for message in messages:
        before = run.states.get("VNV")
        encoded = msgspec.msgpack.encode(before)
        with monkeypatch.context() as patch:
            patch.setattr(OperatorStage, fails_in, changes_then_fails)
            out = run.stage.handle("VNV", message, [])
        if out.rejected:
            failed += 1
            assert run.states["VNV"] is before or (before is None and run.states["VNV"] == OperatorState("VNV"))
            assert msgspec.msgpack.encode(before) == encoded
        run.stage.handle("VNV", message, [])  # then it goes through
    assert failed >= 3


# Departures of line 101 (both directions) by three vehicles, each in two versions (its
# arrival told, or still running), near its scheduled ones or between two of them.
LIVE_POOL = [(vehicle, direction, hh, mm, arrived)
             for vehicle in ("JN-1011", "JN-1012", "JN-1013") for direction in (0, 1)
             for hh, mm in ((8, 0), (8, 15), (8, 40), (9, 5), (9, 30)) for arrived in (False, True)]


@settings(max_examples=60, deadline=None)
@given(evaluations=st.lists(st.lists(st.sampled_from(LIVE_POOL), max_size=10), min_size=1, max_size=6))
def test_the_live_matches_kept_between_evaluations_are_those_of_matching_everything_again(context, evaluations):
    # one stage through a sequence of live evaluations whose trips grow, change and go
    # (a trip arriving, another vehicle's departing, a vehicle's trips dropped): each
    # answer is the one live_matches gives over all the trips at once
    stage = OperatorStage(context, 1, {}.get, lambda state: None)
    day = stage._operator_day(DAY, "VNV")
    for entries in evaluations:
        trips = [trip(vehicle, "101", direction, at(context, hh, mm), at(context, hh, mm) + 1500 if arrived else None)
                 for vehicle, direction, hh, mm, arrived in entries]
        assert stage._live_matches(DAY, "VNV", trips) == \
            live_matches(trips, day, context.feed.timezone, context.policy.trips)


def test_the_minutes_reported_are_each_minute_told_once_in_order_however_the_beats_tell_them(context):
    # epoch minutes told beat by beat: 10-12; 14, 13 (after every known one, out of order);
    # 12-15 (overlapping); 7, 5 (before them: a lagging partition); 15 twice (known); none
    run = Run(context, "VNV")
    base = int(at(context, 9, 0) // 60)
    told: set[int] = set()
    for minutes in ([10, 11, 12], [14, 13], [12, 13, 14, 15], [7, 5], [15, 15], []):
        run.stage.on_heartbeat("VNV", Heartbeat(0, at(context, 9, 0), at(context, 8, 0), at(context, 9, 0),
                                                {"VNV": [base + m for m in minutes]}), [])
        told |= set(minutes)
        assert run.states["VNV"].reporting == [base + m for m in sorted(told)]
    assert told == {5, 7, 10, 11, 12, 13, 14, 15}
