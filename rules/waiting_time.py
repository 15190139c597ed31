"""art. 10 § 5º — "Os horários aprovados deverão garantir, em cada linha, uma frequência de
veículos [...] que proporcione ao passageiro um tempo médio de espera" inferior ao limite
(Canarana, Lei 179/1991: 30 minutos). Shared: a pack files it under its own code (`rule`).

Per line (route and direction) and period of the policy ([start, end), local time), the
mean wait of a passenger who comes to the origin terminal at a random moment of the
period and takes the next realized departure (ServiceDayFacts.trips' departed_at).
The departures cut the period into stretches h; a passenger arriving in a stretch of
length h waits h/2 on average, and arrives in it with probability h / Σh, so the mean
wait is Σh² / (2 Σh) = E[h²] / (2 E[h]): bunched buses make long waits even when their
number is right. The stretch after the period's last departure is counted up to the
period's end, not to the next departure: a lower bound of the wait, never more than the
passengers waited.

So a period with no departure, or one, has a wait too: none is (end - start) / 2, the
least any passenger arriving then waited. With the fleet on the air throughout, a line
that ran nothing for a period longer than twice the limit made its passengers wait
longer than the law allows: an infraction, not a lack of evidence.

Never an accusation on missing data: over the limit, the wait is insufficient evidence
- when the operator's fleet was silent in the period longer than the policy's
  `max_fleet_silence_s` (no telemetry, a device clock whose messages were rejected: a
  departure may hide in the silence);
- when a vehicle on the line whose telemetry broke off (facts.unfollowed) may have left
  during the period;
- when the approved timetable itself (scheduled trips and frequency windows, the same
  formula) does not keep the wait within the limit: § 5º binds the horários aprovados,
  and a shortfall of the Prefeitura's timetable is no fault of the operator that runs it.
A line with no scheduled departure in a period is not judged in it. A departure known
to within the pings around the terminal's edge (seconds) is taken at its interpolated time.
"""

from __future__ import annotations

import datetime as dt

from kernel.policy import Policy, WaitingPeriod
from rules.facts import ServiceDayFacts, iso, local, unfollowed_evidence
from rules.model import Finding, InsufficientEvidence, Rule, Scope, duration, make_infraction, number


def mean_wait(start: float, end: float, departures: list[float]) -> tuple[float, list[float]]:
    """(mean wait in seconds, the stretches the departures cut [start, end) into)."""
    cuts = [start, *sorted(d for d in departures if start < d < end), end]
    stretches = [b - a for a, b in zip(cuts, cuts[1:])]
    return sum(h * h for h in stretches) / (2 * (end - start)), stretches


def formula(stretches: list[float], wait: float) -> str:
    squares = " + ".join(f"{round(h)}²" for h in stretches)
    return f"Σh² / (2 Σh) = ({squares}) / (2 × {round(sum(stretches))}) = {wait:.1f} s"


def scheduled_departures(facts: ServiceDayFacts, route_id: str, direction_id: int) -> list[float]:
    """The approved timetable's departures of a line: its trips, and every headway of
    its frequency windows from the window's start."""
    day = facts.day
    times = [day.departure_epoch(t) for t in day.trips if (t.route_id, t.direction_id) == (route_id, direction_id)]
    times += [day.start_epoch + w.start_s + k * w.headway_s for w in day.windows
              if (w.route_id, w.direction_id) == (route_id, direction_id) for k in range(w.expected_departures)]
    return sorted(times)


def longest_silence(facts: ServiceDayFacts, operator_id: str, start: float, end: float) -> tuple[float, float]:
    """The longest stretch of [start, end] in which the operator's fleet did not report."""
    times = [t for t in facts.reporting.get(operator_id, ()) if start <= t <= end]
    cuts = [start, *times, end]
    return max(zip(cuts, cuts[1:]), key=lambda ab: ab[1] - ab[0])


def period_bounds(facts: ServiceDayFacts, period: WaitingPeriod) -> tuple[float, float]:
    def at(moment: dt.time) -> float:
        return dt.datetime.combine(facts.day.date, moment, tzinfo=facts.tz).timestamp()
    return at(period.start), at(period.end)


def detect_for(code: str, facts: ServiceDayFacts, policy: Policy) -> list[Finding]:
    rules = policy.waiting_time
    if rules is None:  # the policy's law has no waiting-time limit
        return []
    findings: list[Finding] = []
    day = facts.day
    lines = sorted({(t.route_id, t.direction_id) for t in day.trips}
                   | {(w.route_id, w.direction_id) for w in day.windows})
    for route_id, direction_id in lines:
        operator = facts.operator_of_route[route_id]
        scheduled = scheduled_departures(facts, route_id, direction_id)
        realized = sorted(tf.departed_at for tf in facts.trips
                          if (tf.realized.route_id, tf.realized.direction_id) == (route_id, direction_id))
        for period in rules.periods:
            start, end = period_bounds(facts, period)
            if not any(start <= t < end for t in scheduled):
                continue  # no service approved for the line in this period: nothing to judge
            departures = [t for t in realized if start <= t < end]
            wait, stretches = mean_wait(start, end, departures)
            if wait <= rules.max_wait_s:
                continue
            where = {"period": period.name, "window": [iso(start, facts.tz), iso(end, facts.tz)],
                     "direction_id": direction_id}

            def insufficient(reason: str, **evidence) -> InsufficientEvidence:
                return InsufficientEvidence(
                    code=code, service_date=day.date, operator_id=operator, route_id=route_id, trip_id=None,
                    vehicle_id=None, reason=reason,
                    evidence={**where, "mean_wait_s": round(wait, 1), "realized_departures":
                              [iso(t, facts.tz) for t in departures], **evidence})

            silent_from, silent_to = longest_silence(facts, operator, start, end)
            if silent_to - silent_from > rules.max_fleet_silence_s:
                findings.append(insufficient(
                    "a frota da operadora ficou sem transmitir telemetria durante o período: partidas podem "
                    "ter ocorrido sem registro",
                    fleet_silence=[iso(silent_from, facts.tz), iso(silent_to, facts.tz)]))
                continue
            unfollowed = [p for p in facts.unfollowed
                          if (p.route_id, p.direction_id) == (route_id, direction_id)
                          and p.earliest_departure < end and p.latest_departure >= start]
            if unfollowed:
                findings.append(insufficient(
                    "veículo na linha com telemetria interrompida pode ter partido durante o período",
                    unfollowed=[unfollowed_evidence(p, facts.tz) for p in unfollowed]))
                continue
            planned_wait, planned_stretches = mean_wait(start, end, [t for t in scheduled if start <= t < end])
            if planned_wait > rules.max_wait_s:
                findings.append(insufficient(
                    "o próprio quadro de horários aprovado não garante o tempo médio de espera no período",
                    scheduled_mean_wait_s=round(planned_wait, 1),
                    scheduled_formula=formula(planned_stretches, planned_wait)))
                continue
            lat, lon = facts.origin_of[(route_id, direction_id)]
            findings.append(make_infraction(
                code, policy, identity=(day.date, route_id, direction_id, period.start.isoformat()),
                operator_id=operator, route_id=route_id, direction_id=direction_id, service_date=day.date,
                occurred_at=local(start, facts.tz), lat=lat, lon=lon,
                description=(f"Linha {route_id} (sentido {direction_id}), período \u201c{period.name}\u201d "
                             f"{local(start, facts.tz):%H:%M}–{local(end, facts.tz):%H:%M}: tempo médio de "
                             f"espera de {number(round(wait / 60, 1))} min pelas {len(departures)} partidas "
                             f"realizadas, acima de {duration(rules.max_wait_s)}"),
                evidence={
                    **where,
                    "departures": [iso(t, facts.tz) for t in departures],
                    "headways_s": [round(h, 1) for h in stretches],
                    "mean_wait_s": round(wait, 1),
                    "formula": formula(stretches, wait),
                    "max_wait_s": rules.max_wait_s,
                    "scheduled_departures": len([t for t in scheduled if start <= t < end]),
                    "scheduled_mean_wait_s": round(planned_wait, 1),
                    "reading": ("espera média de quem chega ao terminal ao acaso no período até a próxima "
                                "partida realizada, contada até o fim do período (limite inferior)"),
                    "interval_epoch": [start, end],
                },
            ))
    return findings


def summary(policy: Policy) -> str:
    if policy.waiting_time is None:
        return "Sem limite de tempo médio de espera na política."
    return (f"Tempo médio de espera por linha e período, das partidas realizadas (E[h²] / (2 E[h])), "
            f"acima de {duration(policy.waiting_time.max_wait_s)}.")


def rule(code: str) -> Rule:
    """The detector filed under a law's code (Canarana: "art. 10 § 5º")."""
    def detect(facts: ServiceDayFacts, policy: Policy) -> list[Finding]:
        return detect_for(code, facts, policy)

    return Rule(code=code, scope=Scope.SERVICE_DAY, detect=detect,
                justified_by=frozenset({"road_closure", "accident", "breakdown", "other"}), summary=summary)
