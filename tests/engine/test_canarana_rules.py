"""Canarana's art. 6º II and art. 13 through the operator stage: for art. 6º II the line's
memory across closed days (OperatorState.lines), never the days' trips; art. 13 at the
close of the day, from its realized trips.

The stage is driven directly with what the vehicle stage sends it (a realized trip,
heartbeats with the watermark and the minutes the fleet reported), on Canarana's sample
network with its shipped policy: line 10 (operator VCN) leaves every 30 min on weekdays,
05:30 .. 23:50 (its last). It runs once, Tue 2026-12-01 05:30, then nothing: the first unserved
departure is 06:30 (06:00 is within the 30-min match window of 05:30), and Fri 23:50 −
Tue 06:30 = 89,3 h > 72 h.
"""

from __future__ import annotations

import datetime as dt

import pytest

from engine.loading import load_context
from engine.messages import Heartbeat, TripDetected
from engine.operator import OperatorStage
from fiscaliza.replay import ReplayInputs
from kernel.policy import shipped_policy_path
from rules.model import Infraction, InsufficientEvidence
from samples import canarana
from trips.model import DetectedTrip

FEED_PATH, FLEET_PATH = canarana()
TUESDAY = dt.date(2026, 12, 1)
CODE = "art. 6º II"


@pytest.fixture(scope="module")
def context(tmp_path_factory):
    empty = tmp_path_factory.mktemp("interruption") / "t.jsonl"
    empty.write_text("")
    return load_context(ReplayInputs(FEED_PATH, FLEET_PATH, empty, policy=shipped_policy_path("canarana")))


def run(context, silent_days: tuple[int, ...] = ()) -> tuple[list, OperatorStage, dict]:
    """Tue 05:30 one trip of line 10; hourly heartbeats to Sat 12:00, the fleet reporting
    every minute but on `silent_days` (days of December)."""
    states: dict = {}
    stage = OperatorStage(context, 1, states.get, lambda s: states.__setitem__(s.operator_id, s))
    tz = context.feed.timezone
    start = dt.datetime.combine(TUESDAY, dt.time(5, 0), tz).timestamp()
    departed = start + 30 * 60
    stage.on_detected(TripDetected("VCN", DetectedTrip("CN-1001", "10", 0, "10-0", departed, departed + 1500, 1.0,
                                                       "", "", departure_gap_s=10.0, exit_msg_ids=("a", "b"),
                                                       left_at=departed + 10)))
    found = []
    for hour in range(4 * 24 + 7):
        t0, t1 = start + hour * 3600, start + (hour + 1) * 3600
        day = dt.datetime.fromtimestamp(t0, tz).day
        minutes = [] if day in silent_days else list(range(int(t0 // 60), int(t1 // 60)))
        out = stage.on_heartbeat("VCN", Heartbeat(0, t1, start, t1, {"VCN": minutes}), [])
        found += [f for f in out.findings if f.code == CODE]
    return found, stage, states


def test_a_line_stopped_from_tuesday_yields_infraction_on_friday_through_the_stage(context):
    found, _, states = run(context)
    [record] = [f for f in found if isinstance(f, Infraction)]
    assert (record.route_id, record.service_date, record.fine_ufir, record.group) == ("10", dt.date(2026, 12, 4),
                                                                                      0, "rescisão")
    assert record.evidence["interrupted_since"] == "2026-12-01T06:30:00-04:00"
    assert record.evidence["last_unserved_departure"] == "2026-12-04T23:50:00-04:00"
    assert record.detected_at is not None
    # what the stage keeps of the line: a few numbers, not the trips
    line = states["VCN"].lines["10"]
    assert line.reported and line.last_departure is not None and line.blind == ()


def test_a_telemetry_outage_does_not_fake_an_interruption_through_the_stage_yields_nothing(context):
    # the fleet sent nothing Wed and Thu: no finding, insufficient evidence on Fri
    found, _, states = run(context, silent_days=(2, 3))
    assert [f for f in found if isinstance(f, Infraction)] == []
    assert [f.service_date for f in found if isinstance(f, InsufficientEvidence)] == [dt.date(2026, 12, 4)]
    assert states["VCN"].lines["10"].blind == ("2026-12-02", "2026-12-03")


def crowding_day(context, back_at: tuple[int, int] | None = None) -> list:
    """Line 10 run by CN-1001 and CN-1002 that day: CN-1001 arrives at the Jardim Primavera
    end 06:00 and leaves again 07:15; `back_at`: its pings show it away from there after
    the arrival and back at that time (its departure's at_origin_since). The art. 13
    records of the day, through the operator stage."""
    states: dict = {}
    stage = OperatorStage(context, 1, states.get, lambda s: states.__setitem__(s.operator_id, s))
    tz = context.feed.timezone

    def t(hh: int, mm: int) -> float:
        return dt.datetime.combine(TUESDAY, dt.time(hh, mm), tz).timestamp()

    for vehicle, direction, departed in (("CN-1001", 0, t(5, 30)), ("CN-1001", 1, t(7, 15)),
                                         ("CN-1002", 0, t(6, 0))):
        back = t(*back_at) if back_at and (vehicle, direction) == ("CN-1001", 1) else None
        stage.on_detected(TripDetected("VCN", DetectedTrip(
            vehicle, "10", direction, f"10-{direction}", departed, departed + 1800, 1.0, "", "",
            departure_gap_s=10.0, exit_msg_ids=("a", "b"), left_at=departed + 10, at_origin_since=back)))
    found = []
    for hour in range(30):
        t0, t1 = t(5, 0) + hour * 3600, t(5, 0) + (hour + 1) * 3600
        minutes = list(range(int(t0 // 60), int(t1 // 60)))
        out = stage.on_heartbeat("VCN", Heartbeat(0, t1, t(5, 0), t1, {"VCN": minutes}), [])
        found += [f for f in out.findings if f.code == "art. 13"]
    return found


def test_a_bus_standing_at_the_terminal_yields_an_art_13_infraction_at_day_close(context):
    # 15 % × 2 = 0,3, at most 0. CN-1001 leaves 07:15, 15 min off the 07:00 and 07:30
    # timetable: it stands there past the 30-min grace from 06:30 to 07:15
    [record] = crowding_day(context)
    assert isinstance(record, Infraction) and record.service_date == TUESDAY
    assert record.evidence["episode"] == ["2026-12-01T06:30:00-04:00", "2026-12-01T07:15:00-04:00"]
    assert record.evidence["arithmetic"] == "15% de 2 veículos = 0,3: no máximo 0; presentes 1 > 0"
    assert record.fine_ufir == 100 and record.detected_at is not None


def test_a_bus_seen_away_from_the_terminal_and_back_stood_there_only_since_yields_nothing(context):
    # the same day, but CN-1001 was seen leaving after its 06:00 arrival and back at 06:50:
    # it stood there 06:50-07:15, 25 min, never past the 30-min grace
    assert crowding_day(context, back_at=(6, 50)) == []
    # back at 06:40, it stood past the grace from 07:10 to 07:15
    [record] = crowding_day(context, back_at=(6, 40))
    assert record.evidence["episode"] == ["2026-12-01T07:10:00-04:00", "2026-12-01T07:15:00-04:00"]
