"""The operations room's live tables (#14 part 2), beside the docket store in the same
database: what Grafana's live dashboards read with SQL.

They are a projection of the Kafka outputs, rebuilt by replaying those topics: each
row is written by an upsert keyed like its topic, so a record read twice (the sink
restarted before committing its offsets) changes nothing.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, Boolean, Date, Float, Integer, MetaData, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from dockets.store import UtcDateTime


class Base(DeclarativeBase):
    metadata = MetaData()  # apart from the docket store's: its own migrations
    type_annotation_map = {dict[str, Any]: JSON, dt.datetime: UtcDateTime()}


class LiveVehicle(Base):
    """Each vehicle's latest status (topic vehicle-status; the newest event time wins)."""

    __tablename__ = "live_vehicle_status"
    vehicle_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    operator_id: Mapped[str] = mapped_column(String(64), index=True)
    ts: Mapped[dt.datetime]
    lat: Mapped[float] = mapped_column(Float)
    lon: Mapped[float] = mapped_column(Float)
    speed_kmh: Mapped[float] = mapped_column(Float)
    in_service: Mapped[bool] = mapped_column(Boolean)
    route_id: Mapped[str | None] = mapped_column(String(64))
    direction_id: Mapped[int | None] = mapped_column(Integer)
    trip_id: Mapped[str | None] = mapped_column(String(128))
    progress: Mapped[float | None] = mapped_column(Float)
    departed_at: Mapped[dt.datetime | None]
    schedule_deviation_s: Mapped[float | None] = mapped_column(Float)
    headway_s: Mapped[float | None] = mapped_column(Float)
    scheduled_headway_s: Mapped[int | None] = mapped_column(Integer)
    vehicle_ahead: Mapped[str | None] = mapped_column(String(64))
    headway_state: Mapped[str | None] = mapped_column(String(16))  # bunched, regular, gapped
    off_route_m: Mapped[float | None] = mapped_column(Float)
    off_route_since: Mapped[dt.datetime | None]
    catraca_silent_since: Mapped[dt.datetime | None]
    layover_since: Mapped[dt.datetime | None]  # arrived, standing in the terminal between trips


class LiveTrip(Base):
    """Every realized trip with its deviation (topic trips; a vehicle departs once at a time)."""

    __tablename__ = "live_trips"
    vehicle_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    departed_at: Mapped[dt.datetime] = mapped_column(UtcDateTime(), primary_key=True)
    operator_id: Mapped[str] = mapped_column(String(64), index=True)
    route_id: Mapped[str] = mapped_column(String(64))
    direction_id: Mapped[int] = mapped_column(Integer)
    trip_id: Mapped[str | None] = mapped_column(String(128))
    service_date: Mapped[dt.date] = mapped_column(Date, index=True)
    arrived_at: Mapped[dt.datetime]
    departure_deviation_s: Mapped[float | None] = mapped_column(Float)
    coverage: Mapped[float] = mapped_column(Float)


class LiveInfraction(Base):
    """Every infraction record in its latest status, provisional, exempt and withdrawn
    included (topic infractions, compacted by infraction_id)."""

    __tablename__ = "live_infractions"
    infraction_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    code: Mapped[str] = mapped_column(String(32), index=True)
    status: Mapped[str] = mapped_column(String(16), index=True)
    operator_id: Mapped[str] = mapped_column(String(64), index=True)
    route_id: Mapped[str | None] = mapped_column(String(64))
    vehicle_id: Mapped[str | None] = mapped_column(String(64))
    service_date: Mapped[dt.date] = mapped_column(Date, index=True)
    occurred_at: Mapped[dt.datetime]
    detected_at: Mapped[dt.datetime | None]
    fine_ufir: Mapped[int] = mapped_column(Integer)
    lat: Mapped[float | None] = mapped_column(Float)
    lon: Mapped[float | None] = mapped_column(Float)
    record: Mapped[dict[str, Any]]


class LiveConflictingDuplicate(Base):
    """Each message a vehicle sent in two versions (topic rejected, reason
    conflicting_duplicate): the same vehicle, time and seq with other content is a
    tampering signal the operations room counts per vehicle. Other dead letters stay
    on the topic only."""

    __tablename__ = "live_conflicting_duplicates"
    source: Mapped[str] = mapped_column(String(16), primary_key=True)
    vehicle_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    ts: Mapped[dt.datetime] = mapped_column(UtcDateTime(), primary_key=True)
    seq: Mapped[int | None] = mapped_column(Integer)
    detail: Mapped[str] = mapped_column(String(500))
    location: Mapped[str | None] = mapped_column(String(128))


class LiveFeed(Base):
    """The feed the live tables are read against, one row (`FEED_ROW`) the sink writes
    at start: its timezone (agency_timezone), in which the panels bucket days."""

    __tablename__ = "live_feed"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    timezone: Mapped[str] = mapped_column(String(64))


FEED_ROW = 1


class LiveMonthEfficiency(Base):
    """Each operator's art. 45 month as its days close (topic month-efficiency; the latest
    per operator and month wins: its days only add up)."""

    __tablename__ = "live_month_efficiency"
    operator_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    month: Mapped[str] = mapped_column(String(7), primary_key=True)
    programmed_km: Mapped[float] = mapped_column(Float)
    realized_km: Mapped[float] = mapped_column(Float)
    efficiency_pct: Mapped[float] = mapped_column(Float)
    min_efficiency_pct: Mapped[float] = mapped_column(Float)
    days_closed: Mapped[int] = mapped_column(Integer)
    days_without_telemetry: Mapped[int] = mapped_column(Integer)
    as_of: Mapped[dt.date] = mapped_column(Date)
    month_closed: Mapped[bool] = mapped_column(Boolean)
