"""Stopping outside the marked stops — "É expressamente proibida a parada para receber
ou deixar passageiros fora dos pontos predeterminados."
(Conselheiro Lafaiete, Lei 4/1948, art. 19 § único.)

A shared detector: a pack files it under its law's code with `rule(code)`; its
thresholds are the policy's `[unmarked_stop]` section.

The evidence is the tachograph's optional `doors_open`. A stop to take or leave
passengers is a run of at least `min_consecutive_pings` consecutive pings (at most
`max_ping_gap_s` apart) spanning at least `min_duration_s`, each with the doors open, the
speed at most `max_speed_kmh`, farther than `min_stop_distance_m` from every stop of the
feed (stops.txt: the marked stops, served by a trip or not), outside every terminal
zone and on some itinerary's corridor (off every line's streets: a garage, a yard, a
workshop). One record per run, vehicle-day rule judged when the day closes, from the
runs the engine kept (engine.daylog: the standing-with-doors-open fixes away from the
stops and the fix after each, never the day's pings).

Guards, the operator's lawyer's questions:
- one ping with the doors open (a sensor glitch) or a blink shorter than the minimum is
  no stop;
- GPS inaccuracy: the distance to the stops is above the corridor's noise (the policy
  refuses less), and every ping of the run must be that far: one near a stop puts the
  run at the stop;
- a run that qualifies only across a silence longer than `max_ping_gap_s` is
  insufficient evidence: the doors may have closed and the bus moved unseen;
- without `doors_open` nothing can be claimed, and nothing is recorded: a fleet without
  door sensors would otherwise fill the insufficient-evidence log with every traffic
  light. A ping that does not report the doors breaks a run;
- a breakdown, an accident or a road closure covering it makes it `justified`
  (passengers leaving a bus that cannot go on).
"""

from __future__ import annotations

import numpy as np

from kernel.policy import Policy
from rules.facts import DoorFix, VehicleDayFacts, episode_fields, iso, local, trip_at
from rules.model import Finding, InsufficientEvidence, Rule, Scope, duration, make_infraction, number
from trips.model import columns


def standing_with_doors_open(door: DoorFix, policy: Policy) -> bool:
    """The fix is a stop's away from every marked stop: doors open, standing, far from the
    stops, not excused (terminal zone, off the corridors)."""
    rules = policy.unmarked_stop
    return bool(door.fix.doors_open is True and door.fix.speed_kmh <= rules.max_speed_kmh
                and door.stop_m > rules.min_stop_distance_m and not door.excused)


def stop_runs(t: np.ndarray, candidate: np.ndarray, max_ping_gap_s: float, min_consecutive_pings: int,
              min_duration_s: float, bridge_gaps: bool = False) -> list[tuple[int, int]]:
    """(first, last) indices of the runs of consecutive candidate fixes that qualify.
    Consecutive: adjacent in the arrays (the caller passes every fix, or every candidate
    with the fix after it) and, unless `bridge_gaps`, at most `max_ping_gap_s` apart."""
    if not candidate.any():
        return []
    joined = candidate[:-1] & candidate[1:]
    if not bridge_gaps:
        joined &= np.diff(t) <= max_ping_gap_s
    starts = np.flatnonzero(candidate & ~np.concatenate(([False], joined)))
    ends = np.flatnonzero(candidate & ~np.concatenate((joined, [False])))
    return [(a, b) for a, b in zip(starts.tolist(), ends.tolist())
            if b - a + 1 >= min_consecutive_pings and t[b] - t[a] >= min_duration_s]


def detect(facts: VehicleDayFacts, policy: Policy, code: str) -> list[Finding]:
    rules = policy.unmarked_stop
    doors = facts.doors
    if rules is None or len(doors) < 2:
        return []
    fixes = [d.fix for d in doors]
    (t,) = columns(fixes, "t")
    candidate = np.array([standing_with_doors_open(d, policy) for d in doors], dtype=bool)
    args = (rules.max_ping_gap_s, rules.min_consecutive_pings, rules.min_duration_s)
    runs = stop_runs(t, candidate, *args)
    findings: list[Finding] = []
    for a, b in stop_runs(t, candidate, *args, bridge_gaps=True):
        if any(a <= c and d <= b for c, d in runs):
            continue
        trip = trip_at(facts, t[a])
        findings.append(InsufficientEvidence(
            code=code, service_date=facts.date, operator_id=facts.operator_id,
            route_id=trip.realized.route_id if trip else None, trip_id=trip.realized.trip_id if trip else None,
            vehicle_id=facts.vehicle_id,
            reason="possível parada fora dos pontos com intervalo longo entre registros: as portas podem ter "
                   "fechado e o veículo andado sem registro",
            evidence={**_evidence(facts, doors, t, a, b, policy),
                      "longest_silence_s": round(float(np.diff(t[a:b + 1]).max()), 1)}))
    for a, b in runs:
        nearest = min(range(a, b + 1), key=lambda i: doors[i].stop_m)
        # art. 5 III: the place and the time of one record, the stop's first
        findings.append(make_infraction(
            code, policy, identity=(facts.date, facts.vehicle_id, round(t[a], 3)),
            operator_id=facts.operator_id, **episode_fields(facts, t[a], fixes[a]),
            description=(f"Veículo {facts.vehicle_id} parado com as portas abertas das {local(t[a], facts.tz):%H:%M:%S} "
                         f"às {local(t[b], facts.tz):%H:%M:%S} a {doors[nearest].stop_m:.0f} m do ponto de parada "
                         f"mais próximo ({doors[nearest].stop_id})"),
            evidence=_evidence(facts, doors, t, a, b, policy)))
    return findings


def _evidence(facts: VehicleDayFacts, doors, t, a: int, b: int, policy: Policy) -> dict:
    rules = policy.unmarked_stop
    nearest = min(range(a, b + 1), key=lambda i: doors[i].stop_m)
    return {
        "from": iso(t[a], facts.tz), "to": iso(t[b], facts.tz), "duration_s": round(float(t[b] - t[a]), 1),
        "nearest_stop_id": doors[nearest].stop_id, "nearest_stop_m": round(doors[nearest].stop_m, 1),
        "pings": [{"msg_id": doors[i].fix.msg_id, "speed_kmh": doors[i].fix.speed_kmh,
                   "stop_m": round(doors[i].stop_m, 1)} for i in range(a, b + 1)],
        "max_speed_kmh": rules.max_speed_kmh, "min_stop_distance_m": rules.min_stop_distance_m,
        "min_consecutive_pings": rules.min_consecutive_pings, "min_duration_s": rules.min_duration_s,
        "interval_epoch": [float(t[a]), float(t[b])],
    }


def summary(policy: Policy) -> str:
    rules = policy.unmarked_stop
    if rules is None:
        return "Requer a seção [unmarked_stop] da política."
    return (f"Portas abertas (sensor do tacógrafo) com o veículo a até {number(rules.max_speed_kmh)} km/h em "
            f"{rules.min_consecutive_pings} registros seguidos por {duration(rules.min_duration_s)} ou mais, a mais "
            f"de {number(rules.min_stop_distance_m)} m de todo ponto de parada, fora dos terminais; sem o sensor, "
            "nada se afirma.")


def rule(code: str) -> Rule:
    """The detector filed under `code`, as the pack's law writes it (e.g. "art. 19 § único")."""
    return Rule(
        code=code,
        scope=Scope.VEHICLE_DAY,
        detect=lambda facts, policy: detect(facts, policy, code),
        justified_by=frozenset({"breakdown", "accident", "road_closure"}),
        summary=summary,
        doc=f"{code} — {__doc__}",
    )
