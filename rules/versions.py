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
from rules.facts import VehicleDayFacts
from rules.model import Finding, Infraction, InsufficientEvidence, Rule
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
        return InsufficientEvidence(
            code=record.code, service_date=record.service_date, operator_id=record.operator_id,
            route_id=record.route_id, trip_id=record.trip_id, vehicle_id=record.vehicle_id,
            reason=("registro do tacógrafo recebido em duas versões divergentes (mesmo veículo, horário e "
                    "sequência): só uma delas comprova a infração e nada nos dados indica qual é a verdadeira"),
            evidence={**record.evidence, "infraction_id": record.infraction_id,
                      **_described(facts, other, cited, counted, "só uma versão comprova a infração")})
    return msgspec.structs.replace(record, evidence={**record.evidence,
                                                     **_described(facts, other, cited, counted, verdict)})
