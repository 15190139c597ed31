"""D-21 — utilizar veículos sem lacre na catraca ou com o mesmo violado.

While the vehicle is in service, a catraca message shows the seal broken, or the
counter lower than the previous reading (a counter that goes backwards has been
tampered with). One record per vehicle and service day, on the first such message.
"""

from __future__ import annotations

from fiscaliza.policy import Policy
from rules.facts import VehicleDayFacts, iso, local, within
from rules.model import Finding, Rule, make_infraction

CODE = "D-21"


def violations(facts: VehicleDayFacts) -> list[dict]:
    found = []
    for reading, previous in facts.catraca.notable:
        in_service = within(facts.in_service, reading.epoch)
        if in_service and not reading.seal_intact:
            found.append({"fact": "lacre violado", "reading": reading})
        if in_service and previous is not None and reading.counter < previous:
            found.append({"fact": f"contador voltou de {previous} para {reading.counter}", "reading": reading})
    return found


def detect(facts: VehicleDayFacts, policy: Policy) -> list[Finding]:
    found = violations(facts)
    if not found:
        return []
    first = found[0]["reading"]
    fix = min(facts.fixes, key=lambda f: abs(f.t - first.epoch)) if facts.fixes else None
    trip = next((tf for tf in facts.trips if tf.departed_at <= first.epoch <= tf.arrived_at), None)
    return [make_infraction(
        CODE, policy, identity=(facts.date, facts.vehicle_id),
        operator_id=facts.operator_id,
        route_id=trip.realized.route_id if trip else None,
        direction_id=trip.realized.direction_id if trip else None,
        trip_id=trip.realized.trip_id if trip else None,
        vehicle_id=facts.vehicle_id, service_date=facts.date, occurred_at=local(first.epoch, facts.tz),
        lat=fix.lat if fix else None, lon=fix.lon if fix else None,
        description=f"Veículo {facts.vehicle_id} em serviço com catraca violada: {found[0]['fact']}",
        evidence={
            "facts": [{"fact": f["fact"], "ts": iso(f["reading"].epoch, facts.tz), "counter": f["reading"].counter,
                       "seal_intact": f["reading"].seal_intact} for f in found],
            "in_service": [[iso(a, facts.tz), iso(b, facts.tz)] for a, b in facts.in_service],
            "interval_epoch": [first.epoch, found[-1]["reading"].epoch],
        },
    )]


RULE = Rule(
    code=CODE,
    scope="vehicle_day",
    detect=detect,
    justified_by=frozenset(),
    summary="Em serviço, a catraca informa o lacre rompido ou o contador volta atrás.",
)
