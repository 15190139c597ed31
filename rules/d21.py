"""D-21 — utilizar veículos sem lacre na catraca ou com o mesmo violado.

While the vehicle is in service, a catraca message shows the seal broken, or the
counter lower than the previous reading (a counter that goes backwards has been
tampered with). One record per vehicle and service day, on the first such message.

Sensor faults that look like a counter going back accuse no one:
- a counter that rolls over, from the top `wrap_margin` of one of the policy's register
  sizes (`counter_moduli`: 99,999 -> 0, 65,535 -> 2) to its bottom, continues the count;
- a counter no register holds, or one rising faster than `max_boardings_per_minute`
  since the previous reading, is rejected before it reaches the facts (engine.vehicle),
  so the reading after it is compared with the last plausible one;
- a catraca whose clock runs behind stamps later readings (higher counts) with earlier
  times: in event-time order its readings interleave with the right ones (100, 120, 110,
  130) and each dip is back above where it fell from at the next reading. A counter
  going back is a fact only once the next reading carries on below the counter it fell
  from; a fall at the day's last reading, with nothing after it, is insufficient
  evidence. (A set-back smaller than the boardings until the next reading cannot be told
  from a clock running behind: the price of never accusing a clock.)
"""

from __future__ import annotations

from kernel.policy import Policy
from rules.facts import VehicleDayFacts, iso, local, within
from rules.model import Finding, InsufficientEvidence, Live, Rule, Scope, make_infraction
from telemetry import message_id

CODE = "D-21"


def wraps(previous: int, counter: int, policy: Policy) -> bool:
    """A fall from near the top of a register size to near its bottom: a roll-over."""
    return wrap_size(previous, counter, policy) is not None


def wrap_size(previous: int, counter: int, policy: Policy) -> int | None:
    """The register size a fall from `previous` to `counter` rolled over at (the
    smallest that fits: the fewest counts across it), None if it is no roll-over."""
    margin = policy.d21.wrap_margin
    return min((size for size in policy.d21.counter_moduli
                if (1 - margin) * size <= previous < size and counter < margin * size), default=None)


def implausible(previous: tuple[float, int] | None, epoch: float, counter: int, policy: Policy) -> str | None:
    """Why a reading cannot be a count of people (None if it can be): a counter no
    register holds, or one that rose faster than people go through a turnstile since the
    vehicle's previous reading (`previous`: its time and counter)."""
    largest = max(policy.d21.counter_moduli)
    if counter >= largest:
        return f"contador {counter} além de qualquer registro de catraca (maior: {largest - 1})"
    if previous is None or counter <= previous[1]:
        return None
    minutes = max((epoch - previous[0]) / 60, 1)
    allowed = policy.d21.max_boardings_per_minute * minutes
    if counter - previous[1] > allowed:
        return (f"contador subiu de {previous[1]} para {counter} em {epoch - previous[0]:.0f} s: mais de "
                f"{policy.d21.max_boardings_per_minute:g} passagens por minuto")
    return None


def violations(facts: VehicleDayFacts, policy: Policy) -> list[dict]:
    """The broken seals and the counters that went back and carried on from there, each
    with the moment its evidence was complete (`proven`)."""
    found = []
    for index, (reading, previous) in enumerate(facts.catraca.notable):
        in_service = within(facts.in_service, reading.epoch)
        if in_service and not reading.seal_intact:
            found.append({"fact": "lacre violado", "reading": reading, "proven": reading.epoch})
        after = facts.catraca.after_notable(index)
        if in_service and _fell(reading, previous, policy) and after is not None and after[1] < previous:
            found.append({"fact": f"contador voltou de {previous} para {reading.counter}", "reading": reading,
                          "previous_counter": previous, "next_counter": after[1], "proven": after[0]})
    return found


def _fell(reading, previous: int | None, policy: Policy) -> bool:
    return previous is not None and reading.counter < previous and not wraps(previous, reading.counter, policy)


def unconfirmed_falls(facts: VehicleDayFacts, policy: Policy) -> list[dict]:
    """Counters that went back at the day's last reading: nothing shows the count carried
    on from there rather than a clock running behind."""
    return [{"ts": iso(reading.epoch, facts.tz), "counter": reading.counter, "previous_counter": previous,
             "msg_id": message_id(reading, facts.tz)}
            for index, (reading, previous) in enumerate(facts.catraca.notable)
            if within(facts.in_service, reading.epoch) and _fell(reading, previous, policy)
            and facts.catraca.after_notable(index) is None]


def detect(facts: VehicleDayFacts, policy: Policy) -> list[Finding]:
    found = violations(facts, policy)
    if not found:
        unconfirmed = unconfirmed_falls(facts, policy)
        return [InsufficientEvidence(
            code=CODE, service_date=facts.date, operator_id=facts.operator_id, route_id=None, trip_id=None,
            vehicle_id=facts.vehicle_id,
            reason="o contador caiu na última leitura do dia: sem a leitura seguinte, não se distingue de um "
                   "relógio de catraca atrasado",
            evidence={"readings": unconfirmed})] if unconfirmed else []
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
                       "seal_intact": f["reading"].seal_intact, "msg_id": message_id(f["reading"], facts.tz)}
                      | ({"previous_counter": f["previous_counter"], "next_counter": f["next_counter"]}
                         if "previous_counter" in f else {})
                      for f in found],
            "counter_moduli": list(policy.d21.counter_moduli),
            "in_service": [[iso(a, facts.tz), iso(b, facts.tz)] for a, b in facts.in_service],
            "interval_epoch": [first.epoch, found[-1]["reading"].epoch],
        },
    )]


RULE = Rule(
    code=CODE,
    scope=Scope.VEHICLE_DAY,
    live=Live.CATRACA_FAULT,
    detect=detect,
    justified_by=frozenset(),
    summary=lambda p: "Em serviço, a catraca informa o lacre rompido ou o contador volta atrás.",
)
