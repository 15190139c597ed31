"""The issue's scenario in a real browser (Playwright driving Debian's headless Chromium):
an operator opens its auto, sees the gráficos and files a defence; the gestor judges it;
the operator sees the decision and the recurso deadline.

The app runs under uvicorn in a background thread on a free port of 127.0.0.1.
Screenshots go to /tmp/fiscaliza-browser-*.png."""

from __future__ import annotations

import datetime as dt
import socket
import threading
import time
from pathlib import Path

import pytest

from dockets import workflow

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium "
                                                     "(apt-get install chromium); the browser test needs it"),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def serve():
    """serve(app) -> the base URL of `app` under uvicorn on a free port of 127.0.0.1; stopped
    at the end of the test."""
    import uvicorn

    servers = []

    def start(app) -> str:
        port = _free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                               lifespan="off"))
        thread = threading.Thread(target=server.run, name="fiscaliza-web-test", daemon=True)
        thread.start()
        servers.append((server, thread))
        deadline = time.monotonic() + 30
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                pytest.fail("the web app did not start under uvicorn")
            time.sleep(0.05)
        return f"http://127.0.0.1:{port}"

    yield start
    for server, thread in servers:
        server.should_exit = True
        thread.join(timeout=15)


@pytest.fixture
def live_server(kit, make_app, serve):
    """(base URL, the auto of the scenario): TRD's D-11, lavrado and notified through the service layer."""
    d11 = next(d for d in kit.dockets_of("TRD") if kit.code(d) == "D-11")
    kit.act("fiscal", d11, workflow.Lavrar(on=dt.date(2026, 12, 2)), render=True)
    kit.act("fiscal", d11, workflow.Notificar(on=dt.date(2026, 12, 3)), note="Ciência por recibo.")
    kit.clock.now = dt.datetime(2026, 12, 4, 14, 0, tzinfo=dt.UTC)  # 04/12/2026 11:00 in João Neiva
    return serve(make_app(secure_cookies=False)), d11  # plain HTTP on 127.0.0.1


@pytest.fixture
def page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="pt-BR")
            yield context.new_page()
            context.close()
        finally:
            browser.close()


def _log_in(page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/entrar")
    page.get_by_label("Usuário").fill(username)
    page.get_by_label("Senha").fill(password)
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(f"{base}/autos")


def _log_out(page, base: str) -> None:
    page.get_by_role("button", name="Sair").click()
    page.wait_for_url(f"{base}/entrar")


def _watch(page) -> list[str]:
    """Console errors (a CSP violation is one) and failed loads, as the page goes."""
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("response", lambda response: errors.append(f"{response.status} {response.url}")
            if response.status >= 400 else None)
    return errors


def test_operator_defends_and_gestor_judges(live_server, page, kit):
    from playwright.sync_api import expect

    base, d11 = live_server
    errors = _watch(page)

    # The operator logs in and opens its auto from the list.
    _log_in(page, base, "op-trd", kit.PASSWORD)
    expect(page.get_by_role("heading", name="Autos de infração", exact=True)).to_be_visible()
    expect(page.locator("header.site")).to_contain_text("Diego Alves")
    page.screenshot(path="/tmp/fiscaliza-browser-lista.png", full_page=True)
    page.get_by_role("link", name="0001/2026").click()
    page.wait_for_url(f"{base}/autos/{d11}")
    expect(page.get_by_role("heading", level=1)).to_have_text("Auto de infração nº 0001/2026")
    expect(page.locator(".summary .stage")).to_have_text("Notificado")

    # The three gráficos are there and loaded.
    charts = page.locator("figure.chart img")
    expect(charts).to_have_count(3)
    page.wait_for_function("Array.from(document.querySelectorAll('figure.chart img')).every(i => i.complete)")
    widths = charts.evaluate_all("images => images.map(i => i.naturalWidth)")
    assert len(widths) == 3 and all(w > 0 for w in widths), widths
    page.screenshot(path="/tmp/fiscaliza-browser-auto.png", full_page=True)

    # The defence, with the operator's own tachograph disc as a PDF.
    defence = page.locator(f'form[action="/autos/{d11}/acoes/defesa"]')
    defence.get_by_label("Texto da defesa").fill("O desvio ocorreu por interdição da Rua Cachoeiro pela Defesa Civil.")
    defence.get_by_label("Anexos (opcional)").set_input_files(
        files=[{"name": "disco-JN-2011.pdf", "mimeType": "application/pdf", "buffer": kit.PDF}])
    defence.get_by_role("button", name="Apresentar defesa").click()
    page.wait_for_url(f"{base}/autos/{d11}?feito=defesa")
    expect(page.get_by_role("status")).to_have_text("Ato registrado: Apresentar defesa.")
    expect(page.locator(".summary .stage")).to_have_text("Defesa apresentada")
    expect(page.get_by_role("link", name="disco-JN-2011.pdf").first).to_be_visible()
    _log_out(page, base)

    # The gestor judges: procedente.
    _log_in(page, base, "gestor", kit.PASSWORD)
    page.goto(f"{base}/autos/{d11}")
    judgment = page.locator(f'form[action="/autos/{d11}/acoes/julgar-defesa"]')
    judgment.get_by_label("Auto procedente", exact=False).check()
    judgment.get_by_label("Fundamentação").fill("Não há registro de interdição na data; o desvio não se justifica.")
    judgment.get_by_role("button", name="Registrar julgamento").click()
    page.wait_for_url(f"{base}/autos/{d11}?feito=julgar-defesa")
    expect(page.locator(".summary .stage")).to_have_text("Julgado procedente")
    _log_out(page, base)

    # The operator sees the decision and the recurso deadline.
    _log_in(page, base, "op-trd", kit.PASSWORD)
    page.goto(f"{base}/autos/{d11}")
    status = kit.status(d11)
    assert status.stage is workflow.Stage.JULGADO_PROCEDENTE
    recurso = workflow.deadlines(status, kit.calendar).recurso
    expect(page.locator(".summary .stage")).to_have_text("Julgado procedente")
    expect(page.get_by_role("row", name="Prazo de recurso")).to_contain_text(kit.br(recurso))
    expect(page.locator("table.history")).to_contain_text("Decisão: auto julgado procedente (multa mantida)")
    expect(page.locator(f'form[action="/autos/{d11}/acoes/recurso"]')).to_be_visible()
    # the judgment as kept at the act, with the Órgão's signature beside it
    expect(page.get_by_role("link", name="Baixar o julgamento da defesa (PDF)")).to_be_visible()
    expect(page.locator(f'a[href="/autos/{d11}/julgamento.pdf.assinatura.json"]')).to_be_visible()
    page.screenshot(path="/tmp/fiscaliza-browser-decisao.png", full_page=True)
    assert errors == []  # no CSP violations or failed loads


def test_a_fiscal_draws_a_detour_on_the_itinerary_map(kit, make_app, serve, page):
    """The detour drawn by clicking on the itinerary (vector shape and stops, no tiles)
    reaches the store as GeoJSON, under the app's strict CSP."""
    import json

    from playwright.sync_api import expect
    from sqlalchemy import select

    from dockets.store import Occurrence
    from gtfs import load_feed
    from samples import joao_neiva

    base = serve(make_app(secure_cookies=False, feed=load_feed(joao_neiva()[0])))
    errors = _watch(page)
    _log_in(page, base, "fiscal", kit.PASSWORD)
    page.goto(f"{base}/ocorrencias")
    form = page.locator('form[action="/ocorrencias"]')
    form.get_by_label("Tipo").select_option("authorized_detour")
    form.get_by_label("Início").fill("2026-12-10T06:00")
    form.get_by_label("Fim").fill("2026-12-12T22:00")
    form.get_by_label("Linha (opcional)").fill("201")
    form.get_by_label("Itinerário mostrado").select_option(
        label="Linha 201 — Centro – Vila Nova, sentido Vila Nova")
    area = page.locator("#mapa-desvio")
    # the itinerary as a vector line and its 11 stops as circles (Leaflet's SVG renderer)
    expect(area.locator("svg path")).to_have_count(1 + 11)
    box = area.bounding_box()
    clicks = [(0.3, 0.3), (0.5, 0.6), (0.7, 0.4)]  # left to right; up, down, up
    for fx, fy in clicks:
        area.click(position={"x": box["width"] * fx, "y": box["height"] * fy})
    status = page.locator("#desvio-situacao")
    expect(status).to_have_text("3 pontos marcados: caminho do desvio pronto.")
    # an area closes the ring; back to the path, which is what is registered
    form.get_by_label("área do desvio (polígono)").check()
    polygon = json.loads(page.locator("#geometry").input_value())
    assert polygon["type"] == "Polygon" and len(polygon["coordinates"][0]) == 4
    assert polygon["coordinates"][0][0] == polygon["coordinates"][0][-1]
    form.get_by_label("caminho do desvio (linha)").check()
    page.screenshot(path="/tmp/fiscaliza-browser-desvio.png", full_page=True)
    form.get_by_label("Observação").fill("Obra na Rua Cachoeiro")
    form.get_by_role("button", name="Registrar ocorrência").click()
    page.wait_for_url(f"{base}/ocorrencias")
    expect(page.locator("table.data")).to_contain_text("Desvio autorizado (com geometria)")

    with kit.sessions() as session:
        (occurrence,) = session.scalars(select(Occurrence)).all()
    assert (occurrence.kind, occurrence.route_id, occurrence.note) == ("authorized_detour", "201",
                                                                       "Obra na Rua Cachoeiro")
    assert occurrence.geometry["type"] == "LineString"
    (lon0, lat0), (lon1, lat1), (lon2, lat2) = occurrence.geometry["coordinates"]
    # x grows with longitude, y downwards with latitude: the clicks' order and layout survive
    assert lon0 < lon1 < lon2 and lat1 < lat2 < lat0
    # and they lie around the itinerary the map was fitted to (its bounding box, widened by its size)
    from web.itineraries import itineraries

    line = next(i for i in itineraries(load_feed(joao_neiva()[0])) if (i["route_id"], i["direction_id"]) == ("201", 0))
    lats, lons = [p[0] for p in line["line"]], [p[1] for p in line["line"]]
    dlat, dlon = max(lats) - min(lats), max(lons) - min(lons)
    for lon, lat in occurrence.geometry["coordinates"]:
        assert min(lats) - dlat < lat < max(lats) + dlat and min(lons) - dlon < lon < max(lons) + dlon
    assert errors == []  # no CSP violation, no failed load (Leaflet's files included)


# --- the whole contest on the demo's own store, with today's date -------------------------------

@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """What `fiscaliza demo` writes, for its service day before today: the autos lavrados
    today by the demo's fiscal, the demo accounts and keys (DemoDockets)."""
    from zoneinfo import ZoneInfo

    from fiscaliza.demo import DEMO_FAULTS, DEMO_INPUT_FAULTS, simulate_files, write_demo_dockets
    from fiscaliza.replay import ReplayInputs, replay
    from gtfs import load_feed
    from samples import joao_neiva
    from simulator import SimulationSettings

    feed_path, fleet_path = joao_neiva()
    today = dt.datetime.now(ZoneInfo("America/Sao_Paulo")).date()
    past = [d for d in load_feed(feed_path).dates if d < today]
    if not past:
        pytest.skip(f"the sample feed has no service day before {today}")
    day = max(past)
    root = tmp_path_factory.mktemp("demo")
    simulated = simulate_files(None, None, SimulationSettings(day, day, 1, DEMO_FAULTS, DEMO_INPUT_FAULTS),
                               root / "telemetry")
    inputs = ReplayInputs(feed=feed_path, fleet=fleet_path, tachograph=simulated.tachograph,
                          catraca=simulated.catraca)
    dockets = write_demo_dockets(inputs, replay(inputs), root / "autos", day)
    assert dockets.lavrados
    return dockets


def test_the_whole_contest_on_the_demo_store_today(demo, serve, page):
    """Ciência, defence with an attachment, judgment, recurso, its judgment and the payment,
    each by the role the law gives it, every act dated today by the server's real clock
    (the workflow lets them all fall on one day: a date may equal the last act's, and no
    act waits for a deadline to end) — on the store and accounts `fiscaliza demo` made,
    served as `fiscaliza serve` serves it."""
    from zoneinfo import ZoneInfo

    from playwright.sync_api import expect
    from sqlalchemy import select

    from dockets import service
    from dockets.anchors import FileAnchorLog, default_destination
    from dockets.audit import load_audit_key
    from dockets.signing import load_key
    from dockets.store import Docket
    from web.app import create_app
    from kernel.settings import Settings
    from web.server import build_config

    url = f"sqlite:///{demo.database}"
    config = build_config(url, Settings().static.inputs(), secure_cookies=False, audit_key=load_audit_key(demo.audit_key),
                          anchors=FileAnchorLog(Path(default_destination(url, anchors=None, kafka_bootstrap=None))),
                          signer=load_key(demo.signing_key))
    today = dt.datetime.now(ZoneInfo(config.timezone)).date()
    with config.sessions() as session:
        docket = session.scalars(select(Docket).where(Docket.operator_id == "TRD").order_by(Docket.number)).first()
        docket_id, label = docket.id, docket.label
        assert service.status_of(docket).lavrado_em == today
    passwords = {username: password for username, _, password in demo.accounts}
    base = serve(create_app(config))
    errors = _watch(page)
    auto = f"{base}/autos/{docket_id}"

    def act(username: str, slug: str, fill) -> None:
        _log_in(page, base, username, passwords[username])
        page.goto(auto)
        # today's act, not the gestor's late registration of a paper one (same action, class "late")
        form = page.locator(f'form[action="/autos/{docket_id}/acoes/{slug}"]:not(.late)')
        fill(form)
        form.locator('button[type="submit"]').click()
        page.wait_for_url(f"{auto}?feito={slug}")
        expect(page.get_by_role("status")).to_contain_text("Ato registrado")

    # the fiscal registers the operator's ciência, today
    act("fiscal", "ciencia", lambda form: form.get_by_label("entrega ao autuado", exact=False).check())
    expect(page.locator(".summary .stage")).to_have_text("Notificado")
    _log_out(page, base)

    # the operator's list puts the defence first, with its days left; the payment is secondary
    defesa = config.calendar.add_business_days(today, 10)
    pagamento = config.calendar.add_calendar_days(today, 10)
    _log_in(page, base, "trd", passwords["trd"])
    row = page.get_by_role("row", name=label)
    expect(row.locator("strong.term-now")).to_have_text(
        f"Prazo de defesa: até {defesa:%d/%m/%Y} (faltam 10 dias úteis)")
    expect(row).to_contain_text(f"Prazo de pagamento: até {pagamento:%d/%m/%Y}")
    page.screenshot(path="/tmp/fiscaliza-browser-demo-lista.png", full_page=True)
    _log_out(page, base)

    def defence(form):
        form.get_by_label("Texto da defesa").fill("O desvio seguiu a orientação do agente de trânsito no local.")
        form.get_by_label("Anexos (opcional)").set_input_files(
            files=[{"name": "boletim.pdf", "mimeType": "application/pdf", "buffer": b"%PDF-1.4\n%%EOF\n"}])

    act("trd", "defesa", defence)
    expect(page.locator(".summary .stage")).to_have_text("Defesa apresentada")
    expect(page.locator(".summary strong.term-now")).to_have_text("nenhum: a defesa aguarda julgamento")
    _log_out(page, base)

    # the gestor reads the defence and its attachment beside the judgment form
    def judge(form):
        form.get_by_label("Auto procedente", exact=False).check()
        form.get_by_label("Fundamentação").fill("Não há registro de orientação do trânsito nem de ocorrência.")

    _log_in(page, base, "gestor", passwords["gestor"])
    page.goto(auto)
    beside = page.locator(".judge").filter(has=page.locator('form[action$="/acoes/julgar-defesa"]'))
    expect(beside.locator("article.pleading")).to_contain_text("orientação do agente de trânsito")
    with page.expect_download() as download:
        beside.get_by_role("link", name="boletim.pdf").click()
    assert Path(download.value.path()).read_bytes() == b"%PDF-1.4\n%%EOF\n"
    page.screenshot(path="/tmp/fiscaliza-browser-demo-julgar.png", full_page=True)
    _log_out(page, base)
    act("gestor", "julgar-defesa", judge)
    expect(page.locator(".summary .stage")).to_have_text("Julgado procedente")
    _log_out(page, base)

    # the operator appeals; the recurso runs first now
    _log_in(page, base, "trd", passwords["trd"])
    page.goto(auto)
    expect(page.locator(".summary strong.term-now")).to_have_text(
        f"Prazo de recurso: até {config.calendar.add_business_days(today, 10):%d/%m/%Y} (faltam 10 dias úteis)")
    _log_out(page, base)
    act("trd", "recurso", lambda form: form.get_by_label("Razões do recurso").fill("A decisão ignorou o boletim."))
    expect(page.locator(".summary .stage")).to_have_text("Recurso interposto")
    _log_out(page, base)

    # the titular (not the gestor who judged the defence: art. 7º § 3º) reads the recurso
    # beside its form and denies it: the fine is due
    def deny(form):
        form.get_by_label("Negar provimento", exact=False).check()
        form.get_by_label("Fundamentação").fill("O boletim não registra o desvio.")

    _log_in(page, base, "gestor", passwords["gestor"])
    page.goto(auto)
    expect(page.locator("form[action$='/acoes/julgar-recurso']")).to_have_count(0)
    _log_out(page, base)
    _log_in(page, base, "titular", passwords["titular"])
    page.goto(auto)
    expect(page.locator(".judge article.pleading")).to_contain_text("A decisão ignorou o boletim.")
    _log_out(page, base)
    act("titular", "julgar-recurso", deny)
    expect(page.locator(".summary .stage")).to_have_text("Multa devida")
    expect(page.locator(".summary strong.term-now")).to_contain_text(
        f"Prazo de pagamento: até {config.calendar.add_calendar_days(today, 10):%d/%m/%Y}")
    _log_out(page, base)
    # the gestor registers the payment; the operator sees the auto paid
    act("gestor", "pagamento", lambda form: form.get_by_label("Comprovante ou guia", exact=False).fill("DAM 2026/123"))
    expect(page.locator(".summary .stage")).to_have_text("Pago")
    _log_out(page, base)
    _log_in(page, base, "trd", passwords["trd"])
    page.goto(auto)
    expect(page.locator(".summary .stage")).to_have_text("Pago")
    expect(page.locator("#acoes")).to_have_count(0)  # nothing left to do
    page.screenshot(path="/tmp/fiscaliza-browser-demo-pago.png", full_page=True)

    with config.sessions() as session:
        status = service.status_of(session.get(Docket, docket_id))
    assert status.stage.value == "pago"
    assert {status.lavrado_em, status.notificado_em, status.defesa_em, status.julgado_em, status.recurso_em,
            status.recurso_julgado_em, status.pago_em} == {today}
    assert errors == []


def test_the_operator_marks_disputed_readings_and_reads_the_rejudgment(live_server, page, kit):
    """The defence ticks three cited readings of its D-11 in the evidence table, gives the
    reason, and reads the auto re-judged without them (issue 30), under the app's CSP."""
    from playwright.sync_api import expect

    base, d11 = live_server
    errors = _watch(page)
    _log_in(page, base, "op-trd", kit.PASSWORD)
    page.goto(f"{base}/autos/{d11}")
    form = page.locator("#form-contestadas")
    boxes = form.locator('input[name="leituras"]')
    assert boxes.count() >= 3
    for n in (0, 1, 2):
        boxes.nth(n).check()
    form.get_by_label("Motivo da contestação").fill("Posições com erro de GPS na saída do terminal.")
    form.get_by_role("button", name="Contestar e reexaminar").click()
    page.wait_for_url(f"{base}/autos/{d11}?feito=leituras-contestadas#contestadas", timeout=60_000)
    block = page.get_by_role("region", name="Reexame sem as leituras contestadas")
    expect(block).to_contain_text("Sem as leituras contestadas, ")
    expect(block).to_contain_text("3 leituras contestadas são citadas pela constatação")
    expect(block).to_contain_text("fiscaliza verify")
    expect(page.locator("table.history")).to_contain_text("Leituras contestadas pela defesa")
    page.screenshot(path="/tmp/fiscaliza-browser-contestadas.png", full_page=True)
    assert errors == []


def _on_top(svg, selector: str, excluded=()) -> str:
    """The line of the first reading matching `selector` that no other point covers where a
    click lands (dense readings overlap), scrolled into view."""
    svg.scroll_into_view_if_needed()
    found = svg.evaluate("""(svg, [selector, excluded]) => {
        for (const c of svg.querySelectorAll(selector)) {
            const r = c.getBoundingClientRect();
            if (!excluded.includes(c.dataset.leitura)
                    && document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === c) {
                return c.dataset.leitura;
            }
        }
        return null;
    }""", [selector, list(excluded)])
    assert found, f"no {selector} to click"
    return found


def _marks_table(page):
    return page.locator("table", has=page.locator("th", has_text="Motivo"))


def test_the_operator_picks_disputed_readings_on_the_speed_chart_and_on_the_map(live_server, page, kit):
    """The defence clicks a cited reading on the speed chart (its table checkbox follows),
    then a reading the table does not list on the map, and submits each: the same marks the
    table makes, recorded by their bundle lines; a drag on the speed chart fills the span
    fields with the readings it covers, under the app's CSP (web/static/contestar.js)."""
    from playwright.sync_api import expect

    base, d11 = live_server
    errors = _watch(page)
    _log_in(page, base, "op-trd", kit.PASSWORD)
    page.goto(f"{base}/autos/{d11}")
    form = page.locator("#form-contestadas")
    chart, chart_map = page.locator("#grafico-contestar"), page.locator("#mapa-contestar")
    # one circle per reading on each, the same readings
    values = chart.locator("circle[data-leitura]").evaluate_all("cs => cs.map(c => c.dataset.leitura)")
    assert len(values) > 10 and sorted(values) == sorted(
        chart_map.locator("circle[data-leitura]").evaluate_all("cs => cs.map(c => c.dataset.leitura)"))

    # the speed chart: a cited reading, which the evidence table lists
    value = _on_top(chart, "circle.citada")
    cited = chart.locator(f'circle[data-leitura="{value}"]')
    cited.click()
    expect(cited).to_have_class("leitura citada contestada")
    expect(form.locator(f'input[type="checkbox"][value="{value}"]')).to_be_checked()
    expect(chart_map.locator(f'circle[data-leitura="{value}"]')).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#leituras-escolhidas")).to_have_text("1 leitura escolhida.")
    cited.click()  # a second click undoes it
    expect(form.locator(f'input[type="checkbox"][value="{value}"]')).not_to_be_checked()
    cited.click()
    form.get_by_label("Motivo da contestação").fill("Velocidade com erro do sensor.")
    form.get_by_role("button", name="Contestar e reexaminar").click()
    page.wait_for_url(f"{base}/autos/{d11}?feito=leituras-contestadas#contestadas", timeout=60_000)
    line = value.split(":")[1]
    expect(_marks_table(page)).to_contain_text(f"linha {line} do tacógrafo (tachograph.jsonl)")
    expect(page.locator(f'input[type="checkbox"][value="{value}"]')).to_be_disabled()  # já contestada

    # the map: a reading the finding does not cite, so the table has no checkbox for it
    listed = set(form.locator('input[type="checkbox"][name="leituras"]').evaluate_all("bs => bs.map(b => b.value)"))
    other = _on_top(chart_map, "circle.leitura:not(.citada)", excluded=listed)
    chart_map.locator(f'circle[data-leitura="{other}"]').click()
    expect(form.locator(f'input[type="hidden"][name="leituras"][value="{other}"]')).to_have_count(1)
    expect(chart.locator(f'circle[data-leitura="{other}"]')).to_have_class("leitura contestada")
    form.get_by_label("Motivo da contestação").fill("Posição fora da via: salto do GPS.")
    form.get_by_role("button", name="Contestar e reexaminar").click()
    page.wait_for_url(f"{base}/autos/{d11}?feito=leituras-contestadas#contestadas", timeout=60_000)
    expect(_marks_table(page)).to_contain_text(f"linha {other.split(':')[1]} do tacógrafo (tachograph.jsonl)")
    expect(_marks_table(page)).to_contain_text("Posição fora da via: salto do GPS.")

    # a drag across the speed chart: the span of the readings it covers
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.40, box["y"] + box["height"] * 0.5)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.50, box["y"] + box["height"] * 0.5, steps=5)
    page.mouse.up()
    start, end = form.locator("#contestar-inicio").input_value(), form.locator("#contestar-fim").input_value()
    assert start and end and start < end
    expect(form.locator("#contestar-veiculo")).not_to_have_value("")
    expect(page.locator("#leituras-escolhidas")).to_contain_text("Intervalo do tacógrafo de")
    form.get_by_label("Motivo da contestação").fill("Tacógrafo descalibrado neste trecho.")
    form.get_by_role("button", name="Contestar e reexaminar").click()
    page.wait_for_url(f"{base}/autos/{d11}?feito=leituras-contestadas#contestadas", timeout=60_000)
    expect(_marks_table(page)).to_contain_text(f"de {start[11:]} a {end[11:]}")
    page.screenshot(path="/tmp/fiscaliza-browser-escolher-leituras.png", full_page=True)
    assert errors == []
