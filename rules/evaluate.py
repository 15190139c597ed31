"""Running the catalogue over the facts of a closed service day.

Like gtfs-validator's safeValidate: a detector that crashes becomes a recorded
failure for that code and those facts, never a stopped run.
"""

from __future__ import annotations

import logging

import msgspec

from fiscaliza.policy import Policy
from gtfs.projection import Projector
from rules.catalogue import CATALOGUE, rules_for
from rules.facts import ServiceDayFacts, VehicleDayFacts
from rules.justification import justify
from rules.model import Finding, Infraction, InsufficientEvidence, Rule, plain

log = logging.getLogger(__name__)


def safe_detect(rule: Rule, facts, policy: Policy, date) -> list[Finding]:
    try:
        return rule.detect(facts, policy)
    except Exception as exc:  # a bug in one rule must not stop the others
        log.exception("detector %s failed", rule.code)
        return [InsufficientEvidence(
            code=rule.code, service_date=date, operator_id=None, route_id=None, trip_id=None, vehicle_id=None,
            reason=f"falha interna do detector: {type(exc).__name__}: {exc}", evidence={})]


def evaluate_day(day: ServiceDayFacts, vehicles: list[VehicleDayFacts], policy: Policy,
                 projector: Projector) -> list[Finding]:
    """Every automatic rule over one closed service day, occurrences applied."""
    date = day.day.date
    findings: list[Finding] = []
    for trip in day.trips:
        for rule in rules_for("trip"):
            findings += safe_detect(rule, trip, policy, date)
    for rule in rules_for("service_day"):
        findings += safe_detect(rule, day, policy, date)
    for vehicle in vehicles:
        for rule in rules_for("vehicle_day"):
            findings += safe_detect(rule, vehicle, policy, date)
    return [
        justify(f, day.occurrences, projector, policy.trips.corridor_m)
        if isinstance(f, Infraction) and not CATALOGUE[f.code].aggregates_trips
        else msgspec.structs.replace(f, evidence=plain(f.evidence)) if isinstance(f, InsufficientEvidence)
        else f
        for f in findings
    ]
