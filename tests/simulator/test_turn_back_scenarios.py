"""Conselheiro Lafaiete's turn back (art. 14 § único) simulated, both ways.

A weekday of the Conselheiro Lafaiete sample network under its shipped policy: with the
`turn_back` fault one timetabled run drives to 60 % of its shape and back to its origin.
That is one act, fined once: one art. 14 § único for the vehicle, and its scheduled
trip not also an art. 42 A (a trip suspended) — in the replay and however a live worker's
batches cut the input. The same day without the fault yields no art. 14 § único; with
the plain `suppressed_trip` fault the trip not run is still an art. 42 A.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import msgspec
import numpy as np
import pytest
import shapely

from engine import Engine
from engine.loading import load_context
from engine.messages import OperatorInput, TripCutShort
from fiscaliza.replay import ReplayInputs, final_state, read_messages, replay
from gtfs import load_feed
from gtfs.projection import Projector
from kernel.fleet import load_fleet
from kernel.policy import shipped_policy_path
from rules.facts import CutShortPass
from samples import conselheiro_lafaiete
from simulator import FAULTS, LAW_FAULTS, SimulationSettings, simulate

FEED_PATH, FLEET_PATH = conselheiro_lafaiete()
FEED = load_feed(FEED_PATH)
FLEET = load_fleet(FLEET_PATH)
POLICY = shipped_policy_path("conselheiro-lafaiete")
DAY = dt.date(2026, 12, 1)  # a Tuesday: weekday (DU) service
SEED = 21
TURN_BACK, SUPPRESSED = "art. 14 § único", "art. 42 A"
WINDOW_S = 1800  # the policy's trips.match_window_s


def run(tmp: Path, faults=()):
    sim = simulate(FEED, FLEET, SimulationSettings(DAY, DAY, seed=SEED, faults=tuple(faults)), tmp)
    manifest = {f["fault"]: f for f in json.loads(sim.manifest.read_text())["faults"]}
    inputs = ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca, policy=POLICY)
    return sim, manifest, inputs, replay(inputs)


@pytest.fixture(scope="module")
def turned(tmp_path_factory):
    return run(tmp_path_factory.mktemp("turn-back"), ["turn_back"])


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    return run(tmp_path_factory.mktemp("plain"))


def of_code(records, code):
    return [r for r in records if r.code == code]


def test_turn_back_is_opt_in_and_named_apart_from_every_fault():
    # a simulation of "every fault" (FAULTS) stays as it was: the turn back is asked by name
    assert "turn_back" in LAW_FAULTS and "turn_back" not in FAULTS


def test_the_simulated_run_goes_60_percent_of_its_shape_and_back_to_its_origin(turned):
    sim, manifest, _, _ = turned
    injected = manifest["turn_back"]
    shape = FEED.shapes[FEED.trips[injected["trip_id"]].shape_id]
    pings = [json.loads(line) for line in sim.tachograph.read_text().splitlines()]
    mine = [p for p in pings if p["vehicle_id"] == injected["vehicle_id"]
            and injected["scheduled_departure"] <= dt.datetime.fromisoformat(p["ts"]).timestamp()]
    x, y = Projector(FEED.epsg).to_xy(np.array([p["lon"] for p in mine]), np.array([p["lat"] for p in mine]))
    along = shapely.line_locate_point(shape.line, shapely.points(x, y))
    # 60 % of the 5466.7 m shape is 3280 m; GPS noise (3 m) aside, never farther
    assert abs(injected["turned_at_m"] - 0.6 * shape.length_m) <= 30
    assert along.max() <= 0.6 * shape.length_m + 30
    # and back: its last fixes stand within 30 m of the origin, the destination never reached
    assert along[-1] <= 30 and along.max() < shape.length_m - 1000
    # the catraca counts while the bus runs out and back
    readings = [json.loads(line) for line in sim.catraca.read_text().splitlines()]
    counters = [r["counter"] for r in readings if r["vehicle_id"] == injected["vehicle_id"]
                and injected["scheduled_departure"] <= dt.datetime.fromisoformat(r["ts"]).timestamp()
                <= injected["back_at_epoch"]]
    assert counters[-1] > counters[0]


def test_a_turned_back_run_yields_one_art14_infraction_and_no_art42a(turned):
    _, manifest, _, result = turned
    injected = manifest["turn_back"]
    [record] = of_code(result.infractions, TURN_BACK)
    assert (record.status, record.vehicle_id, record.route_id, record.direction_id) == (
        "confirmed", injected["vehicle_id"], injected["route_id"], injected["direction_id"])
    # the pass it turned back on left within the match window of the trip's departure
    departed = dt.datetime.fromisoformat(record.evidence["departed_at"]).timestamp()
    assert abs(departed - injected["scheduled_departure"]) <= WINDOW_S
    # it turned where it was made to (60 % along), Cr$ 20,00 per trip (art. 42 A by analogy)
    assert abs(record.evidence["farthest_m"] - injected["turned_at_m"]) <= 30
    assert (record.fine_ufir, record.group) == (20, "A")
    # one act, one accusation: its scheduled trip is not also a trip suspended, in any status
    assert [r for r in of_code(result.infractions, SUPPRESSED)] == []
    assert [f for f in of_code(result.insufficient, SUPPRESSED) if f.trip_id == injected["trip_id"]] == []
    assert injected["trip_id"] not in {t.trip_id for t in result.trips}  # and it was not run
    # and the record names it: the day's close paired the pass with that scheduled trip
    assert record.trip_id == injected["trip_id"]
    assert dt.datetime.fromisoformat(record.evidence["scheduled_departure"]).timestamp() == \
        injected["scheduled_departure"]


def test_the_same_day_without_the_fault_yields_nothing(plain):
    _, manifest, _, result = plain
    assert manifest == {}
    assert of_code(result.infractions, TURN_BACK) == [] and of_code(result.insufficient, TURN_BACK) == []
    assert of_code(result.infractions, SUPPRESSED) == []


def test_a_suppressed_trip_still_yields_art42a_infraction(tmp_path):
    # the rule was not weakened: a trip no pass ran is a trip suspended, Cr$ 20,00
    _, manifest, _, result = run(tmp_path, ["suppressed_trip"])
    injected = manifest["suppressed_trip"]
    assert sorted((r.code, r.status, r.trip_id) for r in result.infractions) == [
        (SUPPRESSED, "confirmed", injected["trip_id"])]


def test_both_faults_on_one_day_yield_each_its_own_infraction(tmp_path):
    _, manifest, _, result = run(tmp_path, ["suppressed_trip", "turn_back"])
    suppressed, turned = manifest["suppressed_trip"], manifest["turn_back"]
    assert suppressed["trip_id"] != turned["trip_id"]
    assert [(r.trip_id, r.status) for r in of_code(result.infractions, SUPPRESSED)] == [
        (suppressed["trip_id"], "confirmed")]
    assert [r.vehicle_id for r in of_code(result.infractions, TURN_BACK)] == [turned["vehicle_id"]]


def live(inputs: ReplayInputs, batch: int, shuffle_seed: int | None = None):
    """Every record as it left the engine, fed `batch` messages at a time (a live worker's
    beats), optionally each delayed by up to the allowed lateness."""
    context = load_context(inputs)
    messages, rejected = read_messages(inputs)
    assert not rejected
    if shuffle_seed is not None:
        rng = random.Random(shuffle_seed)
        lateness = context.policy.stream.allowed_lateness_s
        messages = [m for _, m in sorted(((m.body.epoch + rng.uniform(0, lateness - 1), m) for m in messages),
                                         key=lambda pair: pair[0])]
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    records = []
    for start in range(0, len(messages), batch):
        records += engine.ingest(messages[start: start + batch]).infractions
    return records + engine.close().infractions


@pytest.mark.parametrize("batch, shuffle_seed", [(50, None), (700, 7)])
def test_live_the_turned_back_trip_never_yields_art42a_in_any_batching(turned, batch, shuffle_seed):
    _, manifest, inputs, reference = turned
    records = live(inputs, batch, shuffle_seed)
    # no art. 42 A ever left the engine, not even a provisional one later withdrawn
    assert of_code(records, SUPPRESSED) == []
    # the art. 14 § único left when its reversal was held, and once more at day close with
    # the scheduled trip its pass cut short (the one art. 42 A leaves alone), as the replay
    # has it
    [settled] = of_code(reference.infractions, TURN_BACK)
    told = of_code(records, TURN_BACK)
    assert [r.trip_id for r in told] == [None, settled.trip_id] and settled.trip_id is not None
    assert told[-1] == settled
    assert final_state(records) == reference.infractions


def test_the_workers_carry_the_pass_cut_short_between_stages_as_json():
    # the operator-events topic holds JSON the operator agents decode as any OperatorInput
    told = TripCutShort("VQZ", CutShortPass("CL-1051", "105", 0, "105-0", 1796179815.25, TURN_BACK))
    assert msgspec.json.Decoder(OperatorInput).decode(msgspec.json.encode(told)) == told
