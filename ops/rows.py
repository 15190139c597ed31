"""Records of the engine's output topics as rows of the live tables: pure decoding and
mapping, the sink's only logic. A record that does not decode is a `Rejection`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import msgspec

from engine.status import MonthEfficiency, VehicleStatus
from telemetry import Rejection

class _Trip(msgspec.Struct, kw_only=True):
    vehicle_id: str
    route_id: str
    direction_id: int
    trip_id: str | None
    service_date: dt.date
    departed_at: dt.datetime
    arrived_at: dt.datetime
    departure_deviation_s: float | None
    coverage: float
    # a trip a day judged again no longer finds (its departure read anew from late data)
    withdrawn: bool = False


class _Infraction(msgspec.Struct, kw_only=True):
    infraction_id: str
    code: str
    status: str
    operator_id: str
    route_id: str | None = None
    vehicle_id: str | None = None
    service_date: dt.date
    occurred_at: dt.datetime
    detected_at: dt.datetime | None = None
    fine_ufir: int
    lat: float | None = None
    lon: float | None = None


class _Sent(msgspec.Struct):
    """What a conflicting duplicate's raw message says of itself (it decoded: the engine
    rejected it whole)."""
    vehicle_id: str
    ts: dt.datetime
    seq: int | None = None


_status_decoder = msgspec.json.Decoder(VehicleStatus)
_rejection_decoder = msgspec.json.Decoder(Rejection)
_sent_decoder = msgspec.json.Decoder(_Sent)
_month_decoder = msgspec.json.Decoder(MonthEfficiency)
_trip_decoder = msgspec.json.Decoder(_Trip)
_infraction_decoder = msgspec.json.Decoder(_Infraction)


def _instant(text: str | None) -> dt.datetime | None:
    return None if text is None else dt.datetime.fromisoformat(text)


def row_of(topic: str, value: bytes, location: str,
           operator_of_route: Mapping[str, str]) -> dict[str, Any] | Rejection | None:
    """The row a record of `topic` makes, or why it makes none; None for a dead letter
    that is no conflicting duplicate (the live tables keep only those)."""
    try:
        if topic == "vehicle-status":
            status = _status_decoder.decode(value)
            row = msgspec.structs.asdict(status)
            for name in ("ts", "departed_at", "off_route_since", "catraca_silent_since", "layover_since"):
                row[name] = _instant(row[name])
            return row
        if topic == "trips":
            trip = _trip_decoder.decode(value)
            return {**msgspec.structs.asdict(trip), "operator_id": operator_of_route.get(trip.route_id, "")}
        if topic == "month-efficiency":
            row = msgspec.structs.asdict(_month_decoder.decode(value))
            row["as_of"] = dt.date.fromisoformat(row["as_of"])
            return row
        if topic == "rejected":
            rejection = _rejection_decoder.decode(value)
            if rejection.reason != "conflicting_duplicate":
                return None
            sent = _sent_decoder.decode(rejection.raw)
            return {"source": rejection.source, "vehicle_id": sent.vehicle_id, "ts": sent.ts, "seq": sent.seq,
                    "detail": rejection.detail[:500], "location": rejection.location}
        if topic == "infractions":
            infraction = _infraction_decoder.decode(value)
            return {**msgspec.structs.asdict(infraction), "record": msgspec.json.decode(value)}
    except (msgspec.DecodeError, ValueError) as exc:
        return Rejection(source=topic, reason="invalid_record", detail=str(exc).splitlines()[0][:500],
                         location=location, raw=value.decode("utf-8", "replace"))
    raise ValueError(f"no live table for topic {topic!r}")
