"""B-04 — atrasar ou adiantar horário sem motivo justificado durante a operação.

A realized timetabled trip that departed on time (within D-13's tolerance) and is
more than `max_early_s` early or `max_late_s` late at a later timepoint. The time at
an intermediate timepoint is when the vehicle leaves it (its progress along the
shape passes the stop plus the stop radius) against the scheduled departure; at the
final stop it is when the vehicle reaches it (the stop minus the radius) against the
scheduled arrival. Crossings bracketed by pings farther apart than `max_ping_gap_s`
are not used. One record per trip.
"""

from __future__ import annotations

import datetime as dt

import numpy as np

from gtfs.model import ScheduledTrip
from kernel.policy import Policy
from rules.facts import TripFacts, iso, local
from rules.model import Finding, InsufficientEvidence, Live, Rule, Scope, duration, make_infraction

CODE = "B-04"


def timepoint_passages(facts: TripFacts, policy: Policy) -> list[dict]:
    """Scheduled against observed time at each timepoint after the origin."""
    t, _, _ = facts.arrays()
    progress = facts.progress()
    day_start = facts.day_start
    passages = []
    for stop, final, target in _timepoints(facts.scheduled, policy):
        scheduled = day_start + (stop.arrival_s if final else stop.departure_s)
        reached = np.flatnonzero(progress >= target)
        entry = {"stop_id": stop.stop_id, "event": "chegada" if final else "partida",
                 "scheduled": iso(scheduled, facts.tz)}
        if len(reached) == 0 or reached[0] == 0:
            passages.append({**entry, "observed": None, "reason": "não alcançado no registro"})
            continue
        i = int(reached[0])
        gap = t[i] - t[i - 1]
        if gap > policy.b04.max_ping_gap_s:
            passages.append({**entry, "observed": None, "reason": f"intervalo de {gap:.0f} s entre registros"})
            continue
        fraction = (target - progress[i - 1]) / (progress[i] - progress[i - 1])
        observed = t[i - 1] + fraction * gap
        passages.append({**entry, "observed": iso(observed, facts.tz), "deviation_s": round(observed - scheduled, 1),
                         "observed_epoch": observed, "pings": [facts.fixes[i - 1].msg_id, facts.fixes[i].msg_id]})
    return passages


def passage_marks(scheduled: ScheduledTrip, policy: Policy) -> tuple[float, ...]:
    """Where along the shape `timepoint_passages` reads each timepoint of a scheduled trip
    passed (the progress a fix must reach), in the timepoints' order."""
    return tuple(target for _, _, target in _timepoints(scheduled, policy))


def _timepoints(scheduled: ScheduledTrip, policy: Policy):
    """(stop, final, mark) of each timepoint after the origin: past an intermediate one by
    the stop radius, short of the final stop by it."""
    radius = policy.a07.stop_radius_m
    stops = scheduled.stops
    for k, stop in enumerate(stops[1:], start=1):
        if not stop.timepoint:
            continue
        final = k == len(stops) - 1
        yield stop, final, stop.shape_dist_m - radius if final else stop.shape_dist_m + radius


def detect(facts: TripFacts, policy: Policy) -> list[Finding]:
    deviation = facts.realized.departure_deviation_s
    if facts.scheduled is None or deviation is None:
        return []
    if deviation < -policy.d13.max_early_s or deviation > policy.d13.max_late_s:
        return []  # not departed on time: that is D-13's business
    passages = timepoint_passages(facts, policy)
    off = [p for p in passages if p.get("deviation_s") is not None
           and (p["deviation_s"] < -policy.b04.max_early_s or p["deviation_s"] > policy.b04.max_late_s)]
    realized = facts.realized
    if not off:
        unknown = [p for p in passages if p.get("observed") is None]
        if unknown:
            return [InsufficientEvidence(
                code=CODE, service_date=realized.service_date, operator_id=facts.operator_id,
                route_id=realized.route_id, trip_id=realized.trip_id, vehicle_id=realized.vehicle_id,
                reason="passagem por ponto de controle não estabelecida pela telemetria",
                evidence={"timepoints": _public(passages)})]
        return []
    first = off[0]
    i = int(np.argmin([abs(f.t - first["observed_epoch"]) for f in facts.fixes]))
    early = first["deviation_s"] < 0
    return [make_infraction(
        CODE, policy, identity=(realized.service_date, facts.scheduled.key, realized.vehicle_id),
        operator_id=facts.operator_id, route_id=realized.route_id, direction_id=realized.direction_id,
        trip_id=realized.trip_id, vehicle_id=realized.vehicle_id, service_date=realized.service_date,
        occurred_at=local(first["observed_epoch"], facts.tz), lat=facts.fixes[i].lat, lon=facts.fixes[i].lon,
        description=(f"Viagem {realized.trip_id} (veículo {realized.vehicle_id}) partiu no horário e "
                     f"{'adiantou' if early else 'atrasou'} {abs(first['deviation_s']) / 60:.1f} min no ponto de "
                     f"controle {first['stop_id']} ({first['event']} programada às {dt.datetime.fromisoformat(first['scheduled']):%H:%M})"),
        evidence={
            "departure_deviation_s": deviation,
            "max_early_s": policy.b04.max_early_s,
            "max_late_s": policy.b04.max_late_s,
            "timepoints": _public(passages),
            "interval_epoch": [facts.departed_at, facts.arrived_at],
        },
    )]


def _public(passages: list[dict]) -> list[dict]:
    return [{k: v for k, v in p.items() if k != "observed_epoch"} for p in passages]


RULE = Rule(
    code=CODE,
    scope=Scope.MATCHED_TRIP,
    live=Live.RUNNING_TRIP,
    detect=detect,
    justified_by=frozenset({"road_closure", "authorized_detour", "accident", "breakdown", "other"}),
    summary=lambda p: (f"Viagem que partiu no horário e passou num ponto de controle posterior mais de "
                       f"{duration(p.b04.max_early_s)} adiantada ou {duration(p.b04.max_late_s)} atrasada."),
)
