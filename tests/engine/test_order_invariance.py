"""Same facts, same verdicts: delivery order and duplicates within the allowed
lateness change nothing (property test over delivery schedules)."""

import datetime as dt
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Engine, Message
from engine.loading import load_context
from fiscaliza.replay import ReplayInputs, final_state, read_messages, replay
from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate
from trips.model import trip_record

FEED_PATH, FLEET_PATH = joao_neiva()
DAY = dt.date(2026, 12, 1)
FAULTS = ("detour", "late_departure", "suppressed_trip", "speeding", "broken_seal", "frequency_shortfall")


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    out = tmp_path_factory.mktemp("order")
    feed = load_feed(FEED_PATH)
    sim = simulate(feed, load_fleet(FLEET_PATH), SimulationSettings(DAY, DAY, seed=3, faults=FAULTS), out)
    inputs = ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca)
    reference = replay(inputs)
    messages, rejected = read_messages(inputs)
    assert not rejected
    return load_context(inputs), messages, reference


def deliver(messages: list[Message], seed: int, lateness: float, duplicate_share: float) -> list[Message]:
    """Each message delayed by up to `lateness` (less 1 s), some sent twice, in arrival order."""
    rng = random.Random(seed)
    sent = []
    for message in messages:
        epoch = message.body.epoch
        sent.append((epoch + rng.uniform(0, lateness - 1), message))
        if rng.random() < duplicate_share:
            sent.append((epoch + rng.uniform(0, lateness - 1), message))
    sent.sort(key=lambda pair: pair[0])
    return [message for _, message in sent]


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), batch=st.integers(50, 3000), duplicates=st.sampled_from([0.0, 0.01, 0.05]))
def test_reordered_and_duplicated_delivery_yields_the_same_infractions(scenario, seed, batch, duplicates):
    context, messages, reference = scenario
    arrival = deliver(messages, seed, context.policy.stream.allowed_lateness_s, duplicates)
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    infractions, trips, rejected = [], [], []
    for start in range(0, len(arrival), batch):
        out = engine.ingest(arrival[start : start + batch])
        infractions += out.infractions
        trips += out.trips
        rejected += out.rejected
    out = engine.close()
    infractions += out.infractions
    trips += out.trips
    assert final_state(infractions) == reference.infractions
    assert sorted(map(str, map(trip_record, trips))) == sorted(map(str, map(trip_record, reference.trips)))
    # only the copies are rejected, never a message inside the allowed lateness
    assert {r.reason for r in rejected} <= {"duplicate"}
    assert len(rejected) == len(arrival) - len(messages)


def test_the_reference_day_has_infractions_to_compare(scenario):
    _, _, reference = scenario
    assert {i.code for i in reference.infractions} >= {"C-01", "D-11", "D-13", "D-21", "D-22", "D-12"}
