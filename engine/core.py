"""The engine as one process: both stages wired in memory (the replay).

The Faust workers run the same stages with their state in tables and the messages
between them on Kafka topics; here the messages are handed over directly, in the
same order a single partition would see them.
"""

from __future__ import annotations

from engine.operator import OperatorStage, OperatorState
from engine.values import Context, Emitted, Message
from engine.vehicle import PartitionState, VehicleStage, VehicleState
from rules.model import InsufficientEvidence
from telemetry import Occurrence


class Engine:
    """Replay's engine: one vehicle-stage partition, one operator stage, dict stores.

    `sources` are the telemetry inputs present (the watermark waits for each of them)."""

    def __init__(self, context: Context, sources: frozenset[str] = frozenset({"tachograph"})):
        self.ctx = context
        self._vehicles: dict[str, VehicleState] = {}
        self._operators: dict[str, OperatorState] = {}
        self.occurrences: list[Occurrence] = []
        self._vehicle_stage = VehicleStage(context, PartitionState(0), self._vehicles.get,
                                           lambda s: self._vehicles.__setitem__(s.vehicle_id, s), sources)
        self._operator_stage = OperatorStage(context, 1, self._operators.get,
                                             lambda s: self._operators.__setitem__(s.operator_id, s))
        self._dates: set = set()

    def ingest(self, messages: list[Message]) -> Emitted:
        telemetry = []
        for message in messages:
            if isinstance(message.body, Occurrence):
                self.occurrences.append(message.body)
            else:
                telemetry.append(message)
        out = Emitted()
        result = self._vehicle_stage.ingest(telemetry, self.occurrences)
        out.rejected += result.rejected
        out.statuses += result.statuses
        self._sort(result.findings, out)
        self._tell_operators(result, out)
        self._beat(out, final=False)
        return out

    def close(self) -> Emitted:
        """End of input: release everything and close every period the input covers."""
        out = Emitted()
        result = self._vehicle_stage.flush(self.occurrences)
        out.statuses += result.statuses
        out.rejected += result.rejected
        self._sort(result.findings, out)
        self._tell_operators(result, out)
        self._beat(out, final=True)
        return out

    def _tell_operators(self, result, out: Emitted) -> None:
        for message in [*result.departed, *result.detected]:
            out.rejected += self._operator_stage.handle(message.operator_id, message, self.occurrences).rejected

    def _beat(self, out: Emitted, final: bool) -> None:
        beat = self._vehicle_stage.heartbeat(final=final)
        for operator_id in sorted(self.ctx.feed.agencies):
            result = self._operator_stage.handle(operator_id, beat, self.occurrences)
            out.trips += result.trips
            out.rejected += result.rejected
            self._sort(result.findings, out)
            for matched in result.day_matched:
                self._dates.add(matched.service_date)
                judged = self._vehicle_stage.judge_day(matched, self.occurrences)
                out.rejected += judged.rejected
                self._sort(judged.findings, out)

    @staticmethod
    def _sort(findings, out: Emitted) -> None:
        for finding in findings:
            if isinstance(finding, InsufficientEvidence):
                out.insufficient.append(finding)
            else:
                out.infractions.append(finding)

    def covered_dates(self):
        return sorted(self._dates)
