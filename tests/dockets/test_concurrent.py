"""Two autos of one drive (art. 10: "aplicar-se-ão concomitantemente"): the demo's detour
gives a D-11 and the A-07 of the stop it left unserved; they are lavrados together and
each auto names the other, cites art. 10 and says which duty it protects."""

from __future__ import annotations

import dataclasses
import datetime as dt
import shutil
import subprocess

from sqlalchemy import select

from dockets import concurrent, workflow
from dockets.document import make_renderer
from dockets.service import perform
from dockets.store import Docket, DocketPdf
from rules.joao_neiva.anexo_i import AUTO

ISSUER = "Prefeitura Municipal de João Neiva — Órgão Gerencial do Transporte Coletivo"


def _pdf_text(data: bytes, tmp_path) -> str:
    path = tmp_path / "auto.pdf"
    path.write_bytes(data)
    text = subprocess.run([shutil.which("pdftotext"), str(path), "-"], capture_output=True, text=True,
                          check=True).stdout
    return " ".join(text.split())


def test_lavrar_the_d11_lavra_its_a07_and_each_auto_names_the_other(sessions, actors, calendar, tmp_path):
    with sessions.begin() as session:
        d11 = session.scalar(select(Docket).where(Docket.code == "D-11"))
        perform(session, actors["fiscal"], d11.id, workflow.Lavrar(on=dt.date(2026, 12, 2)), calendar,
                renderer=make_renderer(session, calendar=calendar, issuer_name=ISSUER))
    with sessions() as session:
        d11 = session.scalar(select(Docket).where(Docket.code == "D-11"))
        a07 = session.scalar(select(Docket).where(Docket.code == "A-07"))
        others = session.scalars(select(Docket).where(Docket.code.not_in(["D-11", "A-07"]))).all()
        assert (d11.vehicle_id, d11.trip_id) == (a07.vehicle_id, a07.trip_id)  # one bus, one trip
        assert a07.stage == workflow.Stage.LAVRADO.value and a07.number is not None
        assert {d.stage for d in others} == {workflow.Stage.RASCUNHO.value}  # nothing else lavrado
        texts = {d.code: _pdf_text(session.get(DocketPdf, d.id).data, tmp_path) for d in (d11, a07)}
        labels = {d.code: d.label for d in (d11, a07)}
    for code, other in (("D-11", "A-07"), ("A-07", "D-11")):
        text = texts[code]
        assert f"resulta também o auto nº {labels[other]} ({other})" in text, code
        assert "“aplicar-se-ão concomitantemente as penalidades correspondentes a cada uma delas” (art. 10)" in text
    assert ("este auto (D-11) protege o cumprimento do itinerário fixado para a linha; "
            f"o auto nº {labels['A-07']} (A-07), o atendimento de cada ponto de parada do itinerário") in texts["D-11"]
    assert ("este auto (A-07) protege o atendimento de cada ponto de parada do itinerário; "
            f"o auto nº {labels['D-11']} (D-11), o cumprimento do itinerário fixado para a linha") in texts["A-07"]


def test_an_auto_of_another_drive_names_none(sessions, actors, calendar, tmp_path):
    with sessions.begin() as session:
        c01 = session.scalar(select(Docket).where(Docket.code == "C-01"))
        perform(session, actors["fiscal"], c01.id, workflow.Lavrar(on=dt.date(2026, 12, 2)), calendar,
                renderer=make_renderer(session, calendar=calendar, issuer_name=ISSUER))
        assert session.scalar(select(Docket).where(Docket.code == "D-11")).stage == workflow.Stage.RASCUNHO.value
        text = _pdf_text(session.get(DocketPdf, c01.id).data, tmp_path)
    assert "concomitantemente" not in text and "resulta também" not in text


D11 = concurrent.Facts("D-11", "JN-2014", dt.date(2026, 12, 1), "201", 1, "201-DU-1-FREQ", (100.0, 230.0))
A07 = dataclasses.replace(D11, code="A-07", interval=(0.0, 900.0))  # the whole trip holds the detour


def test_one_drive_is_one_vehicle_on_one_trip_at_overlapping_times():
    assert concurrent.same_drive(D11, A07, AUTO) and concurrent.same_drive(A07, D11, AUTO)
    assert not concurrent.same_drive(D11, dataclasses.replace(A07, trip_id="201-DU-2-FREQ"), AUTO)
    assert not concurrent.same_drive(D11, dataclasses.replace(A07, vehicle_id="JN-2015"), AUTO)
    assert not concurrent.same_drive(D11, dataclasses.replace(A07, interval=(231.0, 900.0)), AUTO)  # a later trip
    assert not concurrent.same_drive(D11, dataclasses.replace(A07, code="C-01"), AUTO)  # no duty paired
    assert not concurrent.same_drive(D11, D11, AUTO)  # the same code is not a second conduct
