"""Running the catalogue over the facts of a closed service day.

Like gtfs-validator's safeValidate: a detector that crashes becomes a recorded
failure for that code and those facts, never a stopped run. The pack is the caller's
(the engine's Context, built where the policy is loaded), never looked up here.
"""

from __future__ import annotations

import logging

import msgspec

from gtfs.projection import Projector
from kernel.policy import Policy
from rules.facts import ServiceDayFacts, TripFacts, VehicleDayFacts
from rules.justification import justify
from rules.model import CONFIRMED, Finding, Infraction, InsufficientEvidence, Live, Rule, Scope, plain
from rules.pack import Pack

log = logging.getLogger(__name__)


def safe_detect(rule: Rule, facts, policy: Policy, date, **options) -> list[Finding]:
    """`rule.detect` on the facts (`options`: what its live moment passes it, rules.model.Live)."""
    try:
        return rule.detect(facts, policy, **options)
    except Exception as exc:  # a bug in one rule must not stop the others
        log.exception("detector %s failed", rule.code)
        return [InsufficientEvidence(
            code=rule.code, service_date=date, operator_id=None, route_id=None, trip_id=None, vehicle_id=None,
            reason=f"falha interna do detector: {type(exc).__name__}: {exc}", evidence={})]


def detect_live(live: Live, facts, pack: Pack, policy: Policy, date) -> list[Finding]:
    """The pack's rules judged at this moment of the day (`Rule.live`), over `facts`, in
    the catalogue's order."""
    return [record for rule in pack.catalogue.values() if rule.live == live
            for record in safe_detect(rule, facts, policy, date)]


def evaluate_service_day(day: ServiceDayFacts, pack: Pack, policy: Policy, projector: Projector) -> list[Finding]:
    """The service-day rules (D-12, D-13, D-22) over one operator's closed day."""
    findings: list[Finding] = []
    for rule in pack.rules_for(Scope.SERVICE_DAY):
        findings += safe_detect(rule, day, policy, day.day.date)
    return finish(findings, day.occurrences, pack, policy, projector)


def evaluate_arrival(trip: TripFacts, occurrences, pack: Pack, policy: Policy, projector: Projector) -> list[Finding]:
    """The rules a trip's own track settles (D-11, A-07), as soon as it arrives."""
    findings: list[Finding] = []
    for rule in pack.rules_for(Scope.TRIP):
        findings += safe_detect(rule, trip, policy, trip.realized.service_date)
    return finish(findings, occurrences, pack, policy, projector)


def rejustify(infraction: Infraction, occurrences, pack: Pack, policy: Policy, projector: Projector) -> Infraction:
    """An emitted record against the occurrences known now: one registered later that
    covers it turns it `justified` (DESIGN.md, Timing)."""
    rule = pack.rule(infraction.code)
    if infraction.status != CONFIRMED or rule.aggregates_trips:
        return infraction
    return justify(infraction, rule.justified_by, occurrences, projector,
                   policy.trips.corridor_m)


def evaluate_vehicle_day(trips: list[TripFacts], vehicle: VehicleDayFacts | None, occurrences, pack: Pack,
                         policy: Policy, projector: Projector) -> list[Finding]:
    """The rules that need a trip's scheduled match (B-04) and the vehicle-day rules."""
    findings: list[Finding] = []
    for trip in trips:
        for rule in pack.rules_for(Scope.MATCHED_TRIP):
            findings += safe_detect(rule, trip, policy, trip.realized.service_date)
    if vehicle is not None:
        for rule in pack.rules_for(Scope.VEHICLE_DAY):
            findings += safe_detect(rule, vehicle, policy, vehicle.date)
    return finish(findings, occurrences, pack, policy, projector)


def finish(findings: list[Finding], occurrences, pack: Pack, policy: Policy, projector: Projector) -> list[Finding]:
    """Occurrences applied (motivo justificado); evidence as plain JSON values."""
    catalogue = pack.catalogue
    return [
        justify(f, catalogue[f.code].justified_by, occurrences, projector, policy.trips.corridor_m)
        if isinstance(f, Infraction) and not catalogue[f.code].aggregates_trips
        else msgspec.structs.replace(f, evidence=plain(f.evidence)) if isinstance(f, InsufficientEvidence)
        else f
        for f in findings
    ]
