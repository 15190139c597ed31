"""Fixtures of the web app's tests: a docket store made ONCE per session from a simulated
and replayed demo day of the João Neiva sample (2026-12-01, seed 1), copied for each test.

The demo day gives five dockets: four of Transportes Rio Doce (TRD: A-07, C-01, D-11,
D-21; the vehicle ones with their three gráficos) and one of Viação Neivense (VNV: D-13,
a route-level infraction with the map only).

They are drafts (awaiting lavratura), and drafts stay inside the Órgão Gerencial: an
operator sees only its autos lavrados (art. 5º, § 3º). A test that shows an operator one
of them lavra it first, through the service layer (`kit.act(..., workflow.Lavrar(...))`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import shutil
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sqlalchemy import func, select
from stores import TEST_AUDIT_KEY, open_test_store

from dockets import service, workflow
from dockets.calendar import BusinessCalendar
from dockets.store import (
    AppealPdf,
    Attachment,
    AuditEntry,
    Docket,
    DocketPdf,
    JudgmentPdf,
    Occurrence,
    User,
    WebSession,
)
from dockets.users import create_user
from kernel.policy import load_policy
from rules.joao_neiva.anexo_i import LAW

with warnings.catch_warnings():
    # Starlette 1.x would rather its TestClient ran on httpx2; httpx is what the project installs.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient` is deprecated")
    import fastapi.testclient  # noqa: F401

DEMO_DATE = dt.date(2026, 12, 1)
PASSWORD = "senha-de-teste-123"
# username -> (role, operator, full name, matrícula)
USERS = {
    "fiscal": ("fiscal", None, "Ana Souza", "F-0042"),
    "gestor": ("gestor", None, "Bruno Lima", "G-0007"),
    "titular": ("titular", None, "Elisa Prado", None),
    "op-vnv": ("operador", "VNV", "Carla Dias", None),
    "op-trd": ("operador", "TRD", "Diego Alves", None),
}
UTC = dt.UTC
CSRF = re.compile(r'name="csrf_token" value="([^"]*)"')
PDF_BYTES = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
PNG_BYTES = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
JPEG_BYTES = b"\xff\xd8\xff\xe0" + b"\x00" * 32


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: drives the web app in a real (headless) Chromium")


def calendar() -> BusinessCalendar:
    return BusinessCalendar.for_municipality(subdivision="ES",
                                             municipal_holidays=load_policy().policy.municipal_holidays,
                                             law=LAW)


def sample_fleet() -> dict:
    from kernel.fleet import load_fleet
    from samples import joao_neiva

    return load_fleet(joao_neiva()[1])


def _dispose(sessions) -> None:
    sessions.kw["bind"].dispose()


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory) -> Path:
    """The demo day's dockets (drafts with their evidence bundles) and the four users."""
    from dockets.sink import ingest_replay, records_of
    from engine.loading import load_context
    from fiscaliza.demo import DEMO_FAULTS, DEMO_INPUT_FAULTS, simulate_files
    from fiscaliza.replay import ReplayInputs, replay
    from samples import joao_neiva
    from simulator import SimulationSettings

    root = tmp_path_factory.mktemp("web-demo")
    simulated = simulate_files(None, None, SimulationSettings(DEMO_DATE, DEMO_DATE, 1, DEMO_FAULTS, DEMO_INPUT_FAULTS),
                               root / "telemetry")
    feed, fleet = joao_neiva()
    inputs = ReplayInputs(feed=feed, fleet=fleet, tachograph=simulated.tachograph, catraca=simulated.catraca)
    result = replay(inputs)
    path = root / "dockets.sqlite3"
    sessions = open_test_store(f"sqlite:///{path}")
    report = ingest_replay(sessions, inputs.static, inputs.telemetry, load_context(inputs), records_of(result.infractions))
    assert len(report.created) >= 2
    with sessions.begin() as session:
        operators = set(session.scalars(select(Docket.operator_id)))
        assert {"VNV", "TRD"} <= operators, operators
        for username, (role, operator, name, registration) in USERS.items():
            create_user(session, username=username, full_name=name, role=role, password=PASSWORD,
                        operator_id=operator, registration=registration)
    _dispose(sessions)
    return path


@pytest.fixture(scope="session")
def world_db(demo_db, tmp_path_factory) -> Path:
    """The demo day one step further, for the isolation tests: both operators have autos
    lavrados (with their PDFs), notified, and a defence with an attachment.

    TRD: its first auto with a defence and an attachment, the second lavrado, the third
    notificado, the fourth still a draft (which op-trd does not see). VNV: its auto with a
    defence and an attachment."""
    path = tmp_path_factory.mktemp("web-world") / "dockets.sqlite3"
    shutil.copyfile(demo_db, path)
    sessions = open_test_store(f"sqlite:///{path}", upgrade=False)
    on = dt.date(2026, 12, 2)
    trd, vnv = dockets_of(sessions, "TRD"), dockets_of(sessions, "VNV")
    assert len(trd) >= 4 and len(vnv) >= 1, (trd, vnv)
    for docket_id in (trd[0], trd[1], trd[2], vnv[0]):
        if docket_id in drafts_of(sessions, "TRD") + drafts_of(sessions, "VNV"):  # the demo's A-07 lavra its D-11
            act(sessions, "fiscal", docket_id, workflow.Lavrar(on=on), render=True)
    for docket_id in (trd[0], trd[2], vnv[0]):
        act(sessions, "fiscal", docket_id, workflow.Notificar(on=on + dt.timedelta(days=1)), note="Ciência por recibo.")
    for username, docket_id in (("op-trd", trd[0]), ("op-vnv", vnv[0])):
        act(sessions, username, docket_id, workflow.ApresentarDefesa(on=on + dt.timedelta(days=2)),
            note=f"Defesa de {username}", attachments=[(f"disco-{username}.pdf", "application/pdf",
                                                        PDF_BYTES + username.encode())])
    _dispose(sessions)
    return path


@pytest.fixture
def base_db(demo_db) -> Path:
    """The store each test starts from (a copy is made); test modules may override it."""
    return demo_db


@pytest.fixture
def anchors(tmp_path):
    from dockets.anchors import FileAnchorLog

    return FileAnchorLog(tmp_path / "ancoras.jsonl")


@pytest.fixture
def store(base_db, tmp_path, anchors):
    target = tmp_path / "dockets.sqlite3"
    shutil.copyfile(base_db, target)
    sessions = open_test_store(f"sqlite:///{target}", upgrade=False, anchors=anchors)
    yield sessions
    _dispose(sessions)


class Clock:
    """The app's "now" (aware UTC), settable by the tests."""

    def __init__(self, now: dt.datetime) -> None:
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta) -> None:
        self.now += dt.timedelta(**delta)


@pytest.fixture
def clock() -> Clock:
    # 16/12/2026 12:00 in João Neiva: every act of the tests' timelines is in the past.
    return Clock(dt.datetime(2026, 12, 16, 15, 0, tzinfo=UTC))


# --- acting through the service layer (fixtures' setup) ----------------------------------------

def actor(sessions, username: str) -> service.Actor:
    with sessions() as session:
        user = session.scalar(select(User).where(User.username == username))
        return service.Actor.of(user)


def pdf_renderer(sessions):
    from dockets import document

    def render(docket, bundle, audit_head):
        return document.render_pdf(docket, bundle, calendar=calendar(), issuer_name="Órgão Gerencial — teste",
                                   audit_head=audit_head)

    return render


def act(sessions, username: str, docket_id: int, action, *, note=None, attachments=(), render=False):
    with sessions.begin() as session:
        service.perform(session, actor(sessions, username), docket_id, action, calendar(), note=note,
                        attachments=attachments, renderer=pdf_renderer(sessions) if render else None)


def dockets_of(sessions, operator_id: str) -> list[int]:
    with sessions() as session:
        return list(session.scalars(select(Docket.id).where(Docket.operator_id == operator_id).order_by(Docket.id)))


def drafts_of(sessions, operator_id: str) -> list[int]:
    """An operator's dockets still awaiting lavratura (read from the store, not through
    the service's visibility rule that the tests check)."""
    with sessions() as session:
        return list(session.scalars(select(Docket.id).where(Docket.operator_id == operator_id,
                                                            Docket.stage == workflow.Stage.RASCUNHO.value)
                                    .order_by(Docket.id)))


def docket_code(sessions, docket_id: int) -> str:
    with sessions() as session:
        return session.get(Docket, docket_id).code


def status(sessions, docket_id: int) -> workflow.DocketStatus:
    with sessions() as session:
        return service.status_of(session.get(Docket, docket_id))


def snapshot(sessions) -> dict:
    """Everything an action could change."""
    with sessions() as session:
        return {
            "dockets": {d.id: (d.stage, d.status, d.number, d.year) for d in session.scalars(select(Docket))},
            "audit": session.scalar(select(func.count()).select_from(AuditEntry)),
            "attachments": session.scalar(select(func.count()).select_from(Attachment)),
            "pdfs": session.scalar(select(func.count()).select_from(DocketPdf)),
            "judgment_pdfs": session.scalar(select(func.count()).select_from(JudgmentPdf)),
            "appeal_pdfs": session.scalar(select(func.count()).select_from(AppealPdf)),
            "occurrences": session.scalar(select(func.count()).select_from(Occurrence)),
        }


def web_sessions(sessions) -> list[WebSession]:
    with sessions() as session:
        return list(session.scalars(select(WebSession)))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- the app through HTTP -----------------------------------------------------------------------

@dataclass
class Browser:
    """A TestClient with a logged-in user and the CSRF token of its session."""

    client: object
    username: str | None = None
    csrf: str = ""
    history: list = field(default_factory=list)

    def get(self, url: str, **kwargs):
        return self.client.get(url, **kwargs)

    def post(self, url: str, data: dict | None = None, *, files=None, csrf: bool = True):
        data = dict(data or {})
        if csrf and "csrf_token" not in data:
            data["csrf_token"] = self.csrf
        return self.client.post(url, data=data, files=files)

    def login(self, username: str, password: str = PASSWORD):
        page = self.client.get("/entrar")
        token = CSRF.search(page.text).group(1)
        response = self.client.post("/entrar", data={"username": username, "password": password,
                                                     "csrf_token": token})
        if response.status_code == 303:
            self.username = username
            self.csrf = CSRF.search(self.client.get("/autos").text).group(1)
        return response


@pytest.fixture
def make_app(store, clock, anchors, signing_key):
    from web.app import WebConfig, create_app

    def make(**overrides):
        config = WebConfig(**{"sessions": store, "calendar": calendar(), "policy": load_policy(), "clock": clock,
                              "secure_cookies": True,
                              "fleet": sample_fleet(), "signer": signing_key,
                              "audit_keys": {TEST_AUDIT_KEY.key_id: TEST_AUDIT_KEY}, "anchors": anchors,
                              **overrides})
        return create_app(config)

    return make


@pytest.fixture
def app(make_app):
    return make_app()


@pytest.fixture
def browser(app):
    """browser() -> a fresh anonymous Browser; browser("op-trd") -> logged in."""
    from fastapi.testclient import TestClient

    clients = []

    def make(username: str | None = None, *, application=None) -> Browser:
        client = TestClient(application or app, base_url="https://testserver", follow_redirects=False)
        clients.append(client)
        b = Browser(client)
        if username is not None:
            response = b.login(username)
            assert response.status_code == 303, response.text
        return b

    yield make
    for client in clients:
        client.close()


def today_iso(clock: Clock) -> str:
    return clock().astimezone(dt.timezone(dt.timedelta(hours=-3))).date().isoformat()


class Kit:
    """The helpers above, bound to the test's store (test modules cannot import conftest)."""

    PASSWORD = PASSWORD
    USERS = USERS
    PDF = PDF_BYTES
    PNG = PNG_BYTES
    JPEG = JPEG_BYTES
    CSRF = CSRF

    def __init__(self, sessions, clock: Clock) -> None:
        self.sessions = sessions
        self.clock = clock
        self.calendar = calendar()

    def act(self, username, docket_id, action, **kwargs):
        act(self.sessions, username, docket_id, action, **kwargs)

    def actor(self, username):
        return actor(self.sessions, username)

    def dockets_of(self, operator_id):
        return dockets_of(self.sessions, operator_id)

    def drafts_of(self, operator_id):
        return drafts_of(self.sessions, operator_id)

    def lavrados_of(self, operator_id):
        """What the operator's representative may see: its dockets that are not drafts."""
        drafts = set(self.drafts_of(operator_id))
        return [d for d in self.dockets_of(operator_id) if d not in drafts]

    def code(self, docket_id):
        return docket_code(self.sessions, docket_id)

    def status(self, docket_id):
        return status(self.sessions, docket_id)

    def snapshot(self):
        return snapshot(self.sessions)

    def web_sessions(self):
        return web_sessions(self.sessions)

    def today(self) -> str:
        return today_iso(self.clock)

    @staticmethod
    def sha256(data: bytes) -> str:
        return sha256(data)

    @staticmethod
    def br(d: dt.date) -> str:
        return d.strftime("%d/%m/%Y")


@pytest.fixture
def kit(store, clock) -> Kit:
    return Kit(store, clock)
