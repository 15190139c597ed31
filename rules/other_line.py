"""Carrying passengers on another line — "Os veículos de um concessionário não poderão,
salvo expressa autorização da Prefeitura, transitar em outra linha conduzindo
passageiro." (Conselheiro Lafaiete, Lei 4/1948, art. 17.)

A shared detector: a pack files it under its law's code with `rule(code)`; its
thresholds are the policy's `[other_line]` section.

Judged on a realized trip when it arrives (scope "trip"): its line (route_id) is not
one the vehicle is licensed for (fleet.csv `lines`; none listed: every line of its
operator, kernel.fleet), and the catraca counted at least `min_boardings` boardings
during it. Boardings are read from the counter of the vehicle's readings inside the
trip's [departure, arrival], as a high-water mark: each reading above the highest
counter read so far adds the difference. One record per trip.

Guards, the operator's lawyer's questions:
- a bus that ran the line empty (to the garage, to reinforce another terminal) did not
  "conduzir passageiro": fewer than `min_boardings` counted is nothing;
- a counter that rolls over (D-21's register sizes) continues its count: 99,999 -> 2 is
  3 boardings on a 100,000 register, never 99,997;
- a counter below the highest read (a catraca clock running behind interleaves its
  readings: 100, 120, 110, 130 is 30 boardings, not 40; or a counter set back) adds
  nothing, and the next reading counts from the highest;
- a reading with status `fault` is no count: the increase across it (from the reading
  before to the one after) is not counted, the count starts again after it; readings
  rising implausibly fast never reach the facts (engine.vehicle, rules.d21);
- boardings between the last reading before the departure and the first inside the
  trip are not counted (they may be the terminal's before it left): an undercount;
- where the count falls short but the catraca cannot tell the whole trip (fewer than
  two readings, a faulty reading, a counter that went back, or silent more than
  `max_silence_s` after the departure or before the arrival) the record is
  insufficient evidence, never an accusation;
- "salvo expressa autorização da Prefeitura": an `authorized_detour` occurrence over
  the trip's time makes it `justified`. The Prefeitura registers its authorization as
  one naming the vehicle (and the line, if it names one); one naming only the line
  authorizes every vehicle on it then (a fleet sent to reinforce a line).
"""

from __future__ import annotations

from dataclasses import dataclass

from kernel.policy import Policy
from rules.d21 import wrap_size
from rules.facts import TripFacts, iso, local, trip_identity
from rules.model import Finding, InsufficientEvidence, Rule, Scope, duration, make_infraction
from telemetry import CatracaReading, message_id


@dataclass(frozen=True)
class Count:
    """The catraca over a trip: the boardings counted, each reading with what it added
    (None: not read, a fault or a counter below the highest), and why part of the
    trip may be unread."""

    boardings: int
    steps: tuple[tuple[CatracaReading, int | None], ...]
    unread: tuple[str, ...]  # pt-BR, one per reading that breaks the count

    @property
    def read(self) -> tuple[CatracaReading, ...]:
        """The readings whose counter was read (not faulty)."""
        return tuple(r for r, _ in self.steps if r.status != "fault")


def count_boardings(readings, start: float, end: float, policy: Policy, tz) -> Count:
    """The boardings the catraca counted between its readings inside [start, end]."""
    inside = sorted((r for r in readings if start <= r.epoch <= end), key=lambda r: (r.epoch, r.counter))
    highest: int | None = None
    total, steps, unread = 0, [], []
    for reading in inside:
        added: int | None = 0
        if reading.status == "fault":
            added, highest = None, None  # no count, nor across it: it starts again after
            unread.append(f"leitura com falha às {iso(reading.epoch, tz)}")
        elif highest is None:
            highest = reading.counter
        elif reading.counter > highest:
            added, highest = reading.counter - highest, reading.counter
        elif reading.counter < highest:
            size = wrap_size(highest, reading.counter, policy)
            if size is not None:  # a roll-over continues the count
                added, highest = reading.counter + size - highest, reading.counter
            else:
                added = None
                unread.append(f"contador {reading.counter} abaixo de {highest} às {iso(reading.epoch, tz)}")
        total += added or 0
        steps.append((reading, added))
    return Count(total, tuple(steps), tuple(unread))


def detect(facts: TripFacts, policy: Policy, code: str) -> list[Finding]:
    rules = policy.other_line
    realized = facts.realized
    if rules is None or facts.licensed_lines is None or realized.route_id in facts.licensed_lines:
        return []
    count = count_boardings(facts.readings, facts.departed_at, facts.arrived_at, policy, facts.tz)
    read = count.read
    evidence = {
        "licensed_lines": list(facts.licensed_lines),
        "departed_at": iso(facts.departed_at, facts.tz),
        "arrived_at": iso(facts.arrived_at, facts.tz),
        "boardings": count.boardings,
        "min_boardings": rules.min_boardings,
        "max_silence_s": rules.max_silence_s,
        "counter_moduli": list(policy.d21.counter_moduli),
        # every reading inside the trip, with the boardings it added (None: not read)
        "readings": [{"msg_id": message_id(r, facts.tz), "at": iso(r.epoch, facts.tz), "counter": r.counter,
                      "status": r.status, "boardings": added} for r, added in count.steps],
        "interval_epoch": [facts.departed_at, facts.arrived_at],
    }
    if count.boardings >= rules.min_boardings:
        return [_infraction(facts, policy, code, count, evidence)]
    silent = [read[0].epoch - facts.departed_at, facts.arrived_at - read[-1].epoch] if read else []
    if len(read) < 2 or count.unread or max(silent) > rules.max_silence_s:
        why = "; ".join(count.unread) or (
            "catraca sem leituras na viagem" if len(read) < 2 else
            f"catraca em silêncio por {max(silent):.0f} s no início ou no fim da viagem")
        return [InsufficientEvidence(
            code=code, service_date=realized.service_date, operator_id=facts.operator_id,
            route_id=realized.route_id, trip_id=realized.trip_id, vehicle_id=realized.vehicle_id,
            reason=(f"veículo em viagem na linha {realized.route_id}, para a qual não está licenciado, sem contagem "
                    f"completa da catraca ({why}): não se afirma que conduzia passageiros"),
            evidence=evidence)]
    return []


def _infraction(facts: TripFacts, policy: Policy, code: str, count: Count, evidence: dict):
    realized = facts.realized
    first = next(r for r, added in count.steps if added)  # art. 5 III: the first boarding counted
    fix = min(facts.fixes, key=lambda f: abs(f.t - first.epoch)) if facts.fixes else None
    lines = ", ".join(facts.licensed_lines) or "nenhuma"
    return make_infraction(
        code, policy, identity=trip_identity(facts),
        operator_id=facts.operator_id, route_id=realized.route_id, direction_id=realized.direction_id,
        trip_id=realized.trip_id, vehicle_id=realized.vehicle_id, service_date=realized.service_date,
        occurred_at=local(first.epoch, facts.tz), lat=fix.lat if fix else None, lon=fix.lon if fix else None,
        description=(f"Veículo {realized.vehicle_id} conduziu passageiros na linha {realized.route_id} "
                     f"(partida às {local(facts.departed_at, facts.tz):%H:%M}), para a qual não está licenciado "
                     f"(linhas licenciadas: {lines}): a catraca contou {count.boardings} passagens na viagem"),
        evidence=evidence)


def summary(policy: Policy) -> str:
    rules = policy.other_line
    if rules is None:
        return "Requer a seção [other_line] da política."
    return (f"Viagem realizada numa linha para a qual o veículo não está licenciado (fleet.csv, coluna lines; "
            f"sem ela, as linhas da sua operadora) com pelo menos {rules.min_boardings} passagens contadas pela "
            f"catraca durante a viagem; catraca em silêncio por mais de {duration(rules.max_silence_s)} no início "
            "ou no fim, ou com falha, não acusa.")


def rule(code: str) -> Rule:
    """The detector filed under `code`, as the pack's law writes it (e.g. "art. 17")."""
    return Rule(
        code=code,
        scope=Scope.TRIP,
        detect=lambda facts, policy: detect(facts, policy, code),
        justified_by=frozenset({"authorized_detour"}),
        summary=summary,
        doc=f"{code} — {__doc__}",
    )
