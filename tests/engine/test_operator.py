"""The operator stage settling a day against what left while it ran (D-13 provisional).

Context: the João Neiva sample network and policy; operator VNV runs line 101.
"""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest

from engine.operator import OperatorStage, OperatorState
from fiscaliza.replay import ReplayInputs, load_context
from fiscaliza.samples import joao_neiva
from rules.model import PROVISIONAL, make_infraction

DAY = dt.date(2026, 12, 1)


@pytest.fixture(scope="module")
def context():
    feed, fleet = joao_neiva()
    return load_context(ReplayInputs(feed=feed, fleet=fleet, tachograph=fleet))


def provisional_d13(context):
    tz = context.feed.timezone
    record = make_infraction("D-13", context.policy, identity=(DAY, "101"), status=PROVISIONAL, operator_id="VNV",
                             route_id="101", service_date=DAY, occurred_at=dt.datetime(2026, 12, 1, 7, 7, tzinfo=tz),
                             description="…", evidence={"off_schedule_trips": 1})
    return msgspec.structs.replace(record, detected_at=dt.datetime(2026, 12, 1, 7, 40, tzinfo=tz))


def test_a_provisional_d13_the_days_final_matching_does_not_support_is_withdrawn(context):
    record = provisional_d13(context)
    state = OperatorState("VNV", emitted={record.infraction_id: record})
    stage = OperatorStage(context, 1, lambda _: state, lambda s: None)
    [withdrawn] = stage._reconcile(state, DAY, [], closed_at=1.8e9)  # the closed day finds nothing off schedule
    assert (withdrawn.status, withdrawn.infraction_id, withdrawn.detected_at) == (
        "withdrawn", record.infraction_id, record.detected_at)
    assert state.emitted == {}


def test_the_settled_d13_keeps_the_detected_at_of_its_provisional_record(context):
    record = provisional_d13(context)
    state = OperatorState("VNV", emitted={record.infraction_id: record})
    stage = OperatorStage(context, 1, lambda _: state, lambda s: None)
    settled = msgspec.structs.replace(record, status="confirmed", detected_at=None)
    [confirmed] = stage._reconcile(state, DAY, [settled], closed_at=1.8e9)
    assert (confirmed.status, confirmed.detected_at) == ("confirmed", record.detected_at)
