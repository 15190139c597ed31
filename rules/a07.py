"""A-07 — não completar o itinerário ou descumprir pontos de parada.

A realized trip that provably did not pass one of its stops. How a stop is passed:
- along the shape: two consecutive pings both within the itinerary's corridor, moving
  forward along the shape by a physically plausible step, at most
  `trips.max_coverage_gap_s` apart (the reading trip coverage makes), bracket the stop:
  the bus drove the street between them, whatever corner lies in between;
- or by the straight path between two pings at most `max_interpolation_gap_s` apart
  coming within `stop_radius_m` of it (the fallback where a ping is off the corridor).

A stop is missed only where the track provably went elsewhere: a pair of pings at most
`max_interpolation_gap_s` apart brackets it (by progress along the shape) with a ping
outside the corridor on a path held there (at least D-11's `min_consecutive_pings` in a
row), as on a detour, and their straight path stays farther than the radius. A single ping off the corridor between two on it is a GPS jump, not a path, and
is left out. Anything else (a long gap, jitter backwards) cannot tell: insufficient
evidence. The destination terminal is served by the trip's arrival in its zone. One
record per trip, judged when the trip arrives (its scheduled match is filled in at
day close).
"""

from __future__ import annotations

import numpy as np
import shapely

from kernel.policy import Policy
from rules.facts import TripFacts, iso, local, trip_identity
from rules.model import Finding, InsufficientEvidence, Rule, Scope, make_infraction, number
from trips.detection import along_shape, without_noise

CODE = "A-07"


def _run_lengths(flags: np.ndarray) -> np.ndarray:
    """For each element, the length of the run of equal flags it belongs to."""
    edges = np.flatnonzero(np.diff(flags.astype(np.int8))) + 1
    bounds = np.concatenate(([0], edges, [len(flags)]))
    return np.repeat(np.diff(bounds), np.diff(bounds))


def detect(facts: TripFacts, policy: Policy) -> list[Finding]:
    t, x, y = facts.arrays()
    if len(t) < 2:
        return []
    itinerary = facts.itinerary
    radius, max_gap = policy.a07.stop_radius_m, policy.a07.max_interpolation_gap_s
    # past a lone jump only: two fixes off the corridor around a stop leave its passage
    # open (insufficient evidence), though coverage reads past them
    off_shape = facts.distance()
    keep = without_noise(off_shape <= itinerary.corridor_m, 1)
    index, t, x, y = keep, t[keep], x[keep], y[keep]
    if len(t) < 2:
        return []
    on_corridor = off_shape[keep] <= itinerary.corridor_m
    progress = facts.progress()[keep]
    dt = np.diff(t)
    low, high = np.minimum(progress[:-1], progress[1:]), np.maximum(progress[:-1], progress[1:])
    along = along_shape(t, progress, on_corridor, policy.trips)
    short = dt <= max_gap
    # off the corridor on a path held over enough consecutive pings to be one (D-11's)
    run = _run_lengths(~on_corridor)
    held = ~on_corridor & (run >= policy.d11.min_consecutive_pings)
    off = held[:-1] | held[1:]
    coords = np.stack([np.column_stack([x[:-1], y[:-1]]), np.column_stack([x[1:], y[1:]])], axis=1)
    segments = shapely.linestrings(coords)
    # The destination terminal is served by definition: the trip exists because it
    # reached that terminal's zone. Judging it from the pings up to the arrival alone
    # (all there is when the trip is judged) would accuse a bus still rolling in.
    destination = itinerary.pattern.destination_stop_id
    served = np.array([s.name != destination for s in itinerary.stops], dtype=bool)
    stops = tuple(s for s, kept in zip(itinerary.stops, served) if kept)
    stop_progress = itinerary.stops_progress_m[served] if len(stops) else np.empty(0)
    # a stop two fixes along the shape bracket is passed: the straight path is measured
    # only for the others, stops × short segments of the path
    brackets = (low[None, :] <= stop_progress[:, None]) & (stop_progress[:, None] <= high[None, :])
    passed = (brackets & along[None, :]).any(axis=1)
    nearest = np.full(len(stops), np.inf)
    if short.any() and not passed.all():
        points = shapely.points([s.x for s in stops], [s.y for s in stops])[~passed]
        nearest[~passed] = shapely.distance(points[:, None], segments[None, short]).min(axis=1)
    missed, unknown = [], []
    for k, stop in enumerate(stops):
        bracket = brackets[k]
        if passed[k] or nearest[k] <= radius:
            continue
        entry = {"stop_id": stop.name, "nearest_m": None if np.isinf(nearest[k]) else round(float(nearest[k]), 1)}
        elsewhere = np.flatnonzero(bracket & short & off)
        if len(elsewhere):
            g = int(elsewhere[0])
            i = int(np.argmin(np.hypot(x - stop.x, y - stop.y)))
            missed.append({**entry, "closest_ping": facts.fixes[index[i]].msg_id, "closest_ping_index": int(index[i]),
                           "pings": [facts.fixes[index[g]].msg_id, facts.fixes[index[g + 1]].msg_id]})
        else:
            gaps = np.flatnonzero(bracket)
            g = int(gaps[0]) if len(gaps) else None
            unknown.append({**entry, **({"gap_s": float(dt[g]), "pings": [facts.fixes[index[g]].msg_id,
                                                                           facts.fixes[index[g + 1]].msg_id]}
                                        if g is not None else {"gap_s": None, "pings": []})})
    realized = facts.realized
    if not missed:
        if unknown:
            return [InsufficientEvidence(
                code=CODE, service_date=realized.service_date, operator_id=facts.operator_id,
                route_id=realized.route_id, trip_id=realized.trip_id, vehicle_id=realized.vehicle_id,
                reason="passagem por ponto de parada não verificável pelos registros (intervalo longo ou trajeto incerto)",
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
    scope=Scope.TRIP,
    detect=detect,
    justified_by=frozenset({"road_closure", "authorized_detour", "accident"}),
    summary=lambda p: (f"Viagem realizada cujo trajeto comprovadamente passou a mais de {number(p.a07.stop_radius_m)} m "
                       "de um dos seus pontos de parada."),
)
