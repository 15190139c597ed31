"""The values passed into the engine (what comes out of it: `engine.sends.Sends`)."""

from __future__ import annotations

from dataclasses import dataclass

from geofences.zones import Geofences
from gtfs.model import Feed
from kernel.fleet import Vehicle
from kernel.policy import Policy
from rules.pack import Pack
from telemetry import CatracaReading, Occurrence, TachographPing


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
