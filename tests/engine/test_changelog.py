"""The infractions change log as the stages write it (engine.changelog).

Context: the João Neiva sample policy; a D-13 of line 101 on 2026-12-01, first seen
complete at 07:40 (the arrival of its first off-schedule trip).
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import msgspec

from engine.changelog import emit_change, settle
from kernel.policy import load_policy
from rules.model import PROVISIONAL, make_infraction

TZ = ZoneInfo("America/Sao_Paulo")
DAY = dt.date(2026, 12, 1)
POLICY = load_policy()


def at(hh, mm):
    return dt.datetime(2026, 12, 1, hh, mm, tzinfo=TZ)


def d13(off=1, **changes):
    record = make_infraction("D-13", POLICY, identity=(DAY, "101"), status=PROVISIONAL, operator_id="VNV",
                             route_id="101", service_date=DAY, occurred_at=at(7, 7), description="…",
                             evidence={"off_schedule_trips": off})
    return msgspec.structs.replace(record, **changes)


def test_a_new_record_is_sent_stamped_with_when_its_evidence_was_complete():
    emitted = {}
    [sent] = emit_change(emitted, d13(), at(7, 40).timestamp(), TZ)
    assert sent.detected_at == at(7, 40) and emitted == {sent.infraction_id: sent}


def test_the_same_record_again_is_not_sent_a_changed_one_is_with_its_first_detected_at():
    emitted = {}
    emit_change(emitted, d13(), at(7, 40).timestamp(), TZ)
    assert emit_change(emitted, d13(), at(8, 10).timestamp(), TZ) == []
    [update] = emit_change(emitted, d13(off=2), at(8, 10).timestamp(), TZ)  # a second trip off schedule
    assert (update.evidence["off_schedule_trips"], update.detected_at) == (2, at(7, 40))


def test_detected_at_is_the_earliest_moment_whatever_order_it_was_heard_in():
    # another partition's trip, off schedule and arrived at 07:20, is heard after 07:40's
    emitted = {}
    emit_change(emitted, d13(), at(7, 40).timestamp(), TZ)
    [update] = emit_change(emitted, d13(off=2), at(7, 20).timestamp(), TZ)
    assert update.detected_at == at(7, 20)


def test_settling_a_day_confirms_keeps_detected_at_and_withdraws_what_it_no_longer_supports():
    emitted = {}
    [live] = emit_change(emitted, d13(), at(7, 40).timestamp(), TZ)
    other = d13(route_id="201", infraction_id="x" * 32)
    emit_change(emitted, other, at(9, 0).timestamp(), TZ)
    confirmed = msgspec.structs.replace(live, status="confirmed", detected_at=None)
    out = settle(emitted, [confirmed], DAY, at(23, 59).timestamp(), TZ)
    assert [(r.infraction_id, r.status, r.detected_at) for r in out] == [
        (live.infraction_id, "confirmed", at(7, 40)), ("x" * 32, "withdrawn", at(9, 0))]
    assert emitted == {}  # the day is settled


def test_a_record_first_found_at_day_close_is_stamped_with_the_close():
    [new] = settle({}, [d13(status="confirmed")], DAY, at(23, 59).timestamp(), TZ)
    assert new.detected_at == at(23, 59)
