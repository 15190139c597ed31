"""The defence marks readings of its own evidence as disputed on the auto's page, and the auto
is re-judged without them (issue 30 items 1-2): the jumped day's D-11 (tests/conftest.py
JumpedDay: three fixes of its fourteen thrown ~167 m south), lavrado and notified to TRD."""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import delete, insert, select, update
from stores import open_test_store, verified_entries

from dockets import service, workflow
from dockets.audit import AuditError
from dockets.bundle import read_bundle
from dockets.rejudgment import readings
from dockets.store import AuditEntry, DisputedReading, Docket, User

TZ = "America/Sao_Paulo"
ON = dt.date(2026, 12, 14)  # lavrado and notified: the defence term runs to 28/12, past the tests' clock (16/12)


@pytest.fixture(scope="module")
def jumped_db(demo_db, jumped_day, tmp_path_factory):
    """The web tests' store with the jumped day's D-11 as an auto, lavrado and notified."""
    from dockets.calendar import BusinessCalendar
    from kernel.fleet import load_fleet
    from kernel.policy import load_policy
    from rules.joao_neiva.anexo_i import LAW
    from samples import joao_neiva

    calendar = BusinessCalendar.for_municipality(subdivision="ES", law=LAW,
                                                 municipal_holidays=load_policy().policy.municipal_holidays)
    path = tmp_path_factory.mktemp("web-jumped") / "dockets.sqlite3"
    shutil.copyfile(demo_db, path)
    sessions = open_test_store(f"sqlite:///{path}", upgrade=False)
    plates = {v.vehicle_id: v.plate for v in load_fleet(joao_neiva()[1]).values()}
    with sessions.begin() as session:
        service.ingest(session, [jumped_day.record], plates=plates, ufir_brl=1.0641,
                       bundle_for=lambda record: jumped_day.data)
        docket_id = session.scalar(select(Docket.id).where(Docket.infraction_id == jumped_day.record["infraction_id"]))
        fiscal = service.Actor.of(session.scalar(select(User).where(User.username == "fiscal")))
        for action in (workflow.Lavrar(on=ON), workflow.Notificar(on=ON)):
            service.perform(session, fiscal, docket_id, action, calendar)
    sessions.kw["bind"].dispose()
    return path


@pytest.fixture
def base_db(jumped_db):
    return jumped_db


@pytest.fixture
def auto(store, jumped_day) -> int:
    with store() as session:
        docket = session.scalar(select(Docket).where(Docket.infraction_id == jumped_day.record["infraction_id"]))
        assert docket.operator_id == "TRD" and docket.stage == "notificado"
        return docket.id


@pytest.fixture(scope="module")
def lines(jumped_day) -> dict[str, str]:
    """The bundle's line of each cited fix, as the evidence table's checkbox names it."""
    return {r.msg_id: f"{r.source}:{r.number}" for r in readings(read_bundle(jumped_day.data), TZ)}


def _text(page) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.text)))


def _mark(browser, auto, data):
    return browser.post(f"/autos/{auto}/leituras-contestadas", data)


def test_the_operator_marks_the_three_fixes_of_the_jump_and_the_d11_stands(browser, auto, jumped_day, lines,
                                                                           store):
    op = browser("op-trd")
    page = op.get(f"/autos/{auto}")
    # the evidence table offers each of the fourteen cited fixes, by its line in the bundle
    for name in jumped_day.episode:
        assert f'name="leituras" value="{lines[name]}"' in page.text
    jump = [lines[name] for name in jumped_day.jump]
    response = op.client.post(f"/autos/{auto}/leituras-contestadas",
                              data={"csrf_token": op.csrf, "leituras": jump,
                                    "motivo": "Salto de multipercurso: o veículo seguia na via."})
    assert response.status_code == 303, response.text
    text = _text(op.get(response.headers["location"]))
    assert "Sem as leituras contestadas, a infração subsiste (multa de 200 UFIR)." in text
    assert "3 leituras contestadas são citadas pela constatação, de 14 leituras citadas." in text
    assert "Trecho mais longo fora do itinerário que resta" in text and "11 registros" in text
    assert "evidência:" in text  # each changed evidence field, before and after
    assert "O sistema informa; quem decide é o gestor" in text
    # the three fixes, 10 s apart, among the other vehicles' lines: named one by one
    numbers = sorted(int(value.split(":")[1]) for value in jump)
    assert f"evidencias.zip --without {','.join(map(str, numbers))}" in text
    assert "Salto de multipercurso" in text
    # the defence is filed; the gestor reads the same re-judgment beside it
    filed = op.post(f"/autos/{auto}/acoes/defesa", {"texto": "Ver as leituras contestadas."})
    assert filed.status_code == 303, filed.text
    judged = _text(browser("gestor").get(f"/autos/{auto}"))
    assert "Reexame sem as leituras que a defesa contesta" in judged
    assert "Sem as leituras contestadas, a infração subsiste (multa de 200 UFIR)." in judged
    assert "Julgar defesa" in judged
    # the gestor judges; the judgment's PDF carries the same re-judgment
    gestor = browser("gestor")
    assert gestor.post(f"/autos/{auto}/acoes/julgar-defesa", {
        "decisao": "procedente", "fundamentacao": "O desvio subsiste sem as leituras contestadas."}).status_code == 303
    pdf = gestor.get(f"/autos/{auto}/julgamento.pdf")
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF-")
    printed = re.sub(r"\s+", " ", subprocess.run([shutil.which("pdftotext"), "-", "-"], input=pdf.content,
                                                 capture_output=True, check=True).stdout.decode())
    assert "Auto julgado procedente" in printed and "O desvio subsiste sem as leituras contestadas." in printed
    assert "Sem as leituras contestadas, a infração subsiste (multa de 200 UFIR)." in printed
    assert "3 leituras contestadas são citadas pela constatação, de 14 leituras citadas." in printed
    assert "Salto de multipercurso" in printed and "--without" in printed
    # the marks are an act of the audit chain, which verifies
    with store() as session:
        entry = session.scalars(select(AuditEntry).where(AuditEntry.action == "MarcarLeituras")).one()
        assert entry.entity_id == str(auto) and entry.payload["outcome"] == "stands"
        assert len(entry.payload["marked"]) == 3 and entry.payload["state"]["disputed_sha256"]
        assert verified_entries(session) > 0
        marks = session.scalars(select(DisputedReading)).all()
        assert {m.audit_id for m in marks} == {entry.id}


def test_the_operator_marks_the_episode_as_a_span_and_the_d11_falls(browser, auto, jumped_day):
    first, last = (jumped_day.episode[i].split("/", 1)[1].split("#")[0] for i in (0, -1))
    op = browser("op-trd")
    response = _mark(op, auto, {"veiculo": "JN-2014", "fonte": "tachograph",
                                "inicio": dt.datetime.fromisoformat(first).strftime("%Y-%m-%dT%H:%M:%S"),
                                "fim": dt.datetime.fromisoformat(last).strftime("%Y-%m-%dT%H:%M:%S"),
                                "motivo": "GPS sem sinal de qualidade neste trecho."})
    assert response.status_code == 303, response.text
    text = _text(op.get(f"/autos/{auto}"))
    assert re.search(r"Sem as leituras contestadas, (passa a evidência insuficiente|a infração desaparece)\.", text)
    assert "14 leituras contestadas são citadas pela constatação, de 14 leituras citadas." in text
    assert "Nenhum trecho fora do itinerário que baste resta" in text
    assert "tacógrafo do veículo JN-2014 de" in text


def test_another_operator_and_a_fiscal_cannot_mark(browser, auto, jumped_day, lines, kit):
    before = kit.snapshot()
    data = {"leituras": lines[jumped_day.jump[0]], "motivo": "tentativa"}
    assert _mark(browser("op-vnv"), auto, data).status_code == 404
    assert _mark(browser("fiscal"), auto, data).status_code == 403
    assert _mark(browser("gestor"), auto, data).status_code == 403
    assert kit.snapshot() == before
    assert 'name="leituras"' not in browser("fiscal").get(f"/autos/{auto}").text


def test_a_mark_without_a_reason_comes_back_with_what_was_typed(browser, auto, jumped_day, lines, kit):
    before = kit.snapshot()
    op = browser("op-trd")
    chosen = lines[jumped_day.jump[1]]
    response = _mark(op, auto, {"leituras": chosen, "motivo": "  ", "inicio": "2026-12-01T13:20:00", "fim": ""})
    assert response.status_code == 400
    text = _text(response)
    assert "Corrija o formulário." in text and "informe o veículo, o início e o fim" in text
    assert f'value="{chosen}" id' in response.text and re.search(rf'value="{chosen}" id="[^"]+" checked', response.text)
    assert 'value="2026-12-01T13:20:00"' in response.text
    response = _mark(op, auto, {"leituras": chosen, "motivo": " "})
    assert response.status_code == 400 and "Informe o motivo da contestação." in _text(response)
    # a reading picked on the chart or the map that the table does not list comes back as picked
    unlisted = next(f"tachograph:{n}" for n in range(1, 10_000) if f"tachograph:{n}" not in lines.values())
    response = _mark(op, auto, {"leituras": [chosen, unlisted], "motivo": " "})
    assert response.status_code == 400 and f'<input type="hidden" name="leituras" value="{unlisted}">' in response.text
    assert f'<input type="hidden" name="leituras" value="{chosen}">' not in response.text  # its checkbox is ticked
    assert kit.snapshot() == before


def test_marks_are_refused_once_the_defence_is_filed_or_its_term_has_ended(browser, auto, jumped_day, lines, kit,
                                                                            clock):
    data = {"leituras": lines[jumped_day.jump[0]], "motivo": "fora do prazo"}
    clock.advance(days=30)  # the defence term (10 dias úteis from 14/12) ended
    op = browser("op-trd")
    response = _mark(op, auto, data)
    assert response.status_code == 409 and "Prazo de defesa encerrado em" in _text(response)
    assert 'name="leituras"' not in op.get(f"/autos/{auto}").text
    clock.advance(days=-30)
    kit.act("op-trd", auto, workflow.ApresentarDefesa(on=ON + dt.timedelta(days=1)), note="Defesa.")
    response = _mark(browser("op-trd"), auto, data)
    assert response.status_code == 409 and "só podem ser marcadas enquanto corre o prazo de defesa" in _text(response)


def test_a_mark_inserted_behind_the_app_breaks_the_audit_chain(browser, auto, jumped_day, lines, store):
    assert _mark(browser("op-trd"), auto, {"leituras": lines[jumped_day.jump[0]],
                                           "motivo": "uma leitura"}).status_code == 303
    with store.begin() as session:
        assert verified_entries(session) > 0
        session.execute(insert(DisputedReading).values(
            docket_id=auto, source="tachograph", line=1, reason="inserida", created_by=1,
            created_at=dt.datetime(2026, 12, 16, tzinfo=dt.UTC)))
    with store() as session, pytest.raises(AuditError, match="disputed_sha256"):
        verified_entries(session)


# --- the judgment's PDF: a document of record, fixed at the act -----------------------------

def _judge_after_marking_the_jump(browser, auto, jumped_day, lines):
    """The defence disputes the jump's three fixes and is filed; the gestor judges it
    procedente. The gestor's browser."""
    op = browser("op-trd")
    assert _mark(op, auto, {"leituras": [lines[name] for name in jumped_day.jump],
                            "motivo": "Salto de multipercurso."}).status_code == 303
    assert op.post(f"/autos/{auto}/acoes/defesa", {"texto": "Ver as leituras contestadas."}).status_code == 303
    gestor = browser("gestor")
    assert gestor.post(f"/autos/{auto}/acoes/julgar-defesa", {
        "decisao": "procedente", "fundamentacao": "O desvio subsiste sem as leituras contestadas."}).status_code == 303
    return gestor


def _printed(pdf: bytes) -> str:
    return re.sub(r"\s+", " ", subprocess.run([shutil.which("pdftotext"), "-", "-"], input=pdf, capture_output=True,
                                              check=True).stdout.decode())


def test_the_judgment_pdf_is_rendered_once_at_the_act_signed_and_served_as_stored(
        browser, auto, jumped_day, lines, store, signing_key, monkeypatch):
    from dockets import disputes, document
    from dockets.signing import check
    from dockets.store import JudgmentPdf

    gestor = _judge_after_marking_the_jump(browser, auto, jumped_day, lines)
    first = gestor.get(f"/autos/{auto}/julgamento.pdf")
    assert first.status_code == 200 and first.content.startswith(b"%PDF-")
    assert gestor.get(f"/autos/{auto}/julgamento.pdf").content == first.content
    assert browser("op-trd").get(f"/autos/{auto}/julgamento.pdf").content == first.content
    # the act stored it, and its audit entry certifies its digest
    with store() as session:
        kept = session.get(JudgmentPdf, auto)
        judged = session.scalars(select(AuditEntry).where(AuditEntry.action == "JulgarDefesa")).one()
        rejudgment = disputes.rejudgment_view(disputes.rejudgment_of(session, auto), session.get(Docket, auto).file_stem)
        assert verified_entries(session) > 0
    digest = hashlib.sha256(first.content).hexdigest()
    assert kept.data == first.content and kept.sha256 == digest
    assert judged.payload["judgment_pdf_sha256"] == digest == judged.payload["state"]["judgment_pdf_sha256"]
    # signed as the auto is, with the Órgão's key
    signature = gestor.get(f"/autos/{auto}/julgamento.pdf.assinatura.json")
    assert signature.status_code == 200
    assert check(json.loads(signature.text), first.content, {signing_key.key_id: signing_key.public})[0]
    page = gestor.get(f"/autos/{auto}").text
    assert f"/autos/{auto}/julgamento.pdf.assinatura.json" in page
    # the templates and the renderer change (a new version): the judgment of record does not
    monkeypatch.setattr(document, "render_judgment_pdf", lambda *args, **kwargs: b"%PDF-1.4 outro julgamento")
    monkeypatch.setattr(document, "_templates", lambda: pytest.fail("the judgment was rendered again"))
    assert gestor.get(f"/autos/{auto}/julgamento.pdf").content == first.content
    # it shows the re-judgment's changed evidence fields, before and after
    printed = _printed(first.content)
    assert "Auto julgado procedente" in printed and "Bruno Lima" in printed
    assert "Sem as leituras contestadas, a infração subsiste (multa de 200 UFIR)." in printed
    assert rejudgment.changes
    for label, before, after in rejudgment.changes:
        assert label.split()[0] in printed and after.split()[0] in printed, (label, after)


def test_a_judgment_pdf_altered_in_the_store_or_outside_it_is_detected(browser, auto, jumped_day, lines, store,
                                                                       signing_key, tmp_path):
    from dockets.store import JudgmentPdf

    gestor = _judge_after_marking_the_jump(browser, auto, jumped_day, lines)
    pdf = gestor.get(f"/autos/{auto}/julgamento.pdf").content
    # `fiscaliza verify` on the downloaded judgment and its signature: authentic; a byte changed: not
    public = tmp_path / "orgao.pub"
    public.write_bytes(signing_key.public_pem())
    downloaded = tmp_path / "julgamento.pdf"
    downloaded.write_bytes(pdf)
    (tmp_path / "julgamento.pdf.assinatura.json").write_text(
        gestor.get(f"/autos/{auto}/julgamento.pdf.assinatura.json").text)
    _a_stored_pdf_altered_is_detected(store, JudgmentPdf, auto, downloaded, public, "da defesa", "judgment_pdf_sha256")


def test_the_appeal_judgment_pdf_is_kept_signed_served_exported_and_checked_like_the_defence_judgment(
        browser, auto, jumped_day, lines, store, signing_key, tmp_path):
    from dockets.export import export_files
    from dockets.signing import check
    from dockets.store import AppealPdf

    gestor = _judge_after_marking_the_jump(browser, auto, jumped_day, lines)
    defence_judgment = gestor.get(f"/autos/{auto}/julgamento.pdf").content
    op = browser("op-trd")
    assert op.get(f"/autos/{auto}/julgamento-recurso.pdf").status_code == 404  # not judged yet
    assert op.post(f"/autos/{auto}/acoes/recurso", {"texto": "O salto não é desvio."}).status_code == 303
    titular = browser("titular")
    assert titular.post(f"/autos/{auto}/acoes/julgar-recurso", {
        "decisao": "negar", "fundamentacao": "O desvio subsiste sem o salto."}).status_code == 303
    pdf = titular.get(f"/autos/{auto}/julgamento-recurso.pdf")
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF-")
    assert op.get(f"/autos/{auto}/julgamento-recurso.pdf").content == pdf.content
    assert gestor.get(f"/autos/{auto}/julgamento.pdf").content == defence_judgment  # the first judgment is untouched
    with store() as session:
        kept = session.get(AppealPdf, auto)
        judged = session.scalars(select(AuditEntry).where(AuditEntry.action == "JulgarRecurso")).one()
        assert verified_entries(session) > 0
    digest = hashlib.sha256(pdf.content).hexdigest()
    assert kept.data == pdf.content and kept.sha256 == digest
    assert judged.payload["appeal_pdf_sha256"] == digest == judged.payload["state"]["appeal_pdf_sha256"]
    signature = op.get(f"/autos/{auto}/julgamento-recurso.pdf.assinatura.json")
    assert check(json.loads(signature.text), pdf.content, {signing_key.key_id: signing_key.public})[0]
    assert f"/autos/{auto}/julgamento-recurso.pdf.assinatura.json" in op.get(f"/autos/{auto}").text
    printed = _printed(pdf.content)
    assert "JULGAMENTO DO RECURSO" in printed and "Recurso não provido: a multa é mantida" in printed
    assert "Elisa Prado" in printed and "O salto não é desvio." in printed and "O desvio subsiste sem o salto." in printed
    assert "Auto julgado procedente em" in printed and "Bruno Lima" in printed  # the judgment it appealed
    assert "Sem as leituras contestadas, a infração subsiste" in printed
    # export writes it beside the auto, with its signature; fiscaliza verify takes it as authentic
    written = {path.name: path for path in export_files(store, tmp_path / "export")}
    exported = next(path for name, path in written.items() if name.endswith("-julgamento-recurso.pdf"))
    assert exported.read_bytes() == pdf.content and f"{exported.name}.assinatura.json" in written
    public = tmp_path / "orgao.pub"
    public.write_bytes(signing_key.public_pem())
    _a_stored_pdf_altered_is_detected(store, AppealPdf, auto, exported, public, "do recurso", "appeal_pdf_sha256")


def _a_stored_pdf_altered_is_detected(store, model, auto: int, copy: Path, public: Path, judged: str,
                                      digest_key: str) -> None:
    """A stored judgment PDF of record (`model`), checked as an operator and an auditor would:
    its copy at `copy` verifies with the Órgão's key and one bit changed does not; in the
    store, its bytes changed, then its digest rewritten too, then the row deleted each fail
    `audit verify` (the act's audit entry certified the digest as `digest_key`)."""
    from cli_helpers import fiscaliza

    pdf = copy.read_bytes()
    upheld = fiscaliza("verify", copy, "--public-key", public)
    assert upheld.returncode == 0 and "RESULTADO: PDF autêntico" in upheld.stdout, upheld.stdout + upheld.stderr
    middle = len(pdf) // 2
    altered = pdf[:middle] + bytes([pdf[middle] ^ 1]) + pdf[middle + 1:]  # one bit of its content
    copy.write_bytes(altered)
    forged = fiscaliza("verify", copy, "--public-key", public)
    assert forged.returncode == 1 and "a autenticidade do PDF NÃO foi comprovada" in forged.stdout
    # in the store: the bytes changed behind the app no longer match their digest...
    with store.begin() as session:
        session.execute(update(model).where(model.docket_id == auto).values(data=altered))
    with store() as session, pytest.raises(AuditError, match=f"PDF do julgamento {judged} do auto id .* SHA-256"):
        verified_entries(session)
    # ...nor, with the digest rewritten too, the one the act's audit entry certified
    with store.begin() as session:
        session.execute(update(model).where(model.docket_id == auto).values(sha256=hashlib.sha256(altered).hexdigest()))
    with store() as session, pytest.raises(AuditError, match=digest_key):
        verified_entries(session)
    # deleted, it is missed as well
    with store.begin() as session:
        session.execute(delete(model).where(model.docket_id == auto))
    with store() as session, pytest.raises(AuditError, match=digest_key):
        verified_entries(session)
