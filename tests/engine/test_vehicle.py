"""The vehicle stage settling a day against what left while it ran.

Context: the João Neiva sample network and policy; one C-01 record of JN-2014 was
emitted live, then the day closes.
"""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest

from engine.messages import DayMatched
from engine.vehicle import PartitionState, VehicleStage, VehicleState
from fiscaliza.replay import ReplayInputs, load_context
from fiscaliza.samples import joao_neiva
from rules.model import make_infraction

DAY = dt.date(2026, 12, 1)


@pytest.fixture(scope="module")
def context():
    feed, fleet = joao_neiva()
    return load_context(ReplayInputs(feed=feed, fleet=fleet, tachograph=fleet))


def stage_with(context, state):
    states = {state.vehicle_id: state}
    return VehicleStage(context, PartitionState(0), states.get, lambda s: states.__setitem__(s.vehicle_id, s)), states


def emitted(context):
    tz = context.feed.timezone
    record = make_infraction("C-01", context.policy, identity=(DAY, "JN-2014", 1.0), operator_id="TRD",
                             vehicle_id="JN-2014", service_date=DAY,
                             occurred_at=dt.datetime(2026, 12, 1, 6, 49, tzinfo=tz), description="…",
                             evidence={"interval_epoch": [1.0, 2.0]})
    return msgspec.structs.replace(record, detected_at=dt.datetime(2026, 12, 1, 6, 55, tzinfo=tz))


def test_a_live_record_the_settled_day_does_not_support_is_withdrawn_not_deleted(context):
    record = emitted(context)
    stage, states = stage_with(context, VehicleState("JN-2014", emitted={record.infraction_id: record}))
    # the day closes with nothing of this vehicle's (no trips, no telemetry kept)
    [withdrawn] = stage.on_day_matched(DayMatched("JN-2014", "TRD", DAY, [], closed_at=1.8e9), [])
    assert withdrawn.status == "withdrawn"
    assert (withdrawn.infraction_id, withdrawn.detected_at) == (record.infraction_id, record.detected_at)
    assert withdrawn.evidence == record.evidence  # kept for the audit trail
    assert states["JN-2014"].emitted == {}  # the day is settled: nothing more to follow


def test_a_day_judged_again_after_a_restart_emits_nothing(context):
    record = emitted(context)
    stage, _ = stage_with(context, VehicleState("JN-2014", emitted={record.infraction_id: record}))
    message = DayMatched("JN-2014", "TRD", DAY, [], closed_at=1.8e9)
    assert len(stage.on_day_matched(message, [])) == 1
    assert stage.on_day_matched(message, []) == []
