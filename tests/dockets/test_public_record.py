"""The public record of what was upheld (#30 item 4), on hand-made autos: which enter
(only the final ones, `workflow.is_final`), how they group, and that the open data's
figures are the sums of the autos they list.

Calendar as tests/dockets/test_workflow.py: ciência Thu 2026-12-03, defence term Fri
2026-12-18; julgado procedente Mon 2026-12-21, recurso term Fri 2027-01-08."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from decimal import Decimal

from dockets.calendar import BusinessCalendar
from dockets.public_record import AutoFacts, MonthService, public_record, record_csv, record_json
from dockets.workflow import (
    ApresentarDefesa,
    InterporRecurso,
    JulgarDefesa,
    JulgarRecurso,
    Lavrar,
    Notificar,
    RegistrarPagamento,
    SuspenderJudicial,
    fold,
)
from rules.joao_neiva.anexo_i import LAW

D = dt.date
CAL = BusinessCalendar.for_municipality("ES", [D(2026, 12, 8)], law=LAW)
TODAY = D(2027, 2, 1)  # every term of the timelines below has ended
UFIR = Decimal("1.0641")

NOTIFIED = [Lavrar(D(2026, 11, 30)), Notificar(D(2026, 12, 3))]
DEFENDED = NOTIFIED + [ApresentarDefesa(D(2026, 12, 11))]
UPHELD = DEFENDED + [JulgarDefesa(D(2026, 12, 21), True, "Comprovado.")]
APPEALED = UPHELD + [InterporRecurso(D(2027, 1, 8))]
TIMELINES = {
    "not contested in time": NOTIFIED,
    "upheld, no recurso in time": UPHELD,
    "recurso não provido": APPEALED + [JulgarRecurso(D(2027, 1, 29), False, "Sem fato novo.")],
    "paid": NOTIFIED + [RegistrarPagamento(D(2026, 12, 10))],
    # never final
    "lavrado": NOTIFIED[:1],
    "defence awaiting judgment": DEFENDED,
    "recurso awaiting judgment": APPEALED,
    "archived": DEFENDED + [JulgarDefesa(D(2026, 12, 21), False, "Improcedente.")],
    "recurso provido": APPEALED + [JulgarRecurso(D(2027, 1, 29), True, "Provido.")],
    "judicially suspended": UPHELD + [SuspenderJudicial(D(2026, 12, 22), "5000123-45.2026.8.08.0030")],
}
FINAL = ("not contested in time", "upheld, no recurso in time", "recurso não provido", "paid")


def auto(number: int, timeline: str, *, code="D-11", route="101", month="2026-11", fine=200, operator="TRD"):
    return AutoFacts(number=f"{number:04d}/2026", operator_id=operator, code=code, route_id=route, month=month,
                     fine_ufir=fine, ufir_brl=UFIR, status=fold(TIMELINES[timeline], CAL))


def service(operator="TRD", month="2026-11", **fields):
    values = dict(efficiency_pct=97.5, min_efficiency_pct=98.0, programmed_km=1000.0, realized_km=975.0,
                  days_closed=30, days_without_telemetry=0, month_closed=True, realized_trips=390,
                  scheduled_trips=400, trip_days=30)
    return MonthService(operator_id=operator, month=month, **{**values, **fields})


def test_only_final_autos_enter_the_record():
    autos = [auto(n, timeline) for n, timeline in enumerate(TIMELINES, start=1)]
    [month] = public_record(autos, [], {"TRD": "Transportes Rio Doce"}, CAL, TODAY).months
    [row] = month.rows
    assert row.autos == ("0001/2026", "0002/2026", "0003/2026", "0004/2026")
    assert [t for n, t in enumerate(TIMELINES, start=1) if f"{n:04d}/2026" in row.autos] == list(FINAL)


def test_an_auto_within_its_defence_term_is_not_yet_in_the_record():
    # defence term ends Fri 2026-12-18: on that day it can still be contested
    on_last_day = public_record([auto(1, "not contested in time")], [], {}, CAL, D(2026, 12, 18))
    assert on_last_day.months == ()
    assert public_record([auto(1, "not contested in time")], [], {}, CAL, D(2026, 12, 19)).months[0].autos == 1


def test_rows_are_per_code_and_line_and_fines_sum_each_auto_rounded_as_it_states_it():
    # an A-07 of 50 UFIR is R$ 53,205 -> R$ 53,21 on its auto; three of them R$ 159,63
    # (not R$ 159,62, the sum rounded once)
    autos = [auto(3, "paid", code="A-07", fine=50), auto(1, "paid", code="A-07", fine=50),
             auto(2, "paid", code="A-07", fine=50), auto(4, "paid", code="A-07", route="102", fine=50),
             auto(5, "paid", code="D-13", route="102", fine=400)]
    [month] = public_record(autos, [], {}, CAL, TODAY).months
    assert [(r.code, r.route_id, r.autos, r.fine_ufir, r.fine_brl) for r in month.rows] == [
        ("A-07", "101", ("0001/2026", "0002/2026", "0003/2026"), 150, Decimal("159.63")),
        ("A-07", "102", ("0004/2026",), 50, Decimal("53.21")),
        ("D-13", "102", ("0005/2026",), 400, Decimal("425.64")),  # 400 x 1.0641 = 425.64
    ]
    assert (month.autos, month.fine_ufir, month.fine_brl) == (5, 600, Decimal("638.48"))


def test_months_and_operators_apart_latest_month_first_and_a_month_of_service_without_autos_shown():
    autos = [auto(1, "paid", month="2026-11"), auto(2, "paid", month="2026-12"),
             auto(3, "paid", month="2026-12", operator="VNV")]
    services = [service(month="2026-12"), service(operator="VNV", month="2027-01")]
    record = public_record(autos, services, {"TRD": "Transportes Rio Doce"}, CAL, TODAY)
    assert [(m.operator_id, m.operator_name, m.month, m.autos, m.service is not None) for m in record.months] == [
        ("VNV", "VNV", "2027-01", 0, True), ("TRD", "Transportes Rio Doce", "2026-12", 1, True),
        ("VNV", "VNV", "2026-12", 1, False), ("TRD", "Transportes Rio Doce", "2026-11", 1, False)]


def test_csv_and_json_carry_the_rows_the_autos_and_the_month_of_service():
    autos = [auto(1, "paid", code="A-07", fine=50), auto(2, "recurso não provido", code="A-07", fine=50),
             auto(3, "lavrado", code="A-07", fine=50)]
    record = public_record(autos, [service(), service(month="2026-10")], {"TRD": "Transportes Rio Doce"}, CAL,
                           TODAY)
    rows = list(csv.DictReader(io.StringIO(record_csv(record, "UFIR"))))
    assert [(r["mes"], r["codigo"], r["autos"], r["quantidade"], r["multa_ufir"], r["multa_reais"]) for r in rows] == [
        ("2026-11", "A-07", "0001/2026 0002/2026", "2", "100", "106.42"), ("2026-10", "", "", "0", "0", "0.00")]
    assert (rows[0]["eficiencia_art45_pct"], rows[0]["viagens_programadas"], rows[0]["viagens_realizadas"],
            rows[0]["mes_encerrado"], rows[0]["operadora_nome"]) == ("97.5", "400", "390", "sim",
                                                                     "Transportes Rio Doce")
    document = json.loads(record_json(record, "UFIR"))
    assert document["apurado_em"] == "2027-02-01"
    november = document["meses"][0]
    assert november["infracoes"] == [{"codigo": "A-07", "linha": "101", "autos": ["0001/2026", "0002/2026"],
                                      "quantidade": 2, "multa_ufir": 100, "multa_reais": 106.42}]
    assert november["total"] == {"autos": 2, "multa_ufir": 100, "multa_reais": 106.42}
    assert november["servico"]["eficiencia_art45_pct"] == 97.5 and november["servico"]["dias_das_viagens"] == 30
