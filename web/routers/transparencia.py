"""Public (no login): the record of what was upheld (Lei 12.527/2011, acesso à
informação), as a page and as open data (CSV and JSON). A thin shell over
`ops.public_record` (the rows) and `dockets.public_record` (what is final, what is
published, the CSV and JSON).

The page is the same for everyone: it never loads the session, so a logged-in visitor's
name is not on it either. The downloads may be read from any origin, like the public
GTFS-Realtime feeds (`web.security.PUBLIC_FEEDS`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from dockets import public_record
from dockets.public_record import PublicRecord
from ops.public_record import read_public_record
from web import views
from web.dependencies import State
from web.format import brl, date_br, integer
from web.state import AppState

router = APIRouter()

PAGE = "/transparencia"
CSV = "/transparencia/multas-mantidas.csv"
JSON = "/transparencia/multas-mantidas.json"
CACHE = {"Cache-Control": "max-age=300"}


def record_of(web: AppState) -> PublicRecord:
    with web.config.sessions() as session:
        return read_public_record(session, calendar=web.config.calendar, today=web.today(), feed=web.config.feed)


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
