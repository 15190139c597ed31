"""Which stage each message goes to and what leaves it: the one routing that the
replay (`engine.core.Engine`, stages wired in memory) and the Faust workers
(`streams.app`, stages joined by Kafka topics) both run.

A shell decodes what it reads into the items below, calls a step, sends what the
step returns (`Sends`, by output topic) and saves the stages' state. Nothing here
knows about Kafka or files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.messages import (
    DayMatched,
    Heartbeat,
    LiveDeparture,
    OperatorInput,
    ToVehicle,
    TripCutShort,
    TripDeparted,
    TripDetected,
    TripUnfollowed,
    VehicleAhead,
    VehicleDayRevised,
)
from engine.operator import OperatorStage
from engine.status import MonthEfficiency, VehicleStatus
from engine.values import Message
from engine.vehicle import VehicleStage
from rules.model import Finding, Infraction, InsufficientEvidence
from telemetry import Occurrence, Rejection
from trips.model import RealizedTrip


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


@dataclass
class Sends:
    """What a step asks its shell to send, per output, in order."""

    rejected: list[Rejection] = field(default_factory=list)  # dead-letter topic
    findings: list[Finding] = field(default_factory=list)  # infractions / insufficient-evidence
    statuses: list[VehicleStatus] = field(default_factory=list)  # vehicle-status
    to_operators: list[LiveDeparture | TripDeparted | TripUnfollowed | TripCutShort | TripDetected
                       | VehicleDayRevised] = field(default_factory=list)  # operator-events
    trips: list[RealizedTrip] = field(default_factory=list)  # trips
    trips_withdrawn: list[RealizedTrip] = field(default_factory=list)  # trips, withdrawn: a day judged again
    to_vehicles: list[ToVehicle] = field(default_factory=list)  # day-matched: days judged, buses ahead
    months: list[MonthEfficiency] = field(default_factory=list)  # month-efficiency: art. 45 as days close
    late_kept: int = 0  # messages beyond the allowed lateness kept for a re-judgment (a metric)
    rejudged: int = 0  # vehicle-days judged again (a metric)

    @property
    def infractions(self) -> list[Infraction]:
        return [f for f in self.findings if isinstance(f, Infraction)]

    @property
    def insufficient(self) -> list[InsufficientEvidence]:
        return [f for f in self.findings if isinstance(f, InsufficientEvidence)]


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
    results = [stage.ingest(telemetry, occurrences)]
    if set(stage.partition.ends_seen) >= inputs and not stage.partition.final:
        results.append(stage.flush(occurrences))
        stage.partition.final = True
    for result in results:
        sends.rejected += result.rejected
        sends.findings += result.findings
        sends.statuses += result.statuses
        # the departures seen live (admission) before the released ones, a departure
        # before the arrival after it
        sends.to_operators += [*result.live_departed, *result.departed, *result.unfollowed, *result.cut_short,
                               *result.detected, *result.revised]
        sends.late_kept += result.late_kept
        sends.rejudged += result.rejudged
    for message in ahead:
        sends.statuses += stage.on_ahead(message)
    for day in matched:
        judged = stage.judge_day(day.message, occurrences, day.location)
        sends.rejected += judged.rejected
        sends.findings += judged.findings
        sends.rejudged += judged.rejudged
        sends.to_operators += judged.revised
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
    out = stage.handle(operator_id, message, occurrences, location)
    return Sends(rejected=out.rejected, findings=out.findings, trips=out.trips, trips_withdrawn=out.trips_withdrawn,
                 to_vehicles=[*out.ahead, *out.day_matched], months=out.months)
