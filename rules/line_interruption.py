"""art. 6º II — "interromper o serviço de qualquer de suas linhas, sem a autorização da
Prefeitura Municipal, por espaço superior a 72(setenta e duas) horas" (Canarana, Lei
179/1991; the limit is the policy's `[interruption] max_interruption_s`). Shared: a pack
files it under its own code (`rule`).

Art. 6º punishes it "sob pena de rescisão do contrato de concessão", a penalidade especial
that art. 39's fines do not reach: the record is a finding for the Órgão, never an auto
with a fine. It is an Infraction of the article's group ("rescisão") with fine 0; the
docket sink makes no auto of a record without a fine (dockets.service.ingest).

Per line (GTFS route, both directions), across service days: the interruption starts at
the first scheduled departure left unserved after the line's last realized departure (a
scheduled departure more than the match window after it), and lasts while every
scheduled departure of the line goes unserved. Only time the line owed service counts
from its start: a line not scheduled on a holiday is not interrupted by it. It is
recorded on the first day one of its scheduled departures, still unserved, comes more
than max_interruption_s after the start; once per interruption (its id hashes the line
and the start), until the line runs again.

It spans days, so the operator stage keeps per line a `LineService` (rules.facts) — the
last realized departure, the start, the days it could not observe — never the days'
trips; `advance` is the one function that moves it on, for the engine and the tests.

Never an accusation on missing data (absence of telemetry is not absence of service): a
day whose scheduled departures of the line the fleet's telemetry could not observe
(`ServiceDayFacts.departure_observable`), or on which a vehicle was seen on one of the
line's itineraries with its telemetry broken off (facts.unfollowed), restarts the proven
interruption; an interruption that exceeds the limit only across such days is
insufficient evidence.
"""

from __future__ import annotations

from kernel.policy import Policy
from rules.facts import LineService, ServiceDayFacts, iso, local
from rules.model import Finding, InsufficientEvidence, Rule, Scope, make_infraction, number


def hours(seconds: float) -> str:
    """A span as the law counts it: "72 h"."""
    return f"{number(round(seconds / 60 / 60, 1))} h"


def line_day(facts: ServiceDayFacts, route_id: str, policy: Policy) -> tuple[list[float], list[float], bool]:
    """(realized departures, scheduled departures, observable) of a line on the day:
    observable when the fleet was seen around every scheduled departure and no vehicle's
    telemetry broke off on one of its itineraries."""
    day = facts.day
    realized = sorted(t.departed_at for t in facts.trips if t.realized.route_id == route_id)
    scheduled = sorted([day.departure_epoch(t) for t in day.trips if t.route_id == route_id]
                       + [day.start_epoch + w.start_s + k * w.headway_s for w in day.windows
                          if w.route_id == route_id for k in range(w.expected_departures)])
    operator = facts.operator_of_route[route_id]
    observable = (all(facts.departure_observable(operator, t, policy) for t in scheduled)
                  and not any(p.route_id == route_id for p in facts.unfollowed))
    return realized, scheduled, observable


def advance(before: LineService | None, facts: ServiceDayFacts, route_id: str, policy: Policy) -> LineService | None:
    """The line's service after the day (None: nothing known yet)."""
    realized, scheduled, observable = line_day(facts, route_id, policy)
    if realized:
        last = realized[-1]
        unserved = [t for t in scheduled if t > last + policy.trips.match_window_s]
        first = unserved[0] if unserved else None
        return LineService(last_departure=last, since=first, unproven_since=first)
    if not scheduled:
        return before  # nothing owed today: neither service nor interruption
    known = before or LineService()
    unproven = known.unproven_since if known.unproven_since is not None else scheduled[0]
    if not observable:
        return LineService(known.last_departure, None, unproven, (*known.blind, facts.day.date.isoformat()),
                           known.reported)
    since = known.since if known.since is not None else scheduled[0]
    crossed = scheduled[-1] - since > policy.interruption.max_interruption_s
    return LineService(known.last_departure, since, unproven, known.blind, known.reported or crossed)


def lines_of(facts: ServiceDayFacts) -> list[str]:
    """The lines the day concerns: scheduled, run, or remembered from earlier days."""
    day = facts.day
    return sorted({t.route_id for t in day.trips} | {w.route_id for w in day.windows}
                  | {t.realized.route_id for t in facts.trips} | set(facts.line_service))


def detect_for(code: str, facts: ServiceDayFacts, policy: Policy) -> list[Finding]:
    rules = policy.interruption
    if rules is None:  # the policy's law sets no interruption limit
        return []
    findings: list[Finding] = []
    tz, date = facts.tz, facts.day.date
    for route_id in lines_of(facts):
        if route_id not in facts.operator_of_route:
            continue
        before = facts.line_service.get(route_id)
        realized, scheduled, _ = line_day(facts, route_id, policy)
        if realized or not scheduled or (before is not None and before.reported):
            continue
        after = advance(before, facts, route_id, policy)
        operator = facts.operator_of_route[route_id]
        owed = scheduled[-1]  # the day's last scheduled departure, unserved too
        last = after.last_departure
        where = {"last_realized_departure": None if last is None else iso(last, tz),
                 "max_interruption_s": rules.max_interruption_s, "last_unserved_departure": iso(owed, tz),
                 "days_without_observation": list(after.blind)}
        if after.since is not None and owed - after.since > rules.max_interruption_s:
            span = owed - after.since
            lat, lon = next((facts.origin_of[k] for k in sorted(facts.origin_of) if k[0] == route_id), (None, None))
            findings.append(make_infraction(
                code, policy, identity=(route_id, round(after.since)), fine_ufir=0, operator_id=operator,
                route_id=route_id, service_date=date,
                occurred_at=local(after.since + rules.max_interruption_s, tz), lat=lat, lon=lon,
                description=(f"Linha {route_id}: nenhuma viagem realizada desde a partida programada de "
                             f"{local(after.since, tz):%d/%m/%Y %H:%M} até a de {local(owed, tz):%d/%m/%Y %H:%M} "
                             f"({hours(span)}), acima de {hours(rules.max_interruption_s)}: "
                             "serviço interrompido; pena de rescisão do contrato (art. 6º), sem multa — "
                             "constatação para o Órgão Gerencial"),
                evidence={
                    **where,
                    "interrupted_since": iso(after.since, tz),
                    "interruption_s": round(span, 1),
                    "arithmetic": (f"{iso(owed, tz)} − {iso(after.since, tz)} = {hours(span)} "
                                   f"> {hours(rules.max_interruption_s)}"),
                    "penalty": "rescisão do contrato de concessão (art. 6º); sem multa (art. 39 não se aplica)",
                    "reading": ("partidas programadas da linha sem viagem realizada desde a primeira não atendida "
                                "após a última viagem realizada, em dias com a frota observada"),
                    "interval_epoch": [after.since, owed],
                },
            ))
        elif after.unproven_since is not None and owed - after.unproven_since > rules.max_interruption_s:
            findings.append(InsufficientEvidence(
                code=code, service_date=date, operator_id=operator, route_id=route_id, trip_id=None,
                vehicle_id=None,
                reason=("a frota da operadora não foi observada em dias do período: ausência de telemetria não "
                        "é ausência de serviço"),
                evidence={**where, "interrupted_since_unproven": iso(after.unproven_since, tz),
                          "proven_since": None if after.since is None else iso(after.since, tz)}))
    return findings


def advance_lines(lines: dict[str, LineService], facts: ServiceDayFacts, policy: Policy) -> dict[str, LineService]:
    """Every line's service after the closed day (what the operator stage keeps)."""
    out = dict(lines)
    for route_id in lines_of(facts):
        if route_id not in facts.operator_of_route:
            continue
        after = advance(lines.get(route_id), facts, route_id, policy)
        if after is not None:
            out[route_id] = after
    return out


def summary(policy: Policy) -> str:
    if policy.interruption is None:
        return "Requer a seção [interruption] da política."
    return (f"Linha sem viagem realizada por mais de {hours(policy.interruption.max_interruption_s)} "
            f"com viagens programadas: constatação para rescisão, sem multa.")


def rule(code: str) -> Rule:
    """The detector filed under a law's code (Canarana: "art. 6º II")."""
    def detect(facts: ServiceDayFacts, policy: Policy) -> list[Finding]:
        return detect_for(code, facts, policy)

    return Rule(code=code, scope=Scope.SERVICE_DAY, detect=detect, justified_by=frozenset({"road_closure", "other"}),
                summary=summary)

