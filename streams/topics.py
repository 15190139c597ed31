"""The Kafka topics of DESIGN.md, and those between the engine's stages: names, keys
and retention, in one place. Input topics, `day-matched` and the vehicles table are
co-partitioned by vehicle_id (same partition count, same murmur2 partitioner)."""

from __future__ import annotations

from dataclasses import dataclass

END_OF_INPUT_KEY = b"__end_of_input__"  # a control record on every tachograph partition


@dataclass(frozen=True)
class Topic:
    name: str
    key: str  # what the record key holds
    compacted: bool  # change logs keep the latest record per key
    description: str
    kept_forever: bool = False  # never deleted by retention (a legal record)
    # the record's timestamp is the broker's time of receipt (LogAppendTime), not the
    # producer's: the independent clock a device's is checked against (engine.clocks)
    stamped_on_receipt: bool = False
    single_partition: bool = False  # one total order, whatever the partition setting


TOPICS: dict[str, Topic] = {
    t.name: t
    for t in (
        Topic("tachograph", "vehicle_id", False, "tachograph pings (GPS, speed, odometer)", stamped_on_receipt=True),
        Topic("catraca", "vehicle_id", False, "turnstile counter and seal readings", stamped_on_receipt=True),
        Topic("occurrences", "id", False, "registered occurrences (motivo justificado)"),
        Topic("trips", "vehicle_id", False, "realized trips matched to the schedule"),
        Topic("infractions", "infraction_id", True, "infraction change log; the latest record per id wins"),
        Topic("rejected", "source", False, "dead letters: rejected messages with their reason"),
        Topic("vehicle-status", "vehicle_id", True, "each vehicle's live status; the latest per vehicle wins"),
        Topic("month-efficiency", "operator_id:month", True,
              "each operator's art. 45 month as its days close; the latest per operator and month wins"),
        Topic("insufficient-evidence", "vehicle_id", False,
              "facts a detector could not establish from the telemetry: never an accusation"),
        # between the engine's two stages
        Topic("operator-events", "operator_id", False, "detected trips, departures and vehicle-stage heartbeats"),
        Topic("day-matched", "vehicle_id", False,
              "the operator stage to each vehicle: its closed days' matches, the bus ahead of it"),
        # outside the engine: the docket store's audit chain heads (dockets.anchors)
        Topic("audit-anchors", "none", False, "the head of the docket store's audit chain after each commit",
              kept_forever=True, single_partition=True),
    )
}
