"""Driving the operator stage directly with the messages the vehicle stage sends it (trips
departed and arrived, heartbeats with the watermark), on the sample network's schedule:
line 101 leaves every 30 min in each direction (blocks alternating), line 201 runs by
headway (06:00-09:00 every 15 min)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from engine.loading import load_context
from engine.messages import Heartbeat, TripDetected
from engine.operator import OperatorStage
from rules.facts import SensorRuns
from rules.model import Infraction
from samples import joao_neiva
from trips.model import DetectedTrip

DAY = dt.date(2026, 12, 1)


def sample_context(directory: Path):
    """The sample network's context, with an empty tachograph file in `directory`."""
    from fiscaliza.replay import ReplayInputs  # the replay's inputs: fiscaliza sits above the engine

    feed, fleet = joao_neiva()
    empty = directory / "t.jsonl"
    empty.write_text("")
    return load_context(ReplayInputs(feed, fleet, empty))


def at(context, hh: int, mm: int, ss: float = 0.0) -> float:
    return dt.datetime.combine(DAY, dt.time(hh, mm), context.feed.timezone).timestamp() + ss


def trip(vehicle: str, route: str, direction: int, departed: float, arrived: float | None = None) -> DetectedTrip:
    arrived = departed if arrived is None else arrived
    return DetectedTrip(vehicle, route, direction, f"{route}-{direction}", departed, arrived, 1.0, "", "",
                        departure_gap_s=10.0, exit_msg_ids=("a", "b"), left_at=departed + 10)


class Run:
    """One operator stage, its state in a dict, and every record it sent."""

    def __init__(self, context, operator: str):
        self.operator = operator
        self.vehicles = [v.vehicle_id for v in context.fleet.values() if v.operator_id == operator]
        self.states: dict = {}
        self.stage = OperatorStage(context, 1, self.states.get, lambda s: self.states.__setitem__(s.operator_id, s))
        self.sent: list = []
        self.first = None
        self.occurrences: list = []  # registered occurrences, as the heartbeats are handed them
        self.told: list = []

    def beat(self, watermark: float, reporting_from: float | None = None, final: bool = False):
        """Up to `watermark`; with `reporting_from`, every vehicle of the operator reported
        (its tachograph seen) from then on."""
        minutes = [] if reporting_from is None else list(range(int(reporting_from // 60), int(watermark // 60) + 1))
        seen = {} if reporting_from is None else \
            {v: SensorRuns(tachograph=((reporting_from, watermark),)) for v in self.vehicles}
        self.first = self.first if self.first is not None else (reporting_from or watermark)
        out = self.stage.on_heartbeat(self.operator, Heartbeat(0, watermark, self.first, watermark + 600,
                                                               {self.operator: minutes}, final, seen),
                                       self.occurrences)
        self.sent += [(f, watermark) for f in out.findings if isinstance(f, Infraction)]
        self.told = out.to_vehicles  # what the beat told the vehicle stage
        return [f for f in out.findings]

    def records(self, code: str, trip_id: str | None = None, direction: int | None = None):
        return [(r, w) for r, w in self.sent if r.code == code and (trip_id is None or r.trip_id == trip_id)
                and (direction is None or r.direction_id == direction)]


def eleven_of_twelve(context) -> Run:
    """Line 201 direction 0, 06:00-09:00 every 15 min, so ceil(10,800 / 900) = 12 departures
    required: JN-2011's 11, one every 16 min from 06:00, told as they arrived; the fleet
    heard from 05:55 to 06:00."""
    run = Run(context, "TRD")
    run.beat(at(context, 6, 0), reporting_from=at(context, 5, 55))
    for k in range(11):
        departed = at(context, 6, 0) + k * 16 * 60
        run.stage.on_detected(TripDetected("TRD", trip("JN-2011", "201", 0, departed, departed + 900)))
    return run
