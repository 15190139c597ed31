"""What a run enforces against: the static inputs (feed, fleet, policy, geofences).

They configure every entry point. A worker or a sink reads its telemetry from Kafka and
needs nothing else; the replay's telemetry files are `telemetry.files.TelemetryFiles`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class StaticInputs:
    """The network and its rules; `policy`/`geofences` None mean the shipped defaults."""

    feed: Path
    fleet: Path
    policy: Path | None = None
    geofences: Path | None = None
