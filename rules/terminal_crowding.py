"""art. 13 — "Não será permitida a permanência de mais de 15% (quinze por cento) dos veículos
de cada linha em qualquer dos pontos terminais" (Canarana, Lei 179/1991; the share is the
policy's `[terminal_crowding] max_share_pct`). Shared: a pack files it under its own code
(`rule`).

Per line (GTFS route, both directions) and service day:
- the line's vehicles are those that ran at least one realized trip of it that day. The
  fleet allotted to a line is nowhere in the data (fleet.csv gives the operator only),
  and the vehicles that ran it are the ones the operator put on it that day;
- its terminals are the first and last stops of the itineraries it ran;
- a vehicle stands at a terminal from a trip's arrival there until its next departure
  from the same terminal (its next realized trip, of any line, leaving from that stop),
  as far as its pings keep it there: a bus seen leaving the terminal zone after the
  arrival (to the garage, to refuel) and back before its departure stood there only
  since it came back (the departure's `at_origin_since`); "permanência" is a continuous
  stay. Read from the realized trips alone, no per-ping state. Its last arrival of the
  day (no departure closes it: it went to the garage, or parked) counts for nothing;
- a stay is "permanência" only past the policy's grace_s after the arrival: a bus laying
  over between trips is normal. The grace is each vehicle's, not the crowding's: with few
  vehicles the share allows none at all, and a crowding episode measured as a whole
  would chain a headway line's consecutive short layovers into one all-day episode (as
  on Canarana's fault-free sample day);
- a stay the approved timetable makes is no fault of the operator (as art. 10 § 5º's
  detector says of the timetable's own waits): when the vehicle left on time (D-13's
  limits) on a trip whose scheduled departure is more than grace_s after its arrival,
  and no timetabled departure of its own block from that terminal in between went unrun,
  the stay is the timetable's and not counted. A bus held there while its block's departure
  from there was left unrun (it skipped its round trip and left on time for the one after)
  stood by the operator's choice, not the timetable's; another block's unrun departure
  says nothing of where this bus was;
- with n vehicles, more than max_share_pct × n / 100 standing past the grace at once is
  crowding, i.e. more than floor(max_share_pct × n / 100) vehicles (n = 10: 1,5 — a
  second vehicle is one too many; below 7 vehicles, any one). One record per line,
  terminal and maximal stretch of crowding.

Never an accusation on missing data (sensor faults are never infractions):
- a vehicle whose telemetry broke off during a stay (facts.unfollowed: it was seen on an
  itinerary and may have left the terminal in the silence) is not counted as standing;
- a stay across a silence of the operator's whole fleet longer than max_fleet_silence_s
  (no telemetry, messages rejected for a clock fault: trips may hide in it) is unproven:
  crowding that only such stays make is insufficient evidence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kernel.policy import Policy
from rules.d13 import is_off_schedule
from rules.facts import ServiceDayFacts, TripFacts, iso, local
from rules.model import Finding, InsufficientEvidence, Rule, Scope, duration, make_infraction, number
from rules.waiting_time import longest_silence


@dataclass(frozen=True)
class Stay:
    """A vehicle standing at a terminal: from its arrival to its next departure from there."""
    vehicle_id: str
    stop_id: str
    start: float
    end: float
    # the scheduled departure it left on, when it left on time (D-13's limits); else None
    on_time_for: float | None = None
    block_id: str | None = None  # the block of the scheduled trip it left on


def stays(trips: tuple[TripFacts, ...] | list[TripFacts], policy: Policy) -> list[Stay]:
    """Every stay the realized trips prove: an arrival at a stop followed by the same
    vehicle's next departure from that stop, from when the pings show it back in the
    zone it departed from, if it was seen leaving in between."""
    by_vehicle: dict[str, list[TripFacts]] = {}
    for trip in trips:
        by_vehicle.setdefault(trip.realized.vehicle_id, []).append(trip)
    found = []
    for vehicle, own in sorted(by_vehicle.items()):
        own = sorted(own, key=lambda t: t.departed_at)
        for before, after in zip(own, own[1:]):
            stop = before.itinerary.pattern.destination_stop_id
            if after.itinerary.pattern.origin_stop_id == stop and after.departed_at > before.arrived_at:
                deviation = after.realized.departure_deviation_s
                on_time = None if deviation is None or is_off_schedule(deviation, policy) \
                    else after.departed_at - deviation
                block = after.scheduled.block_id if after.scheduled is not None else None
                since = after.match.detected.at_origin_since
                start = before.arrived_at if since is None else max(before.arrived_at, since)
                found.append(Stay(vehicle, stop, start, after.departed_at, on_time, block))
    return found


def unrun_departures(facts: ServiceDayFacts, route_id: str, stop_id: str, start: float, end: float,
                     block_id: str | None) -> list[float]:
    """The line's timetabled departures from `stop_id` in (start, end) of block `block_id`
    (the stay's own bus's work) that no realized trip ran. Another block's unrun departure
    says nothing of this bus, which may have been anywhere (a split shift in the garage);
    without a block nothing ties the bus to a departure: none."""
    if block_id is None:
        return []
    day = facts.day
    run = {tf.scheduled.key for tf in facts.trips if tf.scheduled is not None}
    return [day.departure_epoch(t) for t in day.trips
            if t.route_id == route_id and t.block_id == block_id and t.stops[0].stop_id == stop_id
            and t.key not in run and start < day.departure_epoch(t) < end]


def allowed(share_pct: float, vehicles: int) -> int:
    """How many of a line's vehicles may stand at a terminal at once: not more than the share."""
    return math.floor(share_pct * vehicles / 100)


def crowded(stays_at: list[Stay], most: int, grace_s: float) -> list[tuple[float, float, int]]:
    """The maximal stretches [start, end) in which more than `most` stays are past their
    grace at once, each with its peak count (a sweep over the stays' counted ends; one
    leaving as another's grace ends at the same moment are not together)."""
    counted = [(s.start + grace_s, s.end) for s in stays_at if s.end > s.start + grace_s]
    events = sorted([(a, 1) for a, _ in counted] + [(b, -1) for _, b in counted], key=lambda e: (e[0], e[1]))
    out, count, opened, peak = [], 0, None, 0
    for t, step in events:
        count += step
        if count > most and opened is None:
            opened, peak = t, count
        elif count > most:
            peak = max(peak, count)
        elif opened is not None:
            if t > opened:
                out.append((opened, t, peak))
            opened = None
    return out


def arithmetic(share_pct: float, vehicles: int, present: int) -> str:
    most = allowed(share_pct, vehicles)
    return (f"{number(share_pct)}% de {vehicles} veículos = {number(round(share_pct * vehicles / 100, 2))}: "
            f"no máximo {most}; presentes {present} > {most}")


def _terminal_place(facts: ServiceDayFacts, route_id: str, stop_id: str) -> tuple[float | None, float | None]:
    for trip in facts.trips:
        pattern = trip.itinerary.pattern
        if pattern.origin_stop_id == stop_id and (pattern.route_id, pattern.direction_id) in facts.origin_of:
            return facts.origin_of[(pattern.route_id, pattern.direction_id)]
    return None, None


def detect_for(code: str, facts: ServiceDayFacts, policy: Policy) -> list[Finding]:
    rules = policy.terminal_crowding
    if rules is None:  # the policy's law sets no terminal share
        return []
    findings: list[Finding] = []
    day, tz = facts.day, facts.tz
    every_stay = stays(facts.trips, policy)
    for route_id in sorted({t.realized.route_id for t in facts.trips}):
        operator = facts.operator_of_route[route_id]
        line = [t for t in facts.trips if t.realized.route_id == route_id]
        vehicles = sorted({t.realized.vehicle_id for t in line})
        most = allowed(rules.max_share_pct, len(vehicles))
        terminals = sorted({t.itinerary.pattern.origin_stop_id for t in line}
                           | {t.itinerary.pattern.destination_stop_id for t in line})
        for stop_id in terminals:
            here = [s for s in every_stay if s.stop_id == stop_id and s.vehicle_id in vehicles]
            # the approved timetable holds the bus there longer than the grace: not the operator's
            timetable = [s for s in here if s.on_time_for is not None and s.on_time_for - s.start > rules.grace_s
                         and not unrun_departures(facts, route_id, stop_id, s.start, s.on_time_for, s.block_id)]
            here = [s for s in here if s not in timetable]
            # telemetry broke off during the stay: it may have left; never counted as standing
            broken = [s for s in here if any(p.vehicle_id == s.vehicle_id and p.earliest_departure < s.end
                                             and p.last_t > s.start for p in facts.unfollowed)]
            counted = [s for s in here if s not in broken]
            silent = [s for s in counted
                      if (lambda ab: ab[1] - ab[0])(longest_silence(facts, operator, s.start, s.end))
                      > rules.max_fleet_silence_s]
            proven = [s for s in counted if s not in silent]
            episodes = crowded(proven, most, rules.grace_s)
            doubtful = [e for e in crowded(counted, most, rules.grace_s)
                        if not any(a < e[1] and e[0] < b for a, b, _ in episodes)]

            def present(start: float, end: float, among: list[Stay], grace: float = rules.grace_s) -> list[dict]:
                """The stays standing past `grace` at some moment of [start, end)."""
                return [{"vehicle_id": s.vehicle_id, "arrived_at": iso(s.start, tz), "departed_at": iso(s.end, tz)}
                        for s in sorted(among, key=lambda s: (s.start, s.vehicle_id))
                        if max(start, s.start + grace) < min(end, s.end)]

            where = {"terminal_stop_id": stop_id, "line_vehicles": vehicles, "line_vehicle_count": len(vehicles),
                     "max_share_pct": rules.max_share_pct, "max_vehicles": most, "grace_s": rules.grace_s,
                     "not_counted_telemetry_broken": present(day.start_epoch, math.inf, broken, 0),
                     "not_counted_timetable": present(day.start_epoch, math.inf, timetable, 0)}
            for start, end, _peak in doubtful:
                findings.append(InsufficientEvidence(
                    code=code, service_date=day.date, operator_id=operator, route_id=route_id, trip_id=None,
                    vehicle_id=None,
                    reason=("a frota da operadora ficou sem transmitir telemetria durante a permanência no "
                            "terminal: viagens podem ter ocorrido sem registro"),
                    evidence={**where, "episode": [iso(start, tz), iso(end, tz)],
                              "present": present(start, end, counted),
                              "unproven": present(start, end, silent)}))
            for start, end, peak in episodes:
                lat, lon = _terminal_place(facts, route_id, stop_id)
                findings.append(make_infraction(
                    code, policy, identity=(day.date, route_id, stop_id, round(start)),
                    operator_id=operator, route_id=route_id, service_date=day.date,
                    occurred_at=local(start, tz), lat=lat, lon=lon,
                    description=(f"Linha {route_id}: {peak} dos {len(vehicles)} veículos da linha no terminal "
                                 f"{stop_id} ao mesmo tempo de {local(start, tz):%H:%M} a {local(end, tz):%H:%M} "
                                 f"({number(round((end - start) / 60))} min), parados há mais de "
                                 f"{duration(rules.grace_s)}, acima de {number(rules.max_share_pct)}% dos veículos "
                                 f"da linha ({most} veículo(s))"),
                    evidence={
                        **where,
                        "episode": [iso(start, tz), iso(end, tz)],
                        "duration_s": round(end - start, 1),
                        "peak": peak,
                        "arithmetic": arithmetic(rules.max_share_pct, len(vehicles), peak),
                        "present": present(start, end, proven),
                        "reading": ("veículo no terminal da chegada de uma viagem realizada até a sua próxima "
                                    "partida do mesmo terminal, contado após a tolerância de intervalo entre "
                                    "viagens; veículos da linha: os que realizaram viagens dela no dia"),
                        "interval_epoch": [start, end],
                    },
                ))
    return findings


def summary(policy: Policy) -> str:
    if policy.terminal_crowding is None:
        return "Requer a seção [terminal_crowding] da política."
    rules = policy.terminal_crowding
    return (f"Mais de {number(rules.max_share_pct)}% dos veículos que realizaram viagens da linha no dia "
            f"parados ao mesmo tempo num terminal dela, cada um há mais de {duration(rules.grace_s)}.")


def rule(code: str) -> Rule:
    """The detector filed under a law's code (Canarana: "art. 13")."""
    def detect(facts: ServiceDayFacts, policy: Policy) -> list[Finding]:
        return detect_for(code, facts, policy)

    return Rule(code=code, scope=Scope.SERVICE_DAY, detect=detect,
                justified_by=frozenset({"road_closure", "accident", "other"}), summary=summary)
