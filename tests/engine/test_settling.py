"""A vehicle's day settled once the operator stage matched it (engine.settling), as a
function of the vehicle's state and the message, without a stage.

Context: the João Neiva sample network and policy (operating days cut at 03:00,
America/Sao_Paulo, -03:00); one C-01 record of JN-2014 was emitted while 2026-12-01 ran.
"""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest

from engine.late import LateDay
from engine.messages import DayMatched
from engine.servicedays import ServiceDays
from engine.settling import Judging, forget_late, settle_day
from engine.vehiclestate import VehicleState
from gtfs.projection import Projector
from sent_records import sent_c01

DAY = dt.date(2026, 12, 1)


@pytest.fixture(scope="module")
def judging(context):
    days = ServiceDays(context.feed, context.policy.trips.service_day_cutover_s)
    return Judging(context, days, Projector(context.feed.epsg), frozenset())


def at(context, day: int, hour: int, minute: int = 0) -> float:
    return dt.datetime(2026, 12, day, hour, minute, tzinfo=context.feed.timezone).timestamp()


def test_a_record_the_settled_day_does_not_support_is_withdrawn_and_the_state_given_is_left_as_it_was(
        context, judging):
    record = sent_c01(context, DAY)
    state = VehicleState("JN-2014", emitted={record.infraction_id: record})
    given = msgspec.msgpack.encode(state)
    # the day closes with nothing of this vehicle's (no trips, no telemetry kept)
    after, [withdrawn] = settle_day(state, DayMatched("JN-2014", "TRD", DAY, [], closed_at=1.8e9), [], judging)
    assert (withdrawn.status, withdrawn.infraction_id) == ("withdrawn", record.infraction_id)
    assert withdrawn.detected_at == record.detected_at and withdrawn.evidence == record.evidence
    assert (after.emitted, after.judged) == ({}, ["2026-12-01"])
    assert msgspec.msgpack.encode(state) == given  # a new state: the one given still holds the record


def test_a_day_judged_already_gives_the_same_state_and_no_records(context, judging):
    record = sent_c01(context, DAY)
    state = VehicleState("JN-2014", emitted={record.infraction_id: record}, judged=["2026-12-01"])
    after, records = settle_day(state, DayMatched("JN-2014", "TRD", DAY, [], closed_at=1.8e9), [], judging)
    assert after is state and records == []


def test_the_settled_days_messages_in_two_versions_are_forgotten_by_operating_day(context, judging):
    # 02:30 of Dec 2 is before the 03:00 cutover: still the operating day of Dec 1
    conflicted = {"dec-1-10h": at(context, 1, 10), "dec-2-02h30": at(context, 2, 2, 30),
                  "dec-2-03h": at(context, 2, 3)}
    state = VehicleState("JN-2014", conflicted=conflicted)
    after, _ = settle_day(state, DayMatched("JN-2014", "TRD", DAY, [], closed_at=1.8e9), [], judging)
    assert after.conflicted == {"dec-2-03h": at(context, 2, 3)}
    assert state.conflicted == conflicted


def test_only_the_judged_days_no_message_can_be_late_for_are_forgotten():
    # 2 days of allowed lateness: ceil(2) + 1 = 3 days before Dec 1 is Nov 28, the oldest day kept
    state = VehicleState("JN-2014", sent={"2026-11-27": {}, "2026-11-28": {}}, late={"2026-11-27": LateDay(kept=1),
                                                                                      "2026-11-30": LateDay(kept=2)})
    sent, late = forget_late(state, DAY, rejudge_max_late_s=2 * 86400)
    assert (sorted(sent), sorted(late)) == (["2026-11-28"], ["2026-11-30"])
    # nothing that old: the maps stay the very ones the state holds
    sent, late = forget_late(state, dt.date(2026, 11, 29), rejudge_max_late_s=2 * 86400)
    assert sent is state.sent and late is state.late
