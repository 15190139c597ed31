"""A catraca reading received in two versions never erases a fact and never makes one
(issue #33 item 4; rules.versions, DayLog.other).

The simulated day of the sample João Neiva network (seed 21) with one broken seal (a
confirmed D-21). A second version of one catraca reading (same vehicle, ts and seq, other
content) is placed just before or just after its original (`_first` / `_after`), both
before the watermark passes it. Before, the first received counted: a broken seal sent
first was a D-21 (provisional), sent after it was nothing. Now the day is judged on both
versions: what both support stands, what only one supports is insufficient evidence
naming both (no sensor but the catraca itself sees a seal or a fault), the same in either
order; nothing else of the day changes.
"""

from __future__ import annotations

import datetime as dt
import json

import msgspec
import pytest

from engine import Engine
from engine.loading import load_context
from fiscaliza.replay import ReplayInputs, final_state, read_messages
from gtfs import load_feed
from kernel.fleet import load_fleet
from rules.model import InsufficientEvidence
from samples import joao_neiva
from simulator import SimulationSettings, simulate
from telemetry import CatracaReading, message_id

FEED_PATH, FLEET_PATH = joao_neiva()
DAY = dt.date(2026, 12, 1)
SOURCES = frozenset({"tachograph", "catraca"})


@pytest.fixture(scope="module")
def context():
    return load_context(ReplayInputs(feed=FEED_PATH, fleet=FLEET_PATH, tachograph=FLEET_PATH))


@pytest.fixture(scope="module")
def day(tmp_path_factory, context):
    """(the day's messages in replay order, its infractions, insufficient evidence, trips)."""
    sim = simulate(load_feed(FEED_PATH), load_fleet(FLEET_PATH),
                   SimulationSettings(DAY, DAY, seed=21, faults=("broken_seal",)), tmp_path_factory.mktemp("seal"))
    messages, _ = read_messages(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca))
    out = _run(context, messages)
    return messages, out[0], out[1], out[2]


def _run(context, messages):
    engine = Engine(context, SOURCES)
    outs = [engine.ingest(messages[s:s + 2000]) for s in range(0, len(messages), 2000)] + [engine.close()]
    return (final_state([r for o in outs for r in o.infractions]), [r for o in outs for r in o.insufficient],
            [t for o in outs for t in o.trips], [r for o in outs for r in o.rejected])


def _with_version(messages, k, first, **changes):
    """The messages with a second version of message k (its fields `changes`) just before or after it."""
    copy = type(messages[k])(msgspec.structs.replace(messages[k].body, **changes), f"copy:{k}", None)
    return [*messages[:k], *([copy, messages[k]] if first else [messages[k], copy]), *messages[k + 1:]]


def _reading_in_service(day, codes):
    """A catraca reading at 10:00-12:00 in the middle of a realized trip of a vehicle with no
    record of `codes` that day (with a seq: the dedup key holds it)."""
    messages, infractions, insufficient, trips = day
    accused = {r.vehicle_id for r in [*infractions, *insufficient] if r.code in codes}
    for k, m in enumerate(messages):
        body = m.body
        if isinstance(body, CatracaReading) and body.seq is not None and body.vehicle_id not in accused \
                and body.status == "ok" and body.seal_intact and 10 <= body.ts.hour < 12 \
                and any(t.vehicle_id == body.vehicle_id and t.departed_at.timestamp() + 300 < body.epoch
                        < t.arrived_at.timestamp() - 300 for t in trips):
            return k
    raise AssertionError("no catraca reading in service")


def _others(records, vehicle, code):
    return [r for r in records if not (r.vehicle_id == vehicle and r.code == code)]


@pytest.mark.parametrize("first", [True, False], ids=["first", "after"])
def test_a_broken_seal_in_one_version_only_yields_insufficient_evidence_naming_both_whatever_the_order(
        context, day, first):
    # the broken seal is the version the day's facts take (rules.versions.kept_reading),
    # the intact one is judged beside it: D-21 on one version only. Before: sent first, a
    # provisional D-21; sent after, nothing at all
    messages, infractions, insufficient, _ = day
    k = _reading_in_service(day, {"D-21"})
    original = messages[k].body
    found, doubted, _, rejected = _run(context, _with_version(messages, k, first, seal_intact=False))
    assert [r for r in found if r.vehicle_id == original.vehicle_id and r.code == "D-21"] == []
    [record] = [r for r in doubted if r.vehicle_id == original.vehicle_id and r.code == "D-21"]
    assert isinstance(record, InsufficientEvidence) and "duas versões" in record.reason
    [version] = record.evidence["conflicting_versions"]
    assert version["msg_id"] == message_id(original, context.feed.timezone)
    assert version["differing"] == ["lacre: violado / intacto"] and len(set(version["digests"])) == 2
    assert record.evidence["conflicting_versions_verdict"] == "só uma versão comprova a infração"
    # nothing else of the day changes; the second version is dead-lettered, not lost
    assert found == infractions
    assert _others(doubted, original.vehicle_id, "D-21") == insufficient
    assert [(r.source, r.reason) for r in rejected] == [("catraca", "conflicting_duplicate")]


@pytest.mark.parametrize("first", [True, False], ids=["first", "after"])
def test_a_fault_in_one_version_only_yields_insufficient_evidence_for_d19_whatever_the_order(context, day, first):
    messages, infractions, insufficient, _ = day
    k = _reading_in_service(day, {"D-19", "D-21"})
    original = messages[k].body
    found, doubted, _, _ = _run(context, _with_version(messages, k, first, status="fault"))
    assert found == infractions
    [record] = [r for r in doubted if r.vehicle_id == original.vehicle_id and r.code == "D-19"]
    assert record.evidence["conflicting_versions"][0]["differing"] == ["situação: em falha / normal"]
    assert _others(doubted, original.vehicle_id, "D-19") == insufficient


@pytest.mark.parametrize("first", [True, False], ids=["first", "after"])
def test_a_broken_seal_both_versions_report_yields_infraction_naming_both_whatever_the_order(context, day, first):
    # the simulated broken seal's first reading in a second version one count higher: its
    # seal is broken in both, so the D-21 stands, confirmed, naming both versions
    messages, infractions, _, _ = day
    [truth] = [r for r in infractions if r.code == "D-21"]
    cited = truth.evidence["facts"][0]["msg_id"]
    k = next(k for k, m in enumerate(messages)
             if isinstance(m.body, CatracaReading) and message_id(m.body, truth.occurred_at.tzinfo) == cited)
    found, _, _, _ = _run(context, _with_version(messages, k, first, counter=messages[k].body.counter + 1))
    [record] = [r for r in found if r.code == "D-21"]
    assert record.status == "confirmed" and record.infraction_id == truth.infraction_id
    assert record.evidence["conflicting_versions_verdict"] == "as duas versões comprovam a infração"
    [version] = record.evidence["conflicting_versions"]
    c = messages[k].body.counter  # the version the facts take is the lower digest: either
    assert version["msg_id"] == cited and version["differing"] in ([f"contador: {c} / {c + 1}"],
                                                                   [f"contador: {c + 1} / {c}"])
    assert _others(found, truth.vehicle_id, "D-21") == _others(infractions, truth.vehicle_id, "D-21")


def test_the_same_records_whatever_the_order(context, day):
    # the two orders of one second version give the same records, to the byte
    messages, _, _, _ = day
    k = _reading_in_service(day, {"D-21"})
    runs = [_run(context, _with_version(messages, k, first, seal_intact=False))[:2] for first in (True, False)]
    assert json.dumps(msgspec.to_builtins(runs[0])) == json.dumps(msgspec.to_builtins(runs[1]))


class Topic:
    """What was delivered, read back as the input topics are (engine.core.ReadBack)."""

    def __init__(self):
        self.messages = []

    def deliver(self, engine: Engine, messages):
        self.messages += messages
        return [engine.ingest(messages[s:s + 2000]) for s in range(0, len(messages), 2000)]

    def __call__(self, vehicle_id, start, end):
        return [m for m in self.messages if m.body.vehicle_id == vehicle_id and start <= m.body.epoch < end]


def test_a_second_version_after_its_original_was_released_yields_the_records_of_both_before(context, day):
    # the simulated broken seal's first reading (11:41) gets a second version with the seal
    # intact, after the original was released (_released_then_version). Its vehicle-day is
    # judged again from the input read back, which holds both versions: the D-21 stands on
    # the later broken readings, as when both versions came before the release. Before, the
    # original alone counted, at most provisional (no auto)
    messages, infractions, _, _ = day
    [truth] = [r for r in infractions if r.code == "D-21"]
    cited = truth.evidence["facts"][0]["msg_id"]
    k = next(k for k, m in enumerate(messages)
             if isinstance(m.body, CatracaReading) and message_id(m.body, truth.occurred_at.tzinfo) == cited)
    both_before, _, _, _ = _run(context, _with_version(messages, k, False, seal_intact=True))
    [before] = [r for r in both_before if r.code == "D-21"]
    assert before.status == "confirmed" and before.occurred_at > truth.occurred_at  # on the next broken reading
    outs = _released_then_version(context, messages, k, seal_intact=True)
    assert [(r.source, r.reason) for o in outs for r in o.rejected] == [("catraca", "conflicting_duplicate")]
    assert sum(o.rejudged for o in outs) == 1
    assert final_state([r for o in outs for r in o.infractions]) == both_before


def test_a_broken_seal_version_after_its_original_was_released_yields_insufficient_evidence_naming_both(context, day):
    # an intact reading released, then its broken-seal version: no D-21 (one version only),
    # recorded as insufficient evidence naming both, as when both came before the release.
    # Before, the copy was only dead-lettered: nothing of it was recorded
    messages, infractions, _, _ = day
    k = _reading_in_service(day, {"D-21"})
    _, doubted_before, _, _ = _run(context, _with_version(messages, k, False, seal_intact=False))
    [before] = [r for r in doubted_before if r.code == "D-21" and r.vehicle_id == messages[k].body.vehicle_id]
    outs = _released_then_version(context, messages, k, seal_intact=False)
    assert final_state([r for o in outs for r in o.infractions]) == infractions
    assert [r for o in outs for r in o.insufficient if r.code == "D-21" and r.vehicle_id == before.vehicle_id] == \
        [before]


def _released_then_version(context, messages, k, **changes):
    """Message k's vehicle's catraca runs behind the stream: the rest of the fleet is 15 min
    further on, so the watermark (15 - 10 min lateness = 5 min past it) has released message
    k into the day's facts, while its second version (`changes`), delivered then, is still
    within the vehicle's own lateness (a conflicting duplicate, not late); then the rest.
    Every engine call's output, the input read back as delivered."""
    original = messages[k].body
    behind = {id(m) for m in messages[k + 1:] if isinstance(m.body, CatracaReading)
              and m.body.vehicle_id == original.vehicle_id}
    ahead = [m for m in messages if m.body.epoch <= original.epoch + 900 and id(m) not in behind]
    sent = {id(m) for m in ahead}
    topic = Topic()
    engine = Engine(context, SOURCES, read_back=topic)
    outs = topic.deliver(engine, ahead)
    assert engine._vehicle_stage.watermark > original.epoch  # released
    [copy] = _with_version(messages, k, False, **changes)[k + 1:k + 2]
    return outs + topic.deliver(engine, [copy]) + topic.deliver(engine, [m for m in messages if id(m) not in sent]) \
        + [engine.close()]
