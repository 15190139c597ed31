"""Who may see and do what through the web app: the operators' isolation (an operator
cannot read, download or act on another operator's dockets by any URL or id, nor on its
own company's drafts before the fiscal lavra them: art. 5º, § 3º), and the
authentication, CSRF, role, upload and session rules."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest
from sqlalchemy import select

from dockets import workflow
from dockets.store import Attachment, Docket

CHARTS = ("velocidade", "disco", "mapa")
SLUGS = ("lavrar", "ciencia", "defesa", "julgar-defesa", "recurso", "julgar-recurso", "pagamento", "suspender",
         "retomar", "anistia")
FILE_MAGIC = (b"%PDF", b"PK\x03\x04", b"\x89PNG", b"\xff\xd8\xff")


@pytest.fixture
def base_db(world_db):
    return world_db


def _ids(kit) -> tuple[int, int]:
    """(the largest docket id, the largest attachment id)."""
    with kit.sessions() as session:
        dockets = list(session.scalars(select(Docket.id)))
        attachments = list(session.scalars(select(Attachment.id)))
    return max(dockets), max(attachments)


def _full_form(kit) -> dict:
    """A form that every action would accept, were it allowed."""
    return {"on": kit.today(), "meio": "recibo", "texto": "Texto do ato.", "decisao": "procedente",
            "fundamentacao": "Fundamentação.", "processo": "5000001-00.2026.8.08.0000", "ato": "Decreto 1/2026",
            "nota": "nota"}


def _secrets_of(kit, operator_id: str) -> list[bytes]:
    """Strings that identify an operator's dockets: none may appear in another's responses."""
    found = []
    with kit.sessions() as session:
        for docket in session.scalars(select(Docket).where(Docket.operator_id == operator_id)):
            found += [docket.infraction_id, docket.description[:40], docket.bundle_sha256 or docket.infraction_id]
            found += [v for v in (docket.plate, docket.trip_id) if v]
        for attachment in session.scalars(select(Attachment).join(Docket, Attachment.docket_id == Docket.id)
                                          .where(Docket.operator_id == operator_id)):
            found += [attachment.filename, attachment.sha256]
    found.append({"TRD": "Transportes Rio Doce", "VNV": "Viação Neivense"}[operator_id])
    return [s.encode("utf-8") for s in found]


def _assert_no_leak(response, secrets: list[bytes]) -> None:
    assert not response.content.startswith(FILE_MAGIC)
    for secret in secrets:
        assert secret not in response.content, secret


def _assert_unreachable(kit, user, docket_id: int, not_found_page, secrets: list[bytes], attachment_ids) -> None:
    """Every URL of the docket, and every action on it, answers `user` exactly like a
    nonexistent docket (404, the same page) and shows none of `secrets`."""
    urls = [f"/autos/{docket_id}", f"/autos/{docket_id}/auto.pdf", f"/autos/{docket_id}/evidencias.zip"]
    urls += [f"/autos/{docket_id}/graficos/{kind}.png" for kind in CHARTS]
    urls += [f"/autos/{docket_id}/anexos/{a}" for a in attachment_ids]
    for url in urls:
        response = user.get(url)
        assert response.status_code == 404, (url, response.status_code)
        assert response.content == not_found_page.content, url
        _assert_no_leak(response, secrets)
    for slug in SLUGS:
        files = [("anexos", ("defesa.pdf", kit.PDF, "application/pdf"))] if slug in ("defesa", "recurso") else None
        response = user.post(f"/autos/{docket_id}/acoes/{slug}", _full_form(kit), files=files)
        assert response.status_code == 404, (docket_id, slug, response.status_code)
        assert response.content == not_found_page.content
        _assert_no_leak(response, secrets)
    # a POST that is not even a known action answers the same
    assert user.post(f"/autos/{docket_id}/acoes/inexistente", _full_form(kit)).content == not_found_page.content


@pytest.mark.parametrize("me, other", [("VNV", "TRD"), ("TRD", "VNV")])
def test_an_operator_cannot_reach_another_operators_dockets(kit, browser, me, other):
    user = browser(f"op-{me.lower()}")
    mine, theirs = set(kit.dockets_of(me)), set(kit.dockets_of(other))
    last_docket, last_attachment = _ids(kit)
    missing = last_docket + 5
    secrets = _secrets_of(kit, other)
    before = kit.snapshot()

    # What a nonexistent auto looks like: every other operator's auto must look the same.
    not_found_page = user.get(f"/autos/{missing}")
    not_found_file = user.get(f"/autos/{missing}/auto.pdf")
    assert not_found_page.status_code == not_found_file.status_code == 404
    assert not_found_page.content == not_found_file.content

    attachment_ids = range(1, last_attachment + 3)
    for docket_id in range(1, missing + 1):
        if docket_id in mine:
            continue  # my own drafts: test_an_operator_does_not_see_its_own_companys_drafts
        _assert_unreachable(kit, user, docket_id, not_found_page, secrets, attachment_ids)

    # Their attachments through my own auto's URL: not found either.
    with kit.sessions() as session:
        their_attachments = list(session.scalars(select(Attachment.id).join(Docket, Attachment.docket_id == Docket.id)
                                                 .where(Docket.operator_id == other)))
    assert their_attachments
    own = min(kit.lavrados_of(me))
    missing_attachment = user.get(f"/autos/{own}/anexos/{last_attachment + 50}")
    assert missing_attachment.status_code == 404
    for attachment_id in their_attachments:
        response = user.get(f"/autos/{own}/anexos/{attachment_id}")
        assert response.status_code == 404
        assert response.content == missing_attachment.content
        _assert_no_leak(response, secrets)

    # The list, the filters and the summary show only my autos.
    for stage in ("", "rascunho", "lavrado", "notificado", "defesa_apresentada"):
        response = user.get(f"/autos?etapa={stage}")
        assert response.status_code == 200
        _assert_no_leak(response, secrets)
        for docket_id in theirs:
            assert f'href="/autos/{docket_id}"'.encode() not in response.content

    # Nothing changed: stages, statuses, audit log, attachments, PDFs.
    assert kit.snapshot() == before

    # ...while my own autos lavrados are all there, in the list too.
    lavrados = kit.lavrados_of(me)
    assert lavrados
    listing = user.get("/autos")
    assert f"<caption>{len(lavrados)} auto(s)</caption>".encode() in listing.content
    for docket_id in lavrados:
        assert f'href="/autos/{docket_id}"'.encode() in listing.content
        assert user.get(f"/autos/{docket_id}").status_code == 200
        assert user.get(f"/autos/{docket_id}/auto.pdf").content.startswith(b"%PDF")
        assert user.get(f"/autos/{docket_id}/evidencias.zip").content.startswith(b"PK\x03\x04")
        assert user.get(f"/autos/{docket_id}/graficos/mapa.png").content.startswith(b"\x89PNG")


def test_an_operator_does_not_see_its_own_companys_drafts(kit, browser):
    """Art. 5º, § 3º: the auto reaches the company after its lavratura. Until then the
    draft looks to the company exactly like a nonexistent auto, on every URL and action,
    and is not in its list; once the fiscal lavra it, it is all there."""
    (draft,) = kit.drafts_of("TRD")
    operator, fiscal, gestor = browser("op-trd"), browser("fiscal"), browser("gestor")
    last_docket, last_attachment = _ids(kit)
    not_found_page = operator.get(f"/autos/{last_docket + 5}")
    assert not_found_page.status_code == 404
    with kit.sessions() as session:
        docket = session.get(Docket, draft)
        assert docket.stage == "rascunho" and docket.bundle_sha256 and docket.vehicle_id
        secrets = [docket.infraction_id.encode(), docket.bundle_sha256.encode()]
    # The Órgão Gerencial sees the draft, its evidence and its gráficos: there is something to hide.
    for user in (fiscal, gestor):
        assert user.get(f"/autos/{draft}").status_code == 200
        assert kit.sha256(user.get(f"/autos/{draft}/evidencias.zip").content) == docket.bundle_sha256
        for kind in CHARTS:
            assert user.get(f"/autos/{draft}/graficos/{kind}.png").content.startswith(b"\x89PNG"), kind
    before = kit.snapshot()

    # Every URL (page, PDF, evidence, gráficos, attachments) and every action: as if it did not exist.
    _assert_unreachable(kit, operator, draft, not_found_page, secrets, range(1, last_attachment + 3))
    # ...the lavratura too, which the operator's role could not do anyway: existence is not told.
    assert operator.post(f"/autos/{draft}/acoes/lavrar", {"on": kit.today()}).content == not_found_page.content

    # Not in the list, under any filter, nor counted; no filter offered for drafts.
    lavrados = kit.lavrados_of("TRD")
    assert draft not in lavrados
    for stage in ("", "rascunho", "lavrado", "notificado", "defesa_apresentada", "<script>"):
        response = operator.get(f"/autos?etapa={stage}")
        assert response.status_code == 200
        assert f'href="/autos/{draft}"'.encode() not in response.content, stage
        _assert_no_leak(response, secrets)
    listing = operator.get("/autos")
    assert f"<caption>{len(lavrados)} auto(s)</caption>" in listing.text
    assert f"Todas ({len(lavrados)})" in listing.text
    assert 'value="rascunho"' not in listing.text
    assert "Nenhum auto de infração nesta etapa." in operator.get("/autos?etapa=rascunho").text
    # (the Órgão's list has it, with its filter)
    staff = fiscal.get("/autos?etapa=rascunho")
    assert f'href="/autos/{draft}"' in staff.text and "<caption>1 auto(s) na etapa selecionada</caption>" in staff.text
    assert kit.snapshot() == before

    # The fiscal lavra it: now the company sees the auto, its PDF, evidence and gráficos.
    response = fiscal.post(f"/autos/{draft}/acoes/lavrar", {"on": kit.today()})
    assert response.status_code == 303, response.text
    assert kit.status(draft).stage.value == "lavrado"
    with kit.sessions() as session:
        label = session.get(Docket, draft).label
    page = operator.get(f"/autos/{draft}")
    assert page.status_code == 200
    assert f"Auto de infração nº {label}" in page.text and docket.bundle_sha256 in page.text
    pdf = operator.get(f"/autos/{draft}/auto.pdf")
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    assert kit.sha256(operator.get(f"/autos/{draft}/evidencias.zip").content) == docket.bundle_sha256
    for kind in CHARTS:
        assert operator.get(f"/autos/{draft}/graficos/{kind}.png").content.startswith(b"\x89PNG"), kind
    listing = operator.get("/autos")
    assert f'href="/autos/{draft}"' in listing.text and f">{label}</a>" in listing.text
    assert f"<caption>{len(lavrados) + 1} auto(s)</caption>" in listing.text
    lavrado_filter = operator.get("/autos?etapa=lavrado")
    assert f'href="/autos/{draft}"' in lavrado_filter.text
    # It is the operator's now, but lavrar is still not its act.
    response = operator.post(f"/autos/{draft}/acoes/lavrar", {"on": kit.today()})
    assert response.status_code == 403 and "não pode" in response.text
    # ...and another operator still sees nothing of it.
    other = browser("op-vnv")
    assert other.get(f"/autos/{draft}").content == other.get(f"/autos/{last_docket + 5}").content


def test_unauthenticated_requests_get_nothing(kit, browser):
    anonymous = browser()
    before = kit.snapshot()
    trd = kit.dockets_of("TRD")
    for url in ("/", "/autos", f"/autos/{trd[0]}", "/ocorrencias", "/infracoes/nova", "/autos?etapa=lavrado"):
        response = anonymous.get(url)
        assert response.status_code == 303, url
        assert response.headers["location"] == "/entrar"
        assert response.content == b""
    files = [f"/autos/{trd[0]}/auto.pdf", f"/autos/{trd[0]}/evidencias.zip", "/ocorrencias.jsonl",
             f"/autos/{trd[0]}/anexos/1"] + [f"/autos/{trd[0]}/graficos/{kind}.png" for kind in CHARTS]
    for url in files:
        response = anonymous.get(url)
        assert response.status_code == 401, url
        assert response.content == b""
    for docket_id in trd:
        for slug in SLUGS:
            response = anonymous.post(f"/autos/{docket_id}/acoes/{slug}", {**_full_form(kit), "csrf_token": "x"})
            assert response.status_code == 303 and response.headers["location"] == "/entrar"
    for url in ("/ocorrencias", "/infracoes/nova", "/sair"):
        assert anonymous.post(url, {"csrf_token": "x"}).status_code == 303
    # a forged session cookie is no session
    anonymous.client.cookies.set("__Host-fiscaliza_sessao", "forjado", domain="testserver.local")  # the jar's name for a dotless host
    assert anonymous.get("/autos").status_code == 303
    assert anonymous.get(f"/autos/{trd[0]}/auto.pdf").status_code == 401
    assert kit.snapshot() == before


def test_posts_without_the_csrf_token_are_refused(kit, browser):
    fiscal, gestor = browser("fiscal"), browser("gestor")
    draft = kit.dockets_of("TRD")[3]
    before = kit.snapshot()
    for data in ({}, {"csrf_token": ""}, {"csrf_token": "errado"}, {"csrf_token": gestor.csrf}):
        response = fiscal.post(f"/autos/{draft}/acoes/lavrar", {"on": kit.today(), **data}, csrf=False)
        assert response.status_code == 403, data
        assert "Formulário recusado" in response.text
    response = fiscal.post("/ocorrencias", {"kind": "accident", "start": "2026-12-10T10:00", "end": "2026-12-10T11:00",
                                            "csrf_token": "errado"}, csrf=False)
    assert response.status_code == 403
    assert kit.snapshot() == before
    # logout needs the token too: without it the session goes on
    assert fiscal.post("/sair", {}, csrf=False).status_code == 403
    assert fiscal.get("/autos").status_code == 200
    # and with it the act goes through
    assert fiscal.post(f"/autos/{draft}/acoes/lavrar", {"on": kit.today()}).status_code == 303
    assert kit.status(draft).stage == "lavrado"


def test_login_needs_its_csrf_token(kit, browser):
    anonymous = browser()
    page = anonymous.get("/entrar")
    token = kit.CSRF.search(page.text).group(1)
    for data in ({"username": "fiscal", "password": kit.PASSWORD},
                 {"username": "fiscal", "password": kit.PASSWORD, "csrf_token": "errado"}):
        assert anonymous.client.post("/entrar", data=data).status_code == 403
    # the token of the form without its cookie (another browser) is refused too
    other = browser()
    assert other.client.post("/entrar", data={"username": "fiscal", "password": kit.PASSWORD,
                                              "csrf_token": token}).status_code == 403
    assert kit.web_sessions() == []
    assert anonymous.client.post("/entrar", data={"username": "fiscal", "password": kit.PASSWORD,
                                                  "csrf_token": token}).status_code == 303


def test_a_login_token_the_client_made_up_is_refused(kit, browser):
    # before: the form echoed whatever the login cookie held, so a value planted as the cookie
    # (and put in a forged form) logged the victim's browser in as the attacker (login CSRF)
    anonymous = browser()
    anonymous.client.cookies.set("__Host-fiscaliza_entrada", "fixo", domain="testserver.local")  # the jar's name for a dotless host
    page = anonymous.get("/entrar")
    token = kit.CSRF.search(page.text).group(1)
    assert token != "fixo" and f"__Host-fiscaliza_entrada={token};" in page.headers["set-cookie"]
    forged = browser()
    forged.client.cookies.set("__Host-fiscaliza_entrada", "fixo", domain="testserver.local")  # the jar's name for a dotless host
    assert forged.client.post("/entrar", data={"username": "fiscal", "password": kit.PASSWORD,
                                               "csrf_token": "fixo"}).status_code == 403
    # one of the server's, with its time or MAC altered, is not the server's either
    nonce, issued, mac = token.split(".")
    for altered in (f"{nonce}.{int(issued) + 7200}.{mac}", f"{nonce}x.{issued}.{mac}", f"{nonce}.{issued}.{mac[::-1]}"):
        forged.client.cookies.set("__Host-fiscaliza_entrada", altered, domain="testserver.local")  # the jar's name for a dotless host
        assert forged.client.post("/entrar", data={"username": "fiscal", "password": kit.PASSWORD,
                                                   "csrf_token": altered}).status_code == 403
    assert kit.web_sessions() == []
    assert anonymous.client.post("/entrar", data={"username": "fiscal", "password": kit.PASSWORD,
                                                  "csrf_token": token}).status_code == 303


def test_a_login_token_is_good_for_an_hour_and_at_every_web_process(kit, browser, make_app):
    from fastapi.testclient import TestClient

    anonymous = browser()
    token = kit.CSRF.search(anonymous.get("/entrar").text).group(1)
    # another process over the same audit key takes it (several web processes behind a proxy)
    with TestClient(make_app(), base_url="https://testserver", follow_redirects=False) as other:
        other.cookies.set("__Host-fiscaliza_entrada", token, domain="testserver.local")  # the jar's name for a dotless host
        assert other.post("/entrar", data={"username": "fiscal", "password": kit.PASSWORD,
                                           "csrf_token": token}).status_code == 303
    kit.clock.advance(hours=1)
    assert anonymous.client.post("/entrar", data={"username": "fiscal", "password": kit.PASSWORD,
                                                  "csrf_token": token}).status_code == 403


def test_wrong_credentials(kit, browser):
    anonymous = browser()
    for username, password in (("fiscal", "senha-errada-123"), ("ninguem", kit.PASSWORD), ("fiscal", "")):
        response = anonymous.login(username, password)
        assert response.status_code == 401
        assert "Usuário ou senha inválidos." in response.text
    assert kit.web_sessions() == []


def test_roles_are_enforced_by_the_server(kit, browser):
    trd = kit.dockets_of("TRD")
    with_defence, lavrado, notified, draft = trd[:4]
    fiscal, gestor, operator = browser("fiscal"), browser("gestor"), browser("op-trd")
    before = kit.snapshot()
    form = _full_form(kit)
    refused = [
        (fiscal, with_defence, "julgar-defesa"), (fiscal, with_defence, "julgar-recurso"),
        (fiscal, notified, "pagamento"), (fiscal, notified, "anistia"), (fiscal, notified, "defesa"),
        (operator, lavrado, "lavrar"), (operator, lavrado, "ciencia"), (operator, with_defence, "julgar-defesa"),
        (operator, notified, "pagamento"), (operator, notified, "suspender"), (operator, notified, "anistia"),
        (gestor, draft, "lavrar"), (gestor, lavrado, "ciencia"), (gestor, notified, "defesa"),
    ]
    for user, docket_id, slug in refused:
        response = user.post(f"/autos/{docket_id}/acoes/{slug}", form)
        assert response.status_code == 403, (user.username, slug, response.text)
        assert "não pode" in response.text
    assert kit.snapshot() == before
    # the forms shown are the role's own
    assert "/acoes/julgar-defesa" in gestor.get(f"/autos/{with_defence}").text
    assert "/acoes/julgar-defesa" not in fiscal.get(f"/autos/{with_defence}").text
    assert "/acoes/lavrar" in fiscal.get(f"/autos/{draft}").text
    gestor_draft = gestor.get(f"/autos/{draft}")
    assert gestor_draft.status_code == 200 and "/acoes/" not in gestor_draft.text
    # (the operator does not see the draft at all: test_an_operator_does_not_see_its_own_companys_drafts)
    assert operator.get(f"/autos/{draft}").status_code == 404
    operator_lavrado = operator.get(f"/autos/{lavrado}")
    assert operator_lavrado.status_code == 200 and "/acoes/" not in operator_lavrado.text  # nothing before ciência
    assert "/acoes/defesa" in operator.get(f"/autos/{notified}").text
    # the fiscal's pages are the fiscal's
    for url in ("/ocorrencias", "/infracoes/nova"):
        assert operator.get(url).status_code == 403
    assert gestor.get("/infracoes/nova").status_code == 403
    assert operator.get("/ocorrencias.jsonl").status_code == 403
    assert operator.post("/ocorrencias", {"kind": "accident", "start": "2026-12-10T10:00",
                                          "end": "2026-12-10T11:00"}).status_code == 403
    assert gestor.post("/infracoes/nova", {"code": "A-02"}).status_code == 403
    assert kit.snapshot() == before


@pytest.mark.parametrize("name, content, declared, status", [
    ("defesa.exe", b"MZ\x90\x00\x03\x00\x00\x00" + b"\x00" * 64, "application/x-msdownload", 415),
    ("defesa.pdf", b"<!DOCTYPE html><html><script>alert(1)</script></html>", "application/pdf", 415),
    ("defesa.html", b"<html><body>oi</body></html>", "text/html", 415),
    ("disco.pdf", b"\x89PNG\r\n\x1a\n" + b"\x00" * 32, "application/pdf", 415),  # a PNG named .pdf
    ("disco.png", b"%PDF-1.4 " + b"x" * 32, "image/png", 415),  # a PDF declared as PNG
    ("vazio.pdf", b"", "application/pdf", 415),
])
def test_uploads_of_the_wrong_type_are_refused(kit, browser, name, content, declared, status):
    notified = kit.dockets_of("TRD")[2]
    operator = browser("op-trd")
    before = kit.snapshot()
    response = operator.post(f"/autos/{notified}/acoes/defesa", {"on": kit.today(), "texto": "Minha defesa."},
                             files=[("anexos", ("ok.pdf", kit.PDF, "application/pdf")),
                                    ("anexos", (name, content, declared))])
    assert response.status_code == status, response.text
    assert "Arquivo recusado" in response.text
    assert kit.snapshot() == before
    assert kit.status(notified).stage == "notificado"


def test_oversize_uploads_are_refused(kit, browser, make_app):
    notified = kit.dockets_of("TRD")[2]
    operator = browser("op-trd")
    before = kit.snapshot()
    limit = 10 * 1024 * 1024
    big = b"%PDF-1.4\n" + b"0" * (limit - 8)
    assert len(big) == limit + 1
    response = operator.post(f"/autos/{notified}/acoes/defesa", {"on": kit.today(), "texto": "Minha defesa."},
                             files=[("anexos", ("grande.pdf", big, "application/pdf"))])
    assert response.status_code == 413
    assert "excede o limite" in response.text
    # a request body above the app's limit is cut before it is read
    small = browser("op-trd", application=make_app(max_upload_bytes=1024))
    response = small.post(f"/autos/{notified}/acoes/defesa", {"on": kit.today(), "texto": "x"},
                          files=[("anexos", ("grande.pdf", b"%PDF-" + b"0" * (2 * 1024 * 1024), "application/pdf"))])
    assert response.status_code == 413
    # too many files
    response = operator.post(f"/autos/{notified}/acoes/defesa", {"on": kit.today(), "texto": "x"},
                             files=[("anexos", (f"a{i}.pdf", kit.PDF, "application/pdf")) for i in range(6)])
    assert response.status_code == 400
    assert kit.snapshot() == before


def test_accepted_uploads_are_stored_by_their_content(kit, browser):
    notified = kit.dockets_of("TRD")[2]
    operator = browser("op-trd")
    files = [("anexos", ("../../etc/disco <1>.pdf", kit.PDF, "application/pdf")),
             ("anexos", ("C:\\fotos\\ônibus.PNG", kit.PNG, "application/octet-stream")),
             ("anexos", ("foto.jpeg", kit.JPEG, "image/jpeg"))]
    response = operator.post(f"/autos/{notified}/acoes/defesa", {"on": kit.today(), "texto": "Defesa."}, files=files)
    assert response.status_code == 303, response.text
    with kit.sessions() as session:
        stored = list(session.scalars(select(Attachment).where(Attachment.docket_id == notified)
                                      .order_by(Attachment.id)))
    assert [(a.filename, a.content_type) for a in stored] == [
        ("disco _1_.pdf", "application/pdf"), ("ônibus.PNG", "image/png"), ("foto.jpeg", "image/jpeg")]
    for attachment, (_, (_, data, _)) in zip(stored, files):
        response = operator.get(f"/autos/{notified}/anexos/{attachment.id}")
        assert response.status_code == 200
        assert response.content == data
        assert response.headers["content-type"] == attachment.content_type
        assert response.headers["content-disposition"].startswith("attachment;")
        assert response.headers["x-content-type-options"] == "nosniff"
        assert attachment.sha256 == hashlib.sha256(data).hexdigest()
    # another operator, and the gestor, see what they may
    assert browser("op-vnv").get(f"/autos/{notified}/anexos/{stored[0].id}").status_code == 404
    assert browser("gestor").get(f"/autos/{notified}/anexos/{stored[0].id}").content == kit.PDF


def test_sessions_expire(kit, browser):
    fiscal = browser("fiscal")
    docket = kit.dockets_of("TRD")[0]
    kit.clock.advance(hours=7, minutes=59)
    assert fiscal.get("/autos").status_code == 200
    kit.clock.advance(minutes=2)
    response = fiscal.get("/autos")
    assert response.status_code == 303 and response.headers["location"] == "/entrar"
    assert fiscal.get(f"/autos/{docket}/auto.pdf").status_code == 401
    assert kit.web_sessions() == []  # the expired session was deleted
    # logging in again works
    assert fiscal.login("fiscal").status_code == 303
    assert fiscal.get("/autos").status_code == 200


def test_logout_ends_the_session(kit, browser):
    fiscal = browser("fiscal")
    cookie = fiscal.client.cookies.get("__Host-fiscaliza_sessao")
    assert cookie
    (row,) = kit.web_sessions()
    assert row.token_sha256 == hashlib.sha256(cookie.encode()).hexdigest()  # only the hash is stored
    assert cookie not in (row.token_sha256, row.csrf_token)
    # the cookie set by hand in another client reaches the server (so the replay below tests it)
    borrowed = browser()
    borrowed.client.cookies.set("__Host-fiscaliza_sessao", cookie, domain="testserver.local")  # the jar's name for a dotless host
    assert borrowed.get("/autos").status_code == 200
    response = fiscal.post("/sair")
    assert response.status_code == 303 and response.headers["location"] == "/entrar"
    assert "Max-Age=0" in response.headers["set-cookie"]
    assert kit.web_sessions() == []
    # the old cookie, replayed, is worth nothing
    replay = browser()
    replay.client.cookies.set("__Host-fiscaliza_sessao", cookie, domain="testserver.local")  # the jar's name for a dotless host
    assert replay.get("/autos").status_code == 303
    assert replay.get(f"/autos/{kit.dockets_of('TRD')[0]}/auto.pdf").status_code == 401


def test_cookies_and_security_headers(kit, browser):
    anonymous = browser()
    page = anonymous.get("/entrar")
    login_cookie = page.headers["set-cookie"]
    assert login_cookie.startswith("__Host-fiscaliza_entrada=")
    token = kit.CSRF.search(page.text).group(1)
    response = anonymous.client.post("/entrar", data={"username": "op-trd", "password": kit.PASSWORD,
                                                      "csrf_token": token})
    session_cookie = next(c for c in response.headers.get_list("set-cookie") if "fiscaliza_sessao" in c)
    assert session_cookie.startswith("__Host-fiscaliza_sessao=")
    for flag in ("HttpOnly", "Secure", "SameSite=strict", "Path=/"):
        assert flag in session_cookie and flag in login_cookie
    assert "Domain" not in session_cookie
    docket = kit.dockets_of("TRD")[0]
    responses = [anonymous.get("/autos"), anonymous.get(f"/autos/{docket}"), anonymous.get(f"/autos/{docket}/auto.pdf"),
                 anonymous.get("/autos/999999"), page]
    for response in responses:
        headers = response.headers
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        # scripts only from the app's own files (the detour map): nothing inline, no other origin
        assert "script-src 'self';" in headers["content-security-policy"]
        assert not any(word in headers["content-security-policy"] for word in ("unsafe", "http", "data:", "*"))
        assert headers["cache-control"] == "no-store"
        assert "strict-transport-security" in headers
    assert "<script" not in responses[1].text and " style=" not in responses[1].text
    assert anonymous.get("/static/style.css").status_code == 200


def test_insecure_cookies_when_configured(kit, make_app, browser):
    plain = browser(application=make_app(secure_cookies=False))
    response = plain.get("/entrar")
    assert response.headers["set-cookie"].startswith("fiscaliza_entrada=")
    assert "Secure" not in response.headers["set-cookie"]


def test_deactivated_users_lose_their_sessions(kit, browser):
    from dockets.store import User

    operator = browser("op-trd")
    with kit.sessions.begin() as session:
        session.scalar(select(User).where(User.username == "op-trd")).active = False
    assert operator.get("/autos").status_code == 303


def test_ids_out_of_range_are_not_found(browser):
    fiscal = browser("fiscal")
    for url in ("/autos/0", "/autos/-1", "/autos/abc", f"/autos/{2**70}", f"/autos/{2**70}/auto.pdf",
                "/autos/1/graficos/outro.png", "/autos/1/anexos/abc", "/nada"):
        assert fiscal.get(url).status_code == 404, url
    assert fiscal.post(f"/autos/{2**70}/acoes/lavrar", {"on": "2026-12-02"}).status_code == 404


def test_an_act_is_dated_by_the_servers_clock_whatever_the_form_says(kit, browser):
    # before: the form's date was the act's. Today is 16/12/2026 (the kit's clock)
    fiscal = browser("fiscal")
    draft = kit.dockets_of("TRD")[3]
    response = fiscal.post(f"/autos/{draft}/acoes/lavrar", {"on": "2026-12-02"})
    assert response.status_code == 303
    assert kit.status(draft).lavrado_em == dt.date(2026, 12, 16)


def test_a_defence_backdated_into_its_deadline_is_refused(kit, browser):
    # notified 02/12: the defence term (10 dias úteis) runs to 17/12; today is 23/12. Before,
    # a defence "dated" 07/12 was accepted seven weeks late; the date is the server's now
    draft = kit.dockets_of("TRD")[3]
    kit.act("fiscal", draft, workflow.Lavrar(on=dt.date(2026, 12, 2)))
    kit.act("fiscal", draft, workflow.Notificar(on=dt.date(2026, 12, 2)))
    kit.clock.advance(days=7)
    assert workflow.deadlines(kit.status(draft), kit.calendar).defesa == dt.date(2026, 12, 17)
    before = kit.snapshot()
    response = browser("op-trd").post(f"/autos/{draft}/acoes/defesa", {"on": "2026-12-07", "texto": "Defesa."})
    assert response.status_code == 409 and "Prazo de defesa encerrado" in response.text
    assert kit.snapshot() == before


def test_only_the_gestor_registers_a_paper_act_late_with_protocol_and_reason(kit, browser):
    draft = kit.dockets_of("TRD")[3]
    kit.act("fiscal", draft, workflow.Lavrar(on=dt.date(2026, 12, 2)))
    before = kit.snapshot()
    late = {"registro_tardio": "1", "on": "2026-12-03", "meio": "postal", "protocolo": "AR 123",
            "justificativa": "O aviso de recebimento voltou dos Correios em 15/12."}
    # a fiscal backdating the ciência (so that the operator's term has already run): refused
    assert browser("fiscal").post(f"/autos/{draft}/acoes/ciencia", late).status_code == 403
    gestor = browser("gestor")
    tomorrow = (dt.date.fromisoformat(kit.today()) + dt.timedelta(days=1)).isoformat()
    for change, message in (({"protocolo": ""}, "protocolo"), ({"justificativa": ""}, "Justifique"),
                            ({"on": tomorrow}, "posterior a hoje"), ({"on": "2026-11-30"}, "anterior à data"),
                            ({"on": ""}, "Informe a data")):
        response = gestor.post(f"/autos/{draft}/acoes/ciencia", {**late, **change})
        assert response.status_code == 400 and message in response.text, change
    assert kit.snapshot() == before
    # the gestor's late registration of the AR: its own date, in the history with the protocol
    assert gestor.post(f"/autos/{draft}/acoes/ciencia", late).status_code == 303
    assert kit.status(draft).notificado_em == dt.date(2026, 12, 3)
    history = gestor.get(f"/autos/{draft}").text
    assert "Registro tardio de ato em papel: ato de 03/12/2026, protocolo nº AR 123, registrado em 16/12/2026" \
        in history
    # an act that is no paper act is never registered late
    assert gestor.post(f"/autos/{draft}/acoes/julgar-defesa", {**late, "decisao": "procedente",
                                                              "fundamentacao": "x"}).status_code == 403

def test_an_unexpected_error_is_a_page_with_the_security_headers(browser, monkeypatch):
    # before: a 500 (deeply nested geometry, year 9999) came from outside the middleware,
    # without the CSP, no-sniff and framing headers
    import web.views

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    fiscal = browser("fiscal")
    fiscal.client._transport.raise_server_exceptions = False  # answer as a server does, not re-raise
    monkeypatch.setattr(web.views, "docket_rows", broken)
    response = fiscal.get("/autos")
    assert response.status_code == 500
    assert "Erro interno" in response.text and "a bug" not in response.text
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"
    assert "default-src" in response.headers["content-security-policy"]
