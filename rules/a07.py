"""A-07 — não completar o itinerário ou descumprir pontos de parada.

A realized trip whose path never came within `stop_radius_m` of one of its stops.
The path between two pings at most `max_interpolation_gap_s` apart is the straight
segment joining them; a stop that falls in a longer gap (by progress along the
shape) cannot be judged: insufficient evidence. The destination terminal is served by the trip's arrival in its
zone. One record per trip, judged when the trip arrives (its scheduled
match is filled in at day close).
"""

from __future__ import annotations

import numpy as np
import shapely

from fiscaliza.policy import Policy
from rules.facts import TripFacts, iso, local, trip_identity
from rules.model import Finding, InsufficientEvidence, Rule, make_infraction

CODE = "A-07"


def detect(facts: TripFacts, policy: Policy) -> list[Finding]:
    t, x, y = facts.arrays()
    if len(t) < 2:
        return []
    radius, max_gap = policy.a07.stop_radius_m, policy.a07.max_interpolation_gap_s
    coords = np.stack([np.column_stack([x[:-1], y[:-1]]), np.column_stack([x[1:], y[1:]])], axis=1)
    segments = shapely.linestrings(coords)
    usable = np.diff(t) <= max_gap
    # The destination terminal is served by definition: the trip exists because it
    # reached that terminal's zone. Judging it from the pings up to the arrival alone
    # (all there is when the trip is judged) would accuse a bus still rolling in.
    destination = facts.itinerary.pattern.destination_stop_id
    stops = tuple(s for s in facts.itinerary.stops if s.name != destination)
    points = shapely.points([s.x for s in stops], [s.y for s in stops])
    # distance of every stop to every usable segment of the path: stops × segments
    distance = shapely.distance(points[:, None], segments[None, usable]) if usable.any() else None
    nearest = distance.min(axis=1) if distance is not None else np.full(len(stops), np.inf)
    progress = facts.itinerary.locate(x, y)
    stop_progress = facts.itinerary.locate(np.array([s.x for s in stops]), np.array([s.y for s in stops]))
    low, high = np.minimum(progress[:-1], progress[1:]), np.maximum(progress[:-1], progress[1:])
    missed, unknown = [], []
    for k, stop in enumerate(stops):
        if nearest[k] <= radius:
            continue
        in_gap = (~usable) & (low <= stop_progress[k]) & (stop_progress[k] <= high)
        entry = {"stop_id": stop.name, "nearest_m": None if np.isinf(nearest[k]) else round(float(nearest[k]), 1)}
        if in_gap.any():
            g = int(np.flatnonzero(in_gap)[0])
            unknown.append({**entry, "gap_s": float(t[g + 1] - t[g]),
                            "pings": [facts.fixes[g].msg_id, facts.fixes[g + 1].msg_id]})
        else:
            i = int(np.argmin(np.hypot(x - stop.x, y - stop.y)))
            missed.append({**entry, "closest_ping": facts.fixes[i].msg_id, "closest_ping_index": i})
    realized = facts.realized
    if not missed:
        if unknown:
            return [InsufficientEvidence(
                code=CODE, service_date=realized.service_date, operator_id=facts.operator_id,
                route_id=realized.route_id, trip_id=realized.trip_id, vehicle_id=realized.vehicle_id,
                reason="passagem por ponto de parada não verificável: intervalo longo entre registros",
                evidence={"stops": unknown, "max_interpolation_gap_s": max_gap})]
        return []
    first = missed[0]
    fix = facts.fixes[first["closest_ping_index"]]
    return [make_infraction(
        CODE, policy, identity=trip_identity(facts),
        operator_id=facts.operator_id, route_id=realized.route_id, direction_id=realized.direction_id,
        trip_id=realized.trip_id, vehicle_id=realized.vehicle_id, service_date=realized.service_date,
        occurred_at=local(fix.t, facts.tz), lat=fix.lat, lon=fix.lon,
        description=(f"Veículo {realized.vehicle_id} na viagem da linha {realized.route_id} com partida às "
                     f"{local(facts.departed_at, facts.tz):%H:%M} não passou a menos de {radius:g} m de "
                     f"{len(missed)} ponto(s) de parada: {', '.join(m['stop_id'] for m in missed)}"),
        evidence={
            "stop_radius_m": radius,
            "max_interpolation_gap_s": max_gap,
            "missed_stops": [{k: v for k, v in m.items() if k != "closest_ping_index"} for m in missed],
            "unverifiable_stops": unknown,
            "departed_at": iso(facts.departed_at, facts.tz),
            "interval_epoch": [facts.departed_at, facts.arrived_at],
        },
    )]


RULE = Rule(
    code=CODE,
    scope="trip",
    detect=detect,
    justified_by=frozenset({"road_closure", "authorized_detour", "accident"}),
    summary="Viagem realizada cujo trajeto nunca passou a menos de 40 m de um dos seus pontos de parada.",
)
