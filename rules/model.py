"""What the rules produce: infractions (DESIGN.md contract) and insufficient-evidence records."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from kernel import __version__
from kernel.policy import Policy
from rules.laws import law_of

PROVISIONAL = "provisional"
CONFIRMED = "confirmed"
EXEMPT_ART45 = "exempt_art45"
JUSTIFIED = "justified"
WITHDRAWN = "withdrawn"  # a provisional record the settled facts no longer support; kept
STATUSES = (PROVISIONAL, CONFIRMED, EXEMPT_ART45, JUSTIFIED, WITHDRAWN)


class Infraction(msgspec.Struct, frozen=True, kw_only=True):
    """One infraction record (the `infractions` topic and infractions.jsonl)."""

    infraction_id: str
    code: str
    group: str
    fine_ufir: int
    status: str
    operator_id: str | None
    route_id: str | None
    direction_id: int | None
    trip_id: str | None
    vehicle_id: str | None
    service_date: dt.date
    occurred_at: dt.datetime
    # The event time at which the watermark passed the moment this record's evidence was
    # complete (DESIGN.md, Timing); stamped by the engine, kept by every later update.
    detected_at: dt.datetime | None = None
    lat: float | None
    lon: float | None
    description: str
    legal_basis: str
    evidence: dict[str, Any]


class InsufficientEvidence(msgspec.Struct, frozen=True, kw_only=True):
    """A fact a detector could not establish from the telemetry: never an accusation."""

    code: str
    service_date: dt.date
    operator_id: str | None
    route_id: str | None
    trip_id: str | None
    vehicle_id: str | None
    reason: str  # pt-BR, for the operations staff
    evidence: dict[str, Any]


Finding = Infraction | InsufficientEvidence


def plain(value: Any) -> Any:
    """Evidence as plain JSON values (numpy scalars and tuples converted), so that it
    encodes, hashes and compares the same wherever it was computed."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()  # numpy scalar
    return value


def infraction_id(code: str, *facts: object) -> str:
    """Deterministic: the same code and identifying facts always give the same id."""
    text = "|".join([code, *(str(f) for f in facts)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def stamped(infraction: Infraction, epoch: float, tz) -> Infraction:
    """The record as first emitted: `detected_at` set to `epoch` in the feed's timezone,
    unless it already carries one (an update keeps its first emission's)."""
    if infraction.detected_at is not None:
        return infraction
    moment = dt.datetime.fromtimestamp(round(epoch, 3), tz)
    return msgspec.structs.replace(infraction, detected_at=moment)


def localized(infraction: Infraction, tz) -> Infraction:
    """The record's instants in the feed's timezone again (state stored as msgpack
    comes back in UTC; the contract writes the feed's offset)."""
    return msgspec.structs.replace(
        infraction, occurred_at=infraction.occurred_at.astimezone(tz),
        detected_at=None if infraction.detected_at is None else infraction.detected_at.astimezone(tz))


def make_infraction(
    code: str,
    policy: Policy,
    *,
    identity: tuple,
    status: str = CONFIRMED,
    fine_ufir: int | None = None,
    operator_id: str | None,
    route_id: str | None = None,
    direction_id: int | None = None,
    trip_id: str | None = None,
    vehicle_id: str | None = None,
    service_date: dt.date,
    occurred_at: dt.datetime,
    lat: float | None = None,
    lon: float | None = None,
    description: str,
    evidence: dict[str, Any],
) -> Infraction:
    article = law_of(policy).article(code)
    return Infraction(
        infraction_id=infraction_id(code, *identity),
        code=code,
        group=article.group,
        fine_ufir=article.fine if fine_ufir is None else fine_ufir,
        status=status,
        operator_id=operator_id,
        route_id=route_id,
        direction_id=direction_id,
        trip_id=trip_id,
        vehicle_id=vehicle_id,
        service_date=service_date,
        occurred_at=occurred_at,
        lat=None if lat is None else round(lat, 7),
        lon=None if lon is None else round(lon, 7),
        description=description,
        legal_basis=f"{article.legal_basis}. Texto legal: \u201c{article.text}\u201d",
        evidence=plain({**evidence, "policy_version": policy.version, "engine_version": __version__}),
    )


@dataclass(frozen=True)
class Rule:
    """An automatic detector: its code, what it looks at, and the pure function."""

    code: str
    # "trip": judged when the trip arrives, from its track alone; "matched_trip": needs the
    # trip's scheduled match (settled at day close); "service_day" | "vehicle_day";
    # "track": judged on the open track as it grows, a pass along an itinerary from a
    # departure seen (rules.facts.PassFacts), whether or not it becomes a realized trip
    scope: str
    detect: Callable[..., list[Finding]]
    # Occurrence kinds that justify it (motivo justificado); empty: none can.
    justified_by: frozenset[str]
    summary: Callable[[Policy], str]  # how the rule reads the telemetry, pt-BR, with the policy's numbers
    # An aggregate over trips (D-13) applies occurrences to each trip itself.
    aggregates_trips: bool = False
    # A shared detector filed under the code its pack gives it (`rule(code)`): its
    # documentation under that code; None: its module's docstring, which opens with it.
    doc: str | None = None
    # The policy section its thresholds come from, when a policy may leave it out: the
    # pack that lists the rule refuses a policy without it (rules.packs.pack_of).
    requires: str | None = None


def infraction_record(infraction: Infraction) -> dict:
    """An infractions.jsonl line: the contract's fields; times with the feed's offset."""
    record = msgspec.to_builtins(infraction)
    record["occurred_at"] = infraction.occurred_at.isoformat(timespec="seconds")
    if infraction.detected_at is not None:
        record["detected_at"] = infraction.detected_at.isoformat(timespec="seconds")
    return record


def number(value: float) -> str:
    """A threshold as a rule's summary writes it: Brazilian decimal comma, no trailing zeros."""
    return f"{value:g}".replace(".", ",")


def duration(seconds: float) -> str:
    """A threshold in seconds, in minutes when it is whole minutes."""
    return f"{number(seconds / 60)} min" if seconds >= 60 and seconds % 60 == 0 else f"{number(seconds)} s"
