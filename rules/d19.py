"""D-19 — operar veículo sem dispositivo de controle de numeração de passageiros e
tacógrafo, ou catraca violada; with the retention measure of art. 44, III.

While the vehicle is in service its catraca is silent for more than `max_silence_s`
(silence counted only while in service) or reports `fault`. A vehicle with no catraca
message at all that day is insufficient evidence (the input may lack the stream).
One record per vehicle and service day; the evidence carries the retention of the vehicle (art. 44, III:
"não estiver funcionando o dispositivo de controle de passageiros").
"""

from __future__ import annotations

import numpy as np

from fiscaliza.policy import Policy
from rules.facts import VehicleDayFacts, iso, local, within
from rules.model import Finding, InsufficientEvidence, Rule, make_infraction

CODE = "D-19"
RETENTION = "retenção do veículo (Lei 867/1998, art. 44, III)"


def silences(facts: VehicleDayFacts, limit_s: float) -> list[tuple[float, float]]:
    """In-service stretches without any catraca message longer than `limit_s`: each
    in-service interval cut by the day's silences between readings (and before the
    first and after the last reading)."""
    day = facts.catraca
    quiet = [(-np.inf, day.first), *day.gaps, (day.last, np.inf)] if day.readings else [(-np.inf, np.inf)]
    found = []
    for start, end in facts.in_service:
        for a, b in quiet:
            a, b = max(a, start), min(b, end)
            if b - a > limit_s:
                found.append((float(a), float(b)))
    return found


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
    quiet = silences(facts, limit)
    faults = [r for r, _ in facts.catraca.notable if r.status == "fault" and within(facts.in_service, r.epoch)]
    if not quiet and not faults:
        return []
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
    scope="vehicle_day",
    detect=detect,
    justified_by=frozenset(),
    summary="Em serviço, catraca silenciosa por mais de 600 s ou em falha; retenção do veículo (art. 44, III).",
)
