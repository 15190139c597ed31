"""A tachograph message received in two versions (same vehicle, time and seq, other
content: a `conflicting_duplicate`) is judged on both, so that neither the order in which
the versions came nor a second version sent on purpose decides the verdict.

The vehicle's facts hold one version of each such message, chosen by its content, never
by arrival order (`kept_version`): the one reporting the higher speed, the version a
speeding rule must see so that a slower copy cannot hide an episode. The other version is
kept beside the facts (`OtherVersion`). A vehicle-day rule's record that cites a message
in two versions is then judged again with the other version in its place
(`judged_on_both_versions`):
- the rule finds the same record on the other version too: both versions support it; it
  stands, naming both;
- the other version is contradicted by the vehicle's own independent sensor (the rule's
  `version_refuted`: for C-01, the speed it reports against the distance the GPS fixes
  cover): the record stands, naming both and why the other one is set aside;
- otherwise the facts cannot tell which version is true: insufficient evidence, naming
  both versions, never an accusation, and never nothing.
A record that only the other version supports is found the same way the other way round.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import msgspec

from kernel.policy import Policy
from rules.facts import VehicleDayFacts, iso
from rules.model import Finding, Infraction, InsufficientEvidence, Rule
from telemetry import CatracaReading, message_id
from trips.model import Fix


class OtherVersion(msgspec.Struct, frozen=True):
    """The version of a message that is not in the facts, and both versions' content
    digests: (the version in the facts, this one)."""

    fix: Fix
    digests: tuple[str, str]


def version_key(t: float, msg_id: str) -> str:
    """What identifies a message whatever offset its time was written with: its instant
    and seq (the dedup key's parts; the message id's seq is after its last '#')."""
    tail = msg_id.rsplit("/", 1)[-1]
    return f"{t!r}#{tail.split('#', 1)[1] if '#' in tail else ''}"


def kept_version(a: Fix, digest_a: str, b: Fix, digest_b: str) -> tuple[Fix, str, Fix, str]:
    """(kept, its digest, other, its digest): the version reporting the higher speed is the
    one in the facts; equal speeds, the lower digest. The same whatever the order."""
    if (-a.speed_kmh, digest_a) <= (-b.speed_kmh, digest_b):
        return a, digest_a, b, digest_b
    return b, digest_b, a, digest_a


def swapped(facts: VehicleDayFacts, versions: Mapping[str, OtherVersion]) -> VehicleDayFacts | None:
    """The same facts with the other version of each message in its place; None when no
    fix of the facts has another version."""
    if not versions:
        return None
    fixes = tuple(versions[k].fix if (k := version_key(f.t, f.msg_id)) in versions else f for f in facts.fixes)
    if all(a is b for a, b in zip(fixes, facts.fixes)):
        return None
    return dataclasses.replace(facts, fixes=fixes)


def _cited(record: Finding, ids: set[str]) -> list[str]:
    text = msgspec.json.encode(record.evidence)
    return sorted(m for m in ids if msgspec.json.encode(m) in text)


def _described(facts: VehicleDayFacts, other: VehicleDayFacts, cited: list[str], counted: str,
               verdict: str) -> dict:
    """The evidence naming both versions of each cited message: its id, the speed and place
    each version reports, and their content digests (the bundle holds both lines)."""
    at = {f.msg_id: k for k, f in enumerate(facts.fixes)}
    versions = []
    for msg_id in cited:
        k = at[msg_id]
        a, b = facts.fixes[k], other.fixes[k]
        versions.append({"msg_id": msg_id, "other_msg_id": b.msg_id,
                         "speeds_kmh": [a.speed_kmh, b.speed_kmh],
                         "positions": [[a.lat, a.lon], [b.lat, b.lon]]})
    return {"conflicting_versions": versions, "conflicting_versions_counted": counted,
            "conflicting_versions_verdict": verdict}


def judged_on_both_versions(findings: Sequence[Finding], facts: VehicleDayFacts | None,
                            versions: Mapping[str, OtherVersion], rules: Sequence[Rule], policy: Policy,
                            finish: Callable[[list[Finding]], list[Finding]],
                            detect: Callable[[Rule, VehicleDayFacts], list[Finding]]) -> list[Finding]:
    """`findings` (the `rules`' records on `facts`, finished) judged on both versions of the
    messages they cite; records of other rules pass unchanged. `detect` runs a rule on facts
    (the caller's guarded call); `finish` applies what the caller applies to a rule's raw
    records (occurrences, plain evidence)."""
    other = swapped(facts, versions) if facts is not None else None
    if other is None:
        return list(findings)
    codes = {rule.code: rule for rule in rules}
    mine = {f.msg_id for f, g in zip(facts.fixes, other.fixes) if f is not g}
    theirs = {g.msg_id for f, g in zip(facts.fixes, other.fixes) if f is not g}
    found_other = {r.infraction_id: r for rule in rules for r in detect(rule, other) if isinstance(r, Infraction)}
    out: list[Finding] = []
    ids = set()
    for record in findings:
        cited = _cited(record, mine) if isinstance(record, Infraction) and record.code in codes else []
        if not cited:
            out.append(record)
            continue
        ids.add(record.infraction_id)
        out.append(_judged(record, codes[record.code], facts, other, cited, record.infraction_id in found_other,
                           policy, counted="a versão de maior velocidade"))
    alone = [r for k, r in found_other.items() if k not in ids and _cited(r, theirs)]
    for record in finish(alone):
        if not isinstance(record, Infraction):
            out.append(record)
            continue
        # judged the other way round: its facts are the other version's
        out.append(_judged(record, codes[record.code], other, facts, _cited(record, theirs), False, policy,
                           counted="a versão de menor velocidade"))
    return out


def _judged(record: Infraction, rule: Rule, facts: VehicleDayFacts, other: VehicleDayFacts, cited: list[str],
            both: bool, policy: Policy, counted: str) -> Finding:
    if both:
        verdict = "as duas versões comprovam a infração"
    elif rule.version_refuted is not None and rule.version_refuted(other, record, facts, policy):
        verdict = "a outra versão é contrariada pelo deslocamento medido pelo GPS"
    else:
        return _doubted(record, "registro do tacógrafo recebido em duas versões divergentes (mesmo veículo, "
                                "horário e sequência): só uma delas comprova a infração e nada nos dados indica "
                                "qual é a verdadeira",
                        _described(facts, other, cited, counted, "só uma versão comprova a infração"))
    return msgspec.structs.replace(record, evidence={**record.evidence,
                                                     **_described(facts, other, cited, counted, verdict)})


# --- catraca readings in two versions ------------------------------------------------
# A catraca reading received in two versions (same vehicle, time and seq: a seal intact in
# one and broken in the other, `ok` and `fault`, two counters) is judged on both the same
# way, with one difference: no independent sensor can set a catraca version aside. The
# seal and the status are the turnstile's own report, seen by nothing else; the counter's
# neighbours are the same sensor, and a counter going back between readings that agree
# with the other version is exactly what a set-back looks like (the version with the
# monotone count may be the forged one as well as the true one). So a record of the
# catraca rules that only one version supports is insufficient evidence, naming both,
# never an accusation and never nothing; one both versions support stands.
#
# The vehicle-day facts are compact (engine.daylog: the notable readings, the silences),
# never the day's readings, so the catraca the other versions tell is accumulated beside
# the day's own from the first reading in two versions on (`DayLog.other`); its facts are
# the day's with that `CatracaDay` in place.


class CatracaVersion(msgspec.Struct, frozen=True):
    """A catraca reading in two versions: the one the facts take, the other, and both
    versions' content digests (in that order)."""

    kept: CatracaReading
    other: CatracaReading
    digests: tuple[str, str]


def kept_reading(a: CatracaReading, digest_a: str, b: CatracaReading, digest_b: str) -> CatracaVersion:
    """The version reporting a fault, else a broken seal, else the lower digest is the one
    in the day's own facts (the live view of the catraca rules sees the fault while the
    day runs); the other is judged beside it. The same whatever the order."""
    if (a.status != "fault", a.seal_intact, digest_a) <= (b.status != "fault", b.seal_intact, digest_b):
        return CatracaVersion(a, b, (digest_a, digest_b))
    return CatracaVersion(b, a, (digest_b, digest_a))


# the fields in which two versions of a reading may differ, as an auto names them
_CATRACA_FIELDS = (("counter", "contador", str), ("seal_intact", "lacre", lambda ok: "intacto" if ok else "violado"),
                   ("status", "situação", lambda status: "em falha" if status == "fault" else "normal"))


def _catraca_described(versions: Sequence[CatracaVersion], tz, verdict: str) -> dict:
    """Both versions of each reading of the day that came in two: its id, their digests
    and the fields in which they differ (the bundle holds both lines)."""
    described = []
    for v in versions:
        differing = [f"{name}: {words(getattr(v.kept, field))} / {words(getattr(v.other, field))}"
                     for field, name, words in _CATRACA_FIELDS if getattr(v.kept, field) != getattr(v.other, field)]
        described.append({"msg_id": message_id(v.kept, tz), "digests": list(v.digests), "differing": differing})
    return {"conflicting_versions": described, "conflicting_versions_verdict": verdict}


def _cites_catraca(record: Infraction, versions: Sequence[CatracaVersion], tz) -> bool:
    """Whether the record's evidence names a reading in two versions (by id, or by its time
    where a rule lists times: D-19's faults)."""
    text = msgspec.json.encode(record.evidence)
    return any(msgspec.json.encode(m) in text
               for v in versions for m in (message_id(v.kept, tz), iso(v.kept.epoch, tz)))


def judged_on_both_catraca_versions(found: Sequence[Finding], other: Sequence[Finding],
                                    versions: Sequence[CatracaVersion], tz) -> list[tuple[Finding, int]]:
    """`found` (the rules' records on the day's facts) and `other` (the same rules' on the
    facts the other versions tell), judged together, each with the facts it comes from (0:
    the day's own, 1: the other versions'):
    - a record both find the same, citing no reading in two versions, passes unchanged;
    - a record both find (same id) stands, naming both versions: as the facts that cite no
      reading in two versions tell it if one of the two does, else as the day's own;
    - a record only one finds is insufficient evidence, naming both versions.
    Insufficient evidence of the day's own facts passes; the other's is not repeated."""
    mine = {r.infraction_id: r for r in found if isinstance(r, Infraction)}
    theirs = {r.infraction_id: r for r in other if isinstance(r, Infraction)}
    out: list[tuple[Finding, int]] = []
    for record in found:
        if not isinstance(record, Infraction):
            out.append((record, 0))
            continue
        twin = theirs.get(record.infraction_id)
        if twin is None:
            out.append((_catraca_doubted(record, versions, tz), 0))
        elif twin == record and not _cites_catraca(record, versions, tz):
            out.append((record, 0))
        else:
            world = 1 if _cites_catraca(record, versions, tz) and not _cites_catraca(twin, versions, tz) else 0
            chosen = (record, twin)[world]
            out.append((msgspec.structs.replace(chosen, evidence={
                **chosen.evidence, **_catraca_described(versions, tz, "as duas versões comprovam a infração")}),
                world))
    out += [(_catraca_doubted(r, versions, tz), 1) for k, r in theirs.items() if k not in mine]
    return out


def _catraca_doubted(record: Infraction, versions: Sequence[CatracaVersion], tz) -> InsufficientEvidence:
    return _doubted(record, "registro da catraca recebido em duas versões divergentes (mesmo veículo, horário e "
                            "sequência): só uma delas comprova a infração e nenhum sensor independente indica qual "
                            "é a verdadeira",
                    _catraca_described(versions, tz, "só uma versão comprova a infração"))


def _doubted(record: Infraction, reason: str, described: dict) -> InsufficientEvidence:
    """A record only one version supports: insufficient evidence, naming both versions."""
    return InsufficientEvidence(
        code=record.code, service_date=record.service_date, operator_id=record.operator_id,
        route_id=record.route_id, trip_id=record.trip_id, vehicle_id=record.vehicle_id, reason=reason,
        evidence={**record.evidence, "infraction_id": record.infraction_id, **described})
