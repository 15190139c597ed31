"""D-11 — deixar de cumprir os itinerários fixados.

During a realized trip the vehicle is more than `max_distance_m` from the trip's
shape for at least `min_travel_m` of travel and `min_duration_s`. An episode is a run
of at least `min_consecutive_pings` consecutive pings beyond the distance with no gap
longer than `max_ping_gap_s`; its travel is the sum of the straight steps between them
and its duration the time from the first to the last (both underestimate: the law's
benefit of the doubt). Fewer pings (a GPS jump next to a noisy fix) are insufficient
evidence.
Episodes that would qualify only by bridging a longer gap are insufficient evidence.
An authorized detour covering the off-route positions makes it `justified`.
One record per trip, judged when the trip arrives: its identity and description use
only what is known then (the scheduled trip it matches is filled in at day close).
"""

from __future__ import annotations

import numpy as np

from kernel.policy import Policy
from rules.facts import TripFacts, iso, local, trip_identity
from rules.model import Finding, InsufficientEvidence, Rule, Scope, duration, make_infraction, number

CODE = "D-11"


def off_route_episodes(t: np.ndarray, x: np.ndarray, y: np.ndarray, distance: np.ndarray, policy: Policy,
                       bridge_gaps: bool = False) -> list[tuple[int, int]]:
    """(first, last) indices of runs of consecutive pings beyond the distance."""
    off = distance > policy.d11.max_distance_m
    if not off.any():
        return []
    joined = off[:-1] & off[1:]
    if not bridge_gaps:
        joined &= np.diff(t) <= policy.d11.max_ping_gap_s
    starts = np.flatnonzero(off & ~np.concatenate(([False], joined)))
    ends = np.flatnonzero(off & ~np.concatenate((joined, [False])))
    return list(zip(starts.tolist(), ends.tolist()))


def _measure(t, x, y, first: int, last: int) -> tuple[float, float]:
    travel = float(np.hypot(np.diff(x[first : last + 1]), np.diff(y[first : last + 1])).sum())
    return travel, float(t[last] - t[first])


def detect(facts: TripFacts, policy: Policy) -> list[Finding]:
    t, x, y = facts.arrays()
    if len(t) < 2:
        return []
    distance = facts.distance()
    rules = policy.d11

    def qualifies(first, last, min_pings=rules.min_consecutive_pings):
        travel, duration = _measure(t, x, y, first, last)
        return travel >= rules.min_travel_m and duration >= rules.min_duration_s and last - first + 1 >= min_pings

    runs = off_route_episodes(t, x, y, distance, policy)
    episodes = [e for e in runs if qualifies(*e)]
    realized = facts.realized

    def unsure(episode, reason: str, **evidence) -> list[Finding]:
        first, last = episode
        return [InsufficientEvidence(
            code=CODE, service_date=realized.service_date, operator_id=facts.operator_id,
            route_id=realized.route_id, trip_id=realized.trip_id, vehicle_id=realized.vehicle_id, reason=reason,
            evidence={"from": iso(t[first], facts.tz), "to": iso(t[last], facts.tz), **evidence})]

    if not episodes:
        few = [e for e in runs if qualifies(*e, min_pings=2)]
        if few:
            return unsure(few[0], "possível desvio de itinerário visto em poucos registros seguidos",
                          pings=few[0][1] - few[0][0] + 1, min_consecutive_pings=rules.min_consecutive_pings)
        bridged = [e for e in off_route_episodes(t, x, y, distance, policy, bridge_gaps=True) if qualifies(*e)]
        if bridged:
            return unsure(bridged[0], "possível desvio de itinerário com intervalo longo entre registros",
                          max_ping_gap_s=rules.max_ping_gap_s)
        return []
    first, last = episodes[0]
    farthest = first + int(np.argmax(distance[first : last + 1]))
    travel, duration = _measure(t, x, y, first, last)
    all_off = np.concatenate([np.arange(a, b + 1) for a, b in episodes])
    fix = facts.fixes[first]  # art. 5 III: the place and the time of one record, the episode's first
    return [make_infraction(
        CODE, policy, identity=trip_identity(facts),
        operator_id=facts.operator_id, route_id=realized.route_id, direction_id=realized.direction_id,
        trip_id=realized.trip_id, vehicle_id=realized.vehicle_id, service_date=realized.service_date,
        occurred_at=local(t[first], facts.tz), lat=fix.lat, lon=fix.lon,
        description=(f"Veículo {realized.vehicle_id} deixou o itinerário da linha {realized.route_id} "
                     f"(viagem com partida às {local(facts.departed_at, facts.tz):%H:%M}) por {travel:.0f} m e {duration / 60:.1f} min, "
                     f"chegando a {distance[farthest]:.0f} m do traçado"),
        evidence={
            "max_distance_m": rules.max_distance_m,
            "min_travel_m": rules.min_travel_m,
            "min_duration_s": rules.min_duration_s,
            "episodes": [
                {"from": iso(t[a], facts.tz), "to": iso(t[b], facts.tz),
                 "travel_m": round(_measure(t, x, y, a, b)[0], 1), "duration_s": round(_measure(t, x, y, a, b)[1], 1),
                 "max_distance_m": round(float(distance[a : b + 1].max()), 1),
                 "pings": [facts.fixes[i].msg_id for i in range(a, b + 1)]}
                for a, b in episodes
            ],
            "off_route_lonlat": [[facts.fixes[i].lon, facts.fixes[i].lat] for i in all_off.tolist()],
            "interval_epoch": [float(t[episodes[0][0]]), float(t[episodes[-1][1]])],
        },
    )]


RULE = Rule(
    code=CODE,
    scope=Scope.TRIP,
    detect=detect,
    justified_by=frozenset({"authorized_detour", "road_closure", "accident"}),
    summary=lambda p: (f"Mais de {number(p.d11.max_distance_m)} m fora do traçado da viagem por pelo menos "
                       f"{number(p.d11.min_travel_m)} m e {duration(p.d11.min_duration_s)}."),
)
