"""A conflicting duplicate never erases a fact, and never makes one (issue #33 item 4).

The simulated day of the sample João Neiva network (seed 21) with one speeding fault: a
bus at about 80 km/h for two consecutive pings, a confirmed C-01. Its unit then sends a
second version of both pings (same vehicle, ts and seq) at 50 km/h, placed before or
after the original (`simulate --input-fault conflicting_duplicate_first|_after`).
Before: placed first, the C-01 vanished; placed after, it stayed provisional (no auto).
Now the version the facts take is chosen by content, the other is kept, and the record
is judged on both: the 50 km/h version is contradicted by the distance the fixes cover
(80 km/h's, |50 - 80| = 30 > speed_agreement_kmh 20), so the C-01 stands, confirmed,
naming both versions — the same record whatever the order, in one engine call or split
between two.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import msgspec
import pytest

from engine import Engine
from engine.loading import load_context
from fiscaliza.replay import ReplayInputs, final_state, read_messages, replay
from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate
from telemetry import message_id

FEED_PATH, FLEET_PATH = joao_neiva()
DAY = dt.date(2026, 12, 1)


@pytest.fixture(scope="module")
def context():
    return load_context(ReplayInputs(feed=FEED_PATH, fleet=FLEET_PATH, tachograph=FLEET_PATH))


def _day(directory: Path, input_faults=()):
    sim = simulate(load_feed(FEED_PATH), load_fleet(FLEET_PATH),
                   SimulationSettings(DAY, DAY, seed=21, faults=("speeding",), input_faults=input_faults), directory)
    return sim, json.loads(sim.manifest.read_text())["faults"]


@pytest.fixture(scope="module")
def days(tmp_path_factory):
    """kind -> (the replay's result, the simulation); "" is the day without a second version."""
    out = {}
    for kind in ("", "conflicting_duplicate_first", "conflicting_duplicate_after"):
        sim, _ = _day(tmp_path_factory.mktemp(kind or "ordered"), (kind,) if kind else ())
        out[kind] = (replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca)), sim)
    return out


def _c01(infractions):
    return [r for r in infractions if r.code == "C-01"]


@pytest.mark.parametrize("kind", ["conflicting_duplicate_first", "conflicting_duplicate_after"])
def test_a_slower_second_version_of_the_speeding_pings_yields_infraction_whatever_the_order(kind, days):
    [truth] = _c01(days[""][0].infractions)
    result, _ = days[kind]
    [record] = _c01(result.infractions)
    assert record.status == "confirmed" and record.infraction_id == truth.infraction_id
    assert record.evidence["conflicting_versions_verdict"] == \
        "a outra versão é contrariada pelo deslocamento medido pelo GPS"
    cited = [p["msg_id"] for p in truth.evidence["pings"]]
    assert [v["msg_id"] for v in record.evidence["conflicting_versions"]] == sorted(cited)
    assert all(v["speeds_kmh"][0] > 67 > v["speeds_kmh"][1] == 50.0 for v in record.evidence["conflicting_versions"])
    # both versions are dead-lettered or taken, none lost: one rejection per second version
    assert sorted(r.reason for r in result.rejected) == ["conflicting_duplicate"] * len(cited)
    # apart from the versions named, the record is the day's without them
    assert {k: v for k, v in record.evidence.items() if not k.startswith("conflicting_versions")} == truth.evidence
    assert [r for r in result.infractions if r.code != "C-01"] == [r for r in days[""][0].infractions
                                                                     if r.code != "C-01"]


def test_the_same_record_whatever_the_order_and_however_the_calls_split(context, days):
    first, after = (_c01(days[k][0].infractions) for k in ("conflicting_duplicate_first",
                                                             "conflicting_duplicate_after"))
    assert first == after
    # the two versions in two engine calls: the second finds the first pending, not in the call
    _, sim = days["conflicting_duplicate_first"]
    messages, _ = read_messages(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca))
    cited = {v["msg_id"] for v in first[0].evidence["conflicting_versions"]}
    at = next(k for k, m in enumerate(messages) if message_id(m.body) in cited) + 1
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    infractions = []
    for start in [0, at, *range(at + 2000, len(messages), 2000)]:
        infractions += engine.ingest(messages[start:start + (at if start == 0 else 2000)]).infractions
    assert _c01(final_state(infractions + engine.close().infractions)) == first


@pytest.mark.parametrize("first", [True, False])
def test_a_faster_second_version_the_fixes_do_not_drive_yields_nothing(context, days, first):
    # two consecutive pings of a bus at 20-30 km/h get a second version at 90 km/h, same
    # places: the fixes cover the true speed's distance, |90 - ~25| > 20 km/h. Before, placed
    # first, it was a C-01 on its own; now at most insufficient evidence, in either order
    _, sim = days[""]
    messages, _ = read_messages(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca))
    k = next(k for k, m in enumerate(messages) if getattr(m.body, "speed_kmh", 0) > 20 and m.body.seq is not None
             and m.body.vehicle_id != "JN-2014" and m.body.ts.hour == 10)
    j = next(j for j in range(k + 1, len(messages)) if messages[j].body.vehicle_id == messages[k].body.vehicle_id
             and hasattr(messages[j].body, "speed_kmh"))
    arrived = list(messages)
    for i in (j, k):  # j first: k's index stays where it is
        copy = type(messages[i])(msgspec.structs.replace(messages[i].body, speed_kmh=90.0), f"copy:{i}", None)
        arrived.insert(i if first else i + 1, copy)
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    out = [engine.ingest(arrived[s:s + 2000]) for s in range(0, len(arrived), 2000)] + [engine.close()]
    infractions = final_state([r for o in out for r in o.infractions])
    vehicle = messages[k].body.vehicle_id
    assert [r for r in infractions if r.vehicle_id == vehicle and r.code == "C-01"] == []
    assert infractions == final_state(days[""][0].infractions)
    insufficient = [r for o in out for r in o.insufficient if r.code == "C-01" and r.vehicle_id == vehicle]
    assert len(insufficient) == 1 and "deslocamento" in insufficient[0].reason
