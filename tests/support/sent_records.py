"""Records the engine sent earlier, as a vehicle's state remembers them (`emitted`)."""

from __future__ import annotations

import datetime as dt

import msgspec

from rules.model import make_infraction


def sent_c01(context, day: dt.date):
    """JN-2014's C-01 of `day` at 06:49, sent at 06:55: a record a settled day confirms,
    changes or withdraws."""
    tz = context.feed.timezone
    record = make_infraction("C-01", context.policy, identity=(day, "JN-2014", 1.0), operator_id="TRD",
                             vehicle_id="JN-2014", service_date=day,
                             occurred_at=dt.datetime(day.year, day.month, day.day, 6, 49, tzinfo=tz),
                             description="…", evidence={"interval_epoch": [1.0, 2.0]})
    return msgspec.structs.replace(record, detected_at=dt.datetime(day.year, day.month, day.day, 6, 55, tzinfo=tz))
