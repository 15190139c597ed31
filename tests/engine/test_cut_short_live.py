"""A pass cut short (a turn back) at the operator stage while the day runs: the scheduled
trip it was running is never a provisional art. 42 A, even once the vehicle has left on
another trip (its departure no longer running to stand for it), and the day's close keeps
it so. Conselheiro Lafaiete's sample network under its shipped policy: line 105 leaves
Centro (direction 0) every 30 min; the stage is driven with the messages the vehicle stage
sends it, as tests/engine/test_operator_live.py does for João Neiva.
"""

from __future__ import annotations

import datetime as dt

import pytest

from engine.loading import load_context
from engine.messages import Heartbeat, TripCutShort, TripDeparted
from engine.operator import OperatorStage
from fiscaliza.replay import ReplayInputs
from kernel.policy import shipped_policy_path
from rules.facts import CutShortPass, SensorRuns
from rules.model import Infraction
from samples import conselheiro_lafaiete
from trips.model import DetectedTrip

FEED_PATH, FLEET_PATH = conselheiro_lafaiete()
DAY = dt.date(2026, 12, 1)
SUPPRESSED = "art. 42 A"


@pytest.fixture(scope="module")
def context(tmp_path_factory):
    empty = tmp_path_factory.mktemp("cut-short") / "t.jsonl"
    empty.write_text("")
    return load_context(ReplayInputs(FEED_PATH, FLEET_PATH, empty, policy=shipped_policy_path("conselheiro-lafaiete")))


def at(context, hh: int, mm: int) -> float:
    return dt.datetime.combine(DAY, dt.time(hh, mm), context.feed.timezone).timestamp()


def departed(vehicle: str, direction: int, when: float) -> TripDeparted:
    return TripDeparted("VQZ", DetectedTrip(vehicle, "105", direction, f"105-{direction}", when, when, 0.0, "", "",
                                            departure_gap_s=10.0, exit_msg_ids=("a", "b"), left_at=when + 10))


def day(context, turned_back: bool, matched: list | None = None) -> list[Infraction]:
    """06:45-07:45 of line 105: CL-1051 leaves Centro at 07:01 (07:00's trip, 60 s late)
    and turns back; held at 07:13, the vehicle stage tells the pass with its record. Back
    at Centro, it leaves again at 07:25 (nearest: 07:30). The watermark then passes 07:00
    + 30 min, then the day closes. Every art. 42 A the stage sent, live and at close;
    `matched` gets the closed day's DayMatched messages."""
    states: dict = {}
    stage = OperatorStage(context, 1, states.get, lambda s: states.__setitem__(s.operator_id, s))
    sent: list[Infraction] = []
    first = at(context, 6, 45)
    # every vehicle of the operator seen from 06:25 on: throughout 07:00's window [06:30, 07:30]
    vehicles = [v.vehicle_id for v in context.fleet.values() if v.operator_id == "VQZ"]

    def beat(watermark: float, final: bool = False):
        minutes = list(range(int(first // 60), int(watermark // 60) + 1))
        seen = {v: SensorRuns(tachograph=((at(context, 6, 25), watermark),)) for v in vehicles}
        out = stage.on_heartbeat("VQZ", Heartbeat(0, watermark, first, watermark + 600, {"VQZ": minutes}, final,
                                                  seen), [])
        sent.extend(f for f in out.findings if isinstance(f, Infraction) and f.code == SUPPRESSED)
        if matched is not None:
            matched.extend(out.to_vehicles)

    beat(at(context, 7, 0))
    stage.on_departed(departed("CL-1051", 0, at(context, 7, 1)))
    beat(at(context, 7, 13))
    if turned_back:
        stage.handle("VQZ", TripCutShort("VQZ", CutShortPass("CL-1051", "105", 0, "105-0", at(context, 7, 1),
                                                             "art. 14 § único")), [])
    beat(at(context, 7, 20))
    stage.on_departed(departed("CL-1051", 0, at(context, 7, 25)))  # its running departure is this one now
    beat(at(context, 7, 31))  # 07:00 + 1800 s passed: a departure for it can no longer come
    beat(at(context, 7, 45), final=True)
    return sent


def test_the_trip_a_pass_turned_back_on_was_running_yields_nothing_live_or_at_close(context):
    sent = day(context, turned_back=True)
    assert [r for r in sent if r.trip_id == "105-DU-0-0700"] == []
    # the rest of the hour is judged as ever: 06:30 (direction 0), nobody left for it
    assert "105-DU-0-0630" in {r.trip_id for r in sent}


def test_without_the_pass_cut_short_the_trip_yields_infraction_live(context):
    # the same messages but the turn back's: once the vehicle left again at 07:25, 07:00 has
    # no departure (07:01 no longer runs) and is an art. 42 A as soon as 07:30 passes
    sent = day(context, turned_back=False)
    live = [r for r in sent if r.trip_id == "105-DU-0-0700"]
    assert live and live[0].status == "provisional"
    assert live[0].detected_at.timestamp() == at(context, 7, 30)


def test_the_closed_day_tells_the_vehicle_which_trip_its_pass_cut_short(context):
    # the pass of 07:01 is paired with 07:00 (60 s apart), the trip art. 42 A leaves alone:
    # the vehicle stage names it in the art. 14 § único record, with its scheduled departure
    matched: list = []
    day(context, turned_back=True, matched=matched)
    [mine] = [m for m in matched if m.vehicle_id == "CL-1051"]
    [(passage, trip_id, scheduled)] = mine.cut_short
    assert (passage.departed_at, trip_id, scheduled) == (at(context, 7, 1), "105-DU-0-0700", at(context, 7, 0))
    assert all(m.cut_short == [] for m in matched if m.vehicle_id != "CL-1051")
