"""The engine as one process: both stages wired in memory (the replay).

The Faust workers run the same stages with their state in tables and the messages
between them on Kafka topics; both route messages with `engine.routing`. Here the
messages are handed over directly, in the same order a single partition would see
them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from engine.late import Rejudged, revised_day
from engine.operator import OperatorStage, OperatorState
from engine.messages import DayMatched, OperatorInput
from engine.routing import EndOfInput, Matched, operator_step, vehicle_step
from engine.sends import Sends
from engine.values import Context, Message
from engine.vehicle import JudgeAgain, PartitionState, VehicleStage, VehicleState
from rules.model import Finding
from telemetry import Occurrence, TachographPing

# A shell's raw input read back: (vehicle, start, end) -> the vehicle's telemetry messages
# dated in [start, end), as its inputs hold them (topics, files), in any order
ReadBack = Callable[[str, float, float], list[Message]]


class Engine:
    """Replay's engine: one vehicle-stage partition, one operator stage, dict stores.

    `sources` are the telemetry inputs present (the watermark waits for each of them);
    `read_back`, where the shell can read its input back, lets a vehicle-day that late
    messages came for be judged again (engine.late)."""

    def __init__(self, context: Context, sources: frozenset[str] = frozenset({"tachograph"}),
                 read_back: ReadBack | None = None):
        self.ctx = context
        self.sources = sources
        self._vehicles: dict[str, VehicleState] = {}
        self._operators: dict[str, OperatorState] = {}
        self.occurrences: list[Occurrence] = []
        self._vehicle_stage = VehicleStage(context, PartitionState(0), self._vehicles.get,
                                           lambda s: self._vehicles.__setitem__(s.vehicle_id, s), sources,
                                           judge_again=None if read_back is None else
                                           judge_again_from(context, sources, read_back))
        self._operator_stage = OperatorStage(context, 1, self._operators.get,
                                             lambda s: self._operators.__setitem__(s.operator_id, s))
        self._dates: set = set()
        # every message the vehicle stage told the operator stage, heartbeats included, when
        # a list (a vehicle-day judged again reads its facts from them: engine.late.revised_day)
        self.told: list[OperatorInput] | None = None

    def ingest(self, messages: list[Message]) -> Sends:
        telemetry = []
        for message in messages:
            if isinstance(message.body, Occurrence):
                self.occurrences.append(message.body)
            else:
                telemetry.append(message)
        return self._step(telemetry)

    def close(self) -> Sends:
        """End of input: release everything and close every period the input covers."""
        return self._step([EndOfInput(source) for source in sorted(self.sources)])

    def _step(self, inbound) -> Sends:
        out = Sends()
        self._route(vehicle_step(self._vehicle_stage, inbound, self.occurrences, self.sources), out)
        beat = self._vehicle_stage.heartbeat(final=self._vehicle_stage.partition.final)
        if self.told is not None:
            self.told.append(beat)
        for operator_id in sorted(self.ctx.feed.agencies):
            self._route(operator_step(self._operator_stage, operator_id, beat, self.occurrences), out)
        return out

    def _route(self, sends: Sends, out: Sends) -> None:
        """What a step sent, delivered: to the outputs, or to the other stage at once."""
        out.merge(dataclasses.replace(sends, to_operators=[], to_vehicles=[]))  # those two are delivered here
        if self.told is not None:
            self.told += sends.to_operators
        for message in sends.to_operators:
            self._route(operator_step(self._operator_stage, message.operator_id, message, self.occurrences), out)
        if sends.to_vehicles:
            self._dates.update(m.service_date for m in sends.to_vehicles if isinstance(m, DayMatched))
            inbound = [Matched(m) if isinstance(m, DayMatched) else m for m in sends.to_vehicles]
            self._route(vehicle_step(self._vehicle_stage, inbound, self.occurrences, self.sources), out)

    def vehicle_states(self) -> list[VehicleState]:
        """The vehicles' states as they stand (what the workers keep in their table)."""
        return list(self._vehicles.values())

    def covered_dates(self):
        return sorted(self._dates)


def judged_again(context: Context, sources: frozenset[str], messages: list[Message],
                 occurrences: list[Occurrence]) -> tuple[list[Finding], list[OperatorInput]]:
    """Every infraction record, final state, that the core finds in `messages` read as the
    replay reads its input (event-time order; the input order among equal times), then its
    insufficient evidence: a vehicle-day's raw input judged again (engine.late), in a fresh
    engine; and what its vehicle stage told the operator stage on the way."""
    engine = Engine(context, sources)
    engine.occurrences = list(occurrences)
    engine.told = []
    ordered = sorted(messages, key=lambda m: (m.body.epoch, 0 if isinstance(m.body, TachographPing) else 1))
    out = engine.ingest(ordered)
    out.merge(engine.close())
    return [*{record.infraction_id: record for record in out.infractions}.values(), *out.insufficient], engine.told


def judge_again_from(context: Context, sources: frozenset[str], read_back: ReadBack) -> JudgeAgain:
    """The vehicle stage's re-judgment over the raw input `read_back` gives."""
    rules = context.policy.trips
    # a trip across either end of the operating day (a night run over the 03:00 cutover) is
    # read whole: it is the day's if it departed in it (revised_day), the other's if not
    margin = rules.max_trip_duration_s + rules.max_coverage_gap_s

    def judge_again(vehicle_id: str, start: float, end: float, occurrences: list[Occurrence]) -> Rejudged:
        records, told = judged_again(context, sources, read_back(vehicle_id, start - margin, end + margin),
                                     occurrences)
        vehicle = context.fleet.get(vehicle_id)
        revised = None if vehicle is None else revised_day(
            vehicle.operator_id, vehicle_id, start, end, told, context.policy.trips.max_coverage_gap_s)
        return Rejudged(records, revised)
    return judge_again
