"""The values passed in and out of the engine."""

from __future__ import annotations

from dataclasses import dataclass, field

from geofences.zones import Geofences
from gtfs.model import Feed
from kernel.fleet import Vehicle
from kernel.policy import Policy
from rules.model import Infraction, InsufficientEvidence
from rules.pack import Pack
from telemetry import CatracaReading, Occurrence, Rejection, TachographPing
from trips.model import RealizedTrip


@dataclass(frozen=True)
class Context:
    """Everything static the engine needs: schedule, geometry, policy, fleet, and the
    rule pack the policy names (checked against it by `engine.loading`, where both are
    loaded: the engine never looks a pack up)."""

    feed: Feed
    geofences: Geofences
    policy: Policy
    fleet: dict[str, Vehicle]
    pack: Pack


@dataclass(frozen=True)
class Message:
    """A decoded message and where it came from (file:line or topic/partition/offset)."""

    body: TachographPing | CatracaReading | Occurrence
    location: str | None = None
    raw: str | None = None  # the message as received, kept for rejections
    offset: int | None = None  # its offset in its Kafka partition (workers): a redelivery is a duplicate
    # when a clock other than the device's saw it (epoch s): the Kafka record's timestamp in
    # a live worker; a message's own `received_at` field, where it has one, counts first
    received_at: float | None = None


@dataclass
class Emitted:
    trips: list[RealizedTrip] = field(default_factory=list)
    # trips sent before that a day judged again no longer finds (engine.late)
    trips_withdrawn: list[RealizedTrip] = field(default_factory=list)
    # A change log: a later record with the same infraction_id supersedes an earlier one.
    infractions: list[Infraction] = field(default_factory=list)
    insufficient: list[InsufficientEvidence] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    statuses: list = field(default_factory=list)  # engine.status.VehicleStatus, latest last
    months: list = field(default_factory=list)  # engine.status.MonthEfficiency, latest last
    late_kept: int = 0  # messages beyond the allowed lateness kept for a re-judgment (engine.late)
    rejudged: int = 0  # vehicle-days judged again

    def extend(self, other: "Emitted") -> None:
        self.trips.extend(other.trips)
        self.trips_withdrawn.extend(other.trips_withdrawn)
        self.infractions.extend(other.infractions)
        self.insufficient.extend(other.insufficient)
        self.rejected.extend(other.rejected)
        self.statuses.extend(other.statuses)
        self.months.extend(other.months)
        self.late_kept += other.late_kept
        self.rejudged += other.rejudged
