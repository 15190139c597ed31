"""The public record of what was upheld (Lei 12.527/2011, acesso à informação): per
operator and month, the autos whose fine is final (`workflow.is_final`) by code and line
with their fines, beside the month's art. 45 efficiency and its realized against
scheduled trips. Pure: the shells (the web app's public page and downloads) bring the
rows and write the result as HTML, CSV or JSON.

What it publishes, and what it never does. An auto enters only through `AutoFacts`,
which copies the few fields the record needs: its number, operator, code, line, month
and fine. Not the vehicle, its plate or the trip: with the time and place of the fact
they name the driver on duty (the tachograph contract carries `driver_id`, the operator
its rosters), personal data the LGPD (Lei 13.709/2018) keeps from a record that needs
none to say what was upheld against which company, for how much. Not the description,
the place, the defence, the judgment's reasons or the attachments: they quote people
(the fiscal's relato, the operator's lawyers), and an aggregate needs none of them. Not
the accounts of the Órgão's staff or the operators' representatives. The auto's number
is published: it is how anyone traces a figure to the act that imposed it (and asks for
the act itself under the same law).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

import msgspec

from dockets import workflow
from dockets.calendar import BusinessCalendar
from kernel.money import fine_brl


@dataclass(frozen=True)
class AutoFacts:
    """What the public record may know of one auto de infração."""

    number: str  # as printed: 0007/2026
    operator_id: str
    code: str  # as the law writes it
    route_id: str | None  # the linha; None for an auto of a vehicle outside any trip
    month: str  # YYYY-MM of the service day of the fact (the art. 45 month)
    fine_ufir: int  # the auto's fine in the law's unit (escalated, doubled for recidivism: as issued)
    ufir_brl: Decimal  # the unit's value in reais the auto was issued with
    status: workflow.DocketStatus

    @classmethod
    def of(cls, docket) -> AutoFacts:
        """The facts of a `dockets.store.Docket` row (lavrado: it has a number)."""
        return cls(number=docket.label, operator_id=docket.operator_id, code=docket.code, route_id=docket.route_id,
                   month=docket.service_date.strftime("%Y-%m"), fine_ufir=int(docket.fine_ufir),
                   ufir_brl=Decimal(str(docket.ufir_brl)),
                   status=msgspec.convert(docket.status, workflow.DocketStatus))

    @property
    def fine_brl(self) -> Decimal:
        """In reais as the auto states it: rounded to the cent on its own (`kernel.money.fine_brl`)."""
        return fine_brl(self.fine_ufir, self.ufir_brl)


@dataclass(frozen=True)
class MonthService:
    """An operator's month of service: art. 45 as the month's days close (the engine's
    `month-efficiency` record) and its realized against scheduled trips."""

    operator_id: str
    month: str  # YYYY-MM
    efficiency_pct: float  # programmed km of the realized trips / programmed km (art. 45)
    min_efficiency_pct: float  # the exemption's threshold (98 %)
    programmed_km: float
    realized_km: float
    days_closed: int  # closed days with telemetry (what the efficiency is over)
    days_without_telemetry: int  # closed days left out: no telemetry at all, never a 0 % day
    month_closed: bool  # art. 45 applied at the month's close; False: the month still runs
    realized_trips: int  # trips the telemetry shows were run, on the closed days
    scheduled_trips: int | None  # trips and headway departures scheduled on the days with realized trips
    trip_days: int  # the days those two counts are over


@dataclass(frozen=True)
class FineRow:
    """The final autos of one code on one line, in one operator's month."""

    code: str
    route_id: str | None
    autos: tuple[str, ...]  # their numbers, in order
    fine_ufir: int  # the sum of their fines
    fine_brl: Decimal  # the sum of their fines in reais, each rounded as the auto states it


@dataclass(frozen=True)
class OperatorMonth:
    operator_id: str
    operator_name: str
    month: str
    rows: tuple[FineRow, ...]
    service: MonthService | None  # None: no month-efficiency record for it (no telemetry processed)

    @property
    def autos(self) -> int:
        return sum(len(r.autos) for r in self.rows)

    @property
    def fine_ufir(self) -> int:
        return sum(r.fine_ufir for r in self.rows)

    @property
    def fine_brl(self) -> Decimal:
        return sum((r.fine_brl for r in self.rows), Decimal("0.00"))


@dataclass(frozen=True)
class PublicRecord:
    as_of: dt.date  # finality is judged on this day
    months: tuple[OperatorMonth, ...]  # the latest month first, operators in id order


def _auto_order(number: str) -> tuple[int, int]:
    digits, _, year = number.partition("/")
    return int(year or 0), int(digits or 0)


def public_record(autos: Iterable[AutoFacts], services: Iterable[MonthService], operator_names: Mapping[str, str],
                  calendar: BusinessCalendar, today: dt.date) -> PublicRecord:
    """The record on `today`: the autos whose fine is final (`workflow.is_final`), grouped
    per operator, month, code and line; every operator-month with a final auto or a
    month of service."""
    groups: dict[tuple[str, str], dict[tuple[str, str], list[AutoFacts]]] = {}
    for auto in autos:
        if workflow.is_final(auto.status, calendar, today):
            rows = groups.setdefault((auto.operator_id, auto.month), {})
            rows.setdefault((auto.code, auto.route_id or ""), []).append(auto)
    by_month = {(s.operator_id, s.month): s for s in services}
    months = []
    for operator_id, month in sorted(set(groups) | set(by_month), key=lambda k: (_neg_month(k[1]), k[0])):
        rows = tuple(
            FineRow(code=code, route_id=route or None,
                    autos=tuple(sorted((a.number for a in found), key=_auto_order)),
                    fine_ufir=sum(a.fine_ufir for a in found),
                    fine_brl=sum((a.fine_brl for a in found), Decimal("0.00")))
            for (code, route), found in sorted(groups.get((operator_id, month), {}).items()))
        months.append(OperatorMonth(operator_id=operator_id, operator_name=operator_names.get(operator_id, operator_id),
                                    month=month, rows=rows, service=by_month.get((operator_id, month))))
    return PublicRecord(as_of=today, months=tuple(months))


def _neg_month(month: str) -> tuple[int, int]:
    year, number = month.split("-")
    return -int(year), -int(number)


# --- open data ------------------------------------------------------------------------------

def unit_key(fine_unit: str) -> str:
    """A column name for the law's fine unit: UFIR -> ufir."""
    ascii_text = unicodedata.normalize("NFKD", fine_unit).encode("ascii", "ignore").decode()
    return re.sub(r"[^0-9a-z]+", "_", ascii_text.lower()).strip("_") or "unidades"


def _service_fields(service: MonthService | None) -> dict:
    if service is None:
        return {"eficiencia_art45_pct": None, "eficiencia_minima_pct": None, "km_programados": None,
                "km_realizados": None, "dias_apurados": None, "dias_sem_telemetria": None, "mes_encerrado": None,
                "viagens_programadas": None, "viagens_realizadas": None, "dias_das_viagens": None}
    return {"eficiencia_art45_pct": service.efficiency_pct, "eficiencia_minima_pct": service.min_efficiency_pct,
            "km_programados": service.programmed_km, "km_realizados": service.realized_km,
            "dias_apurados": service.days_closed, "dias_sem_telemetria": service.days_without_telemetry,
            "mes_encerrado": service.month_closed, "viagens_programadas": service.scheduled_trips,
            "viagens_realizadas": service.realized_trips, "dias_das_viagens": service.trip_days}


def record_json(record: PublicRecord, fine_unit: str) -> bytes:
    """The record as JSON (UTF-8): one object per operator and month, its infractions by
    code and line, each with the numbers of its autos; reais as numbers with two decimals."""
    unit = unit_key(fine_unit)
    months = []
    for m in record.months:
        months.append({
            "mes": m.month, "operadora": m.operator_id, "operadora_nome": m.operator_name,
            "servico": _service_fields(m.service),
            "infracoes": [{"codigo": r.code, "linha": r.route_id, "autos": list(r.autos), "quantidade": len(r.autos),
                           f"multa_{unit}": r.fine_ufir, "multa_reais": float(r.fine_brl)} for r in m.rows],
            "total": {"autos": m.autos, f"multa_{unit}": m.fine_ufir, "multa_reais": float(m.fine_brl)},
        })
    document = {"apurado_em": record.as_of.isoformat(), "unidade_da_multa": fine_unit, "meses": months}
    return (json.dumps(document, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def csv_columns(fine_unit: str) -> list[str]:
    return ["mes", "operadora", "operadora_nome", "codigo", "linha", "autos", "quantidade",
            f"multa_{unit_key(fine_unit)}", "multa_reais", *_service_fields(None)]


def record_csv(record: PublicRecord, fine_unit: str) -> str:
    """The record as CSV: one row per operator, month, code and line, the autos' numbers
    separated by spaces, the month's service repeated on each of its rows; a month of
    service without a final auto is one row with the infraction's columns empty."""
    out = io.StringIO()
    columns = csv_columns(fine_unit)
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    unit = columns[7]
    for m in record.months:
        service = {k: ("" if v is None else ("sim" if v is True else "não" if v is False else v))
                   for k, v in _service_fields(m.service).items()}
        head = {"mes": m.month, "operadora": m.operator_id, "operadora_nome": m.operator_name}
        if not m.rows:
            writer.writerow({**head, "codigo": "", "linha": "", "autos": "", "quantidade": 0, unit: 0,
                             "multa_reais": "0.00", **service})
        for r in m.rows:
            writer.writerow({**head, "codigo": r.code, "linha": r.route_id or "", "autos": " ".join(r.autos),
                             "quantidade": len(r.autos), unit: r.fine_ufir, "multa_reais": f"{r.fine_brl:.2f}",
                             **service})
    return out.getvalue()
