"""D-12 — deixar de realizar viagens com a frequência mínima pré-estabelecida para cada linha.

Headway-based service (frequencies.txt, exact_times=0): per route, direction and
frequency window [start, end), realized departures from the origin terminal fewer
than ceil((end - start) / headway_secs). Without telemetry from the operator's fleet
during the window, the shortfall cannot be established (insufficient evidence); nor
when departures just outside the window, whose crossing of the terminal zone's edge is
known only between two fixes, may lie inside it and would make up the shortfall; nor
when a vehicle that could have made the missing departures was silent in the window
(its catraca counting boardings, or its tachograph seen before and after the silence):
they may have been made unseen (ServiceDayFacts.unobserved_window).
"""

from __future__ import annotations

from kernel.policy import Policy
from rules.facts import ServiceDayFacts, iso, local, unfollowed_evidence
from rules.model import Finding, InsufficientEvidence, Live, Rule, Scope, make_infraction

CODE = "D-12"


def _may_have_left_in(tf, start: float, end: float) -> bool:
    """The departure's crossing lies between the last fix inside the terminal zone and
    the first outside it: whether that interval reaches into [start, end)."""
    detected = tf.match.detected
    if detected.left_at is None:  # not known (records from before left_at): taken as exact
        return False
    return detected.left_at - detected.departure_gap_s < end and detected.left_at >= start


def detect(facts: ServiceDayFacts, policy: Policy) -> list[Finding]:
    findings: list[Finding] = []
    start_of_day = facts.day.start_epoch
    # each line's trips, in the day's order: a window reads only its line's (the day's
    # trips once, not once per window)
    by_line: dict[tuple[str, int], list] = {}
    for tf in facts.trips:
        by_line.setdefault((tf.realized.route_id, tf.realized.direction_id), []).append(tf)
    for window in facts.day.windows:
        start, end = start_of_day + window.start_s, start_of_day + window.end_s
        operator = facts.operator_of_route[window.route_id]
        line = by_line.get((window.route_id, window.direction_id), ())
        departures = sorted(tf.departed_at for tf in line if start <= tf.departed_at < end)
        expected = window.expected_departures
        if len(departures) >= expected:
            continue
        # a departure is known to within the pings around the zone exit: one just outside
        # the window may have been inside it (09:00:00 read as 08:59:56 from fixes 60 s apart)
        seen = [tf.departed_at for tf in line if not start <= tf.departed_at < end and _may_have_left_in(tf, start, end)]
        # a vehicle on the line whose telemetry broke off may have left in the window
        # (a stretch a faulty clock dated hides the line's departures only if its bus is the
        # operator's: any of them may run a headway-based line, even one whose every message
        # that day was rejected for its clock)
        operator_vehicles = facts.fleet.get(operator, ())
        unfollowed = [p for p in facts.unfollowed
                      if (p.route_id, p.direction_id) == (window.route_id, window.direction_id)
                      and p.earliest_departure < end and p.latest_departure >= start
                      and facts.hides_for(p, operator_vehicles)]
        # a bus whose clock was faulty in the window may have left any number of times
        unseen_in_time = any(p.clock_offset_s is not None for p in unfollowed)
        if unseen_in_time or len(departures) + len(seen) + len(unfollowed) >= expected:
            findings.append(InsufficientEvidence(
                code=CODE, service_date=window.service_date, operator_id=operator, route_id=window.route_id,
                trip_id=None, vehicle_id=None,
                reason="partidas que podem ter ocorrido na janela sem que a telemetria o comprove",
                evidence={"window": [iso(start, facts.tz), iso(end, facts.tz)], "expected": expected,
                          "realized_departures": len(departures),
                          "uncertain_departures": [iso(t, facts.tz) for t in sorted(seen)],
                          "unfollowed": [unfollowed_evidence(p, facts.tz) for p in unfollowed]}))
            continue
        if not facts.reported_between(operator, start, end, include_end=False):  # [start, end)
            findings.append(InsufficientEvidence(
                code=CODE, service_date=window.service_date, operator_id=operator, route_id=window.route_id,
                trip_id=None, vehicle_id=None,
                reason="nenhum veículo da operadora transmitiu telemetria durante a janela de frequência",
                evidence={"window": [iso(start, facts.tz), iso(end, facts.tz)], "expected": expected}))
            continue
        # the line's vehicles silent in the window (the catraca counting, or seen before and
        # after): the departures may have been made unseen (ServiceDayFacts.unobserved_window)
        unobserved = facts.unobserved_window(window.route_id, window.direction_id, start, end, policy)
        if unobserved:
            findings.append(InsufficientEvidence(
                code=CODE, service_date=window.service_date, operator_id=operator, route_id=window.route_id,
                trip_id=None, vehicle_id=unobserved[0]["vehicle_id"] if len(unobserved) == 1 else None,
                reason="veículos que poderiam ter feito as partidas sem telemetria durante parte da janela",
                evidence={"window": [iso(start, facts.tz), iso(end, facts.tz)], "expected": expected,
                          "realized_departures": len(departures),
                          "max_coverage_gap_s": policy.trips.max_coverage_gap_s, "vehicles": unobserved}))
            continue
        lat, lon = facts.origin_of[(window.route_id, window.direction_id)]
        findings.append(make_infraction(
            CODE, policy, identity=(window.service_date, window.route_id, window.direction_id, window.start_s),
            operator_id=operator, route_id=window.route_id, direction_id=window.direction_id,
            service_date=window.service_date, occurred_at=local(start, facts.tz), lat=lat, lon=lon,
            description=(f"Linha {window.route_id} (sentido {window.direction_id}), janela "
                         f"{local(start, facts.tz):%H:%M}–{local(end, facts.tz):%H:%M} com intervalo de "
                         f"{window.headway_s // 60} min: {len(departures)} partidas realizadas de {expected} exigidas"),
            evidence={
                "window_start": iso(start, facts.tz),
                "window_end": iso(end, facts.tz),
                "headway_s": window.headway_s,
                "expected_departures": expected,
                "expected_formula": f"ceil({window.end_s - window.start_s} / {window.headway_s}) = {expected}",
                "realized_departures": len(departures),
                "departures": [iso(t, facts.tz) for t in departures],
                "template_trip_id": window.trip_id,
                "interval_epoch": [start, end],  # the window (interval_of): judged live at its end
            },
        ))
    return findings


RULE = Rule(
    code=CODE,
    scope=Scope.SERVICE_DAY,
    live=Live.WINDOW_END,
    detect=detect,
    justified_by=frozenset({"road_closure", "accident", "breakdown", "other"}),
    summary=lambda p: "Partidas realizadas numa janela de frequência abaixo de ceil(duração / intervalo).",
)
