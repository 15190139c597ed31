"""The docket workflow through the HTTP app, end to end, and the pages' contents."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from decimal import Decimal

import pytest
from sqlalchemy import select
from stores import verified_entries

from dockets import ptbr, workflow
from dockets.signing import check, key_label
from dockets.store import AuditEntry, Docket, Occurrence
from web.format import brl, fine_brl


def text_of(response) -> str:
    """The page's visible text, whitespace collapsed."""
    body = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", response.text, flags=re.DOTALL)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))


def deadline_shown(page: str, label: str) -> str | None:
    match = re.search(re.escape(label) + r" (\d{2}/\d{2}/\d{4})", page)
    return match.group(1) if match else None


@pytest.fixture
def app(make_app):
    # these tests walk autos through weeks of acts, each dated by the app's clock (moved
    # to the act's day): a session lasts the walk
    return make_app(session_hours=60 * 24)


def judged_beside(page: str, slug: str) -> str:
    """The HTML before a judgment form (`slug`) inside the block that lays it out beside
    what it judges."""
    form = page.index('action="/autos/')  # the first form of the actions: the judgment, alone
    start = page.index('<div class="judge">')
    assert start < form and f'/acoes/{slug}"' in page[form:form + 60]
    return page[start:form]


def on_day(kit, iso: str) -> None:
    """The app's clock at noon of that day in João Neiva: the date the next act gets."""
    kit.clock.now = dt.datetime.fromisoformat(f"{iso}T12:00:00-03:00").astimezone(dt.UTC)


def stage_of(kit, docket_id: int) -> str:
    return kit.status(docket_id).stage.value


def test_the_workflow_end_to_end(kit, browser, signing_key):
    d11 = next(d for d in kit.dockets_of("TRD") if kit.code(d) == "D-11")
    br = kit.br
    fiscal = browser("fiscal")

    # The fiscal lavra the auto: numbered, PDF issued.
    page = fiscal.get(f"/autos/{d11}")
    assert page.status_code == 200
    assert "Aguardando lavratura" in page.text and f"/autos/{d11}/acoes/lavrar" in page.text
    assert fiscal.get(f"/autos/{d11}/auto.pdf").status_code == 404  # not yet
    on_day(kit, "2026-12-02")
    response = fiscal.post(f"/autos/{d11}/acoes/lavrar", {})
    assert response.status_code == 303 and response.headers["location"] == f"/autos/{d11}?feito=lavrar"
    page = text_of(fiscal.get(response.headers["location"]))
    assert "Ato registrado: Lavrar auto." in page
    assert "Auto de infração nº 0001/2026" in page
    assert "Ana Souza, matrícula F-0042 — lavrado em 02/12/2026" in page
    pdf = fiscal.get(f"/autos/{d11}/auto.pdf")
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    assert pdf.headers["content-type"] == "application/pdf"
    assert 'filename="auto-2026-0001-D-11.pdf"' in pdf.headers["content-disposition"]  # as the export names it
    # the PDF issued is signed by the Órgão (#13 item 2), its signature offered beside it
    assert "a assinatura do Órgão" in page
    signature = fiscal.get(f"/autos/{d11}/auto.pdf.assinatura.json")
    assert signature.status_code == 200
    assert check(signature.json(), pdf.content, {signing_key.key_id: signing_key.public}) == \
        (True, f"assinatura Ed25519 válida da {key_label(signing_key.public)}")
    assert not check(signature.json(), pdf.content + b" ", {signing_key.key_id: signing_key.public})[0]
    expected = workflow.deadlines(kit.status(d11), kit.calendar)
    assert deadline_shown(page, "Prazo de notificação") == br(expected.notificacao)

    # The fiscal registers the operator's ciência.
    on_day(kit, "2026-12-03")
    response = fiscal.post(f"/autos/{d11}/acoes/ciencia", {"meio": "postal"})
    assert response.status_code == 303
    page = text_of(fiscal.get(f"/autos/{d11}"))
    expected = workflow.deadlines(kit.status(d11), kit.calendar)
    assert stage_of(kit, d11) == "notificado"
    assert deadline_shown(page, "Prazo de defesa") == br(expected.defesa)
    assert deadline_shown(page, "Prazo de pagamento") == br(expected.pagamento)
    assert "Ciência registrada em 03/12/2026" in page

    # The operator files its defence with a PDF attachment.
    operator = browser("op-trd")
    listing = text_of(operator.get("/autos"))
    # the defence runs now (03/12 + 10 dias úteis: 4, 7, (8 holiday), 9, 10, 11, 14..18 = 18/12), first
    # though the payment deadline (03/12 + 10 days = Sun 13/12 -> 14/12) ends earlier: that one is secondary
    assert (expected.defesa, expected.pagamento) == (dt.date(2026, 12, 18), dt.date(2026, 12, 14))
    assert "0001/2026" in listing
    assert "Prazo de defesa: até 18/12/2026 (faltam 10 dias úteis) Prazo de pagamento: até 14/12/2026" in listing
    page = text_of(operator.get(f"/autos/{d11}"))
    assert "Prazo em curso Prazo de defesa: até 18/12/2026 (faltam 10 dias úteis)" in page
    # art. 8º, I: the payment term runs from the ciência "salvo se apresentar defesa", which the
    # page says wherever it shows that term; never a payment due before the defence, bare
    unless = "Prazo de pagamento: até 14/12/2026, salvo se apresentar defesa (art. 8º, I)"
    assert f"Também corre {unless}" in page
    assert f"Prazo de pagamento 14/12/2026, salvo se apresentar defesa (art. 8º, I)" in page  # the table
    assert page.count("14/12/2026") == page.count("14/12/2026, salvo se apresentar defesa (art. 8º, I)") == 2
    assert unless in listing
    # the time zone as the PDF words it; the header names the Prefeitura once
    assert "(horário de Brasília, UTC-03) · dia de operação 01/12/2026" in page
    assert page.count("Prefeitura Municipal de João Neiva") == 1
    page = operator.get(f"/autos/{d11}")
    assert f"/autos/{d11}/acoes/defesa" in page.text and 'enctype="multipart/form-data"' in page.text
    disc = kit.PDF + b"disco do tacografo"
    on_day(kit, "2026-12-07")
    response = operator.post(f"/autos/{d11}/acoes/defesa",
                             {"texto": "O veículo desviou por obra na Rua Cachoeiro."},
                             files=[("anexos", ("disco-JN-2011.pdf", disc, "application/pdf"))])
    assert response.status_code == 303, response.text
    assert stage_of(kit, d11) == "defesa_apresentada"
    page = operator.get(f"/autos/{d11}")
    link = re.search(rf'href="(/autos/{d11}/anexos/\d+)">disco-JN-2011.pdf<', page.text).group(1)
    assert operator.get(link).content == disc
    assert "/acoes/" not in page.text  # nothing left for the operator to do now

    # The gestor judges: procedente.
    gestor = browser("gestor")
    assert gestor.get(link).content == disc
    # the defence, its text and its files, beside the form that judges it (not only in the history)
    beside = judged_beside(gestor.get(f"/autos/{d11}").text, "julgar-defesa")
    assert "Defesa a julgar" in beside and "O veículo desviou por obra na Rua Cachoeiro." in beside
    assert f'href="{link}" download>disco-JN-2011.pdf<' in beside and "Diego Alves" in beside
    on_day(kit, "2026-12-09")
    response = gestor.post(f"/autos/{d11}/acoes/julgar-defesa",
                           {"decisao": "procedente",
                            "fundamentacao": "Não houve ocorrência registrada que justificasse o desvio."})
    assert response.status_code == 303, response.text
    assert stage_of(kit, d11) == "julgado_procedente"
    page = text_of(operator.get(f"/autos/{d11}"))
    expected = workflow.deadlines(kit.status(d11), kit.calendar)
    assert "Julgado procedente" in page
    assert deadline_shown(page, "Prazo de recurso") == br(expected.recurso)

    # The operator appeals; the titular nega provimento.
    on_day(kit, "2026-12-11")
    response = operator.post(f"/autos/{d11}/acoes/recurso", {"texto": "Recorro da decisão."},
                             files=[("anexos", ("", b"", "application/octet-stream"))])  # no file chosen
    assert response.status_code == 303, response.text
    assert stage_of(kit, d11) == "recurso_interposto"
    # the recurso goes to the titular (art. 7º § 3º): the gestor who judged the defence has no form
    # for it, and is refused if it posts one anyway
    assert "/acoes/julgar-recurso" not in gestor.get(f"/autos/{d11}").text
    refused = gestor.post(f"/autos/{d11}/acoes/julgar-recurso",
                          {"decisao": "negar", "fundamentacao": "Mantida a decisão recorrida."})
    assert refused.status_code == 403 and stage_of(kit, d11) == "recurso_interposto"
    titular = browser("titular")
    beside = judged_beside(titular.get(f"/autos/{d11}").text, "julgar-recurso")
    assert "Recurso a julgar" in beside and "Recorro da decisão." in beside and "Sem anexos." in beside
    assert "O veículo desviou por obra na Rua Cachoeiro." in beside  # the defence, folded under it
    on_day(kit, "2026-12-15")
    response = titular.post(f"/autos/{d11}/acoes/julgar-recurso",
                           {"decisao": "negar", "fundamentacao": "Mantida a decisão recorrida."})
    assert response.status_code == 303, response.text
    status = kit.status(d11)
    assert status.stage is workflow.Stage.MULTA_DEVIDA

    # Multa devida, with the payment deadline of art. 8º II.
    page = text_of(operator.get(f"/autos/{d11}"))
    payment = workflow.deadlines(status, kit.calendar).pagamento
    assert payment == kit.calendar.add_calendar_days(dt.date(2026, 12, 15), 10)
    assert "Multa devida" in page
    assert deadline_shown(page, "Prazo de pagamento") == br(payment)
    # 15/12 + 10 days = Fri 25/12 (Natal) -> Mon 28/12: 13 days left on 15/12
    assert f"Prazo em curso Prazo de pagamento: até {br(payment)} (faltam 13 dias)" in page
    listing = text_of(operator.get("/autos"))
    assert f"Prazo de pagamento: até {br(payment)} (faltam 13 dias)" in listing
    assert "Transportes Rio Doce 1 200 R$ 212,82" in listing  # the summary of fines due

    # The history lists every step, in order, with who did it and the decisions.
    steps = ["Infração registrada (detecção automática)", "Lavrar auto", "Registrar ciência", "Apresentar defesa",
             "Julgar defesa", "Interpor recurso", "Julgar recurso"]
    history = page[page.index("Histórico"):]
    positions = [history.index(step) for step in steps]
    assert positions == sorted(positions)
    for fragment in ("Fiscal — Ana Souza", "Empresa operadora — Diego Alves", "Gestor do Órgão Gerencial — Bruno Lima",
                     "Titular do Órgão Gerencial — Elisa Prado",
                     "Auto nº 0001/2026", "registro postal", "O veículo desviou por obra na Rua Cachoeiro.",
                     "Decisão: auto julgado procedente (multa mantida)",
                     "Fundamentação: Não houve ocorrência registrada que justificasse o desvio.",
                     "Decisão: recurso não provido (multa devida)", "Recorro da decisão.", "disco-JN-2011.pdf"):
        assert fragment in history, fragment
    with kit.sessions() as session:
        entries = list(session.scalars(select(AuditEntry).where(AuditEntry.entity == "docket",
                                                                AuditEntry.entity_id == str(d11))
                                       .order_by(AuditEntry.id)))
        assert [e.action for e in entries] == ["Registrar", "Lavrar", "Notificar", "ApresentarDefesa", "JulgarDefesa",
                                               "InterporRecurso", "JulgarRecurso"]
        assert [e.actor_role for e in entries] == ["sistema", "fiscal", "fiscal", "operador", "gestor", "operador",
                                                   "titular"]
        assert verified_entries(session) >= len(entries)

    # The gestor records the payment: closed, nothing more can be done.
    on_day(kit, "2026-12-16")
    assert gestor.post(f"/autos/{d11}/acoes/pagamento", {"nota": "DAM 123"}).status_code == 303
    page = gestor.get(f"/autos/{d11}")
    assert "Pago" in page.text and "/acoes/" not in page.text


def test_refused_acts_show_the_reason(kit, browser):
    d11 = next(d for d in kit.dockets_of("TRD") if kit.code(d) == "D-11")
    kit.act("fiscal", d11, workflow.Lavrar(on=dt.date(2026, 12, 2)))
    kit.act("fiscal", d11, workflow.Notificar(on=dt.date(2026, 12, 2)))
    kit.clock.advance(days=5)  # 21/12/2026
    fiscal, operator, gestor = browser("fiscal"), browser("op-trd"), browser("gestor")
    before = kit.snapshot()
    # lavrar again (the form is gone, the server refuses anyway)
    response = fiscal.post(f"/autos/{d11}/acoes/lavrar", {})
    assert response.status_code == 409
    assert "O auto já foi lavrado." in text_of(response)
    # a defence after its deadline (10 dias úteis after 02/12)
    deadline = workflow.deadlines(kit.status(d11), kit.calendar).defesa
    assert deadline < dt.date(2026, 12, 21)
    response = operator.post(f"/autos/{d11}/acoes/defesa", {"texto": "Defesa tardia."})
    assert response.status_code == 409
    assert f"Prazo de defesa encerrado em {kit.br(deadline)}" in text_of(response)
    # a judgment without fundamentação; a decision not chosen
    assert gestor.post(f"/autos/{d11}/acoes/julgar-defesa", {}).status_code == 400
    response = gestor.post(f"/autos/{d11}/acoes/anistia", {"ato": ""})
    assert response.status_code == 400 and "ato do Prefeito" in text_of(response)
    assert kit.snapshot() == before
    # the page says the deadline lapsed
    assert "(vencido)" in operator.get(f"/autos/{d11}").text


def test_judicial_suspension_and_amnesty(kit, browser):
    vnv = kit.dockets_of("VNV")[0]
    kit.act("fiscal", vnv, workflow.Lavrar(on=dt.date(2026, 12, 2)))
    kit.act("fiscal", vnv, workflow.Notificar(on=dt.date(2026, 12, 3)))
    gestor = browser("gestor")
    on_day(kit, "2026-12-04")
    response = gestor.post(f"/autos/{vnv}/acoes/suspender", {"processo": "5001234-56.2026.8.08.0030"})
    assert response.status_code == 303
    page = text_of(gestor.get(f"/autos/{vnv}"))
    assert "pagamento suspenso por ação judicial (art. 8º, III)" in page
    assert "Processo judicial nº 5001234-56.2026.8.08.0030" in page
    assert deadline_shown(page, "Prazo de pagamento") is None
    on_day(kit, "2026-12-07")
    assert gestor.post(f"/autos/{vnv}/acoes/retomar", {}).status_code == 303
    page = text_of(gestor.get(f"/autos/{vnv}"))
    assert deadline_shown(page, "Prazo de pagamento") == kit.br(
        workflow.deadlines(kit.status(vnv), kit.calendar).pagamento)
    on_day(kit, "2026-12-08")
    response = gestor.post(f"/autos/{vnv}/acoes/anistia", {"ato": "Decreto nº 100/2026"})
    assert response.status_code == 303
    assert stage_of(kit, vnv) == "anistiado"
    assert "Ato do Prefeito: Decreto nº 100/2026" in text_of(gestor.get(f"/autos/{vnv}"))


def test_the_docket_page_shows_every_field_of_art_5(kit, browser):
    c01 = next(d for d in kit.dockets_of("TRD") if kit.code(d) == "C-01")
    # The operator sees the auto once lavrado (art. 5º, § 3º).
    kit.act("fiscal", c01, workflow.Lavrar(on=dt.date(2026, 12, 2)), render=True)
    operator = browser("op-trd")
    response = operator.get(f"/autos/{c01}")
    assert response.status_code == 200
    page = text_of(response)
    with kit.sessions() as session:
        docket = session.get(Docket, c01)
    local = dt.datetime.fromisoformat(docket.infraction["occurred_at"]).astimezone(dt.timezone(dt.timedelta(hours=-3)))
    assert docket.place
    for fragment in (
        "Auto de infração nº 0001/2026", "Ana Souza, matrícula F-0042 — lavrado em 02/12/2026",
        "I — Empresa operadora", "Transportes Rio Doce (TRD)",
        "II — Linha, número de ordem e placa do veículo", f"Linha {docket.route_id}",
        f"Veículo nº de ordem {docket.vehicle_id} · placa {docket.plate}",
        "III — Local, data e hora", ptbr.decimal_commas(docket.place), local.strftime("%d/%m/%Y às %H:%M:%S") + " (horário de Brasília, UTC-03)",
        "IV — Infrator", "V — Descrição da infração e dispositivo legal violado",
        ptbr.decimal_commas(docket.description),
        "Grupo “C”, C-01; multa conforme art. 3º", "C-01 — dirigir com excesso de velocidade",
        "VI — Valor da multa", "150 UFIR × R$ 1,0641 = R$ 159,62",
        "VII — Assinatura do autuado", "VIII — Representante credenciado do Órgão Gerencial",
        f"SHA-256 do pacote de evidências: {docket.bundle_sha256}",
        f"fiscaliza verify {docket.file_stem}-evidencias.zip --public-key chave-do-orgao.pub",
    ):
        assert fragment in page, fragment
    assert local.strftime("%H:%M:%S") == "13:04:23"  # the demo's speeding episode, local time
    assert local.strftime("%d/%m/%Y às 13:04:23") in page
    for kind in ("velocidade", "disco", "mapa"):
        assert f'src="/autos/{c01}/graficos/{kind}.png"' in response.text
        chart = operator.get(f"/autos/{c01}/graficos/{kind}.png")
        assert chart.status_code == 200 and chart.content.startswith(b"\x89PNG")
        assert chart.headers["cache-control"] == "no-store"
    bundle = operator.get(f"/autos/{c01}/evidencias.zip")
    assert bundle.status_code == 200 and kit.sha256(bundle.content) == docket.bundle_sha256
    # downloaded under the name the page's command uses (and the export writes)
    assert f'filename="{docket.file_stem}-evidencias.zip"' in bundle.headers["content-disposition"]
    assert f'href="/autos/{c01}/evidencias.zip"' in response.text
    # a route-level auto (D-13, no vehicle of its own) charts the vehicle of its off-schedule trip
    vnv = kit.dockets_of("VNV")[0]
    assert kit.code(vnv) == "D-13"
    gestor = browser("gestor")
    page = gestor.get(f"/autos/{vnv}").text
    assert f"/autos/{vnv}/graficos/mapa.png" in page and f"/autos/{vnv}/graficos/velocidade.png" in page
    assert gestor.get(f"/autos/{vnv}/graficos/velocidade.png").content.startswith(b"\x89PNG")


def test_the_list_filters_and_formats(kit, browser):
    trd, (vnv,) = kit.dockets_of("TRD"), kit.dockets_of("VNV")
    # the C-01 first: the A-07 and D-11 of the demo's detour are lavrados together (art. 10)
    trd = [trd[1], trd[0], *trd[2:]]
    assert kit.code(trd[0]) == "C-01"
    for docket_id in (trd[0], vnv):
        kit.act("fiscal", docket_id, workflow.Lavrar(on=dt.date(2026, 12, 2)))
    fiscal = browser("fiscal")
    page = text_of(fiscal.get("/autos"))
    assert "5 auto(s)" in page
    assert "Viação Neivense" in page and "Transportes Rio Doce" in page
    assert "R$ 159,62" in page and "R$ 212,82" in page and "R$ 53,21" in page
    # each code with the law's words (Anexo I), not the bare code
    for code, words in (("D-11", "deixar de cumprir os itinerários fixados."),
                        ("C-01", "dirigir com excesso de velocidade e/ou desobedecendo regras de trânsito."),
                        ("A-07", "não completar o itinerário ou descumprir pontos de parada.")):
        assert f"{code} {words}" in page, code
    lavrados = fiscal.get("/autos?etapa=lavrado")
    assert "2 auto(s) na etapa selecionada" in text_of(lavrados)
    assert f'href="/autos/{trd[0]}"' in lavrados.text and f'href="/autos/{vnv}"' in lavrados.text
    assert f'href="/autos/{trd[1]}"' not in lavrados.text
    assert "Prazo de notificação" in text_of(lavrados)
    drafts = fiscal.get("/autos?etapa=rascunho")
    assert "3 auto(s) na etapa selecionada" in text_of(drafts)
    assert all(f'href="/autos/{d}"' in drafts.text for d in trd[1:])
    # an unknown stage is no filter
    assert "5 auto(s)" in text_of(fiscal.get("/autos?etapa=<script>"))
    operator = text_of(browser("op-vnv").get("/autos"))
    assert "1 auto(s)" in operator and "Transportes Rio Doce" not in operator
    assert "Cometidas duas ou mais infrações, aplica-se a penalidade de cada uma (art. 10)" in operator
    # an operator's list has its autos lavrados only: TRD's three drafts stay in the Órgão
    response = browser("op-trd").get("/autos")
    operator = text_of(response)
    assert "1 auto(s)" in operator and "Viação Neivense" not in operator and "rascunho" not in operator
    assert f'href="/autos/{trd[0]}"' in response.text
    assert not any(f'href="/autos/{d}"' in response.text for d in trd[1:])


def test_times_are_shown_in_local_time(kit, browser):
    """The store keeps instants in UTC and reads them back aware: the pages show them in
    João Neiva's time (UTC−3), not 3 h off."""
    c01 = next(d for d in kit.dockets_of("TRD") if kit.code(d) == "C-01")
    utc_minus_3 = dt.timezone(dt.timedelta(hours=-3))
    with kit.sessions() as session:
        docket = session.get(Docket, c01)
        occurred = docket.occurred_at
        (registered,) = session.scalars(select(AuditEntry).where(AuditEntry.entity == "docket",
                                                                 AuditEntry.entity_id == str(c01)))
        registered_at = registered.at
    # the column, not only the record, has the right instant
    assert occurred.tzinfo is not None and occurred.utcoffset() == dt.timedelta(0)
    assert occurred == dt.datetime.fromisoformat(docket.infraction["occurred_at"])
    assert occurred.astimezone(utc_minus_3).strftime("%H:%M:%S") == "13:04:23"
    assert registered_at.tzinfo is not None
    fiscal = browser("fiscal")
    page = text_of(fiscal.get(f"/autos/{c01}"))
    day = occurred.astimezone(utc_minus_3).strftime("%d/%m/%Y")
    assert f"{day} às 13:04:23 (horário de Brasília, UTC-03)" in page
    assert f"{day} às 16:04:23" not in page
    # the history's time of the Registrar entry, in local time
    history = page[page.index("Histórico"):]
    assert registered_at.astimezone(utc_minus_3).strftime("%d/%m/%Y %H:%M") + " Sistema" in history
    # the list
    listing = fiscal.get("/autos")
    row = re.search(rf'<a href="/autos/{c01}">.*?</tr>', listing.text, flags=re.DOTALL).group(0)
    assert f"<td>{day} 13:04</td>" in row
    # the same page, for the operator once lavrado
    kit.act("fiscal", c01, workflow.Lavrar(on=dt.date(2026, 12, 2)))
    assert f"{day} às 13:04:23 (horário de Brasília, UTC-03)" in text_of(browser("op-trd").get(f"/autos/{c01}"))


def test_money_is_written_the_brazilian_way():
    assert brl(Decimal("1234.56")) == "R$ 1.234,56"
    assert brl(Decimal("1234567.5")) == "R$ 1.234.567,50"
    assert brl(0) == "R$ 0,00"
    assert fine_brl(150, Decimal("1.0641")) == Decimal("159.62")  # 159,615: half up, not float's 159,61
    assert fine_brl(600, 1.0641) == Decimal("638.46")


def test_a_refused_attachment_returns_to_the_defence_with_the_text_kept(kit, browser):
    d11 = next(d for d in kit.dockets_of("TRD") if kit.code(d) == "D-11")
    on_day(kit, "2026-12-02")
    kit.act("fiscal", d11, workflow.Lavrar(on=dt.date(2026, 12, 2)))
    kit.act("fiscal", d11, workflow.Notificar(on=dt.date(2026, 12, 2)))
    operator = browser("op-trd")
    typed = "Excelentíssimo Senhor,\n\no desvio se deu por <obra> na Rua 7 & a via estava fechada."
    before = kit.snapshot()
    response = operator.post(f"/autos/{d11}/acoes/defesa", {"texto": typed},
                             files=[("anexos", ("laudo.pdf", b"<html>not a pdf</html>", "application/pdf"))])
    assert response.status_code == 415
    assert kit.snapshot() == before and kit.status(d11).stage == "notificado"
    page = text_of(response)
    # the defence form itself, not an error page: the reason beside it, the text as typed
    assert "Arquivo recusado. O arquivo “laudo.pdf” não é um PDF, PNG ou JPEG válido." in page
    assert "Nada foi registrado. O texto foi mantido abaixo" in page
    textarea = re.search(r'<textarea id="texto-defesa"[^>]*>(.*?)</textarea>', response.text, re.DOTALL)
    assert textarea is not None and html.unescape(textarea.group(1)) == typed
    assert "&lt;obra&gt;" in textarea.group(1)  # escaped, as anything typed
    assert f'action="/autos/{d11}/acoes/defesa"' in response.text
    # sent again with a real PDF, from the page it came back to: filed
    token = kit.CSRF.search(response.text).group(1)
    response = operator.post(f"/autos/{d11}/acoes/defesa", {"texto": html.unescape(textarea.group(1)),
                                                            "csrf_token": token},
                             files=[("anexos", ("laudo.pdf", kit.PDF, "application/pdf"))])
    assert response.status_code == 303
    assert kit.status(d11).stage == "defesa_apresentada"
    assert typed.replace("\n", " ").replace("  ", " ") in text_of(browser("gestor").get(f"/autos/{d11}"))


def test_a_refused_recurso_keeps_its_text_and_a_refusal_elsewhere_stays_an_error_page(kit, browser):
    d11 = next(d for d in kit.dockets_of("TRD") if kit.code(d) == "D-11")
    operator = browser("op-trd")
    # a recurso is not open yet, so the page has no form to return to: the refusal's own page
    kit.act("fiscal", d11, workflow.Lavrar(on=dt.date(2026, 12, 2)))
    response = operator.post(f"/autos/{d11}/acoes/recurso", {"texto": "Razões."},
                             files=[("anexos", ("x.pdf", b"nope", "application/pdf"))])
    assert response.status_code == 415 and "Voltar" in text_of(response)
    assert "<textarea" not in response.text
    kit.act("fiscal", d11, workflow.Notificar(on=dt.date(2026, 12, 2)))
    kit.act("op-trd", d11, workflow.ApresentarDefesa(on=dt.date(2026, 12, 3)), note="Defesa.")
    kit.act("gestor", d11, workflow.JulgarDefesa(on=dt.date(2026, 12, 4), procedente=True,
                                                 fundamentacao="Desvio comprovado."))
    on_day(kit, "2026-12-07")
    operator = browser("op-trd")
    response = operator.post(f"/autos/{d11}/acoes/recurso", {"texto": "Razões do recurso, longas."},
                             files=[("anexos", ("foto.png", kit.PDF, "image/png"))])
    assert response.status_code == 415
    assert "Razões do recurso, longas.</textarea>" in response.text
    assert "Arquivo recusado." in text_of(response)
    assert kit.status(d11).stage == "julgado_procedente"


def test_a_fiscal_registers_a_manual_infraction(kit, browser):
    fiscal = browser("fiscal")
    form = fiscal.get("/infracoes/nova")
    assert form.status_code == 200
    assert 'value="A-02"' in form.text and 'value="C-01"' not in form.text and 'value="D-11"' not in form.text
    data = {"code": "A-02", "operator_id": "VNV", "vehicle_id": "JN-1011", "route_id": "101",
            "occurred_at": "2026-12-10T07:45", "place": "Terminal Santo Antônio",
            "relato": "O motorista respondeu com grosseria a uma passageira idosa."}
    response = fiscal.post("/infracoes/nova", data)
    assert response.status_code == 303, response.text
    docket_id = int(response.headers["location"].rsplit("/", 1)[1])
    page = text_of(fiscal.get(f"/autos/{docket_id}"))
    for fragment in ("Infração aguardando lavratura", "A-02", "tratar os usuários com falta de urbanidade",
                     "Veículo nº de ordem JN-1011 · placa RQB4E17", "Terminal Santo Antônio",
                     "10/12/2026 às 07:45:00", "50 UFIR × R$ 1,0641 = R$ 53,21",
                     "Relato do fiscal: O motorista respondeu com grosseria a uma passageira idosa.",
                     "Ana Souza, matrícula F-0042", "registro manual do fiscal",
                     "Infração registrada pelo fiscal"):
        assert fragment in page, fragment
    with kit.sessions() as session:
        docket = session.get(Docket, docket_id)
        assert docket.source == "manual" and docket.stage == "rascunho" and docket.group == "A"
        assert docket.infraction["status"] == "confirmed" and docket.infraction["evidence"]["relato"]
        # the record keeps the contract's one string; the docket, its two halves
        assert docket.legal_basis == ("Lei Municipal nº 867/1998 (João Neiva), Anexo I – Código Disciplinar, "
                                      "Capítulo II, Grupo “A”, A-02; multa conforme art. 3º")
        assert docket.legal_text == "tratar os usuários com falta de urbanidade."
        assert docket.infraction["legal_basis"] == f"{docket.legal_basis}. Texto legal: “{docket.legal_text}”"
    # the page shows them apart: the dispositivo, then the code and the law's words
    assert f"{docket.legal_basis} A-02 — tratar os usuários com falta de urbanidade." in page
    assert "Texto legal:" not in page
    # the same facts twice: refused
    before = kit.snapshot()
    response = fiscal.post("/infracoes/nova", data)
    assert response.status_code == 409 and "Esta infração já foi registrada." in text_of(response)
    # an automatic code, a future time, a vehicle of another operator: refused
    for change in ({"code": "C-01"}, {"occurred_at": "2026-12-20T10:00"}, {"vehicle_id": "JN-2011"},
                   {"plate": "XYZ9Z99"}, {"place": ""}, {"relato": ""}, {"vehicle_id": "", "route_id": ""}):
        assert fiscal.post("/infracoes/nova", {**data, **change}).status_code in (400, 409), change
    assert kit.snapshot() == before
    # what users type is escaped on the pages
    response = fiscal.post("/infracoes/nova", {**data, "occurred_at": "2026-12-10T08:00",
                                               "place": "<script>alert(1)</script>", "relato": "<b>negrito</b>"})
    assert response.status_code == 303
    raw = fiscal.get(response.headers["location"]).text
    assert "<script>alert" not in raw and "&lt;script&gt;alert(1)&lt;/script&gt;" in raw
    assert "<b>negrito" not in raw and "&lt;b&gt;negrito&lt;/b&gt;" in raw
    # a vehicle not in the fleet: the plate the fiscal read
    response = fiscal.post("/infracoes/nova", {**data, "vehicle_id": "X-99", "plate": "abc1d23"})
    assert response.status_code == 303
    assert "Veículo nº de ordem X-99 · placa ABC1D23" in text_of(fiscal.get(response.headers["location"]))
    # and it can be lavrado like any other
    on_day(kit, "2026-12-11")
    assert fiscal.post(f"/autos/{docket_id}/acoes/lavrar", {}).status_code == 303
    assert fiscal.get(f"/autos/{docket_id}/auto.pdf").content.startswith(b"%PDF")


def test_a_manual_infraction_carries_the_fiscals_attachments_into_its_bundle_and_pdf(kit, browser, signing_key):
    import io
    import subprocess
    import zipfile

    from dockets.bundle import read_bundle, verify_bundle
    from fiscaliza.replay import rerun

    fiscal = browser("fiscal")
    form = fiscal.get("/infracoes/nova")
    assert 'enctype="multipart/form-data"' in form.text and 'name="anexos"' in form.text
    relato = "Veículo circulando com o vidro traseiro quebrado e remendado com fita adesiva."
    data = {"code": "A-02", "operator_id": "TRD", "vehicle_id": "JN-2011", "route_id": "201",
            "occurred_at": "2026-12-10T09:15", "place": "Rua Sete de Setembro, em frente ao nº 40", "relato": relato}
    photo = kit.PNG + b"foto do vidro"
    document = kit.PDF + b"boletim"
    # a fake photo: refused like a defence's, nothing registered, the form back as typed
    before = kit.snapshot()
    response = fiscal.post("/infracoes/nova", data, files=[("anexos", ("vidro.png", b"GIF89a fake", "image/png"))])
    assert response.status_code == 415 and "Arquivo recusado" in text_of(response)
    assert kit.snapshot() == before
    assert f">{relato}</textarea>" in response.text
    assert 'value="A-02" selected' in response.text and 'value="TRD" selected' in response.text
    assert 'value="Rua Sete de Setembro, em frente ao nº 40"' in response.text
    assert 'value="2026-12-10T09:15"' in response.text
    # a field to correct: the same, with its reason
    response = fiscal.post("/infracoes/nova", {**data, "place": ""})
    assert response.status_code == 400 and "Informe o local da infração" in text_of(response)
    assert f">{relato}</textarea>" in response.text
    response = fiscal.post("/infracoes/nova", data, files=[("anexos", ("vidro traseiro.png", photo, "image/png")),
                                                           ("anexos", ("boletim.pdf", document, "application/pdf"))])
    assert response.status_code == 303, response.text
    docket_id = int(response.headers["location"].rsplit("/", 1)[1])
    page = fiscal.get(f"/autos/{docket_id}")
    shown = text_of(page)
    # the relato once (it was the description, the "Relato do fiscal" line and an evidence row)
    assert shown.count(relato) == 1 and f"Relato do fiscal: {relato}" in shown
    assert "Ana Souza, matrícula F-0042" in shown
    assert "vidro traseiro.png" in shown and "boletim.pdf" in shown
    assert "não há regra da telemetria a reexecutar" in shown and "refazer a verificação" not in shown
    # the bundle holds them, byte for byte, listed in its manifest and signed
    bundle = fiscal.get(f"/autos/{docket_id}/evidencias.zip")
    assert bundle.status_code == 200
    with zipfile.ZipFile(io.BytesIO(bundle.content)) as archive:
        assert archive.read("anexos/01-vidro traseiro.png") == photo
        assert archive.read("anexos/02-boletim.pdf") == document
        manifest = json.loads(archive.read("manifest.json"))
        assert json.loads(archive.read("infraction.json"))["evidence"]["relato"] == relato
    assert manifest["source"] == "manual"
    assert [(a["filename"], a["sha256"]) for a in manifest["attachments"]] == [
        ("vidro traseiro.png", kit.sha256(photo)), ("boletim.pdf", kit.sha256(document))]
    assert read_bundle(bundle.content).infraction["infraction_id"] == manifest["infraction_id"]
    verdict = verify_bundle(bundle.content, {signing_key.key_id: signing_key.public}, rerun=rerun)
    assert verdict.upheld and verdict.manual and verdict.authentic
    assert any("vidro traseiro.png, boletim.pdf" in f for f in verdict.findings)
    with kit.sessions() as session:
        assert session.get(Docket, docket_id).bundle_sha256 == kit.sha256(bundle.content)
    # lavrado: the PDF names the bundle and lists each attachment with its SHA-256
    on_day(kit, "2026-12-11")
    assert fiscal.post(f"/autos/{docket_id}/acoes/lavrar", {}).status_code == 303
    pdf = fiscal.get(f"/autos/{docket_id}/auto.pdf").content
    text = " ".join(subprocess.run(["pdftotext", "-", "-"], input=pdf, capture_output=True, check=True)
                    .stdout.decode().split())
    assert "Anexos do fiscal" in text and "Evidências (relato e anexos do fiscal)" in text
    assert "equipamentos do veículo" not in text
    for name, content in (("vidro traseiro.png", photo), ("boletim.pdf", document)):
        assert name in text
        assert kit.sha256(content) in text.replace(" ", "")
    assert kit.sha256(bundle.content) in text.replace(" ", "")
    assert text.count(relato) == 1
    assert "reexecutar a regra sobre ele" not in text
    # and the audit record holds, attachments and bundle certified
    assert browser("gestor").get("/auditoria").status_code == 200


def test_a_fiscal_registers_occurrences(kit, browser):
    fiscal = browser("fiscal")
    response = fiscal.post("/ocorrencias", {"kind": "authorized_detour", "id": "desvio-obra-1",
                                            "start": "2026-12-10T06:00", "end": "2026-12-12T22:00",
                                            "route_id": "201", "note": "Obra na Rua Cachoeiro",
                                            "geometry": '{"type": "LineString", "coordinates": [[-40.4, -19.7], '
                                                        '[-40.41, -19.71]]}'})
    assert response.status_code == 303, response.text
    page = text_of(fiscal.get("/ocorrencias"))
    assert "desvio-obra-1" in page and "Desvio autorizado (com geometria)" in page and "10/12/2026 06:00" in page
    exported = fiscal.get("/ocorrencias.jsonl")
    (record,) = [json.loads(line) for line in exported.text.splitlines()]
    assert record == {"id": "desvio-obra-1", "kind": "authorized_detour", "start": "2026-12-10T06:00:00-03:00",
                      "end": "2026-12-12T22:00:00-03:00", "route_id": "201",
                      "geometry": {"type": "LineString", "coordinates": [[-40.4, -19.7], [-40.41, -19.71]]},
                      "note": "Obra na Rua Cachoeiro"}
    with kit.sessions() as session:
        occurrence = session.get(Occurrence, "desvio-obra-1")
        assert occurrence.created_by == kit.actor("fiscal").user_id
        (entry,) = session.scalars(select(AuditEntry).where(AuditEntry.entity == "occurrence"))
        assert entry.action == "RegistrarOcorrencia" and entry.entity_id == "desvio-obra-1"
        assert entry.actor_role == "fiscal"
    # the gestor sees them, without the form
    gestor = browser("gestor").get("/ocorrencias")
    assert "desvio-obra-1" in gestor.text and 'action="/ocorrencias"' not in gestor.text
    # invalid ones are refused
    before = kit.snapshot()
    for data in ({"kind": "accident", "start": "2026-12-10T10:00", "end": "2026-12-10T09:00"},
                 {"kind": "meteoro", "start": "2026-12-10T10:00", "end": "2026-12-10T11:00"},
                 {"kind": "accident", "start": "", "end": "2026-12-10T11:00"},
                 {"kind": "accident", "start": "2026-12-10T10:00", "end": "2026-12-10T11:00", "id": "desvio-obra-1"},
                 {"kind": "accident", "start": "2026-12-10T10:00", "end": "2026-12-10T11:00", "geometry": "[1"}):
        assert fiscal.post("/ocorrencias", data).status_code == 400, data
    assert kit.snapshot() == before


def test_login_pages(browser):
    anonymous = browser()
    page = anonymous.get("/entrar")
    assert page.status_code == 200
    assert 'lang="pt-BR"' in page.text and 'autocomplete="current-password"' in page.text
    assert anonymous.login("op-trd").status_code == 303
    assert anonymous.get("/entrar").headers["location"] == "/autos"  # already logged in
    header = text_of(anonymous.get("/autos"))
    assert "Prefeitura Municipal de João Neiva — ES" in header
    assert "Diego Alves Empresa operadora — Transportes Rio Doce" in header
    assert anonymous.get("/").headers["location"] == "/autos"
    assert anonymous.get("/saude").text == "ok"


def test_the_pages_name_the_policys_municipality_and_law(make_app, browser):
    import msgspec

    from kernel.policy import load_policy

    shipped = load_policy()
    other = msgspec.structs.replace(shipped, policy=msgspec.structs.replace(
        shipped.policy, municipality="Canarana", state="MT", name="Canarana — Lei 179/1991"))
    page = text_of(browser(application=make_app(policy=other)).get("/entrar"))
    assert "Prefeitura Municipal de Canarana — MT" in page and "Canarana — Lei 179/1991" in page
    assert "João Neiva" not in page


def test_a_manual_infraction_with_another_companys_vehicle_or_of_year_0001_is_refused(kit, browser):
    fiscal = browser("fiscal")
    data = {"code": "A-02", "operator_id": "TRD", "vehicle_id": "JN-1011", "route_id": "101",
            "occurred_at": "2026-12-10T07:45", "place": "Terminal", "relato": "Relato."}
    before = kit.snapshot()
    response = fiscal.post("/infracoes/nova", data)  # JN-1011 is VNV's
    assert response.status_code == 400 and "não pertence à empresa TRD" in response.text
    response = fiscal.post("/infracoes/nova", {**data, "operator_id": "VNV", "occurred_at": "0001-01-01T07:45"})
    assert response.status_code == 400 and "anterior a 01/01/2000" in response.text
    assert kit.snapshot() == before


def test_the_server_configuration_comes_from_the_policy(demo_db, tmp_path):
    import shutil

    from stores import TEST_AUDIT_KEY

    from dockets.anchors import FileAnchorLog
    from kernel.policy import load_policy
    from kernel.settings import Settings
    from web.server import build_config

    shutil.copyfile(demo_db, tmp_path / "copia.sqlite3")
    anchors = FileAnchorLog(tmp_path / "ancoras.jsonl")
    config = build_config(f"sqlite:///{tmp_path / 'copia.sqlite3'}", Settings().static.inputs(),
                          audit_key=TEST_AUDIT_KEY, anchors=anchors, signer=None, gtfs_rt_max_age_s=90)
    policy = load_policy().policy
    try:
        assert config.calendar.subdivision == "ES"
        assert config.calendar.municipal_holidays == frozenset(policy.municipal_holidays)
        assert config.ufir_brl == policy.ufir_brl and config.timezone == policy.timezone
        assert config.secure_cookies and config.session_hours == 8 and config.max_upload_bytes == 10 * 1024 * 1024
        # without --fleet, the sample's fleet (before: none, and any company's vehicle passed)
        assert config.fleet["JN-1011"].operator_id == "VNV"
        assert config.audit_keys == {TEST_AUDIT_KEY.key_id: TEST_AUDIT_KEY} and config.anchors is anchors
        assert config.gtfs_rt_max_age_s == 90  # serve --gtfs-rt-max-age
        with config.sessions() as session:
            assert session.scalar(select(Docket.id).limit(1)) is not None
    finally:
        config.sessions.kw["bind"].dispose()


def test_the_gestor_verifies_the_audit_record_and_sees_the_first_break(kit, browser, anchors):
    import sqlalchemy as sa

    d11 = next(d for d in kit.dockets_of("TRD") if kit.code(d) == "D-11")
    fiscal, gestor = browser("fiscal"), browser("gestor")
    on_day(kit, "2026-12-02")
    assert fiscal.post(f"/autos/{d11}/acoes/lavrar", {}).status_code == 303
    assert len(anchors.read()) == 1  # the lavratura's commit, anchored outside the database
    assert "/auditoria" in gestor.get("/autos").text and "/auditoria" not in fiscal.get("/autos").text
    assert fiscal.get("/auditoria").status_code == 403
    page = gestor.get("/auditoria")
    assert page.status_code == 200
    assert "Registro íntegro." in text_of(page) and "1 âncoras" in text_of(page)
    # the fine is lowered behind the application's back
    with kit.sessions.begin() as session:
        session.execute(sa.text(f"UPDATE dockets SET fine_ufir = 1 WHERE id = {d11}"))
    page = gestor.get("/auditoria")
    assert page.status_code == 409
    assert f"Registro rompido. auto 0001/2026 (id {d11}) difere do seu último registro de auditoria em: fine_ufir" \
        in text_of(page)


def test_the_docket_page_reads_as_the_pdf(kit, browser):
    """The web page of an auto has the PDF's wording (dockets.document.wording): decimal
    commas, the vehicles and plates the auto names, D-13's escalation in words, the
    catraca chart of D-19/D-21 and the evidence named by the label dictionary."""
    gestor = browser("gestor")
    ids = kit.dockets_of("TRD") + kit.dockets_of("VNV")
    pages = {d: (kit.code(d), gestor.get(f"/autos/{d}")) for d in ids}
    for docket_id, (code, response) in pages.items():
        assert response.status_code == 200, code
        page = text_of(response)
        assert not re.search(r"lat\. -?\d+\.\d", page), (code, re.search(r"lat\. -?\d+\.\d+", page))
        assert not re.search(r"(?<![\w.])\d+\.\d+ (min|m|km|km/h|s|%)\b", page), code
        assert not re.search(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", page), code  # no ISO timestamp
        evidence = re.search(r"Evidências \(art\. 6º\)(.*?)Prazos", page).group(1)
        assert not re.search(r"\b[a-z]+_[a-z_]+\b", evidence), (code, re.findall(r"\b[a-z]+_[a-z_]+\b", evidence))
        assert not re.search(r"\b(True|False|None)\b|\[\{|\{'", evidence), code
        assert "Registros que constatam a infração" in page, code
    d13 = next(d for d, (code, _) in pages.items() if code == "D-13")
    page = text_of(pages[d13][1])
    assert "Veículo nº de ordem JN-1011 · placa RQB4E17" in page
    assert "Veículo nº de ordem — · placa —" not in page
    assert ("Cálculo da multa majorada: multa de 200 UFIR acrescida de 100 % a cada 10 % de viagens fora do "
            "horário: 1 de 68 viagens realizadas = 1,47 % das viagens → nenhum acréscimo → 200 UFIR") in page
    d21 = next(d for d, (code, _) in pages.items() if code == "D-21")
    assert f'src="/autos/{d21}/graficos/catraca.png"' in pages[d21][1].text
    assert "Catraca: contador e lacre ao longo do dia" in text_of(pages[d21][1])
    chart = gestor.get(f"/autos/{d21}/graficos/catraca.png")
    assert chart.status_code == 200 and chart.content.startswith(b"\x89PNG")
    # a chart the auto has not (a speeding auto has no catraca facts) is not found
    c01 = next(d for d, (code, _) in pages.items() if code == "C-01")
    assert "catraca.png" not in pages[c01][1].text
    assert gestor.get(f"/autos/{c01}/graficos/catraca.png").status_code == 404
