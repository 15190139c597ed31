"""The routing both shells run (engine.routing), without a broker: what a vehicle-stage
batch and an operator-stage message turn into, by output."""

from __future__ import annotations

import datetime as dt

from engine.messages import DayMatched, Heartbeat
from engine.operator import OperatorStage
from engine.routing import EndOfInput, Matched, operator_step, vehicle_step
from engine.values import Message
from engine.vehicle import PartitionState, VehicleStage
from telemetry import Rejection, decode

DAY = dt.date(2026, 12, 1)
BOTH = frozenset({"tachograph", "catraca"})


def vehicle_stage(context):
    states = {}
    return VehicleStage(context, PartitionState(0), states.get, lambda s: states.__setitem__(s.vehicle_id, s), BOTH)


def ping(vehicle: str, ts: str, location: str) -> Message:
    line = (f'{{"vehicle_id":"{vehicle}","ts":"{ts}","lat":-19.7261,"lon":-40.3826,'
            f'"speed_kmh":0.0}}')
    return Message(decode("tachograph", line.encode(), location), location, line)


def test_the_partition_is_flushed_once_every_input_has_ended_and_only_once(context):
    stage = vehicle_stage(context)
    sends = vehicle_step(stage, [ping("JN-1011", "2026-12-01T06:00:00-03:00", "t/0/1"), EndOfInput("tachograph")],
                         [], BOTH)
    # the catraca input has not ended: its watermark is unknown, nothing is released; the
    # live view does not wait for it (DESIGN.md, Timing)
    assert not stage.partition.final and stage.partition.dirty == ["JN-1011"]
    [status] = sends.statuses
    assert (status.vehicle_id, status.ts) == ("JN-1011", "2026-12-01T06:00:00-03:00")
    sends = vehicle_step(stage, [EndOfInput("catraca")], [], BOTH)
    assert stage.partition.final and stage.partition.dirty == []  # the ping released by the flush
    assert not sends.statuses  # its status left at its arrival
    again = vehicle_step(stage, [EndOfInput("catraca"), EndOfInput("tachograph")], [], BOTH)
    assert not again.statuses and not again.findings and not again.to_operators


def test_a_rejection_decoded_by_the_shell_goes_to_the_dead_letter_output(context):
    bad = decode("tachograph", b'{"vehicle_id": 7}', "tachograph/0/9")
    assert isinstance(bad, Rejection)
    sends = vehicle_step(vehicle_stage(context), [bad], [], BOTH)
    assert sends.rejected == [bad]


def test_a_closed_day_coming_back_is_judged_and_one_the_engine_fails_on_is_dead_lettered(context, monkeypatch):
    import engine.settling
    stage = vehicle_stage(context)
    day = DayMatched("JN-1011", "VNV", DAY, [], closed_at=1.8e9)
    assert vehicle_step(stage, [Matched(day, "day-matched/0/1")], [], BOTH).rejected == []

    def broken(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(engine.settling, "evaluate_vehicle_day", broken)
    other = DayMatched("JN-1012", "VNV", DAY, [], closed_at=1.8e9)
    [dead] = vehicle_step(stage, [Matched(other, "day-matched/0/2")], [], BOTH).rejected
    assert (dead.reason, dead.location) == ("engine_error", "day-matched/0/2")


def test_an_operator_heartbeat_past_a_days_close_sends_its_trips_findings_and_day_matches(context):
    states = {}
    stage = OperatorStage(context, 1, states.get, lambda s: states.__setitem__(s.operator_id, s))
    start = dt.datetime.combine(DAY, dt.time(5), context.feed.timezone).timestamp()
    beat = Heartbeat(0, start + 86400, start, start + 86400, {"VNV": []}, final=True)
    sends = operator_step(stage, "VNV", beat, [], "operator-events/0/3")
    # no trip was run: nothing realized, every vehicle of VNV told its day is closed,
    # and without telemetry around them the missed trips are insufficient evidence
    assert sends.trips == [] and not sends.rejected
    assert sorted(d.vehicle_id for d in sends.to_vehicles) == ["JN-1011", "JN-1012", "JN-1013"]
    assert sends.insufficient and not sends.infractions
