"""Turning back before the terminal — "Os ônibus deverão sempre percorrer em seu
itinerário, toda a extensão da linha ou ramal a que servirem, não podendo, em caso algum,
retroceder antes de atingido o ponto terminal da mesma linha, salvo determinação em
contrário da autoridade do trânsito, por motivo imperioso."
(Conselheiro Lafaiete, Lei 4/1948, art. 14 § único.)

A shared detector: a pack files it under its law's code with `rule(code)`; its
thresholds are the policy's `[turn_back]` section.

Judged on a pass (rules.facts.PassFacts): a vehicle's run along an itinerary from a
departure seen (the origin zone left) until it reaches the destination zone, leaves the
corridor (more than `trips.max_noise_pings` fixes off it), departs again or its fixes
end. A turn back is a reversal of the progress along the shape, inside the corridor:
`min_consecutive_pings` consecutive fixes on the corridor, each at least
`min_reversal_m` behind the farthest point reached. One record per pass, its first
reversal, judged the moment the reversal is held (its last fix): the same whatever the
pass does next (it may turn again and reach the terminal: it did go back).

Guards, the operator's lawyer's questions:
- GPS jitter back and forth: one fix or two behind is no reversal, and the distance is
  above twice the corridor (the policy refuses less);
- a silence longer than `max_ping_gap_s` between the farthest point and the reversal
  held: the bus may have reached the terminal unseen and come back — insufficient
  evidence, not an accusation;
- GPS multipath throwing a few fixes hundreds of metres back while the bus drives on:
  every fix of the reversal must be one the bus could have reached by driving. The
  tachograph's speeds, a sensor of its own, bound the distance the bus drove since the
  farthest fix (each interval between pings at the higher of its two speeds: the most they
  allow); it must be at least how far behind the fix lies, less the corridor's allowance
  for both fixes (2 x `trips.corridor_m`). A fix further back than the bus could have
  driven is a position fault — insufficient evidence, not an accusation;
- a bus that reached the destination zone and turned: its pass ended there, nothing;
- a shape that passes the same street again further on (an out-and-back line): a fix
  within the corridor of the shape's part beyond the farthest point may be that part
  run forward, not a reversal — nothing;
- "salvo determinação em contrário da autoridade do trânsito": an authorized detour or
  a road closure covering it makes it `justified`.

The trip cut short is this record's act, not also a trip suspended: the rule is
`cuts_trip_short`, so every pass it records (accused, justified or unproven) reaches the
service-day rules (rules.facts.CutShortPass), and the law's suppressed-trip rule (Lafaiete's
art. 42 A) leaves the scheduled trip that pass was running alone.
"""

from __future__ import annotations

import numpy as np
import shapely
from shapely.ops import substring

from kernel.policy import Policy
from rules.facts import PassFacts, iso, local
from rules.model import Finding, InsufficientEvidence, Rule, Scope, duration, make_infraction, number
from trips.detection import tachograph_distance, without_noise
from trips.model import columns


def reversals(progress: np.ndarray, on_corridor: np.ndarray, min_reversal_m: float,
              min_consecutive_pings: int, max_noise_pings: int) -> list[tuple[int, int, int, float]]:
    """(peak, first, held, reach) per reversal held, in order: `peak` the fix at the
    farthest point reached (`reach` metres along the shape), `first`..`held` the
    consecutive fixes on the corridor each at least `min_reversal_m` behind it. GPS noise
    (at most `max_noise_pings` fixes off the corridor between fixes on it) is read past;
    a longer stretch off the corridor breaks a run. Time is not read here: the caller
    judges the silences."""
    found = []
    reach, peak, run = -np.inf, -1, []
    for i in without_noise(on_corridor, max_noise_pings).tolist():
        if not on_corridor[i]:
            run = []
        elif progress[i] > reach:
            reach, peak, run = float(progress[i]), i, []
        elif reach - progress[i] >= min_reversal_m:
            run.append(i)
            if len(run) == min_consecutive_pings:
                found.append((peak, run[0], i, reach))
        else:
            run = []
    return found


def _folded(facts: PassFacts, x: np.ndarray, y: np.ndarray, reach: float) -> bool:
    """Some fix lies within the corridor of the shape's part beyond `reach`: it may be
    that part run forward (a shape passing the same street again), not a reversal."""
    line = facts.itinerary.line
    if reach >= line.length:
        return False
    ahead = substring(line, reach, line.length)
    return bool((shapely.distance(ahead, shapely.points(x, y)) <= facts.itinerary.corridor_m).any())


def detect(facts: PassFacts, policy: Policy, code: str) -> list[Finding]:
    rules = policy.turn_back
    t, x, y = facts.arrays()
    if len(t) < 2 or rules is None:
        return []
    itinerary = facts.itinerary
    on_corridor = itinerary.in_corridor(x, y)
    progress = np.where(on_corridor, itinerary.locate(x, y), np.nan)
    for peak, first, held, reach in reversals(progress, on_corridor, rules.min_reversal_m,
                                              rules.min_consecutive_pings, policy.trips.max_noise_pings):
        if t[held] - facts.departed_at > policy.trips.max_trip_duration_s:
            return []  # not one trip any more
        if _folded(facts, x[first:held + 1], y[first:held + 1], reach):
            continue
        (speed,) = columns(facts.fixes, "speed_kmh")
        return [_finding(facts, policy, code, t, speed, progress, peak, first, held, reach)]
    return []


def _finding(facts: PassFacts, policy: Policy, code: str, t, speed, progress, peak: int, first: int, held: int,
             reach: float) -> Finding:
    rules = policy.turn_back
    pattern = facts.itinerary.pattern
    driven = tachograph_distance(t[peak:held + 1], speed[peak:held + 1])
    back = float(reach - np.nanmin(progress[first:held + 1]))
    took = float(t[held] - t[peak])
    short = float(facts.itinerary.length_m - reach)
    evidence = {
        "departed_at": iso(facts.departed_at, facts.tz),
        "farthest_m": round(reach, 1),
        "short_of_terminal_m": round(short, 1),
        "reversal_m": round(back, 1),
        "reversal_s": round(took, 1),
        "min_reversal_m": rules.min_reversal_m,
        "min_consecutive_pings": rules.min_consecutive_pings,
        "max_ping_gap_s": rules.max_ping_gap_s,
        # the farthest fix and every fix from it to the reversal held: their progress, and
        # the distance the tachograph says the bus drove since the farthest one
        "pings": [{"msg_id": facts.fixes[i].msg_id, "at": iso(t[i], facts.tz),
                   "along_shape_m": None if np.isnan(progress[i]) else round(float(progress[i]), 1),
                   "speed_kmh": facts.fixes[i].speed_kmh, "tachograph_m": round(float(driven[i - peak]), 1)}
                  for i in range(peak, held + 1)],
        "interval_epoch": [float(t[peak]), float(t[held])],
    }
    silence = float(np.diff(t[peak:held + 1]).max())
    if silence > rules.max_ping_gap_s:
        return InsufficientEvidence(
            code=code, service_date=facts.service_date, operator_id=facts.operator_id, route_id=pattern.route_id,
            trip_id=None, vehicle_id=facts.vehicle_id,
            reason=(f"possível retrocesso no itinerário com intervalo de {silence:.0f} s entre registros: o veículo "
                    "pode ter atingido o ponto terminal no silêncio"),
            evidence={**evidence, "longest_silence_s": round(silence, 1)})
    # how much further behind than the tachograph lets the bus be, at the worst fix on the
    # corridor (one off it inside the run is noise read past: no position along the shape)
    behind = reach - progress[first:held + 1]
    excess = np.where(np.isnan(behind), -np.inf, behind - driven[first - peak:])
    worst = int(np.argmax(excess))
    allowance = 2 * policy.trips.corridor_m
    if excess[worst] > allowance:
        i = first + worst
        return InsufficientEvidence(
            code=code, service_date=facts.service_date, operator_id=facts.operator_id, route_id=pattern.route_id,
            trip_id=None, vehicle_id=facts.vehicle_id,
            reason=(f"possível retrocesso no itinerário incompatível com o tacógrafo: o registro das "
                    f"{local(t[i], facts.tz):%H:%M:%S} está {behind[worst]:.0f} m atrás do ponto mais avançado, "
                    f"mas o tacógrafo permite no máximo {driven[i - peak]:.0f} m rodados desde então (defeito de "
                    "posição do GPS)"),
            evidence={**evidence, "gps_allowance_m": allowance})
    fix = facts.fixes[peak]  # art. 5 III: where and when it turned back, the farthest fix
    return make_infraction(
        code, policy, identity=(facts.service_date, f"{pattern.route_id}:{pattern.direction_id}", facts.vehicle_id,
                                round(facts.departed_at)),
        operator_id=facts.operator_id, route_id=pattern.route_id, direction_id=pattern.direction_id,
        vehicle_id=facts.vehicle_id, service_date=facts.service_date,
        occurred_at=local(t[peak], facts.tz), lat=fix.lat, lon=fix.lon,
        description=(f"Veículo {facts.vehicle_id} retrocedeu {back:.0f} m no itinerário da linha {pattern.route_id} "
                     f"(partida às {local(facts.departed_at, facts.tz):%H:%M}) antes de atingir o ponto terminal: "
                     f"chegou a {reach:.0f} m do início, a {short:.0f} m do terminal, e voltou em "
                     f"{took / 60:.1f} min"),
        evidence=evidence)


def summary(policy: Policy) -> str:
    rules = policy.turn_back
    if rules is None:
        return "Requer a seção [turn_back] da política."
    return (f"Retrocesso de pelo menos {number(rules.min_reversal_m)} m no traçado, em "
            f"{rules.min_consecutive_pings} registros seguidos no corredor, depois de deixar o terminal de "
            f"origem e antes de atingir o de destino, sem intervalo maior que {duration(rules.max_ping_gap_s)} "
            "entre registros.")


def rule(code: str) -> Rule:
    """The detector filed under `code`, as the pack's law writes it (e.g. "art. 14 § único")."""
    return Rule(
        code=code,
        scope=Scope.TRACK,
        detect=lambda facts, policy: detect(facts, policy, code),
        justified_by=frozenset({"authorized_detour", "road_closure"}),
        summary=summary,
        doc=f"{code} — {__doc__}",
        cuts_trip_short=True,
    )
