"""What the rules produce: infractions (DESIGN.md contract) and insufficient-evidence records."""

from __future__ import annotations

import ast
import datetime as dt
import enum
import functools
import hashlib
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import msgspec

from kernel import __version__
from kernel.policy import Policy, PolicyError
from rules.law import Article, Law
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


class Interval(NamedTuple):
    """The [start, end] epochs (s) of the facts an infraction cites."""

    start: float
    end: float


def interval_of(infraction: Infraction) -> Interval:
    """The facts' interval an infraction cites: its evidence's "interval_epoch", which
    every detector writes and says what it spans (D-12 its frequency window, D-22 the
    scheduled trip). The engine dates live verdicts by it; the evidence keeps the list."""
    start, end = infraction.evidence["interval_epoch"]
    return Interval(start, end)


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


def fine_of(law: Law, article: Article, policy: Policy) -> int:
    """The fine an article carries, in the law's unit: the policy's `[fines]` table where
    it lists the article, else the law's own. A law that leaves its fines to a table
    (Law.fine_range) has none of its own: a table without the article is refused. An
    article fined within a range (Lafaiete's art. 42 B, Cr$ 5 to 30) takes the table's
    amount inside it, else its minimum: never more than the law allows, never a guess."""
    table = policy.fines.table if policy.fines is not None else {}
    low, high = law.fine_range if law.fine_range is not None else (article.fine, article.fine_max)
    if article.code in table:
        fine = table[article.code]
        if high is not None and not low <= fine <= high:
            raise PolicyError(f"fines.table[{article.code!r}] = {fine} {law.fine_unit} is outside the law's "
                              f"{low}..{high} {law.fine_unit}")
        return fine
    if law.fine_range is not None:
        raise PolicyError(f"the policy's [fines] table has no fine for {article.code!r} "
                          f"({law.title} leaves each fine to the Prefeitura's table)")
    return article.fine


# A record's `legal_basis` (DESIGN.md contract): the dispositivo, then the law's own words
# quoted. Only these two functions know the format; the docket store keeps the halves apart.
_LAW_TEXT_OPEN = ". Texto legal: \u201c"
_LAW_TEXT_CLOSE = "\u201d"


def join_legal_basis(dispositivo: str, law_text: str | None) -> str:
    """A record's `legal_basis`: the dispositivo and the law's text it quotes (the
    dispositivo alone when there is no text)."""
    return dispositivo if law_text is None else f"{dispositivo}{_LAW_TEXT_OPEN}{law_text}{_LAW_TEXT_CLOSE}"


def split_legal_basis(legal_basis: str) -> tuple[str, str | None]:
    """(dispositivo, the law's text) of a record's `legal_basis`; the text None when it
    quotes none. Whatever the string, `join_legal_basis(*split_legal_basis(s)) == s`: the
    halves a docket stores always give back the string its audit entries certify."""
    dispositivo, opened, rest = legal_basis.partition(_LAW_TEXT_OPEN)
    if not opened or not rest.endswith(_LAW_TEXT_CLOSE):
        return legal_basis, None
    return dispositivo, rest[:-len(_LAW_TEXT_CLOSE)]


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
    law = law_of(policy)
    article = law.article(code)
    return Infraction(
        infraction_id=infraction_id(code, *identity),
        code=code,
        group=article.group,
        fine_ufir=fine_of(law, article, policy) if fine_ufir is None else fine_ufir,
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
        legal_basis=join_legal_basis(article.legal_basis, article.text),
        evidence=plain({**evidence, "policy_version": policy.version, "engine_version": __version__}),
    )


class Scope(enum.StrEnum):
    """What a rule judges, and so which stage judges it and when (a typo fails at import)."""

    TRIP = "trip"  # when the trip arrives, from its track alone
    MATCHED_TRIP = "matched_trip"  # needs the trip's scheduled match (settled at day close)
    SERVICE_DAY = "service_day"  # the operator stage, over the day's trips
    VEHICLE_DAY = "vehicle_day"  # the vehicle stage, over a vehicle's day
    # on the open track as it grows, a pass along an itinerary from a departure seen
    # (rules.facts.PassFacts), whether or not it becomes a realized trip
    TRACK = "track"


class Live(enum.StrEnum):
    """The moments of the day the engine judges a rule at while the day runs (DESIGN.md,
    Timing), by how its evidence completes."""

    EPISODE_OVER = "episode_over"  # a vehicle-day episode has ended
    CATRACA_SILENCE = "catraca_silence"  # a catraca episode inside proven service
    CATRACA_FAULT = "catraca_fault"
    RUNNING_TRIP = "running_trip"  # a timepoint passed
    # service-day verdicts once their departure, frequency window or match window is over
    OFF_SCHEDULE_DEPARTURE = "off_schedule_departure"
    WINDOW_END = "window_end"
    # judged with `due_by=` the moment: its detect may leave out the trips not due by then
    DEPARTURE_DUE = "departure_due"


# Rule.live: the scope of the facts the engine judges each moment over
LIVE_MOMENTS: dict[Live, Scope] = {
    Live.EPISODE_OVER: Scope.VEHICLE_DAY, Live.CATRACA_SILENCE: Scope.VEHICLE_DAY,
    Live.CATRACA_FAULT: Scope.VEHICLE_DAY, Live.RUNNING_TRIP: Scope.MATCHED_TRIP,
    Live.OFF_SCHEDULE_DEPARTURE: Scope.SERVICE_DAY, Live.WINDOW_END: Scope.SERVICE_DAY,
    Live.DEPARTURE_DUE: Scope.SERVICE_DAY,
}


@dataclass(frozen=True)
class Rule:
    """An automatic detector: its code, what it looks at, and the pure function."""

    code: str
    scope: Scope
    detect: Callable[..., list[Finding]]
    # Occurrence kinds that justify it (motivo justificado); empty: none can.
    justified_by: frozenset[str]
    summary: Callable[[Policy], str]  # how the rule reads the telemetry, pt-BR, with the policy's numbers
    # An aggregate over trips (D-13) applies occurrences to each trip itself.
    aggregates_trips: bool = False
    # When the engine judges it while the day runs (Live); None: at the trip's arrival
    # (Scope.TRIP) or the day's close only.
    live: Live | None = None
    # A shared detector filed under the code its pack gives it (`rule(code)`): its
    # documentation under that code; None: its module's docstring, which opens with it.
    doc: str | None = None
    # The shared detector module it runs under the pack's code when the pack wraps it in a
    # module of its own (Conselheiro Lafaiete's art. 42 A runs rules.d22); None: its own.
    runs: str | None = None
    # A track rule whose record on a pass means the pass did not run its scheduled trip to
    # the end (a turn back): the engine tells the pass to the service-day rules
    # (rules.facts.CutShortPass), so that no other rule accuses the same trip again.
    cuts_trip_short: bool = False
    # A vehicle-day rule whose facts an independent sensor can check: given the facts with
    # the other version of a message that came in two (rules.versions), the record found on
    # the version kept, and those facts, whether the other version is contradicted (C-01: the
    # speed it reports against the distance the GPS fixes cover). None: no such check.
    version_refuted: Callable[..., bool] | None = None

    def __post_init__(self) -> None:
        # refused at the catalogue's import: a plain string (a typo the engine would never
        # match) or a live moment judged over facts of another scope
        if not isinstance(self.scope, Scope):
            raise TypeError(f"{self.code}: scope {self.scope!r} is not a rules.model.Scope")
        if self.live is not None and not isinstance(self.live, Live):
            raise TypeError(f"{self.code}: live {self.live!r} is not a rules.model.Live")
        if self.live is not None and LIVE_MOMENTS[self.live] != self.scope:
            raise ValueError(f"{self.code}: live {self.live} is judged over {LIVE_MOMENTS[self.live]} "
                             f"facts, not {self.scope}")

    @property
    def detector(self) -> str:
        """The shared detection this rule is: what a fault meant to trigger it must reach."""
        return self.runs or self.detect.__module__

    @property
    def requires(self) -> frozenset[str]:
        """The policy's sections this rule reads, found in its code, not declared: the pack
        that lists it refuses a policy lacking one (rules.packs.pack_of), where a declared
        list, once forgotten, let the rule load and then find nothing."""
        modules = {self.detect.__module__, self.detector}
        return frozenset().union(*(policy_sections_read(module) for module in modules))


# What a rule module calls the policy: `policy` in its functions, `p` in its summary's lambda
# (tests/rules/test_catalogue.py holds the modules to it, so that no read goes unseen).
POLICY_NAMES = frozenset({"policy", "p"})


@functools.cache
def policy_sections_read(module: str) -> frozenset[str]:
    """The policy sections a module's code reads (`policy.waiting_time`, `p.trips`).

    Read from the module's source, the whole module: what its detector, summary and
    helpers read, whichever path runs (so a section read in a branch no test reaches
    still counts). A section read only inside another module's helper would not be seen:
    none is today, and a rule module reading an optional section under a name other than
    POLICY_NAMES fails tests/rules/test_catalogue.py."""
    tree = ast.parse(inspect.getsource(importlib.import_module(module)))
    sections = set(Policy.__struct_fields__) - {"policy"}
    return frozenset(node.attr for node in ast.walk(tree)
                     if isinstance(node, ast.Attribute) and node.attr in sections
                     and isinstance(node.value, ast.Name) and node.value.id in POLICY_NAMES)


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
