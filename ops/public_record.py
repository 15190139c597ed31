"""Reading the public record of what was upheld (#30 item 4) from the database: the
lavrado autos of the docket store, and the live tables' art. 45 months and realized
trips, with the feed's schedule for the trips scheduled. What is final and what is
published is decided by `dockets.public_record`; the web app's public page and
`fiscaliza dockets transparencia` both read it here."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from sqlalchemy import func, select
from sqlalchemy.orm import Session, load_only

from dockets.calendar import BusinessCalendar
from dockets.public_record import AutoFacts, MonthService, PublicRecord, public_record
from dockets.store import Docket, Operator
from gtfs import Feed
from gtfs.schedule import expected_trips, scheduled_trips
from ops.store import LiveMonthEfficiency, LiveTrip


def scheduled_count(feed: Feed, operator_id: str, dates) -> int:
    """Trips scheduled and headway departures expected on `dates` on the operator's lines,
    as the operations room counts them (streams.metrics: timetabled trips and the
    departures art. 45 and D-12 expect of each headway window)."""
    lines = {r.route_id for r in feed.routes.values() if r.agency_id == operator_id}
    return sum(1 for date in dates for trip in (*scheduled_trips(feed, date), *expected_trips(feed, date))
               if trip.route_id in lines)


def month_services(session: Session, feed: Feed | None) -> list[MonthService]:
    """Each operator's art. 45 month (its latest `month-efficiency` record) with the trips
    realized on its closed days and, with the feed, those scheduled on the days that have
    realized trips (None without the feed)."""
    trips: dict[tuple[str, str], dict[dt.date, int]] = defaultdict(dict)
    for operator_id, service_date, count in session.execute(
            select(LiveTrip.operator_id, LiveTrip.service_date, func.count())
            .group_by(LiveTrip.operator_id, LiveTrip.service_date)):
        trips[(operator_id, service_date.strftime("%Y-%m"))][service_date] = count
    services = []
    for row in session.scalars(select(LiveMonthEfficiency)):
        days = trips.get((row.operator_id, row.month), {})
        services.append(MonthService(
            operator_id=row.operator_id, month=row.month, efficiency_pct=row.efficiency_pct,
            min_efficiency_pct=row.min_efficiency_pct, programmed_km=row.programmed_km, realized_km=row.realized_km,
            days_closed=row.days_closed, days_without_telemetry=row.days_without_telemetry,
            month_closed=bool(row.month_closed), realized_trips=sum(days.values()),
            scheduled_trips=None if feed is None else scheduled_count(feed, row.operator_id, days),
            trip_days=len(days)))
    return services


def read_public_record(session: Session, *, calendar: BusinessCalendar, today: dt.date,
                       feed: Feed | None = None) -> PublicRecord:
    # lavrado autos only (a draft is no act of the Órgão yet); the core keeps the final ones
    # only the columns the record reads: a public page must not load every auto's evidence
    columns = load_only(Docket.id, Docket.year, Docket.number, Docket.operator_id, Docket.code, Docket.route_id,
                        Docket.service_date, Docket.fine_ufir, Docket.ufir_brl, Docket.status)
    autos = [AutoFacts.of(d) for d in session.scalars(select(Docket).options(columns)
                                                      .where(Docket.number.is_not(None)))]
    names = dict(session.execute(select(Operator.id, Operator.name)).all())
    return public_record(autos, month_services(session, feed), names, calendar, today)
