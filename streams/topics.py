"""The Kafka topics of DESIGN.md: names, keys and retention, in one place."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Topic:
    name: str
    key: str  # what the record key holds
    compacted: bool  # change logs keep the latest record per key
    description: str


TOPICS: dict[str, Topic] = {
    t.name: t
    for t in (
        Topic("tachograph", "vehicle_id", False, "tachograph pings (GPS, speed, odometer)"),
        Topic("catraca", "vehicle_id", False, "turnstile counter and seal readings"),
        Topic("occurrences", "id", False, "registered occurrences (motivo justificado)"),
        Topic("trips", "vehicle_id", False, "realized trips matched to the schedule"),
        Topic("infractions", "infraction_id", True, "infraction change log; the latest record per id wins"),
        Topic("rejected", "source", False, "dead letters: rejected messages with their reason"),
    )
}
