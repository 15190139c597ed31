"""Late data is judged, not dropped (issue #33 item 5, engine.late), through the stages the
Faust agents run, fed in arrival order without a broker (`replay_in_arrival_order`).

The ordered day: the sample network on 2026-12-01 at a fix every 10 s, with a speeding, a
stop bypass and a detour (a C-01, two A-07 and a D-11), replayed in event-time order. The
same telemetry then arrives late in two ways real units send it:
- shuffled: 3 % of the tachograph lines each delayed 660-1800 s, beyond the 600 s of
  allowed lateness (simulator input fault `shuffled_late`; every message with its receipt);
- coverage lost: every bus's tachograph is silent 20-30 min mid-day and then uploads the
  stored backlog after its first live message (store and forward). With receipts the live
  message is taken and the backlog is late; without (a backfill) the clock-jump guard
  holds the live message and the backlog seems to show its clock jumped and came back.
Judged again, either gives the ordered day's infractions, trips and art. 45 figures: none
lost, none extra.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import msgspec
import pytest

from fiscaliza.replay import ReplayInputs, replay, replay_in_arrival_order
from gtfs import load_feed
from kernel.fleet import load_fleet
from late_input import lose_coverage
from samples import joao_neiva
from simulator import SimulationSettings, simulate

FEED_PATH, FLEET_PATH = joao_neiva()
DAY = dt.date(2026, 12, 1)
FAULTS = ("speeding", "stop_bypass", "detour")
ACCUSING = ("confirmed", "provisional", "exempt_art45")
BATCH = 500  # messages per engine call, as a worker's batch


def simulated(out: Path, input_faults=(), receipts=False) -> ReplayInputs:
    sim = simulate(load_feed(FEED_PATH), load_fleet(FLEET_PATH),
                   SimulationSettings(DAY, DAY, seed=7, faults=FAULTS, input_faults=input_faults, ping_interval_s=10,
                                      gps_noise_m=3.0, receipts=receipts), out)
    return ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca)


def accusing(result) -> dict[str, object]:
    """The accusing records, as they stand but for when they were first sent."""
    return {r.infraction_id: msgspec.structs.replace(r, detected_at=None)
            for r in result.infractions if r.status in ACCUSING}


@pytest.fixture(scope="module")
def shuffled(tmp_path_factory):
    out = tmp_path_factory.mktemp("shuffled")
    ordered = replay(simulated(out / "ordered", receipts=True))
    return ordered, simulated(out / "late", ("shuffled_late",), receipts=True)


def coverage_lost_day(out: Path, receipts: bool):
    inputs = simulated(out / "ordered", receipts=receipts)
    ordered = replay(inputs)
    lines, buses = lose_coverage(inputs.tachograph)
    assert buses >= 5 and lines >= 120 * buses  # 120-180 lines per bus (a fix every 10 s)
    return ordered, inputs


@pytest.fixture(scope="module")
def coverage_lost(tmp_path_factory):
    return coverage_lost_day(tmp_path_factory.mktemp("coverage"), receipts=True)


@pytest.fixture(scope="module")
def coverage_lost_backfill(tmp_path_factory):
    return coverage_lost_day(tmp_path_factory.mktemp("coverage-backfill"), receipts=False)


def test_the_ordered_day_has_the_injected_infractions(shuffled):
    ordered, _ = shuffled
    assert sorted(r.code for r in accusing(ordered).values()) == ["A-07", "A-07", "C-01", "D-11"]


@pytest.mark.parametrize("case, reason, least", [("shuffled", "late", 100), ("coverage_lost", "late", 300),
                                                 ("coverage_lost_backfill", "future", 5)])
def test_without_a_rejudgment_late_messages_are_dead_lettered(case, reason, least, request):
    # the backfill: one live message per bus, taken for a clock that jumped
    ordered, inputs = request.getfixturevalue(case)
    dropped = replay_in_arrival_order(inputs, BATCH, judge_late=False)
    assert dropped.rejected.reasons[reason] >= least
    assert dropped.late_kept == dropped.rejudged == 0


@pytest.mark.parametrize("case", ["shuffled", "coverage_lost", "coverage_lost_backfill"])
def test_judged_again_the_late_day_gives_the_ordered_days_infractions(case, request):
    ordered, inputs = request.getfixturevalue(case)
    judged = replay_in_arrival_order(inputs, BATCH)
    assert accusing(judged) == accusing(ordered)  # none lost, none extra, the same facts
    # the trips the backlogs prove are realized trips, matched as in the ordered day, and
    # art. 45 counts them (the operator stage judged the day again: VehicleDayRevised)
    assert judged.trips == ordered.trips
    assert judged.months == ordered.months
    assert not (judged.rejected.reasons["late"] or judged.rejected.reasons["future"])
    assert judged.late_kept >= 5 and judged.rejudged >= 1
    # never the same version of a record sent twice in a row
    last = {}
    for record in judged.changes:
        assert last.get(record.infraction_id) != record
        last[record.infraction_id] = record
