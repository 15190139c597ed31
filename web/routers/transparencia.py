"""Public (no login): the record of what was upheld (Lei 12.527/2011, acesso à
informação), as a page and as open data (CSV and JSON). A thin shell: it reads the rows
(the lavrado autos; the live tables' art. 45 months and realized trips; the feed's
schedule) and hands them to `dockets.public_record`, which decides what is final and
what is published.

The page is the same for everyone: it never loads the session, so a logged-in visitor's
name is not on it either. The downloads may be read from any origin, like the public
GTFS-Realtime feeds (`web.security.PUBLIC_FEEDS`)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import func, select

from dockets import public_record
from dockets.public_record import AutoFacts, MonthService, PublicRecord
from dockets.store import Docket, Operator
from gtfs.schedule import expected_trips, scheduled_trips
from ops.store import LiveMonthEfficiency, LiveTrip
from web import views
from web.dependencies import State
from web.format import brl, date_br, integer
from web.state import AppState

router = APIRouter()

PAGE = "/transparencia"
CSV = "/transparencia/multas-mantidas.csv"
JSON = "/transparencia/multas-mantidas.json"
CACHE = {"Cache-Control": "max-age=300"}


def _scheduled(web: AppState, operator_id: str, dates: set[dt.date]) -> int | None:
    """Trips scheduled and headway departures expected on `dates` for the operator's
    lines, as the operations room counts them (streams.metrics); None without the feed."""
    feed = web.config.feed
    if feed is None:
        return None
    lines = {r.route_id for r in feed.routes.values() if r.agency_id == operator_id}
    return sum(1 for date in dates for trip in (*scheduled_trips(feed, date), *expected_trips(feed, date))
               if trip.route_id in lines)


def _services(web: AppState, session) -> list[MonthService]:
    trips: dict[tuple[str, str], list[dt.date]] = defaultdict(list)
    for operator_id, service_date, count in session.execute(
            select(LiveTrip.operator_id, LiveTrip.service_date, func.count()).group_by(LiveTrip.operator_id,
                                                                                      LiveTrip.service_date)):
        trips[(operator_id, service_date.strftime("%Y-%m"))] += [service_date] * count
    services = []
    for row in session.scalars(select(LiveMonthEfficiency)):
        dates = trips.get((row.operator_id, row.month), [])
        days = set(dates)
        services.append(MonthService(
            operator_id=row.operator_id, month=row.month, efficiency_pct=row.efficiency_pct,
            min_efficiency_pct=row.min_efficiency_pct, programmed_km=row.programmed_km, realized_km=row.realized_km,
            days_closed=row.days_closed, days_without_telemetry=row.days_without_telemetry,
            month_closed=bool(row.month_closed), realized_trips=len(dates),
            scheduled_trips=_scheduled(web, row.operator_id, days), trip_days=len(days)))
    return services


def record_of(web: AppState) -> PublicRecord:
    with web.config.sessions() as session:
        # lavrado autos only (a draft is no act of the Órgão yet); the core keeps the final ones
        autos = [AutoFacts.of(d) for d in session.scalars(select(Docket).where(Docket.number.is_not(None)))]
        names = dict(session.execute(select(Operator.id, Operator.name)).all())
        services = _services(web, session)
    return public_record.public_record(autos, services, names, web.config.calendar, web.today())


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f} %".replace(".", ",")


def _km(value: float) -> str:
    return f"{value:,.1f}".replace(",", "\0").replace(".", ",").replace("\0", ".")


@router.get(PAGE, response_class=HTMLResponse)
def page(request: Request, web: State):
    record = record_of(web)
    law = web.config.pack.law
    return web.render(request, "transparencia.html", {
        "record": record, "as_of": date_br(record.as_of), "brl": brl, "integer": integer, "percent": _percent,
        "km": _km, "code_text": lambda code: views.code_text(code, law), "csv_url": CSV, "json_url": JSON,
    })


@router.get(CSV)
def download_csv(web: State):
    data = public_record.record_csv(record_of(web), web.config.pack.law.fine_unit)
    # with a BOM, the spreadsheets Brazilian offices use read the accents right
    return Response(("\ufeff" + data).encode("utf-8"), media_type="text/csv; charset=utf-8",
                    headers={**CACHE, "Content-Disposition": 'attachment; filename="multas-mantidas.csv"'})


@router.get(JSON)
def download_json(web: State):
    data = public_record.record_json(record_of(web), web.config.pack.law.fine_unit)
    return Response(data, media_type="application/json", headers={
        **CACHE, "Content-Disposition": 'attachment; filename="multas-mantidas.json"'})
