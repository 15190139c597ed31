"""Which stage each message goes to and what leaves it: the one routing that the
replay (`engine.core.Engine`, stages wired in memory) and the Faust workers
(`streams.app`, stages joined by Kafka topics) both run.

A shell decodes what it reads into the items below, calls a step, sends what the
step returns (`engine.sends.Sends`, by output topic) and saves the stages' state. Nothing here
knows about Kafka or files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from engine.messages import DayMatched, Heartbeat, OperatorInput, VehicleAhead, VehicleDayRevised
from engine.operator import OperatorStage
from engine.sends import Sends
from engine.values import Message
from engine.vehicle import VehicleStage
from telemetry import Occurrence, Rejection


@dataclass(frozen=True)
class EndOfInput:
    """The end-of-input marker of one telemetry input (finite input: replay, tests)."""

    input: str


@dataclass(frozen=True)
class Matched:
    """A closed service day coming back to the vehicle stage, and where it was read."""

    message: DayMatched
    location: str | None = None


VehicleInbound = Message | Matched | VehicleAhead | EndOfInput | Rejection


def vehicle_step(stage: VehicleStage, inbound: Iterable[VehicleInbound], occurrences: list[Occurrence],
                 inputs: frozenset[str]) -> Sends:
    """One batch of a vehicle-stage partition: its telemetry admitted and released as
    far as the watermark allows; once every input in `inputs` has ended, everything
    released; then the buses ahead and the closed days that came back from the
    operator stage. The partition's heartbeat
    is not part of it: the shell sends it once the batch's state is stored."""
    telemetry: list[Message] = []
    matched: list[Matched] = []
    ahead: list[VehicleAhead] = []
    sends = Sends()
    for item in inbound:
        if isinstance(item, Rejection):
            sends.rejected.append(item)
        elif isinstance(item, Matched):
            matched.append(item)
        elif isinstance(item, VehicleAhead):
            ahead.append(item)
        elif isinstance(item, EndOfInput):
            if item.input not in stage.partition.ends_seen:
                stage.partition.ends_seen.append(item.input)
        else:
            telemetry.append(item)
    sends.merge(stage.ingest(telemetry, occurrences).told())
    if set(stage.partition.ends_seen) >= inputs and not stage.partition.final:
        sends.merge(stage.flush(occurrences).told())
        stage.partition.final = True
    for message in ahead:
        sends.statuses += stage.on_ahead(message)
    for day in matched:
        sends.merge(stage.judge_day(day.message, occurrences, day.location).told())
    return sends


def judges_a_day(message: OperatorInput) -> bool:
    """Whether an operator-stage message may judge a service day, and so must be handed
    the occurrences registered now (a shell loads them only for those): a heartbeat that
    closes days or reaches live verdicts, a vehicle-day judged again. Handed none, a
    record an occurrence justifies would accuse."""
    return isinstance(message, (Heartbeat, VehicleDayRevised))


def operator_step(stage: OperatorStage, operator_id: str, message: OperatorInput, occurrences: list[Occurrence],
                  location: str | None = None) -> Sends:
    """One message of the operator stage: a trip, a departure (released, or seen live), a trip not followed or cut
    short, a heartbeat, or a vehicle-day judged again."""
    return stage.handle(operator_id, message, occurrences, location)
