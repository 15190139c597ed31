"""D-19 — operar veículo sem dispositivo de controle de numeração de passageiros e
tacógrafo, ou catraca violada; with the retention measure of art. 44, III.

While the vehicle is in service its catraca is silent for more than `max_silence_s`
(silence counted only while in service) or reports `fault`. A vehicle with no catraca
message at all that day is insufficient evidence (the input may lack the stream).
One record per vehicle and service day; the evidence carries the retention of the vehicle (art. 44, III:
"não estiver funcionando o dispositivo de controle de passageiros").

A silence at an edge of the day's readings (before the first, after the last) is also
what a catraca clock off by a few minutes shows: its readings end early (behind) or
start late (ahead) against the tachograph's service. There it accuses only beyond the
limit plus the clock offset the stream tolerates (`stream.max_clock_jump_s`); shorter,
it is insufficient evidence. A silence between two readings is the catraca's own
measure of itself and needs no such margin — unless the vehicle's messages in it were
dated by a faulty clock and rejected (engine.clocks: `VehicleDayFacts.clock_faults`):
then it is insufficient evidence too.
"""

from __future__ import annotations

import numpy as np

from kernel.policy import Policy
from rules.facts import VehicleDayFacts, iso, local, within
from rules.model import Finding, InsufficientEvidence, Live, Rule, Scope, duration, make_infraction

CODE = "D-19"
RETENTION = "retenção do veículo (Lei 867/1998, art. 44, III)"


def silences(facts: VehicleDayFacts, limit_s: float, edge_s: float | None = None) -> list[tuple[float, float]]:
    """In-service stretches without any catraca message longer than `limit_s` (`edge_s`
    before the first and after the last reading): each in-service interval cut by the
    day's silences between readings and at the edges of the day's readings."""
    return [(a, b) for a, b, _ in _silences(facts, limit_s, limit_s if edge_s is None else edge_s)]


def _silences(facts: VehicleDayFacts, limit_s: float, edge_s: float) -> list[tuple[float, float, float]]:
    """(start, end, when it was proven) of each silence in service over its limit: a
    silence between readings once the reading that ends it came (or, still going on,
    once it passed the edge limit), one at an edge once it passed the edge limit."""
    day = facts.catraca
    quiet = ([(-np.inf, day.first, edge_s, np.inf), *[(a, b, limit_s, b) for a, b in day.gaps],
              (day.last, np.inf, edge_s, np.inf)]
             if day.readings else [(-np.inf, np.inf, edge_s, np.inf)])
    found = []
    for start, end in facts.in_service:
        for a, b, limit, closed in quiet:
            a, b = max(a, start), min(b, end)
            if b - a > limit:
                found.append((float(a), float(b), float(min(closed, a + edge_s))))
    return found


def _in_clock_fault(facts: VehicleDayFacts, start: float, end: float, limit: float) -> bool:
    """Whether a silence is filled by stretches whose messages a faulty clock dated
    (rejected, engine.clocks; in receipt time): the catraca spoke then, at a time its clock
    did not say. Only what those stretches fill is excused: where a gap longer than
    `limit` remains beside them (one message with a bad clock inside a long silence), the
    silence still proves."""
    at, met = start, False
    for first, last in sorted(facts.clock_faults):
        if last < start or first > end:
            continue
        met = True
        if first - at > limit:
            return False
        at = max(at, last)
    return met and end - at <= limit


def proven_silences(facts: VehicleDayFacts, policy: Policy) -> list[tuple[float, float, float]]:
    """(start, end, moment its evidence was complete) of each silence that accuses."""
    limit = policy.d19.max_silence_s
    return [s for s in _silences(facts, limit, limit + policy.stream.max_clock_jump_s)
            if not _in_clock_fault(facts, s[0], s[1], limit)]


def _clock_fault_silences(facts: VehicleDayFacts, policy: Policy) -> list[tuple[float, float]]:
    limit = policy.d19.max_silence_s
    return [(a, b) for a, b, _ in _silences(facts, limit, limit + policy.stream.max_clock_jump_s)
            if _in_clock_fault(facts, a, b, limit)]


def _doubted(facts: VehicleDayFacts, reason: str, quiet: list[tuple[float, float]], **evidence) -> InsufficientEvidence:
    """Silences in service that do not prove the catraca silent: insufficient evidence."""
    return InsufficientEvidence(
        code=CODE, service_date=facts.date, operator_id=facts.operator_id, route_id=None, trip_id=None,
        vehicle_id=facts.vehicle_id, reason=reason,
        evidence={"silences": [{"from": iso(a, facts.tz), "to": iso(b, facts.tz), "seconds": round(b - a, 1)}
                               for a, b in quiet], **evidence})


def detect(facts: VehicleDayFacts, policy: Policy) -> list[Finding]:
    limit = policy.d19.max_silence_s
    if not facts.catraca.readings:
        if not facts.in_service:
            return []
        # No catraca message all day: the input may simply not carry this stream.
        return [InsufficientEvidence(
            code=CODE, service_date=facts.date, operator_id=facts.operator_id, route_id=None, trip_id=None,
            vehicle_id=facts.vehicle_id, reason="nenhum registro de catraca do veículo no dia",
            evidence={"in_service": [[iso(a, facts.tz), iso(b, facts.tz)] for a, b in facts.in_service]})]
    quiet = [(a, b) for a, b, _ in proven_silences(facts, policy)]
    faults = [r for r, _ in facts.catraca.notable if r.status == "fault" and within(facts.in_service, r.epoch)]
    if not quiet and not faults:
        excused = _clock_fault_silences(facts, policy)
        if excused:
            return [_doubted(facts, "catraca silenciosa em serviço enquanto o relógio do veículo datava mal os "
                                    "registros (rejeitados como clock_offset): o silêncio não é fato comprovado",
                             excused, max_silence_s=limit,
                             clock_faults=[[iso(a, facts.tz), iso(b, facts.tz)] for a, b in facts.clock_faults])]
        edges = [s for s in silences(facts, limit) if s not in silences(facts, limit, edge_s=np.inf)]
        return [_doubted(facts, "catraca silenciosa na ponta do dia por menos que o limite mais a defasagem de "
                                "relógio tolerada: pode ser o relógio da catraca adiantado ou atrasado",
                         edges, max_silence_s=limit, max_clock_offset_s=policy.stream.max_clock_jump_s)] \
            if edges else []
    moments = [(a, f"catraca sem transmitir por {(b - a) / 60:.1f} min em serviço") for a, b in quiet]
    moments += [(r.epoch, "catraca em falha (status fault)") for r in faults]
    moments.sort()
    at, what = moments[0]
    fix = min(facts.fixes, key=lambda f: abs(f.t - at)) if facts.fixes else None
    return [make_infraction(
        CODE, policy, identity=(facts.date, facts.vehicle_id),
        operator_id=facts.operator_id, vehicle_id=facts.vehicle_id, service_date=facts.date,
        occurred_at=local(at, facts.tz), lat=fix.lat if fix else None, lon=fix.lon if fix else None,
        description=f"Veículo {facts.vehicle_id} operando sem controle de passageiros: {what}",
        evidence={
            "max_silence_s": limit,
            "silences": [{"from": iso(a, facts.tz), "to": iso(b, facts.tz), "seconds": round(b - a, 1)}
                         for a, b in quiet],
            "faults": [iso(r.epoch, facts.tz) for r in faults],
            "in_service": [[iso(a, facts.tz), iso(b, facts.tz)] for a, b in facts.in_service],
            "measures": [RETENTION],
            "interval_epoch": [moments[0][0], moments[-1][0]],
        },
    )]


RULE = Rule(
    code=CODE,
    scope=Scope.VEHICLE_DAY,
    live=Live.CATRACA_SILENCE,
    detect=detect,
    justified_by=frozenset(),
    summary=lambda p: (f"Em serviço, catraca silenciosa por mais de {duration(p.d19.max_silence_s)} ou em falha; "
                       "retenção do veículo (art. 44, III)."),
)
