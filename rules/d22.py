"""D-22 — deixar de realizar viagem programada sem motivo justificado.

Fires for each scheduled timetabled trip that no realized trip was matched to. It
stays `provisional` until its month closes (art. 45, see rules.art45). A trip is not run
only where the telemetry shows it (DESIGN.md: a trip it can neither confirm nor exclude
is insufficient evidence): the operator's fleet reported around the departure, no
vehicle ran its itinerary unseen (trips.unfollowed), and the tachograph of every vehicle
that could have run it — its block's vehicle, else any of the operator's — saw that
vehicle throughout the departure's match window (ServiceDayFacts.unobserved). Else:
insufficient evidence, not an infraction.
"""

from __future__ import annotations

from kernel.policy import Policy
from rules.facts import ServiceDayFacts, iso, local, unfollowed_evidence
from rules.model import PROVISIONAL, Finding, InsufficientEvidence, Live, Rule, Scope, make_infraction, number

CODE = "D-22"
# the occurrences that make a suppressed trip justified (a detour alone does not)
JUSTIFIED_BY = frozenset({"road_closure", "accident", "breakdown", "other"})


def first_trip_keys(facts: ServiceDayFacts) -> set[str]:
    """The first scheduled trip of the day of each route and direction ("início da operação")."""
    first: dict[tuple[str, int], tuple[int, str]] = {}
    for trip in facts.day.trips:
        key = (trip.route_id, trip.direction_id)
        first[key] = min(first.get(key, (trip.departure_s, trip.key)), (trip.departure_s, trip.key))
    return {k for _, k in first.values()}


def detect(facts: ServiceDayFacts, policy: Policy, *, code: str = CODE,
           status: str = PROVISIONAL, covered: frozenset[str] = frozenset(),
           due_by: float | None = None) -> list[Finding]:
    """The suppressed trips of a closed day. Other packs reuse it configured, never
    forked: `code` is the article they file a suppressed trip under (Conselheiro
    Lafaiete's "art. 42 A") and `status` what a closed day makes of it: João Neiva's
    stays provisional until art. 45 settles the month, a law without that exemption
    confirms it. `covered`: keys of scheduled trips another provision of the law judges
    as one act (Lafaiete's turn back: the trip cut short), neither accused nor doubted
    here (one act, one accusation). `due_by`: the day judged live at that moment
    (Live.DEPARTURE_DUE), only the trips whose match window has passed by then; a later
    one's verdict is not due yet (a departure may still come), and asking the telemetry
    about it (`unobserved`) was most of a live judgment's cost."""
    matched = {tf.scheduled.key for tf in facts.trips if tf.scheduled is not None} | covered
    window = policy.trips.match_window_s
    firsts = first_trip_keys(facts)
    findings: list[Finding] = []
    for trip in facts.day.trips:
        departure = facts.day.departure_epoch(trip)
        if due_by is not None and departure + window > due_by:
            continue
        if trip.key in matched:
            continue
        operator = facts.operator_of_route[trip.route_id]
        if not facts.departure_observable(operator, departure, policy):
            findings.append(InsufficientEvidence(
                code=code, service_date=trip.service_date, operator_id=operator, route_id=trip.route_id,
                trip_id=trip.trip_id, vehicle_id=None,
                reason="a frota da operadora não transmitiu telemetria em torno do horário programado",
                evidence={"scheduled_departure": iso(departure, facts.tz), "window_s": window,
                          "reporting_minutes": facts.reported_minutes(operator, departure - window,
                                                                      departure + window),
                          "min_reporting_minutes": policy.trips.min_reporting_minutes}))
            continue
        could = facts.could_have_run(trip)[0]
        unfollowed = [p for p in facts.may_have_run(trip.route_id, trip.direction_id, departure, policy)
                      if facts.hides_for(p, could)]
        if unfollowed:
            findings.append(InsufficientEvidence(
                code=code, service_date=trip.service_date, operator_id=operator, route_id=trip.route_id,
                trip_id=trip.trip_id, vehicle_id=None,
                reason="um veículo percorria o itinerário com a telemetria interrompida: a viagem não pode "
                       "ser confirmada nem excluída",
                evidence={"scheduled_departure": iso(departure, facts.tz), "window_s": window,
                          "unfollowed": [unfollowed_evidence(p, facts.tz) for p in unfollowed]}))
            continue
        unobserved = facts.unobserved(trip, policy)
        if unobserved:
            boarded = any(s["catraca_boardings"] for v in unobserved for s in v["silences"])
            findings.append(InsufficientEvidence(
                code=code, service_date=trip.service_date, operator_id=operator, route_id=trip.route_id,
                trip_id=trip.trip_id, vehicle_id=unobserved[0]["vehicle_id"] if len(unobserved) == 1 else None,
                reason=("a catraca contou embarques com o tacógrafo em silêncio: o veículo estava em serviço e "
                        "a viagem não pode ser confirmada nem excluída" if boarded else
                        "o tacógrafo de um veículo que poderia realizar a viagem silenciou na janela da partida: "
                        "a viagem não pode ser confirmada nem excluída"),
                evidence={"scheduled_departure": iso(departure, facts.tz), "window_s": window,
                          "max_coverage_gap_s": policy.trips.max_coverage_gap_s, "vehicles": unobserved}))
            continue
        nearby = [
            {"vehicle_id": tf.realized.vehicle_id, "departed_at": iso(tf.departed_at, facts.tz),
             "matched_trip_id": tf.realized.trip_id}
            for tf in facts.trips
            if (tf.realized.route_id, tf.realized.direction_id) == (trip.route_id, trip.direction_id)
            and abs(tf.departed_at - departure) <= window
        ]
        lat, lon = facts.origin_of[(trip.route_id, trip.direction_id)]
        start_of_operation = trip.key in firsts
        findings.append(make_infraction(
            code, policy, identity=(trip.service_date, trip.key), status=status,
            operator_id=operator, route_id=trip.route_id, direction_id=trip.direction_id, trip_id=trip.trip_id,
            service_date=trip.service_date, occurred_at=local(departure, facts.tz), lat=lat, lon=lon,
            description=(f"Viagem programada {trip.trip_id} da linha {trip.route_id} (sentido {trip.direction_id}), "
                         f"partida às {local(departure, facts.tz):%H:%M}, não foi realizada"
                         + (" — primeira viagem do dia (início da operação)" if start_of_operation else "")),
            evidence={
                "scheduled_key": trip.key,
                "scheduled_departure": iso(departure, facts.tz),
                "block_id": trip.block_id,
                "programmed_m": round(trip.programmed_m, 1),
                "start_of_operation": start_of_operation,
                "match_window_s": window,
                "realized_trips_within_window": nearby,
                # the scheduled trip (interval_of): judged live a match window past its departure
                "interval_epoch": [departure, departure + (trip.arrival_s - trip.departure_s)],
            },
        ))
    return findings


RULE = Rule(
    code=CODE,
    scope=Scope.SERVICE_DAY,
    live=Live.DEPARTURE_DUE,
    detect=detect,
    justified_by=JUSTIFIED_BY,
    summary=lambda p: ("Viagem programada (quadro de horários) sem viagem realizada casada com ela; isenta no mês de "
                       f"eficiência de ao menos {number(100 * p.art45.min_efficiency)} % (art. 45)."),
)
