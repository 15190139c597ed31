"""`fiscaliza dockets transparencia`: the open data of the public record of what was
upheld (#30 item 4), written from a store as the web app's /transparencia serves it, run
as a user runs it (subprocess). Finality is judged on the machine's today: the acts below
are dated in November 2026, every term of the final one long ended."""

from __future__ import annotations

import csv
import datetime as dt
import json

import pytest
from cli_helpers import assert_bad_input, fiscaliza
from sqlalchemy import select
from stores import open_test_store

from dockets import service, workflow
from dockets.config import calendar_for
from dockets.store import User
from dockets.users import create_user
from kernel.policy import load_policy
from rules.joao_neiva.anexo_i import LAW
from rules.model import join_legal_basis

D = dt.date


def _record(name: str, minute: int) -> dict:
    occurred = dt.datetime(2026, 10, 29, 10, minute, tzinfo=dt.timezone(dt.timedelta(hours=-3)))
    return {"infraction_id": f"inf-{name}", "code": "A-07", "group": "A", "fine_ufir": 50, "status": "confirmed",
            "operator_id": "TRD", "route_id": "201", "direction_id": 0, "trip_id": None, "vehicle_id": "JN-2011",
            "service_date": occurred.date().isoformat(), "occurred_at": occurred.isoformat(), "lat": None,
            "lon": None, "description": f"Registro {name}: conduzido por Joaquim Reservado.",
            "legal_basis": join_legal_basis("Lei 867/1998, Anexo I, A-07", LAW.articles["A-07"].text),
            "evidence": {}}


@pytest.fixture
def store(tmp_path) -> str:
    """Two autos of TRD: one not contested (ciência Tue 2026-11-03, its defence term long
    ended), one whose defence awaits judgment."""
    path = tmp_path / "autos.sqlite3"
    sessions = open_test_store(f"sqlite:///{path}")
    calendar = calendar_for(load_policy())
    with sessions.begin() as session:
        service.ensure_operators(session, {"TRD": "Transportes Rio Doce"})
        create_user(session, username="ana", full_name="Ana Fiscal", role="fiscal", password="uma-senha-longa")
        create_user(session, username="rep", full_name="Rep Operadora", role="operador", password="uma-senha-longa",
                    operator_id="TRD")
        report = service.ingest(session, [_record("final", 1), _record("contestado", 2)], plates={},
                                ufir_brl=1.0641)
    acts = {report.created[0]: [("ana", workflow.Lavrar(D(2026, 11, 2))), ("ana", workflow.Notificar(D(2026, 11, 3)))],
            report.created[1]: [("ana", workflow.Lavrar(D(2026, 11, 2))), ("ana", workflow.Notificar(D(2026, 11, 3))),
                                ("rep", workflow.ApresentarDefesa(D(2026, 11, 5)))]}
    for docket_id, steps in acts.items():
        for username, action in steps:
            with sessions.begin() as session:
                user = session.scalar(select(User).where(User.username == username))
                service.perform(session, service.Actor.of(user), docket_id, action, calendar)
    sessions.kw["bind"].dispose()
    return f"sqlite:///{path}"


def test_it_writes_the_csv_and_json_of_the_final_autos_only(store, tmp_path):
    out = tmp_path / "dados-abertos"
    result = fiscaliza("dockets", "transparencia", "--db", store, "--out", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("1 autos com decisão definitiva em 1 mês(es) de operadora")
    [row] = list(csv.DictReader((out / "multas-mantidas.csv").open(encoding="utf-8")))
    assert (row["mes"], row["operadora"], row["codigo"], row["linha"], row["autos"], row["multa_ufir"],
            row["multa_reais"]) == ("2026-10", "TRD", "A-07", "201", "0001/2026", "50", "53.21")  # 50 x 1.0641
    document = json.loads((out / "multas-mantidas.json").read_text(encoding="utf-8"))
    assert [r["autos"] for m in document["meses"] for r in m["infracoes"]] == [["0001/2026"]]
    for written in (out / "multas-mantidas.csv", out / "multas-mantidas.json"):
        text = written.read_text(encoding="utf-8")
        assert "0002/2026" not in text and "Joaquim" not in text and "JN-2011" not in text


def test_an_out_that_is_a_file_or_a_missing_policy_is_one_line_exit_2(store, tmp_path):
    blocking = tmp_path / "um-arquivo"
    blocking.write_text("x")
    assert_bad_input(fiscaliza("dockets", "transparencia", "--db", store, "--out", blocking), "cannot write to")
    assert_bad_input(fiscaliza("dockets", "transparencia", "--db", store, "--out", tmp_path / "d",
                               "--policy", tmp_path / "nenhuma.toml"), "nenhuma.toml")
