"""A trip's arrival (engine.arrival): the rules its own track settles, B-04 on its live
match, its trip log opened, the same whether the stage calls it or a restarted worker
does over the stored state.

Context: the João Neiva sample network and policy, over a simulated weekday.
"""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest

from engine.arrival import Arrivals, forget_trip_readings
from engine.dayfacts import Keeping
from engine.running import RunningTrips
from engine.servicedays import ServiceDays
from engine.settling import Judging
from engine.vehiclestate import VehicleState
from gtfs.projection import Projector
from rules.model import Infraction, Scope
from samples import joao_neiva
from trips.memo import TrackMemo

DAY = dt.date(2026, 12, 1)


def arrivals(context) -> Arrivals:
    """A partition's arrivals as a worker just started has them: no cache, built as the
    stage builds them."""
    days = ServiceDays(context.feed, context.policy.trips.service_day_cutover_s)
    projector = Projector(context.feed.epsg)
    track_codes = frozenset(rule.code for rule in context.pack.rules_for(Scope.TRACK))
    reads_doors = context.policy.unmarked_stop is not None and \
        any("unmarked_stop" in rule.requires for rule in context.pack.catalogue.values())
    reads_trip_catraca = context.policy.other_line is not None and \
        any("other_line" in rule.requires for rule in context.pack.catalogue.values())
    keeping = Keeping(Judging(context, days, projector, track_codes), reads_doors, reads_trip_catraca)
    return Arrivals(context, days, projector, RunningTrips(context, days, projector), keeping, reads_trip_catraca)


@pytest.fixture(scope="module")
def arrived(context, tmp_path_factory):
    """A simulated weekday with a detour and a trip late en route, run through the engine 13
    messages a call; each arrival the stage judged, as (the stored state before it, the trip,
    the fixes, the occurrences, what it found, the stored state after)."""
    from engine import Engine
    from fiscaliza.replay import ReplayInputs, read_messages
    from gtfs import load_feed
    from kernel.fleet import load_fleet
    from simulator import SimulationSettings, simulate

    feed_path, fleet_path = joao_neiva()
    sim = simulate(load_feed(feed_path), load_fleet(fleet_path),
                   SimulationSettings(DAY, DAY, seed=21, faults=("detour", "en_route_lateness")),
                   tmp_path_factory.mktemp("arrivals"))
    messages, _ = read_messages(ReplayInputs(feed_path, fleet_path, sim.tachograph, sim.catraca))
    calls = []
    judge = Arrivals.judge

    def recorded(self, state, trip, fixes, occurrences, memo):
        before = msgspec.msgpack.encode(state)
        found = judge(self, state, trip, fixes, occurrences, memo)
        calls.append((before, trip, list(fixes), tuple(occurrences), found, msgspec.msgpack.encode(state)))
        return found

    Arrivals.judge = recorded
    try:
        engine = Engine(context, frozenset({"tachograph", "catraca"}))
        for start in range(0, len(messages), 13):
            engine.ingest(messages[start: start + 13])
    finally:
        Arrivals.judge = judge
    return calls


def test_a_restarted_worker_judging_an_arrival_finds_what_the_stage_found_and_opens_the_same_trip_log(
        context, arrived):
    """Arrivals called directly over the state the stage held before each arrival, read
    back as a restarted worker reads it (msgpack), with no cache and a track memo that
    measured nothing: the records the stage found (D-11 on the detour among them) and
    the state it left, trip log and emitted records included, for every arrival."""
    assert arrived
    codes = {f.code for *_, found, _ in arrived for f in found if isinstance(f, Infraction)}
    assert "D-11" in codes
    for before, trip, fixes, occurrences, found, after in arrived:
        state = msgspec.msgpack.decode(before, type=VehicleState)
        logs = len(state.trips)
        assert arrivals(context).judge(state, trip, fixes, occurrences, TrackMemo(context.geofences)) == found
        assert msgspec.msgpack.encode(state) == after
        assert len(state.trips) == logs + 1 and state.trips[-1].departed_at == trip.departed_at



def test_arrivals_emit_b04_on_the_live_match_and_keep_the_fixes_around_the_departure(arrived):
    """Absolute, not only against itself: the day's arrivals found D-11 (the detour), A-07 and
    B-04 on the live match (the lateness en route), and each kept the fixes around its
    departure in the day's facts. Fails if the live match's B-04 or keep_around is dropped."""
    codes = {f.code for *_, found, _ in arrived for f in found}
    assert {"D-11", "A-07", "B-04"} <= codes
    for before, *_, after in arrived:
        kept_before = msgspec.msgpack.decode(before, type=VehicleState).days
        assert msgspec.msgpack.decode(after, type=VehicleState).days != kept_before

def test_readings_no_trip_can_span_any_more_are_forgotten(context, arrived):
    """Before the open track's first fix, or, with no open track, before the newest fix
    released: gone; the rest kept, in order."""
    from telemetry import CatracaReading

    *_, after = arrived[0]
    state = msgspec.msgpack.decode(after, type=VehicleState)
    assert state.track is not None and state.track.fixes
    since = state.track.fixes[0].t
    tz = context.feed.timezone
    readings = [CatracaReading(vehicle_id=state.vehicle_id, ts=dt.datetime.fromtimestamp(since + s, tz),
                               counter=10 + i, seal_intact=True, status="ok", seq=i)
                for i, s in enumerate((-60, -1, 0, 30))]
    state.trip_readings = list(readings)
    forget_trip_readings(state)
    assert state.trip_readings == readings[2:]
    state.track = None
    state.released["tachograph"] = since + 30
    forget_trip_readings(state)
    assert state.trip_readings == readings[3:]
