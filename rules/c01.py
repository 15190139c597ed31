"""C-01 — dirigir com excesso de velocidade e/ou desobedecendo regras de trânsito.

The tachograph's speed above the limit of the zone the vehicle is in (the policy's
default elsewhere) plus `tolerance_kmh`, on at least `min_consecutive_pings`
consecutive pings spanning at least `min_episode_s` (consecutive: at most
`max_ping_gap_s` apart). Episodes less than `merge_gap_s` apart merge into one.
One record per episode; route and trip when the vehicle was running one.

A sensor fault must not accuse: the episode's reported speeds must agree, within
`speed_agreement_kmh`, with the speed its pings' displacement shows (the straight
distance between consecutive pings over their time, which a curve can only shorten).
An episode that does not agree is insufficient evidence, not an infraction.

Speeding needs the vehicle's own reported speed (DESIGN.md, Tachograph): an episode
whose pings over the limit include one with a speed derived from displacement (an ingest
adapter's `speed_source: derived`) is insufficient evidence too, whatever it shows.
"""

from __future__ import annotations

import numpy as np

from kernel.policy import Policy
from rules.facts import VehicleDayFacts, episode_fields, iso, kmh, local, trip_at
from rules.model import Finding, InsufficientEvidence, Live, Rule, Scope, duration, make_infraction, number
from trips.model import columns

CODE = "C-01"


def speeding_episodes(t: np.ndarray, speed: np.ndarray, limit: np.ndarray, policy: Policy) -> list[tuple[int, int]]:
    """(first, last) fix indices of merged speeding episodes."""
    rules = policy.c01
    over = speed > limit + rules.tolerance_kmh
    if not over.any():
        return []
    joined = over[:-1] & over[1:] & (np.diff(t) <= rules.max_ping_gap_s)
    starts = np.flatnonzero(over & ~np.concatenate(([False], joined)))
    ends = np.flatnonzero(over & ~np.concatenate((joined, [False])))
    runs = [(a, b) for a, b in zip(starts.tolist(), ends.tolist())
            if b - a + 1 >= rules.min_consecutive_pings and t[b] - t[a] >= rules.min_episode_s]
    merged: list[list[int]] = []
    for a, b in runs:
        if merged and t[a] - t[merged[-1][1]] < rules.merge_gap_s:
            merged[-1][1] = b
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def displacement_agreement(t: np.ndarray, x: np.ndarray, y: np.ndarray, speed: np.ndarray, over: list[int],
                           max_gap_s: float) -> tuple[float, float] | None:
    """(reported, displaced) mean speeds in km/h over the episode's consecutive pairs of
    pings over the limit (at most `max_gap_s` apart); None without such a pair."""
    pairs = [(i, i + 1) for i in over if i + 1 in over and 0 < t[i + 1] - t[i] <= max_gap_s]
    if not pairs:
        return None
    seconds = sum(t[j] - t[i] for i, j in pairs)
    metres = sum(float(np.hypot(x[j] - x[i], y[j] - y[i])) for i, j in pairs)
    reported = sum((speed[i] + speed[j]) / 2 * (t[j] - t[i]) for i, j in pairs) / seconds
    return float(reported), kmh(metres, seconds)


def detect(facts: VehicleDayFacts, policy: Policy) -> list[Finding]:
    n = len(facts.fixes)
    if n < 2:
        return []
    t, speed, x, y = columns(facts.fixes, "t", "speed_kmh", "x", "y")
    limit = np.asarray(facts.speed_limits_kmh, dtype=float)
    findings: list[Finding] = []
    for a, b in speeding_episodes(t, speed, limit, policy):
        peak = a + int(np.argmax(speed[a : b + 1] - limit[a : b + 1]))
        trip = trip_at(facts, t[a])
        over = [i for i in range(a, b + 1) if speed[i] > limit[i] + policy.c01.tolerance_kmh]
        derived = [facts.fixes[i].msg_id for i in over if facts.fixes[i].speed_derived]
        if derived:
            findings.append(InsufficientEvidence(
                code=CODE, service_date=facts.date, operator_id=facts.operator_id,
                route_id=trip.realized.route_id if trip else None, trip_id=trip.realized.trip_id if trip else None,
                vehicle_id=facts.vehicle_id,
                reason=("velocidade derivada do deslocamento (speed_source: derived), não informada pelo "
                        "tacógrafo do veículo: só a velocidade do próprio veículo prova excesso de velocidade"),
                evidence={"from": iso(t[a], facts.tz), "to": iso(t[b], facts.tz),
                          "max_speed_kmh": float(speed[peak]), "limit_kmh": float(limit[peak]),
                          "derived_pings": derived, "pings": [facts.fixes[i].msg_id for i in over]}))
            continue
        agreement = displacement_agreement(t, x, y, speed, over, policy.c01.max_ping_gap_s)
        if agreement is None or abs(agreement[0] - agreement[1]) > policy.c01.speed_agreement_kmh:
            findings.append(InsufficientEvidence(
                code=CODE, service_date=facts.date, operator_id=facts.operator_id,
                route_id=trip.realized.route_id if trip else None, trip_id=trip.realized.trip_id if trip else None,
                vehicle_id=facts.vehicle_id,
                reason="velocidade informada pelo tacógrafo não corresponde ao deslocamento entre os registros",
                evidence={"from": iso(t[a], facts.tz), "to": iso(t[b], facts.tz),
                          "reported_kmh": None if agreement is None else round(agreement[0], 1),
                          "displacement_kmh": None if agreement is None else round(agreement[1], 1),
                          "speed_agreement_kmh": policy.c01.speed_agreement_kmh,
                          "pings": [facts.fixes[i].msg_id for i in over]}))
            continue
        findings.append(make_infraction(
            CODE, policy, identity=(facts.date, facts.vehicle_id, round(t[a], 3)),
            # art. 5 III: the place and the time of one record, the episode's first
            operator_id=facts.operator_id, **episode_fields(facts, t[a], facts.fixes[a]),
            description=(f"Veículo {facts.vehicle_id} a {speed[peak]:.0f} km/h onde o limite é "
                         f"{limit[peak]:.0f} km/h (tolerância {policy.c01.tolerance_kmh:g} km/h), "
                         f"das {local(t[a], facts.tz):%H:%M:%S} às {local(t[b], facts.tz):%H:%M:%S}"),
            evidence={
                "tolerance_kmh": policy.c01.tolerance_kmh,
                "max_speed_kmh": float(speed[peak]),
                "limit_kmh": float(limit[peak]),
                "from": iso(t[a], facts.tz),
                "to": iso(t[b], facts.tz),
                "pings": [{"msg_id": facts.fixes[i].msg_id, "speed_kmh": float(speed[i]),
                           "limit_kmh": float(limit[i])} for i in over],
                "displacement_kmh": round(agreement[1], 1),
                "speed_agreement_kmh": policy.c01.speed_agreement_kmh,
                "interval_epoch": [float(t[a]), float(t[b])],
            },
        ))
    return findings


def version_refuted(other: VehicleDayFacts, record, facts: VehicleDayFacts, policy: Policy) -> bool:
    """The other version of the episode's pings (rules.versions) reports speeds that the
    distance its own fixes cover contradicts (beyond `speed_agreement_kmh`): the GPS, a
    sensor apart from the speed's, sets it aside. Judged over the episode's pings above the
    limit as the record cites them, at their places in the facts."""
    cited = {p["msg_id"] for p in record.evidence["pings"]}
    over = [k for k, f in enumerate(facts.fixes) if f.msg_id in cited]
    t, speed, x, y = columns(other.fixes, "t", "speed_kmh", "x", "y")
    agreement = displacement_agreement(t, x, y, speed, over, policy.c01.max_ping_gap_s)
    return agreement is not None and abs(agreement[0] - agreement[1]) > policy.c01.speed_agreement_kmh


RULE = Rule(
    code=CODE,
    scope=Scope.VEHICLE_DAY,
    live=Live.EPISODE_OVER,
    detect=detect,
    version_refuted=version_refuted,
    justified_by=frozenset(),
    summary=lambda p: (f"Velocidade do tacógrafo acima do limite da zona + {number(p.c01.tolerance_kmh)} km/h em "
                       f"{p.c01.min_consecutive_pings} registros seguidos por {duration(p.c01.min_episode_s)} ou mais."),
)
