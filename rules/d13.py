"""D-13 — realizar viagens fora dos horários pré-estabelecidos (+100 % da multa para
cada 10 % das viagens realizadas fora dos horários previstos).

Per route and service day: realized timetabled trips whose departure from the origin
terminal is more than `max_early_s` early or `max_late_s` late. One record per route
and day; fine = 200 × (1 + floor(pct / step)) UFIR, pct = 100 × off / realized.
A departure whose zone-exit crossing is bracketed by pings farther apart than
`max_departure_gap_s` is not counted either way (insufficient evidence).
"""

from __future__ import annotations

from fractions import Fraction

from kernel.policy import Policy
from rules.facts import ServiceDayFacts, iso, local
from rules.justification import covering
from rules.laws import law_of
from rules.model import Finding, InsufficientEvidence, Live, Rule, Scope, duration, make_infraction, number

CODE = "D-13"
# Occurrence kinds that justify a trip off schedule (motivo justificado)
JUSTIFIED_BY = frozenset({"road_closure", "accident", "breakdown", "other"})


def escalated_fine(base_ufir: int, off: int, realized: int, step_pct: float) -> int:
    """200 × (1 + floor(pct / step)); exact rational arithmetic, no float rounding."""
    pct = Fraction(100 * off, realized)
    return base_ufir * (1 + int(pct // Fraction(step_pct)))


def is_off_schedule(deviation_s: float, policy: Policy) -> bool:
    return deviation_s < -policy.d13.max_early_s or deviation_s > policy.d13.max_late_s


def detect(facts: ServiceDayFacts, policy: Policy) -> list[Finding]:
    findings: list[Finding] = []
    by_route: dict[str, list] = {}
    for tf in facts.trips:
        if tf.scheduled is None or tf.realized.departure_deviation_s is None:
            continue
        if tf.match.detected.departure_gap_s > policy.d13.max_departure_gap_s:
            findings.append(InsufficientEvidence(
                code=CODE, service_date=facts.day.date, operator_id=tf.operator_id, route_id=tf.realized.route_id,
                trip_id=tf.realized.trip_id, vehicle_id=tf.realized.vehicle_id,
                reason="horário de partida incerto: intervalo entre registros na saída do terminal maior que o limite",
                evidence={"departure_gap_s": tf.match.detected.departure_gap_s,
                          "limit_s": policy.d13.max_departure_gap_s}))
            continue
        by_route.setdefault(tf.realized.route_id, []).append(tf)
    for route_id, trips in sorted(by_route.items()):
        off, justified = [], []
        for tf in trips:
            if not is_off_schedule(tf.realized.departure_deviation_s, policy):
                continue
            scheduled = tf.departed_at - tf.realized.departure_deviation_s
            occurrences = covering(JUSTIFIED_BY, facts.occurrences, route_id, tf.realized.vehicle_id,
                                   min(scheduled, tf.departed_at), max(scheduled, tf.departed_at))
            (justified if occurrences else off).append((tf, [o.id for o in occurrences]))
        if not off:
            continue
        off.sort(key=lambda p: p[0].departed_at)
        realized = len(trips)
        pct = Fraction(100 * len(off), realized)
        fine = escalated_fine(law_of(policy).article(CODE).fine, len(off), realized, policy.d13.escalation_step_pct)
        first = off[0][0]
        lat, lon = facts.origin_of[(first.realized.route_id, first.realized.direction_id)]
        findings.append(make_infraction(
            CODE, policy, identity=(facts.day.date, route_id), fine_ufir=fine,
            operator_id=facts.operator_of_route[route_id], route_id=route_id,
            service_date=facts.day.date, occurred_at=local(first.departed_at, facts.tz), lat=lat, lon=lon,
            description=(f"Linha {route_id}: {len(off)} de {realized} viagens realizadas fora do horário "
                         f"({float(pct):.1f} %) em {facts.day.date:%d/%m/%Y}; multa de {fine} UFIR "
                         f"(200 + 100 % a cada {policy.d13.escalation_step_pct:g} % de viagens fora do horário)"),
            evidence={
                "realized_trips": realized,
                "off_schedule_trips": len(off),
                "pct_off_schedule": round(float(pct), 2),
                "fine_formula": f"{law_of(policy).article(CODE).fine} × (1 + floor({float(pct):.2f} / "
                                f"{policy.d13.escalation_step_pct:g})) = {fine}",
                "max_early_s": policy.d13.max_early_s,
                "max_late_s": policy.d13.max_late_s,
                "trips": [_trip_evidence(tf, facts) for tf, _ in off],
                "justified_trips": [{**_trip_evidence(tf, facts), "occurrences": ids} for tf, ids in justified],
                "interval_epoch": [off[0][0].departed_at, off[-1][0].departed_at],
            },
        ))
    return findings


def _trip_evidence(tf, facts: ServiceDayFacts) -> dict:
    return {
        "trip_id": tf.realized.trip_id,
        "vehicle_id": tf.realized.vehicle_id,
        "direction_id": tf.realized.direction_id,
        "scheduled_departure": iso(facts.day.departure_epoch(tf.scheduled), facts.tz),
        "departed_at": iso(tf.departed_at, facts.tz),
        "deviation_s": tf.realized.departure_deviation_s,
        "departure_pings": list(tf.match.detected.exit_msg_ids),
    }


RULE = Rule(
    code=CODE,
    scope=Scope.SERVICE_DAY,
    live=Live.OFF_SCHEDULE_DEPARTURE,
    detect=detect,
    justified_by=JUSTIFIED_BY,
    summary=lambda p: (f"Partidas do terminal de origem mais de {duration(p.d13.max_early_s)} adiantadas ou "
                       f"{duration(p.d13.max_late_s)} atrasadas, por linha e dia; a multa cresce 100 % a cada "
                       f"{number(p.d13.escalation_step_pct)} % das viagens fora do horário."),
    aggregates_trips=True,
)
