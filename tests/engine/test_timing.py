"""When records leave the engine (DESIGN.md, "Timing: infractions while the day runs").

A weekday of the sample network with a detour injected is fed to the engine in
batches of 200 messages, as a live worker would see it, and every record is noted with
the stream's newest event time when it came out. D-11 and A-07 must come out when the
watermark passes the trip's arrival, not when the service day closes; their trip_id
follows at day close as an update with the same id and the same detected_at.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from engine import Engine, Message
from engine.loading import load_context
from engine.messages import DayMatched
from fiscaliza.replay import ReplayInputs, final_state, read_messages, replay
from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate
from telemetry import decode

FEED_PATH, FLEET_PATH = joao_neiva()
DAY = dt.date(2026, 12, 1)
BATCH = 200


def run_live(context, messages: list[Message], late: list[Message] = ()):
    """The change log with, for each record, the watermark before and after the batch it
    came out of (None at the end of input); `late` messages are fed right after the
    first D-11 came out."""
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    log = []
    pending = list(messages)
    while pending:
        batch, pending = pending[:BATCH], pending[BATCH:]
        before = engine._vehicle_stage.watermark
        out = engine.ingest(batch)
        log += [(record, (before, engine._vehicle_stage.watermark)) for record in out.infractions]
        if late and any(r.code == "D-11" for r, _ in log):
            engine.ingest(list(late))
            late = ()
    out = engine.close()
    log += [(record, None) for record in out.infractions]  # at the end of input
    return log


def came_out_as_soon_as_the_watermark_passed(moment: float, watermarks) -> bool:
    """The record left with the batch that took the watermark past `moment`, not later."""
    return watermarks is not None and (watermarks[0] is None or watermarks[0] < moment) and moment <= watermarks[1]


def one_fault_day(out, fault: str):
    """A simulated weekday with one fault: the context, its messages in event-time order,
    what was injected, and the replay's result."""
    sim = simulate(load_feed(FEED_PATH), load_fleet(FLEET_PATH),
                   SimulationSettings(DAY, DAY, seed=21, faults=(fault,)), out)
    [injected] = json.loads(sim.manifest.read_text())["faults"]
    inputs = ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca)
    messages, rejected = read_messages(inputs)
    assert not rejected
    return load_context(inputs), messages, injected, replay(inputs)


@pytest.fixture(scope="module")
def detour_day(tmp_path_factory):
    return one_fault_day(tmp_path_factory.mktemp("timing"), "detour")


def test_d11_and_a07_come_out_when_the_trip_arrives_not_at_day_close(detour_day):
    context, messages, injected, reference = detour_day
    log = run_live(context, messages)
    [trip] = [t for t in reference.trips if t.trip_id == injected["trip_id"]]
    for code in ("D-11", "A-07"):
        first, watermarks = next((r, at) for r, at in log if r.code == code)
        # detected_at is the arrival ping: within one ping interval (10 s) after the trip's
        # arrival (interpolated at the zone's edge)
        arrival = trip.arrived_at.timestamp()
        assert 0 <= first.detected_at.timestamp() - arrival <= 10
        assert first.detected_at.utcoffset() == dt.timedelta(hours=-3)
        # it came out when the watermark (newest event - 600 s) passed the arrival ping,
        # where it used to wait for the day to close (~15 h later)
        assert came_out_as_soon_as_the_watermark_passed(first.detected_at.timestamp(), watermarks)
        assert first.trip_id is None and first.status == "confirmed"
        assert first.service_date == DAY and first.route_id == injected["route_id"]


def test_the_trip_id_is_filled_in_at_day_close_with_the_same_id_and_detected_at(detour_day):
    context, messages, injected, reference = detour_day
    log = run_live(context, messages)
    for code in ("D-11", "A-07"):
        records = [r for r, _ in log if r.code == code]
        assert len(records) == 2  # on arrival, then once the day's matching is final
        first, settled = records
        assert first.infraction_id == settled.infraction_id
        assert settled.detected_at == first.detected_at
        assert (first.trip_id, settled.trip_id) == (None, injected["trip_id"])
        assert settled == next(i for i in reference.infractions if i.code == code)  # the replay's final state


def test_an_occurrence_registered_after_the_d11_turns_it_justified_with_the_same_id(detour_day):
    context, messages, injected, _ = detour_day
    start = dt.datetime.combine(DAY, dt.time(4, 0), context.feed.timezone).isoformat()
    end = dt.datetime.combine(DAY, dt.time(23, 0), context.feed.timezone).isoformat()
    line = json.dumps({"id": "OC-1", "kind": "authorized_detour", "start": start, "end": end,
                       "route_id": injected["route_id"]})
    occurrence = Message(decode("occurrences", line.encode(), "o.jsonl:1"), "o.jsonl:1", line)
    log = run_live(context, messages, late=[occurrence])
    d11 = [r for r, _ in log if r.code == "D-11"]
    assert [r.status for r in d11] == ["confirmed", "justified"]
    assert len({r.infraction_id for r in d11}) == 1 and d11[-1].detected_at == d11[0].detected_at
    assert d11[-1].evidence["justified_by"] == ["OC-1"]


def test_every_record_carries_when_it_was_detected(detour_day):
    *_, reference = detour_day
    assert reference.infractions
    for record in final_state(reference.infractions):
        assert record.detected_at is not None and record.detected_at >= record.occurred_at


def emissions(day, code: str):
    """The records of `code` as they left the engine live (with the watermarks around
    them), and the replay's final one."""
    context, messages, _, reference = day
    records = [(r, at) for r, at in run_live(context, messages) if r.code == code]
    [settled] = [i for i in reference.infractions if i.code == code]
    return records, settled


@pytest.fixture(scope="module")
def speeding_day(tmp_path_factory):
    return one_fault_day(tmp_path_factory.mktemp("timing-speeding"), "speeding")


def test_c01_comes_out_when_its_episode_can_no_longer_merge(speeding_day):
    context, _, injected, _ = speeding_day
    records, settled = emissions(speeding_day, "C-01")
    first, watermarks = records[0]
    last_over = first.evidence["interval_epoch"][1]
    merge_gap = context.policy.c01.merge_gap_s  # 300 s: a later episode less than 5 min after would join it
    assert first.detected_at.timestamp() == last_over + merge_gap
    # out of the batch where the watermark (newest event - 600 s) passed that moment
    assert came_out_as_soon_as_the_watermark_passed(first.detected_at.timestamp(), watermarks)
    # the final record is the replay's, with the trip filled in by the day's matching
    assert records[-1][0] == settled and settled.detected_at == first.detected_at
    assert settled.trip_id == injected["trip_id"]
    assert {r.infraction_id for r, _ in records} == {settled.infraction_id}


@pytest.fixture(scope="module")
def late_day(tmp_path_factory):
    return one_fault_day(tmp_path_factory.mktemp("timing-late"), "late_departure")


def test_d13_comes_out_provisional_when_the_late_departure_is_seen_and_is_confirmed_at_day_close(late_day):
    _, _, injected, reference = late_day
    records, settled = emissions(late_day, "D-13")
    first, watermarks = records[0]
    [late] = [t for t in reference.trips if t.trip_id == injected["trip_id"]]
    departure = late.departed_at.timestamp()
    assert first.status == "provisional" and first.route_id == injected["route_id"]
    # its detected_at is when the late departure was proven, the first ping outside the
    # origin terminal zone: within one ping interval (10 s) after the crossing, and while
    # the trip still runs (it used to wait for the arrival, ~20 min later)
    assert 0 < first.detected_at.timestamp() - departure <= 10
    assert first.detected_at < late.arrived_at
    assert came_out_as_soon_as_the_watermark_passed(first.detected_at.timestamp(), watermarks)
    last, _ = records[-1]
    assert last == settled and settled.status == "confirmed"
    assert (settled.infraction_id, settled.detected_at) == (first.infraction_id, first.detected_at)


# --- every code within its Timing bound -------------------------------------------------

@pytest.fixture(scope="module")
def faults_inputs(tmp_path_factory):
    """One weekday with a fault of each kind the live codes below judge."""
    out = tmp_path_factory.mktemp("timing-faults")
    faults = ("silent_catraca", "broken_seal", "en_route_lateness", "frequency_shortfall", "suppressed_trip")
    sim = simulate(load_feed(FEED_PATH), load_fleet(FLEET_PATH), SimulationSettings(DAY, DAY, seed=21, faults=faults),
                   out)
    injected = {f["fault"]: f for f in json.loads(sim.manifest.read_text())["faults"]}
    inputs = ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca)
    messages, rejected = read_messages(inputs)
    assert not rejected
    return load_context(inputs), injected, inputs, messages


@pytest.fixture(scope="module")
def faults_day(faults_inputs):
    """That day's context, faults, replay, and the change log as a live run emits it."""
    context, injected, inputs, messages = faults_inputs
    return context, injected, replay(inputs), run_live(context, messages)


def first_and_settled(faults_day, code: str):
    *_, reference, log = faults_day
    records = [(r, at) for r, at in log if r.code == code]
    assert records, f"no {code} came out"
    first, watermarks = records[0]
    settled = next(i for i in reference.infractions if i.infraction_id == first.infraction_id)
    # the last record sent under this id is the replay's final one, with the first detected_at
    assert [r for r, _ in records if r.infraction_id == first.infraction_id][-1] == settled
    assert settled.detected_at == first.detected_at
    assert came_out_as_soon_as_the_watermark_passed(first.detected_at.timestamp(), watermarks)
    return first, settled


def arrival_ping_after(reference, vehicle: str, moment: float) -> float:
    """The arrival of the vehicle's trip running at `moment` (or the last one before it)."""
    trip = max((t for t in reference.trips if t.vehicle_id == vehicle and t.departed_at.timestamp() <= moment),
               key=lambda t: t.departed_at)
    return trip.arrived_at.timestamp()


def test_d19_comes_out_when_the_silence_passes_its_limit_in_a_trip_known_to_be_in_service(faults_day):
    context, injected, reference, _ = faults_day
    first, settled = first_and_settled(faults_day, "D-19")
    assert first.status == settled.status == "confirmed"
    # the 15 min silence is proven by the reading that ends it (while it went on, it could
    # be a catraca clock behind: 600 s + 900 s of clock offset are needed to accuse it
    # open); the vehicle is known to be in service then once the trip it is running
    # arrives (a trip is realized at its arrival): detected_at is the later of the two, to
    # the arrival ping (<= 10 s later)
    silence = first.evidence["silences"][0]
    ended = dt.datetime.fromisoformat(silence["to"]).timestamp()
    assert 600 < silence["seconds"] < 600 + context.policy.stream.max_clock_jump_s
    bound = max(ended, arrival_ping_after(reference, first.vehicle_id, ended))
    assert 0 <= first.detected_at.timestamp() - bound <= 10
    assert first.vehicle_id == injected["silent_catraca"]["vehicle_id"]


def test_d21_comes_out_with_the_violated_reading_once_the_trip_proves_the_vehicle_in_service(faults_day):
    _, injected, reference, _ = faults_day
    first, settled = first_and_settled(faults_day, "D-21")
    assert first.status == settled.status == "confirmed"
    reading = first.occurred_at.timestamp()
    bound = max(reading, arrival_ping_after(reference, first.vehicle_id, reading))
    assert 0 <= first.detected_at.timestamp() - bound <= 10
    # the trip it happened in is filled in at day close, same id
    assert first.trip_id is None and settled.trip_id is not None


def test_b04_comes_out_provisional_at_the_timepoint_and_is_confirmed_at_day_close(faults_day):
    _, injected, reference, _ = faults_day
    first, settled = first_and_settled(faults_day, "B-04")
    assert (first.status, settled.status) == ("provisional", "confirmed")
    [trip] = [t for t in reference.trips if t.trip_id == settled.trip_id]
    # judged while the trip runs, on its live match: at the first fix past the timepoint
    # where it is seen late (fixes every 10 s), long before the trip arrives
    [late] = [p for p in first.evidence["timepoints"] if p.get("deviation_s", 0) > 300]
    passed = dt.datetime.fromisoformat(late["observed"]).timestamp()
    assert 0 <= first.detected_at.timestamp() - passed <= 10
    assert first.detected_at < trip.arrived_at
    assert first.trip_id == settled.trip_id == injected["en_route_lateness"]["trip_id"]


def test_d12_comes_out_confirmed_at_the_end_of_its_frequency_window(faults_day):
    first, settled = first_and_settled(faults_day, "D-12")
    assert first.status == settled.status == "confirmed"
    assert first.detected_at == dt.datetime.fromisoformat(first.evidence["window_end"])


def test_d22_comes_out_provisional_when_the_match_window_of_the_missed_departure_passes(faults_day):
    context, injected, _, log = faults_day
    missed = [(r, at) for r, at in log if r.code == "D-22" and r.trip_id == injected["suppressed_trip"]["trip_id"]]
    first, watermarks = missed[0]
    assert first.status == "provisional"
    scheduled = dt.datetime.fromisoformat(first.evidence["scheduled_departure"]).timestamp()
    assert first.detected_at.timestamp() == scheduled + context.policy.trips.match_window_s
    assert came_out_as_soon_as_the_watermark_passed(first.detected_at.timestamp(), watermarks)
    # settled at the month's close (art. 45), same id and detected_at
    *_, reference, _ = faults_day
    settled = next(i for i in reference.infractions if i.infraction_id == first.infraction_id)
    assert settled.detected_at == first.detected_at and settled.status in ("confirmed", "exempt_art45")


def test_a_provisional_b04_the_days_matching_does_not_bear_out_is_withdrawn(faults_inputs):
    # The day's final matching gives the late trip's vehicle no scheduled trip (as when
    # it matches the departure to another vehicle's): the live B-04 is withdrawn, same
    # id and detected_at, never deleted.
    context, injected, _, sim_messages = faults_inputs
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    vehicle = injected["en_route_lateness"]["vehicle_id"]
    sent = []
    for start in range(0, len(sim_messages), BATCH):
        sent += engine.ingest(sim_messages[start:start + BATCH]).infractions
        if any(r.code == "B-04" for r in sent):
            break
    [live] = [r for r in sent if r.code == "B-04"]
    assert live.status == "provisional" and live.vehicle_id == vehicle
    operator = context.fleet[vehicle].operator_id
    settled = engine._vehicle_stage.on_day_matched(DayMatched(vehicle, operator, DAY, [], closed_at=2e9), [])
    [withdrawn] = [r for r in settled if r.code == "B-04"]
    assert withdrawn.status == "withdrawn"
    assert (withdrawn.infraction_id, withdrawn.detected_at, withdrawn.evidence) == \
        (live.infraction_id, live.detected_at, live.evidence)
