"""The auto de infração PDF: every field of art. 5, the gráficos of art. 6, checked on the
rendered pages (pdftotext, pdfimages and pdftoppm from poppler-utils)."""

from __future__ import annotations

import datetime as dt
import io
import shutil
import subprocess

import numpy as np
import pytest
from matplotlib.image import imread
from sqlalchemy import select

from dockets import workflow
from dockets.document import chart_png, make_renderer
from dockets.service import perform
from dockets.store import Docket, DocketPdf, EvidenceBundle
from kernel.money import brl

PNG = b"\x89PNG\r\n\x1a\n"
ISSUER = "Prefeitura Municipal de João Neiva — Órgão Gerencial do Transporte Coletivo"


def _poppler(tool: str) -> str:
    path = shutil.which(tool)
    assert path, f"{tool} missing: install the Debian package poppler-utils (scripts/test does)"
    return path


@pytest.fixture
def lavrado(sessions, actors, calendar, tmp_path):
    """The D-11 auto lavrado on 2 Dec 2026 by the test fiscal; its PDF on disk."""
    with sessions.begin() as session:
        docket_id = session.scalar(select(Docket.id).where(Docket.code == "D-11"))
        perform(session, actors["fiscal"], docket_id, workflow.Lavrar(on=dt.date(2026, 12, 2)), calendar,
                renderer=make_renderer(session, calendar=calendar, issuer_name=ISSUER))
    with sessions() as session:
        docket = session.get(Docket, docket_id)
        path = tmp_path / "auto.pdf"
        path.write_bytes(session.get(DocketPdf, docket_id).data)
        return docket, path


def _text(pdf) -> str:
    return subprocess.run([_poppler("pdftotext"), str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout


def test_the_pdf_carries_every_field_of_art5(lavrado, demo_day):
    docket, pdf = lavrado
    text = " ".join(_text(pdf).split())
    local_time = demo_day.record("D-11")["occurred_at"][11:19]  # the record's own local wall time
    fine = 200 * 1.0641  # 212.82
    for expected in [
        "AUTO DE INFRAÇÃO", "Nº 0001/2026",
        "Empresa operadora", "Transportes Rio Doce (TRD)",  # I: the agency name in the sample feed
        "Linha 201", f"placa {docket.plate}", "JN-2014",  # II
        f"01/12/2026 às {local_time}", "do ponto",  # III: date, time and place
        "Infrator",  # IV
        "D-11", "deixar de cumprir os itinerários fixados",  # V: description and legal text
        f"200 UFIR = {brl(fine)}", "R$ 212,82",  # VI
        "VII", "Autuado", "VIII", "Usuário fiscal, matrícula 0042", "lavrado em 02/12/2026",  # VII, VIII
        docket.bundle_sha256, "fiscaliza verify",
    ]:
        assert expected in text, expected
    # V: the dispositivo, then the law's words on a line of their own (the record joins them)
    assert docket.legal_text == "deixar de cumprir os itinerários fixados."
    assert f"{docket.legal_basis} Texto legal: “{docket.legal_text}”" in text
    assert docket.legal_basis.endswith("D-11; multa conforme art. 3º") and "3º. Texto legal" not in text


def test_the_pdf_names_the_key_that_signed_its_evidence(lavrado, signing_key):
    _, pdf = lavrado
    text = " ".join(_text(pdf).split())
    assert f"assinado digitalmente (Ed25519) pelo Órgão Gerencial, chave {signing_key.key_id}" in text


def test_the_pdf_prints_the_audit_chain_head_it_was_lavrado_on(lavrado, sessions):
    from dockets.store import AuditEntry

    docket, pdf = lavrado
    text = " ".join(_text(pdf).split())
    with sessions() as session:
        lavratura = session.scalar(select(AuditEntry).where(AuditEntry.action == "Lavrar",
                                                            AuditEntry.entity_id == str(docket.id)))
        before = session.get(AuditEntry, lavratura.id - 1)  # the head when the PDF was made
    assert f"registro nº {before.id}, HMAC {before.mac[:16]}" in text
    assert f"chave de auditoria {before.key_id}" in text


def test_the_notification_deadline_skips_the_municipal_holiday(lavrado):
    # lavrado Wed 02/12/2026; business days 03 (Thu), 04 (Fri), 07 (Mon), [08 municipal holiday], 09 (Wed), 10 (Thu)
    _, pdf = lavrado
    assert "até 10/12/2026" in " ".join(_text(pdf).split())


CAPTIONS = {  # dockets/templates/auto.html: each gráfico's caption, printed under it
    "disco": "Registros do tacógrafo no disco diagrama de 24 horas do dia da infração",
    "velocidade": "Registro do tacógrafo: velocidade × tempo. Faixa destacada: período da infração.",
    "mapa": "Trajeto registrado pelo GPS sobre o itinerário da linha e o seu corredor de tolerância.",
}


def test_the_pdf_embeds_the_graficos_of_the_autos_own_evidence(lavrado, sessions, tmp_path):
    """pdfimages reads the embedded pictures back: each is, pixel for pixel, the chart
    drawn from this auto's evidence bundle (the disc on page 2, the speed chart and the
    map on page 3, each above its caption); a D-11 has no catraca chart."""
    from dockets.document import PDF_CHART_KINDS

    docket, pdf = lavrado
    with sessions() as session:
        bundle = session.get(EvidenceBundle, docket.id).data
    charts = {kind: chart_png(docket, bundle, kind) for kind in PDF_CHART_KINDS}
    assert charts.pop("catraca") is None  # D-11: no catraca facts
    expected = {kind: imread(io.BytesIO(png), format="png") for kind, png in charts.items()}
    assert all(np.all(image[..., 3] == 1) for image in expected.values())  # opaque: RGB is all there is

    listing = [row.split() for row in subprocess.run([_poppler("pdfimages"), "-list", str(pdf)], capture_output=True,
                                                     text=True, check=True).stdout.splitlines()[2:]]
    subprocess.run([_poppler("pdfimages"), "-png", "-p", str(pdf), str(tmp_path / "img")], check=True)
    found = {}
    for page, num, kind, width, height in (row[:5] for row in listing):
        path = tmp_path / f"img-{int(page):03d}-{int(num):03d}.png"
        extracted = imread(path, format="png")
        if kind == "smask":  # weasyprint's alpha channel of the image before it: fully opaque
            assert np.all(extracted == 1)
            continue
        assert kind == "image"
        matches = [k for k, image in expected.items()
                   if image.shape[:2] == extracted.shape[:2] and np.array_equal(image[..., :3], extracted)]
        assert len(matches) == 1, f"image {num} on page {page} ({width}×{height}) is none of the auto's charts"
        assert (int(width), int(height)) == (extracted.shape[1], extracted.shape[0])
        assert matches[0] not in found, f"the {matches[0]} chart twice"
        found[matches[0]] = int(page)
    assert found == {"disco": 2, "velocidade": 3, "mapa": 3}
    for kind, page in found.items():  # and each above its caption, on its page
        text = " ".join(subprocess.run([_poppler("pdftotext"), "-f", str(page), "-l", str(page), str(pdf), "-"],
                                       capture_output=True, text=True, check=True).stdout.split())
        assert CAPTIONS[kind] in text, kind


def test_the_pdf_pages_render(lavrado, tmp_path):
    _, pdf = lavrado
    subprocess.run([_poppler("pdftoppm"), "-r", "40", "-png", str(pdf), str(tmp_path / "page")], check=True)
    pages = sorted(tmp_path.glob("page-*.png"))
    assert len(pages) == 3  # art. 5 fields; evidence and disc; speed chart and map
    assert all(p.read_bytes().startswith(PNG) for p in pages)


def test_charts_of_a_vehicle_infraction(sessions):
    with sessions() as session:
        docket = session.scalar(select(Docket).where(Docket.code == "C-01"))
        bundle = session.get(EvidenceBundle, docket.id).data
        for kind in ("velocidade", "disco", "mapa"):
            assert chart_png(docket, bundle, kind).startswith(PNG)
        with pytest.raises(ValueError):
            chart_png(docket, bundle, "pizza")
        assert chart_png(docket, None, "mapa") is None


def test_a_d13_auto_charts_the_vehicle_of_its_off_schedule_trip(sessions):
    with sessions() as session:
        docket = session.scalar(select(Docket).where(Docket.code == "D-13"))  # route and day: no vehicle
        bundle = session.get(EvidenceBundle, docket.id).data
        assert docket.vehicle_id is None
        late = docket.infraction["evidence"]["trips"][0]["vehicle_id"]
        assert chart_png(docket, bundle, "velocidade").startswith(PNG)
        without_trips = Docket(**{c: getattr(docket, c) for c in ("id", "code", "vehicle_id", "route_id",
                                                                   "direction_id", "trip_id", "occurred_at", "lat",
                                                                   "lon")},
                               infraction={**docket.infraction, "evidence": {}})
        assert late and chart_png(without_trips, bundle, "velocidade") is None
        assert chart_png(without_trips, bundle, "mapa").startswith(PNG)


def test_the_payment_term_runs_unless_a_defence_is_filed(lavrado):
    # art. 8º, I: from the notification "salvo se apresentar defesa"; never a bare payment term
    text = " ".join(_text(lavrado[1]).split())
    assert "O pagamento conta do recebimento da notificação, salvo se apresentar defesa (art. 8º, I)" in text


def test_the_readings_to_pick_are_the_bundle_lines_of_the_vehicle_in_the_speed_charts_window(sessions):
    from dockets.bundle import read_bundle
    from dockets.document import pickable_readings
    from dockets.rejudgment import cited_readings, readings

    with sessions() as session:
        docket = session.scalar(select(Docket).where(Docket.code == "D-11"))
        bundle = session.get(EvidenceBundle, docket.id).data
    picked = pickable_readings(docket, bundle)
    assert picked.vehicle_id == docket.vehicle_id
    start, end = picked.window
    assert start <= picked.highlight[0] <= picked.highlight[1] <= end and end - start >= 30 * 60
    # every tachograph line of the vehicle inside the window, each by its own line number, in time order
    read = read_bundle(bundle)
    every = readings(read, "America/Sao_Paulo")
    expected = {f"{r.source}:{r.number}" for r in every
                if r.source == "tachograph" and r.vehicle_id == docket.vehicle_id and start <= r.epoch <= end}
    assert {r.value for r in picked.readings} == expected
    assert [r.epoch for r in picked.readings] == sorted(r.epoch for r in picked.readings)
    # the cited ones are the finding's (all inside the window), and a local time is the span form's
    cited = {f"{r.source}:{r.number}" for r in cited_readings(read, docket.infraction, "America/Sao_Paulo")}
    assert {r.value for r in picked.readings if r.cited} == cited and cited
    first = picked.readings[0]
    assert dt.datetime.fromisoformat(first.local_time) == dt.datetime.fromtimestamp(
        first.epoch, dt.timezone(dt.timedelta(hours=-3))).replace(tzinfo=None, microsecond=0)
    assert picked.itinerary and pickable_readings(docket, None) is None
