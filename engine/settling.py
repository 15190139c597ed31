"""A vehicle's service day settled once the operator stage has matched it (`DayMatched`):
the records judged on each trip's arrival get their scheduled trip, the vehicle-day rules
are judged over the day's compact facts and its matched trips, what was sent while the
day ran is confirmed, changed or withdrawn (engine.changelog.settle), and the day is
forgotten.

`settle_day` is a function of the vehicle's state and the message: it returns the state
after (a new value; the one given is left as it was) and the records to send. The vehicle
stage (engine.vehicle) loads and saves the state around it. The helpers that judge a
day's records on both versions of the messages they cite are here too: the vehicle stage's
live episodes read them as well.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

import msgspec
import numpy as np

from engine.assemble import rebuild_match
from engine.changelog import at_most_provisional, settle
from engine.daylog import DayLog
from engine.messages import DayMatched, MatchRecord
from engine.servicedays import ServiceDays
from engine.triplog import TripLog
from engine.values import Context
from engine.vehiclestate import VehicleState
from gtfs.projection import Projector
from gtfs.schedule import ServiceDay
from rules.evaluate import evaluate_vehicle_day, finish, rejustify, safe_detect
from rules.facts import Standing, TripFacts, VehicleDayFacts, in_service_from, iso
from rules.model import Finding, Scope, localized
from rules.versions import CatracaVersion, judged_on_both_catraca_versions, judged_on_both_versions
from telemetry import Occurrence
from trips.model import Fix

# the service dates a vehicle's state remembers as judged (a DayMatched delivered again after
# a restart is then recognised and judged once)
_JUDGED_KEPT = 7


@dataclass(frozen=True)
class Judging:
    """What judging a vehicle's day reads besides its state: the static context, the
    feed's service days, the projection the rules measure occurrences' geometry in, and
    the codes of the track rules (Scope.TRACK) the pack lists."""

    ctx: Context
    days: ServiceDays
    projector: Projector
    track_codes: frozenset[str]


def settle_day(state: VehicleState, message: DayMatched, occurrences: list[Occurrence],
               judging: Judging) -> tuple[VehicleState, list[Finding]]:
    """The vehicle's day as the operator stage matched it, judged and settled: the state
    after (the day forgotten: its trips, its operating day's facts, its messages in two
    versions) and the records to send. A day judged already (delivered again after a
    restart) changes nothing: the same state, no records."""
    date = message.service_date.isoformat()
    if date in state.judged:
        return state, []
    ctx = judging.ctx
    judged = [*state.judged, date]
    day = judging.days(message.service_date)
    logs = {log.key: log for log in state.trips if log.service_date == date}
    findings: list[Finding] = settle_arrivals(message, logs, occurrences, state.conflicted, judging)
    trips = [matched_trip(record, logs.get(match_key(record)), day, ctx) for record in message.matches]
    facts = vehicle_day(state, message.service_date, trips, ctx)
    settled = evaluate_vehicle_day([tf for tf, _ in trips], facts, occurrences, ctx.pack, ctx.policy,
                                   judging.projector)
    settled = on_both_catraca_versions(state, settled, facts, next(
        (log for log in state.days if log.date == date), None), occurrences, judging)
    settled = on_both_versions(state, settled, facts, ctx.pack.rules_for(Scope.VEHICLE_DAY), occurrences, judging)
    settled = [at_most_provisional(f, state.conflicted) for f in settled]
    settled += settle_passes(state, message, occurrences, judging)
    emitted = dict(state.emitted)  # settle changes the map it is given: the state given stays as it was
    findings += settle(emitted, settled, message.service_date, message.closed_at, ctx.feed.timezone)
    operating = judging.days.operating_date
    sent, late = forget_late(state, message.service_date, ctx.policy.stream.rejudge_max_late_s)
    after = msgspec.structs.replace(
        state,
        judged=judged[-_JUDGED_KEPT:],
        emitted=emitted,
        conflicted={m: t for m, t in state.conflicted.items() if operating(t).isoformat() not in judged},
        versions={k: v for k, v in state.versions.items() if operating(v.fix.t).isoformat() not in judged},
        catraca_versions={k: v for k, v in state.catraca_versions.items()
                          if operating(v.kept.epoch).isoformat() not in judged},
        trips=[log for log in state.trips if log.service_date != date],
        days=[log for log in state.days if log.date != date],
        sent=sent,
        late=late,
    )
    return after, findings


def forget_late(state: VehicleState, date: dt.date,
                rejudge_max_late_s: float) -> tuple[dict[str, dict], dict[str, object]]:
    """The state's `sent` and `late` without the days no message can be late enough for
    any more (policy stream.rejudge_max_late_s) once `date` is judged."""
    days = int(np.ceil(rejudge_max_late_s / 86400)) + 1
    oldest = (date - dt.timedelta(days=days)).isoformat()
    if not any(d < oldest for d in (*state.sent, *state.late)):
        return state.sent, state.late
    return {d: r for d, r in state.sent.items() if d >= oldest}, {d: r for d, r in state.late.items() if d >= oldest}


def settle_passes(state: VehicleState, message: DayMatched, occurrences, judging: Judging) -> list[Finding]:
    """The track rules' records of the day stand as told (their pass is not judged
    again: the track no longer holds it), against the occurrences known now, each
    naming the scheduled trip its pass was running: the one the day's close paired it
    with (`message.cut_short`, the trip it cut short), with its scheduled departure in
    the evidence (the pairing reaches a match window either way of the departure)."""
    ctx = judging.ctx
    tz = ctx.feed.timezone
    settled = []
    for r in state.emitted.values():
        if r.code not in judging.track_codes or r.service_date != message.service_date:
            continue
        r = localized(r, tz)
        departed = r.evidence.get("departed_at")
        departed = dt.datetime.fromisoformat(departed).timestamp() if departed else None
        if departed is not None:
            paired = next(((trip_id, scheduled) for p, trip_id, scheduled in message.cut_short
                           if (p.code, p.route_id, p.direction_id) == (r.code, r.route_id, r.direction_id)
                           and abs(p.departed_at - departed) < 1), None)
            if paired is not None:
                r = msgspec.structs.replace(r, trip_id=paired[0], evidence={
                    **r.evidence, "scheduled_departure": iso(paired[1], tz)})
        settled.append(at_most_provisional(
            rejustify(r, occurrences, ctx.pack, ctx.policy, judging.projector), state.conflicted))
    return settled


def match_key(record: MatchRecord) -> tuple[float, str, int, str]:
    """The realized trip a match names, as its trip log is keyed (TripLog.key)."""
    d = record.detected
    return (d.departed_at, d.route_id, d.direction_id, d.shape_id)


def matched_trip(record: MatchRecord, log: TripLog | None, day: ServiceDay,
                 ctx: Context) -> tuple[TripFacts, TripLog | None]:
    """A matched trip's facts for the day-close rules: its checkpoint fixes (B-04)."""
    d = record.detected
    return TripFacts(
        match=rebuild_match(record, day),
        itinerary=ctx.geofences.itinerary(d.route_id, d.direction_id, d.shape_id),
        operator_id=ctx.fleet[d.vehicle_id].operator_id,
        fixes=tuple(sorted(log.checkpoint_fixes, key=_fix_order)) if log else (),
        tz=ctx.feed.timezone,
        day_start=day.start_epoch,
    ), log


def vehicle_day(state: VehicleState, date: dt.date, trips: list[tuple[TripFacts, TripLog | None]],
                ctx: Context) -> VehicleDayFacts | None:
    """A vehicle's operating day (None when it sent nothing in it)."""
    day_log = next((log for log in state.days if log.date == date.isoformat()), None)
    if day_log is None:
        return None
    standings = [(tf, log.standing if log else Standing()) for tf, log in trips]
    return vehicle_day_from(state, date, day_log, trips,
                            in_service_from(standings, ctx.policy.trips.in_service_terminal_s), ctx)


def vehicle_day_from(state: VehicleState, date: dt.date, day_log: DayLog,
                     trips: list[tuple[TripFacts, TripLog | None]], in_service, ctx: Context) -> VehicleDayFacts:
    """The vehicle-day rules' facts from a day's log, its trips and its in-service time."""
    kept = day_log.fixes()
    mine = sorted((tf for tf, _ in trips), key=lambda tf: tf.departed_at)
    return VehicleDayFacts(
        vehicle_id=state.vehicle_id,
        operator_id=ctx.fleet[state.vehicle_id].operator_id,
        date=date,
        tz=ctx.feed.timezone,
        fixes=tuple(k.fix for k in kept),
        speed_limits_kmh=tuple(k.limit_kmh for k in kept),
        catraca=day_log.catraca(),
        trips=tuple(mine),
        in_service=in_service,
        doors=tuple(day_log.doors),
        doors_reported=day_log.doors_reported,
        clock_faults=tuple((f.first, f.last) for f in state.clock_faults),
    )


def settle_arrivals(message: DayMatched, logs: dict, occurrences, conflicted, judging: Judging) -> list[Finding]:
    """The day's matching is final: the records judged on arrival get their trip's
    scheduled trip_id, and an occurrence registered since may justify them. Only
    records that changed are emitted again (same ids, first detected_at kept)."""
    ctx = judging.ctx
    trip_of = {match_key(r): r.realized.trip_id for r in message.matches}
    updates: list[Finding] = []
    for key, log in logs.items():
        for before in log.infractions:
            before = localized(before, ctx.feed.timezone)
            after = rejustify(msgspec.structs.replace(before, trip_id=trip_of.get(key)), occurrences,
                              ctx.pack, ctx.policy, judging.projector)
            after = at_most_provisional(after, conflicted)
            if after != before:
                updates.append(after)
    return updates


# --- records judged on both versions of the messages they cite (rules.versions) ---------


def on_both_versions(state: VehicleState, findings: list[Finding], facts: VehicleDayFacts | None,
                     rules, occurrences, judging: Judging) -> list[Finding]:
    """`findings` of `rules` judged on both versions of the messages they cite (rules.versions)."""
    if not state.versions or facts is None:
        return findings
    ctx = judging.ctx
    policy = ctx.policy
    return judged_on_both_versions(
        findings, facts, state.versions, rules, policy,
        finish=lambda records: finish(records, occurrences, ctx.pack, policy, judging.projector),
        detect=lambda rule, other: safe_detect(rule, other, policy, other.date))


def catraca_versions_of(state: VehicleState, date: dt.date, days: ServiceDays) -> list[CatracaVersion]:
    """The catraca readings in two versions of one operating day."""
    return [v for v in state.catraca_versions.values() if days.operating_date(v.kept.epoch) == date]


def other_catraca_facts(facts: VehicleDayFacts | None, day_log: DayLog | None) -> VehicleDayFacts | None:
    """The day's facts with its catraca as the other versions tell it; None if none came."""
    if facts is None or day_log is None or day_log.other is None:
        return None
    return replace(facts, catraca=day_log.other.log.catraca())


def on_both_catraca_versions(state: VehicleState, findings: list[Finding], facts: VehicleDayFacts | None,
                             day_log: DayLog | None, occurrences, judging: Judging) -> list[Finding]:
    """The vehicle-day rules' records judged on both versions of the day's catraca
    readings that came in two (rules.versions); the other records pass."""
    other = other_catraca_facts(facts, day_log)
    versions = catraca_versions_of(state, facts.date, judging.days) if other is not None else []
    if not versions:
        return findings
    ctx = judging.ctx
    rules = ctx.pack.rules_for(Scope.VEHICLE_DAY)
    codes = {rule.code for rule in rules}
    policy = ctx.policy
    theirs = finish([r for rule in rules for r in safe_detect(rule, other, policy, other.date)], occurrences,
                    ctx.pack, policy, judging.projector)
    judged = judged_on_both_catraca_versions([f for f in findings if f.code in codes], theirs, versions,
                                             ctx.feed.timezone)
    return [f for f in findings if f.code not in codes] + [record for record, _ in judged]


def _fix_order(f: Fix) -> tuple[float, str]:
    return (f.t, f.msg_id)
