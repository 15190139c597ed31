"""The public record of what was upheld (#30 item 4; Lei 12.527/2011), on the real
PostgreSQL: the page and its CSV and JSON, without login, show only the autos whose
decision is final, every figure the sum of the autos it lists, and nothing personal.

The store is seeded by hand through the service layer, as the fiscais, gestor, titular
and operators would act: four final autos, and one in every stage that is not final
(each with a driver's name in its record, a plate, a place; defences, judgments and
attachments on the ones that reached them), plus an operator whose only auto is under
contest. Today is Mon 2027-02-01; calendar as tests/dockets/test_workflow.py (ES, the
municipal holiday 2026-12-08): a ciência on Thu 2026-12-03 has its defence term end on
Fri 2026-12-18; a judgment on Mon 2026-12-21 its recurso term on Fri 2027-01-08."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from decimal import Decimal

import pytest
from sqlalchemy import select
from stores import TEST_AUDIT_KEY

from dockets import service, workflow
from dockets.calendar import BusinessCalendar
from dockets.store import Docket, User
from dockets.users import create_user
from kernel.money import fine_brl
from kernel.policy import load_policy
from ops.db import migrate as migrate_live_tables
from ops.store import LiveMonthEfficiency, LiveTrip
from rules.joao_neiva.anexo_i import LAW
from rules.model import join_legal_basis

D = dt.date
UTC = dt.UTC
CAL = BusinessCalendar.for_municipality("ES", [D(2026, 12, 8)], law=LAW)
TODAY = D(2027, 2, 1)
NOW = dt.datetime(2027, 2, 1, 15, 0, tzinfo=UTC)  # 12:00 in João Neiva
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
OPERATORS = {"TRD": "Transportes Rio Doce", "VNV": "Viação Neivense", "XPS": "Expresso Sigiloso"}
USERS = {  # username -> (role, operator, full name, matrícula)
    "fiscal.ana": ("fiscal", None, "Ana Beatriz Souza", "F-0042"),
    "gestor.bruno": ("gestor", None, "Bruno Lima Teixeira", "G-0007"),
    "titular.elisa": ("titular", None, "Elisa Prado Moura", None),
    "rep.trd": ("operador", "TRD", "Diego Alves Ramos", None),
    "rep.vnv": ("operador", "VNV", "Carla Dias Fontes", None),
    "rep.xps": ("operador", "XPS", "Hugo Mendes Castro", None),
}
PASSWORD = "senha-de-teste-123"
FUND = "Comprovado pelo gráfico do tacógrafo."

L = ("fiscal.ana", workflow.Lavrar(D(2026, 11, 30)))
N = ("fiscal.ana", workflow.Notificar(D(2026, 12, 3)))
DEF = ("rep", workflow.ApresentarDefesa(D(2026, 12, 11)))
PROC = ("gestor.bruno", workflow.JulgarDefesa(D(2026, 12, 21), True, FUND))
REC = ("rep", workflow.InterporRecurso(D(2027, 1, 8)))
# name -> (operator, code, route, fine, acts, final on TODAY)
AUTOS = {
    # anistia needs the operator's first infraction (art. 12): its fact is the earliest
    "anistiado": ("TRD", "C-01", None, 150,
                  [L, N, ("gestor.bruno", workflow.Anistiar(D(2026, 12, 10), "Decreto 9/2026"))], False),
    "nao-contestado": ("TRD", "A-07", "201", 50, [L, N], True),
    "mantido-sem-recurso": ("TRD", "A-07", "201", 50, [L, N, DEF, PROC], True),
    "multa-devida": ("TRD", "D-13", "201", 400, [L, N, DEF, PROC, REC, ("titular.elisa", workflow.JulgarRecurso(
        D(2027, 1, 29), False, "O recurso não traz fato novo."))], True),
    "pago": ("VNV", "C-01", None, 150, [L, N, ("gestor.bruno", workflow.RegistrarPagamento(D(2026, 12, 10)))], True),
    "rascunho": ("TRD", "A-07", "201", 50, [], False),
    "lavrado": ("TRD", "A-07", "201", 50, [L], False),
    "notificado-em-prazo": ("TRD", "A-07", "201", 50, [L, ("fiscal.ana", workflow.Notificar(D(2027, 1, 25)))], False),
    "defesa-apresentada": ("TRD", "A-07", "201", 50, [L, N, DEF], False),
    "julgado-em-prazo": ("TRD", "A-07", "201", 50, [L, N, DEF, ("gestor.bruno", workflow.JulgarDefesa(
        D(2027, 1, 28), True, FUND))], False),
    "recurso-interposto": ("TRD", "A-07", "201", 50, [L, N, DEF, PROC, REC], False),
    "arquivado": ("TRD", "A-07", "201", 50, [L, N, DEF, ("gestor.bruno", workflow.JulgarDefesa(
        D(2026, 12, 21), False, "Velocidade dentro do limite."))], False),
    "recurso-provido": ("TRD", "A-07", "201", 50, [L, N, DEF, PROC, REC, ("titular.elisa", workflow.JulgarRecurso(
        D(2027, 1, 29), True, "Provido: o ponto estava interditado."))], False),
    "suspenso": ("TRD", "D-13", "201", 400, [L, N, DEF, PROC, REC, ("titular.elisa", workflow.JulgarRecurso(
        D(2027, 1, 29), False, "Sem fato novo.")), ("gestor.bruno", workflow.SuspenderJudicial(
            D(2027, 1, 30), "5000123-45.2026.8.08.0030"))], False),
    "outra-operadora": ("XPS", "C-01", None, 150, [L, N, DEF], False),
}
PLATE = "RQE3A59"


def _record(name: str, n: int, operator: str, code: str, route: str | None, fine: int) -> dict:
    day = 2 if name == "anistiado" else 26
    occurred = dt.datetime(2026, 11, day, 10, n, tzinfo=dt.timezone(dt.timedelta(hours=-3)))
    driver = f"Motorista {name.title()} Pereira"
    return {"infraction_id": f"inf-{name}", "code": code, "group": code[0], "fine_ufir": fine, "status": "confirmed",
            "operator_id": operator, "route_id": route, "direction_id": 0 if route else None, "trip_id": None,
            "vehicle_id": f"JN-9{n:03d}", "service_date": occurred.date().isoformat(),
            "occurred_at": occurred.isoformat(), "lat": -19.76, "lon": -40.39, "place": f"Rua Reservada {n}",
            "description": f"Registro {name}: veículo conduzido por {driver}.",
            "legal_basis": join_legal_basis(f"Lei 867/1998, Anexo I, {code}", LAW.articles[code].text),
            "evidence": {"driver_id": f"cnh-{name}", "driver_name": driver}}


def _act(sessions, username: str, docket_id: int, action, **kwargs) -> None:
    with sessions.begin() as session:
        user = session.scalar(select(User).where(User.username == username))
        service.perform(session, service.Actor.of(user), docket_id, action, CAL, **kwargs)


@pytest.fixture
def world(pg_sessions):
    """The seeded store; what each auto became: name -> (docket id, label)."""
    sessions = pg_sessions
    migrate_live_tables(sessions.kw["bind"])
    with sessions.begin() as session:
        service.ensure_operators(session, OPERATORS)
        for username, (role, operator, name, registration) in USERS.items():
            create_user(session, username=username, full_name=name, role=role, password=PASSWORD,
                        operator_id=operator, registration=registration)
        records = [_record(name, n, *spec[:4]) for n, (name, spec) in enumerate(AUTOS.items(), start=1)]
        report = service.ingest(session, records, plates={r["vehicle_id"]: PLATE for r in records},
                                ufir_brl=1.0641)
        ids = dict(zip(AUTOS, report.created, strict=True))
    for name, (operator, *_, acts, _final) in AUTOS.items():
        for username, action in acts:
            username = f"rep.{operator.lower()}" if username == "rep" else username
            extra = {}
            if isinstance(action, (workflow.ApresentarDefesa, workflow.InterporRecurso)):
                extra = {"note": f"Defesa sigilosa de {name}: o motorista Fulano de Tal estava doente.",
                         "attachments": [(f"atestado-{name}.pdf", "application/pdf", PDF + name.encode())]}
            _act(sessions, username, ids[name], action, **extra)
    with sessions.begin() as session:
        # art. 45 and the trips of TRD's November as the ops sink leaves them: two weekdays
        # closed, Thu 26 and Fri 27, with 3 and 2 trips realized
        session.add(LiveMonthEfficiency(operator_id="TRD", month="2026-11", programmed_km=360.0, realized_km=352.8,
                                        efficiency_pct=98.0, min_efficiency_pct=98.0, days_closed=2,
                                        days_without_telemetry=0, as_of=D(2026, 11, 27), month_closed=False))
        for day, count in ((26, 3), (27, 2)):
            for k in range(count):
                departed = dt.datetime(2026, 11, day, 10 + k, 0, tzinfo=UTC)
                session.add(LiveTrip(vehicle_id="JN-2011", departed_at=departed, operator_id="TRD", route_id="201",
                                     direction_id=k % 2, trip_id=None, service_date=D(2026, 11, day),
                                     arrived_at=departed + dt.timedelta(minutes=15), departure_deviation_s=None,
                                     coverage=1.0))
    with sessions() as session:
        labels = {d.id: d.label for d in session.scalars(select(Docket))}
    return {name: (docket_id, labels[docket_id]) for name, docket_id in ids.items()}


@pytest.fixture
def anonymous(pg_sessions, world):
    from fastapi.testclient import TestClient

    from gtfs import load_feed
    from kernel.fleet import load_fleet
    from samples import joao_neiva
    from web.app import WebConfig, create_app

    feed_path, fleet_path = joao_neiva()
    app = create_app(WebConfig(sessions=pg_sessions, calendar=CAL, policy=load_policy(), clock=lambda: NOW,
                               fleet=load_fleet(fleet_path), feed=load_feed(feed_path),
                               audit_keys={TEST_AUDIT_KEY.key_id: TEST_AUDIT_KEY}))
    with TestClient(app, base_url="https://testserver", follow_redirects=False) as client:
        yield client


def _downloads(anonymous):
    page = anonymous.get("/transparencia")
    csv_response = anonymous.get("/transparencia/multas-mantidas.csv")
    json_response = anonymous.get("/transparencia/multas-mantidas.json")
    for response in (page, csv_response, json_response):
        assert response.status_code == 200, response.text
    return page, csv_response, json_response


def _final(world) -> dict[str, str]:
    return {name: world[name][1] for name, spec in AUTOS.items() if spec[-1]}


def test_without_login_the_page_and_downloads_list_exactly_the_final_autos(anonymous, world):
    page, csv_response, json_response = _downloads(anonymous)
    final = _final(world)
    assert set(final) == {"nao-contestado", "mantido-sem-recurso", "multa-devida", "pago"}
    rows = list(csv.DictReader(io.StringIO(csv_response.content.decode("utf-8-sig"))))
    listed_csv = {number for r in rows for number in r["autos"].split()}
    document = json.loads(json_response.content)
    listed_json = {number for m in document["meses"] for r in m["infracoes"] for number in r["autos"]}
    assert listed_csv == listed_json == set(final.values())
    for number in final.values():
        assert number in page.text
    assert csv_response.headers["content-type"].startswith("text/csv")
    assert json_response.headers["access-control-allow-origin"] == "*"
    assert "Transportes Rio Doce — 11/2026" in page.text


def test_open_data_figures_are_the_sums_of_the_autos_they_list(anonymous, world, pg_sessions):
    _, csv_response, json_response = _downloads(anonymous)
    with pg_sessions() as session:
        by_label = {d.label: d for d in session.scalars(select(Docket).where(Docket.number.is_not(None)))}

    def sums(numbers):
        autos = [by_label[n] for n in numbers]
        return sum(a.fine_ufir for a in autos), sum((fine_brl(a.fine_ufir, a.ufir_brl) for a in autos), Decimal(0))

    rows = [r for r in csv.DictReader(io.StringIO(csv_response.content.decode("utf-8-sig"))) if r["autos"]]
    assert len(rows) == 3  # TRD's A-07 on line 201 (two autos) and D-13 on 201; VNV's C-01
    for row in rows:
        ufir, reais = sums(row["autos"].split())
        assert (int(row["multa_ufir"]), Decimal(row["multa_reais"])) == (ufir, reais), row
        assert int(row["quantidade"]) == len(row["autos"].split())
        assert {by_label[n].code for n in row["autos"].split()} == {row["codigo"]}
        assert {by_label[n].route_id or "" for n in row["autos"].split()} == {row["linha"]}
    for month in json.loads(json_response.content)["meses"]:
        for row in month["infracoes"]:
            ufir, reais = sums(row["autos"])
            assert (row["multa_ufir"], Decimal(str(row["multa_reais"]))) == (ufir, reais)
        every = [n for row in month["infracoes"] for n in row["autos"]]
        ufir, reais = sums(every)
        assert (month["total"]["multa_ufir"], Decimal(str(month["total"]["multa_reais"]))) == (ufir, reais)


def test_the_month_shows_art45_and_realized_against_scheduled_trips(anonymous, world):
    page, csv_response, json_response = _downloads(anonymous)
    [trd] = [m for m in json.loads(json_response.content)["meses"] if m["operadora"] == "TRD"]
    # line 201 on a weekday: 12 + 21 + 12 = 45 departures per direction (README of the
    # sample), 90 a day; two days with realized trips -> 180 scheduled, 3 + 2 realized
    assert trd["servico"]["viagens_programadas"] == 180 and trd["servico"]["viagens_realizadas"] == 5
    assert trd["servico"]["eficiencia_art45_pct"] == 98.0 and trd["servico"]["mes_encerrado"] is False
    assert "<strong>98,0 %</strong>" in page.text
    assert "<strong>5</strong> realizada(s) de 180 programada(s)" in page.text


def _personal_and_unsettled(world, pg_sessions) -> list[str]:
    """Everything that must not be published: the autos not final (numbers, ids, records),
    and whatever names a person or quotes a pleading, of every auto."""
    leaks = [world[name][1] for name, spec in AUTOS.items() if not spec[-1] and name != "rascunho"]
    leaks += [PLATE, "Pereira", "cnh-", "Rua Reservada", "JN-9", "Fulano de Tal", "atestado-", "Defesa sigilosa",
              "Expresso Sigiloso", "XPS", "O recurso não traz fato novo", FUND, "Velocidade dentro do limite",
              "5000123-45.2026.8.08.0030", "Decreto 9/2026", "inf-"]
    for username, (_, _, full_name, registration) in USERS.items():
        leaks += [username, full_name, *full_name.split()[1:], *([registration] if registration else [])]
    with pg_sessions() as session:
        for docket in session.scalars(select(Docket)):
            leaks += [docket.description, docket.bundle_sha256 or docket.infraction_id]
    return leaks


def test_isolation_nothing_under_contest_and_nothing_personal_is_published(anonymous, world, pg_sessions):
    page, csv_response, json_response = _downloads(anonymous)
    texts = {"HTML": page.text, "CSV": csv_response.content.decode("utf-8-sig"),
             "JSON": json.dumps(json.loads(json_response.content), ensure_ascii=False)}
    for leak in _personal_and_unsettled(world, pg_sessions):
        for kind, text in texts.items():
            assert leak not in text, (kind, leak)
    # the seeding did reach every stage it claims (else the test proves nothing)
    stages = {name: service.status_of(d) for name, d in _dockets(world, pg_sessions).items()}
    assert {s.stage for s in stages.values()} == set(workflow.Stage)
    assert stages["suspenso"].suspenso and stages["notificado-em-prazo"].stage is workflow.Stage.NOTIFICADO


def _dockets(world, pg_sessions) -> dict[str, Docket]:
    with pg_sessions() as session:
        return {name: session.get(Docket, docket_id) for name, (docket_id, _) in world.items()}


def test_an_auto_leaves_the_record_when_a_judicial_challenge_suspends_it(anonymous, world, pg_sessions):
    number = world["multa-devida"][1]
    assert number in anonymous.get("/transparencia/multas-mantidas.csv").content.decode("utf-8-sig")
    _act(pg_sessions, "gestor.bruno", world["multa-devida"][0],
         workflow.SuspenderJudicial(D(2027, 1, 30), "5000999-00.2027.8.08.0030"))
    for url in ("/transparencia", "/transparencia/multas-mantidas.csv", "/transparencia/multas-mantidas.json"):
        assert number not in anonymous.get(url).content.decode("utf-8-sig"), url
