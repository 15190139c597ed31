"""What a stage, a step or the replay's engine asks its shell to send: one value, combined
with `merge`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from engine.messages import (
    LiveDeparture,
    OperatorInput,
    ToVehicle,
    TripCutShort,
    TripDeparted,
    TripDetected,
    TripUnfollowed,
    VehicleDayRevised,
)
from engine.status import MonthEfficiency, VehicleStatus
from rules.model import Finding, Infraction, InsufficientEvidence
from telemetry import Rejection
from trips.model import RealizedTrip


@dataclass
class Sends:
    """What to send, per output, in order."""

    rejected: list[Rejection] = field(default_factory=list)  # dead-letter topic
    # infractions (a change log: a later record with the same infraction_id supersedes an
    # earlier one) and insufficient evidence
    findings: list[Finding] = field(default_factory=list)
    statuses: list[VehicleStatus] = field(default_factory=list)  # vehicle-status, latest last
    to_operators: list[OperatorInput] = field(default_factory=list)  # operator-events, in order (`told`)
    # what the vehicle stage found for the operator stage, kind by kind, until `told`
    # departures the live views saw at admission, for the bus ahead only (never evidence)
    live_departed: list[LiveDeparture] = field(default_factory=list)
    departed: list[TripDeparted] = field(default_factory=list)
    unfollowed: list[TripUnfollowed] = field(default_factory=list)
    cut_short: list[TripCutShort] = field(default_factory=list)  # told with their track rule's record
    detected: list[TripDetected] = field(default_factory=list)
    revised: list[VehicleDayRevised] = field(default_factory=list)  # vehicle-days judged again
    trips: list[RealizedTrip] = field(default_factory=list)  # trips
    # trips sent before that a day judged again no longer finds (engine.late)
    trips_withdrawn: list[RealizedTrip] = field(default_factory=list)
    to_vehicles: list[ToVehicle] = field(default_factory=list)  # day-matched: days judged, buses ahead
    months: list[MonthEfficiency] = field(default_factory=list)  # month-efficiency: art. 45 as days close
    late_kept: int = 0  # messages beyond the allowed lateness kept for a re-judgment (engine.late; a metric)
    rejudged: int = 0  # vehicle-days judged again (a metric)

    @property
    def infractions(self) -> list[Infraction]:
        return [f for f in self.findings if isinstance(f, Infraction)]

    @property
    def insufficient(self) -> list[InsufficientEvidence]:
        return [f for f in self.findings if isinstance(f, InsufficientEvidence)]

    def merge(self, other: Sends) -> None:
        """`other`'s sends after these: every list appended, the counters summed."""
        mine = self.__dict__
        for name, theirs in other.__dict__.items():
            if theirs:  # most of a beat's sends are empty: nothing to add
                if isinstance(theirs, list):
                    mine[name].extend(theirs)
                else:
                    mine[name] += theirs

    def told(self) -> Sends:
        """These sends with what the vehicle stage found for the operator stage moved to
        `to_operators`, after what is there: the departures seen live (admission) before the
        released ones, a departure before the arrival after it."""
        return dataclasses.replace(
            self, to_operators=[*self.to_operators, *self.live_departed, *self.departed, *self.unfollowed,
                                *self.cut_short, *self.detected, *self.revised],
            live_departed=[], departed=[], unfollowed=[], cut_short=[], detected=[], revised=[])

