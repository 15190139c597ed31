"""The web app: autos de infração for the Órgão Gerencial's fiscais and gestores and for the
operators' representatives (FastAPI + Jinja2, server-rendered pages; the one script, the
detour map of the occurrences form, is a static file).

`create_app(WebConfig(...))` builds an app over a docket store; nothing is global. Every
docket, file and action goes through `dockets.service`, which scopes an operator to its
own autos lavrados: another operator's docket, and a draft not yet lavrado (even the
operator's own), answer exactly like a nonexistent one (404).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

from fastapi import Depends, FastAPI, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import (
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from dockets import audit as audit_log
from dockets import service, workflow
from dockets.anchors import AnchorLog
from dockets.audit import AuditKey
from dockets.calendar import BusinessCalendar
from dockets.config import issuer_name, municipality_name
from dockets.document import PDF_CHART_KINDS, wording
from dockets.service import DocketError, Forbidden, NotFound, utcnow
from dockets.signing import SigningKey
from dockets.store import Docket, DocketPdf, EvidenceBundle, Operator
from gtfs import Feed
from kernel.policy import Policy
from ops import gtfs_rt
from ops.store import LiveVehicle
from rules.anexo_i import ARTICLES
from web import auth, fiscal, views
from web.format import ROLE_LABELS, as_aware, datetime_br
from web.forms import ACTION_FORMS, CIENCIA_MEANS, SLUG_OF, FormError, build_action, late_registration
from web.itineraries import itineraries
from web.security import (
    JPEG,
    MAX_FILES,
    PDF,
    PNG,
    BodyLimit,
    BodyTooLarge,
    SecurityHeaders,
    Upload,
    UploadRefused,
    check_upload,
    new_token,
    same_token,
    security_headers,
)
from web.throttle import LoginThrottle

log = logging.getLogger(__name__)

PAGE_SIZE = 100
MAX_ID = 2**31 - 1
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class WebConfig:
    sessions: sessionmaker[Session]
    calendar: BusinessCalendar
    policy: Policy  # the municipality's: its names, timezone and UFIR value
    max_upload_bytes: int = 10 * 1024 * 1024
    allowed_upload_types: frozenset[str] = frozenset({PDF, PNG, JPEG})
    session_hours: float = 8
    secure_cookies: bool = True
    fleet: Mapping[str, Any] = field(default_factory=dict)  # vehicle_id -> kernel.fleet.Vehicle
    clock: Callable[[], dt.datetime] = utcnow  # aware UTC "now": sessions and the default date of acts
    chart_cache_size: int = 64
    # Login throttling (web.throttle): after this many failed logins within the window, a
    # username (or a client address) is refused for the lockout without checking passwords.
    login_max_failures: int = 5
    login_max_failures_per_ip: int = 20
    login_window_minutes: float = 15
    login_lockout_minutes: float = 15
    # The Órgão's key signs each PDF issued at lavratura; the audit keys (by key id, the
    # current one first) and the anchor log let the gestor verify the record.
    signer: SigningKey | None = None
    audit_keys: Mapping[str, AuditKey] = field(default_factory=dict)
    anchors: AnchorLog | None = None
    # the static GTFS feed: with it, the public GTFS-Realtime feed is served from the live tables
    feed: Feed | None = None

    @property
    def issuer_name(self) -> str:
        return issuer_name(self.policy)

    @property
    def municipality(self) -> str:
        return municipality_name(self.policy)

    @property
    def timezone(self) -> str:
        return self.policy.policy.timezone

    @property
    def ufir_brl(self) -> float:  # for manual infractions
        return self.policy.policy.ufir_brl


# --- errors the handlers turn into responses -----------------------------------------------

class LoginRequired(Exception):
    """A page without a valid session: 303 to the login form."""


class FileLoginRequired(Exception):
    """A file without a valid session: 401, no content."""


class CsrfRefused(Exception):
    pass


class _Web:
    """Per-app state: the configuration, the templates, the chart cache and the login throttle."""

    def __init__(self, config: WebConfig) -> None:
        self.config = config
        self.tz = ZoneInfo(config.timezone)
        self.cookie = "__Host-fiscaliza_sessao" if config.secure_cookies else "fiscaliza_sessao"
        self.login_cookie = "__Host-fiscaliza_entrada" if config.secure_cookies else "fiscaliza_entrada"
        self.env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(),
                               undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
        self.env.globals.update(role_labels=ROLE_LABELS, municipality=config.municipality,
                                issuer_name=config.issuer_name, law=config.policy.policy.name,
                                timezone=config.timezone)
        self._charts: OrderedDict[tuple, bytes | None] = OrderedDict()
        self.throttle = LoginThrottle(max_failures=config.login_max_failures,
                                      max_failures_per_ip=config.login_max_failures_per_ip,
                                      window=dt.timedelta(minutes=config.login_window_minutes),
                                      lockout=dt.timedelta(minutes=config.login_lockout_minutes))
        self._lock = threading.Lock()
        self._itineraries: list[dict] | None = None

    def itineraries(self) -> list[dict]:
        """The feed's itineraries for the detour map (none without a feed), computed once."""
        if self.config.feed is None:
            return []
        if self._itineraries is None:
            self._itineraries = itineraries(self.config.feed)
        return self._itineraries

    def now(self) -> dt.datetime:
        return as_aware(self.config.clock())

    def today(self) -> dt.date:
        return self.now().astimezone(self.tz).date()

    def render(self, request: Request, name: str, context: dict | None = None, status: int = 200) -> HTMLResponse:
        principal = getattr(request.state, "principal", None)
        html = self.env.get_template(name).render(user=principal, csrf_token=principal.csrf_token if principal else "",
                                                  path=request.url.path, **(context or {}))
        return HTMLResponse(html, status_code=status)

    def chart_png(self, docket: Docket, bundle: EvidenceBundle | None, kind: str) -> bytes | None:
        key = (docket.id, bundle.sha256 if bundle else None, kind)
        with self._lock:
            if key in self._charts:
                self._charts.move_to_end(key)
                return self._charts[key]
        from dockets import document  # matplotlib and weasyprint: loaded on first use

        try:
            png = document.chart_png(docket, bundle.data if bundle else None, kind)
        except Exception:  # a chart that cannot be drawn must not take the page down
            log.exception("gráfico %s do auto %s", kind, docket.id)
            png = None
        with self._lock:
            self._charts[key] = png
            while len(self._charts) > self.config.chart_cache_size:
                self._charts.popitem(last=False)
        return png

    def available_charts(self, docket: Docket, bundle: EvidenceBundle | None) -> list[str]:
        if bundle is None:
            return []
        return [kind for kind in PDF_CHART_KINDS if self.chart_png(docket, bundle, kind) is not None]


def _web(request: Request) -> _Web:
    return request.app.state.web


# --- authentication ------------------------------------------------------------------------

def _load_principal(request: Request) -> auth.Principal | None:
    web = _web(request)
    token = request.cookies.get(web.cookie)
    principal = None
    if token:
        with web.config.sessions.begin() as session:
            principal = auth.principal_of(session, token, now=web.now())
    request.state.principal = principal
    return principal


def page_user(request: Request) -> auth.Principal:
    principal = _load_principal(request)
    if principal is None:
        raise LoginRequired()
    return principal


def file_user(request: Request) -> auth.Principal:
    principal = _load_principal(request)
    if principal is None:
        raise FileLoginRequired()
    return principal


PageUser = Annotated[auth.Principal, Depends(page_user)]
FileUser = Annotated[auth.Principal, Depends(file_user)]
DocketId = Annotated[int, PathParam(ge=1, le=MAX_ID)]


async def _read_form(request: Request) -> tuple[dict[str, str], list[Upload]]:
    try:
        form = await request.form(max_files=MAX_FILES * 2, max_fields=100)
    except BodyTooLarge:
        raise UploadRefused("Envio grande demais.", 413) from None
    except StarletteHTTPException:
        raise FormError("Formulário inválido ou com arquivos demais.") from None
    try:
        fields: dict[str, str] = {}
        uploads: list[Upload] = []
        for name, value in form.multi_items():
            if isinstance(value, UploadFile):
                if name == "anexos" and value.filename:
                    uploads.append(Upload(value.filename, value.content_type or "", await value.read()))
            elif name not in fields:
                fields[name] = value
        return fields, uploads
    except BodyTooLarge:
        raise UploadRefused("Envio grande demais.", 413) from None
    finally:
        await form.close()


async def read_post(request: Request) -> tuple[auth.Principal, dict[str, str], list[Upload]]:
    """The logged-in user and the submitted form, after checking its CSRF token."""
    principal = await run_in_threadpool(_load_principal, request)
    if principal is None:
        raise LoginRequired()
    fields, uploads = await _read_form(request)
    if not same_token(fields.get("csrf_token"), principal.csrf_token):
        raise CsrfRefused()
    return principal, fields, uploads


# --- the app ---------------------------------------------------------------------------------

def create_app(config: WebConfig) -> FastAPI:
    app = FastAPI(title="fiscaliza — autos de infração", docs_url=None, redoc_url=None, openapi_url=None)
    web = _Web(config)
    app.state.web = web
    # Innermost first: the body limit sits inside the security headers.
    app.add_middleware(BodyLimit, max_bytes=config.max_upload_bytes * MAX_FILES + 1024 * 1024)
    app.add_middleware(SecurityHeaders, hsts=config.secure_cookies)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    _install_error_handlers(app, web)
    _install_auth_routes(app, web)
    _install_docket_routes(app, web)
    _install_fiscal_routes(app, web)
    if config.feed is not None:
        _install_gtfs_rt_routes(app, web)
    return app


def _install_gtfs_rt_routes(app: FastAPI, web: _Web) -> None:
    """Public (no login): GTFS-Realtime for passengers' and third parties' apps."""
    config = web.config
    protobuf = "application/x-protobuf"

    def positions() -> list[gtfs_rt.LivePosition]:
        since = web.now() - dt.timedelta(seconds=gtfs_rt.MAX_AGE_S)
        with config.sessions() as session:
            rows = session.scalars(select(LiveVehicle).where(LiveVehicle.ts >= since)).all()
        return [gtfs_rt.LivePosition(
            r.vehicle_id, getattr(config.fleet.get(r.vehicle_id), "plate", None), as_aware(r.ts), r.lat, r.lon,
            r.speed_kmh, r.route_id, r.direction_id, r.trip_id, as_aware(r.departed_at) if r.departed_at else None,
            r.schedule_deviation_s) for r in rows]

    @app.get("/gtfs-rt/vehicle-positions.pb")
    def vehicle_positions():
        data = gtfs_rt.vehicle_positions(positions(), config.feed, web.now())
        return Response(data, media_type=protobuf, headers={"Cache-Control": "max-age=15"})

    @app.get("/gtfs-rt/trip-updates.pb")
    def trip_updates():
        data = gtfs_rt.trip_updates(positions(), config.feed, web.now())
        return Response(data, media_type=protobuf, headers={"Cache-Control": "max-age=15"})


def _error_page(web: _Web, request: Request, status: int, title: str, message: str) -> HTMLResponse:
    return web.render(request, "erro.html", {"title": title, "message": message}, status)


def _install_error_handlers(app: FastAPI, web: _Web) -> None:
    @app.exception_handler(LoginRequired)
    async def login_required(request: Request, exc: LoginRequired):
        return RedirectResponse("/entrar", status_code=303)

    @app.exception_handler(FileLoginRequired)
    async def file_login_required(request: Request, exc: FileLoginRequired):
        return Response(status_code=401)

    @app.exception_handler(CsrfRefused)
    async def csrf_refused(request: Request, exc: CsrfRefused):
        return _error_page(web, request, 403, "Formulário recusado",
                           "O formulário expirou ou não veio desta página. Recarregue a página e tente novamente.")

    @app.exception_handler(NotFound)
    async def not_found(request: Request, exc: NotFound):
        return _error_page(web, request, 404, "Não encontrado", str(exc))

    @app.exception_handler(Forbidden)
    async def forbidden(request: Request, exc: Forbidden):
        return _error_page(web, request, 403, "Ato não permitido", str(exc))

    @app.exception_handler(DocketError)
    async def docket_error(request: Request, exc: DocketError):
        return _error_page(web, request, 409, "Ato recusado", str(exc))

    @app.exception_handler(FormError)
    async def form_error(request: Request, exc: FormError):
        return _error_page(web, request, 400, "Corrija o formulário", exc.message)

    @app.exception_handler(UploadRefused)
    async def upload_refused(request: Request, exc: UploadRefused):
        return _error_page(web, request, exc.status, "Arquivo recusado",
                           exc.message + " Anexos aceitos: PDF, PNG ou JPEG, até "
                           f"{web.config.max_upload_bytes // (1024 * 1024) or 1} MiB cada, no máximo {MAX_FILES}.")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception):
        # sent by Starlette's outermost layer, past SecurityHeaders: the headers go on here
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        response = _error_page(web, request, 500, "Erro interno",
                               "O sistema não pôde concluir o pedido. Nada foi registrado; tente de novo.")
        for name, value in security_headers(static=False, hsts=web.config.secure_cookies):
            response.headers[name.decode()] = value.decode()
        return response

    @app.exception_handler(BodyTooLarge)
    async def body_too_large(request: Request, exc: BodyTooLarge):
        return PlainTextResponse("Requisição grande demais.", status_code=413)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError):
        return _error_page(web, request, 404, "Não encontrado", "Página não encontrada.")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 404:
            return _error_page(web, request, 404, "Não encontrado", "Página não encontrada.")
        if exc.status_code == 405:
            return _error_page(web, request, 405, "Método não permitido", "Método não permitido.")
        return _error_page(web, request, exc.status_code, "Erro", "Requisição inválida.")


def _set_cookie(web: _Web, response: Response, name: str, value: str, max_age: int | None) -> None:
    response.set_cookie(name, value, max_age=max_age, path="/", httponly=True, samesite="strict",
                        secure=web.config.secure_cookies)


def _install_auth_routes(app: FastAPI, web: _Web) -> None:
    def login_form(request: Request, token: str, *, error: str | None = None, username: str = "",
                   status: int = 200) -> HTMLResponse:
        response = web.render(request, "entrar.html", {"login_csrf": token, "error": error, "username": username},
                              status)
        _set_cookie(web, response, web.login_cookie, token, 3600)
        return response

    @app.get("/entrar", response_class=HTMLResponse)
    def login_page(request: Request):
        if _load_principal(request) is not None:
            return RedirectResponse("/autos", status_code=303)
        token = request.cookies.get(web.login_cookie)
        if not token or len(token) > 100:
            token = new_token()
        return login_form(request, token)

    @app.post("/entrar")
    async def login(request: Request):
        fields, _ = await _read_form(request)
        cookie_token = request.cookies.get(web.login_cookie)
        if not same_token(fields.get("csrf_token"), cookie_token):
            raise CsrfRefused()
        username = str(fields.get("username") or "").strip()[:80]
        password = str(fields.get("password") or "")[:1024]
        if not (username and password):
            return login_form(request, new_token(), error="Usuário ou senha inválidos.", username=username,
                              status=401)

        def attempt():
            with web.config.sessions.begin() as session:
                return auth.log_in(session, username, password, now=web.now(), hours=web.config.session_hours,
                                   previous_token=request.cookies.get(web.cookie))

        # The throttle never looks at the store: an unknown username is counted, refused
        # and answered exactly like an existing one.
        ip = request.client.host if request.client else "-"
        wait = web.throttle.begin(username, ip, web.now())
        if wait is not None:  # refused without checking the password
            minutes = max(1, math.ceil(wait / 60))
            response = login_form(request, new_token(), username=username, status=429,
                                  error="Muitas tentativas de acesso. Tente novamente em "
                                        f"{minutes} {'minuto' if minutes == 1 else 'minutos'}.")
            response.headers["Retry-After"] = str(wait)
            return response
        try:
            result = await run_in_threadpool(attempt)
        finally:
            web.throttle.end(username, ip)
        if result is None:
            web.throttle.failed(username, ip, web.now())
            return login_form(request, new_token(), error="Usuário ou senha inválidos.", username=username,
                              status=401)
        web.throttle.succeeded(username, ip, web.now())
        token, _principal = result
        response = RedirectResponse("/autos", status_code=303)
        _set_cookie(web, response, web.cookie, token, int(web.config.session_hours * 3600))
        response.delete_cookie(web.login_cookie, path="/", secure=web.config.secure_cookies, httponly=True,
                               samesite="strict")
        return response

    @app.post("/sair")
    async def logout(request: Request):
        principal, _, _ = await read_post(request)

        def end():
            with web.config.sessions.begin() as session:
                auth.log_out(session, principal.token_sha256)

        await run_in_threadpool(end)
        response = RedirectResponse("/entrar", status_code=303)
        response.delete_cookie(web.cookie, path="/", secure=web.config.secure_cookies, httponly=True,
                               samesite="strict")
        return response

    @app.get("/saude", response_class=PlainTextResponse)
    def health():
        return "ok"

    @app.get("/")
    def home(user: PageUser):
        return RedirectResponse("/autos", status_code=303)


def _attachment_header(filename: str) -> str:
    ascii_name = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "._-") else "_" for ch in filename) or "anexo"
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename)}"


def _operator_names(session: Session) -> dict[str, str]:
    return dict(session.execute(select(Operator.id, Operator.name)).all())


def _install_docket_routes(app: FastAPI, web: _Web) -> None:
    config = web.config

    @app.get("/autos", response_class=HTMLResponse)
    def docket_list(request: Request, user: PageUser, etapa: str = "", pagina: int = 1):
        actor = user.actor
        stage = etapa if etapa in {s.value for s in workflow.Stage} else ""
        page = max(1, min(pagina, 100_000))
        with config.sessions() as session:
            query = service.visible(actor)
            if stage:
                query = query.where(Docket.stage == stage)
            total = session.scalar(select(func.count()).select_from(query.subquery()))
            dockets = session.scalars(query.order_by(Docket.occurred_at.desc(), Docket.id.desc())
                                      .offset((page - 1) * PAGE_SIZE).limit(PAGE_SIZE)).all()
            operators = _operator_names(session)
            rows = views.docket_rows(dockets, operators, config.calendar, web.today(), web.tz)
            fines = session.execute(service.visible(actor).with_only_columns(
                Docket.operator_id, Docket.stage, Docket.fine_ufir, Docket.ufir_brl)).all()
            counts = dict(session.execute(service.visible(actor).with_only_columns(Docket.stage, func.count())
                                          .group_by(Docket.stage)).all())
        # Drafts never reach an operator (art. 5º, § 3º): no filter for them either.
        shown = [s for s in workflow.Stage if not (actor.role == "operador" and s is workflow.Stage.RASCUNHO)]
        stages = [(s.value, workflow.STAGE_LABELS[s], counts.get(s.value, 0)) for s in shown]
        return web.render(request, "autos.html", {
            "rows": rows, "stage": stage, "stages": stages, "total": total, "page": page,
            "pages": max(1, -(-total // PAGE_SIZE)), "summary": views.fine_summary(fines, operators),
        })

    @app.get("/autos/{docket_id}", response_class=HTMLResponse)
    def docket_page(request: Request, docket_id: DocketId, user: PageUser, feito: str = ""):
        with config.sessions() as session:
            docket = service.get_docket(session, user.actor, docket_id)
            bundle = session.get(EvidenceBundle, docket.id)
            has_pdf = _has_pdf(session, docket.id)
            pdf_signed = has_pdf and session.scalar(select(DocketPdf.signature.is_not(None))
                                                    .where(DocketPdf.docket_id == docket.id))
            context = views.docket_context(session, docket, actor=user.actor, calendar=config.calendar,
                                           today=web.today(), tz=web.tz, charts=web.available_charts(docket, bundle),
                                           wording=wording(docket, bundle.data if bundle else None))
        done = ACTION_FORMS.get(feito)
        return web.render(request, "auto.html", {
            **context, "has_pdf": has_pdf, "pdf_signed": bool(pdf_signed), "has_bundle": bundle is not None, "today": web.today().isoformat(),
            "slug_of": SLUG_OF, "action_labels": workflow.ACTION_LABELS, "wf": workflow,
            "ciencia_means": CIENCIA_MEANS, "max_files": MAX_FILES,
            "max_upload_mib": config.max_upload_bytes // (1024 * 1024) or 1,
            "done": workflow.ACTION_LABELS[done.kind] if done else None,
        })

    @app.get("/autos/{docket_id}/auto.pdf")
    def docket_pdf(docket_id: DocketId, user: FileUser):
        with config.sessions() as session:
            docket = service.get_docket(session, user.actor, docket_id)
            pdf = service.pdf_of(session, user.actor, docket.id)
            name = f"{docket.file_stem}.pdf"
            data = pdf.data
        return Response(data, media_type="application/pdf", headers={"Content-Disposition": _attachment_header(name)})

    @app.get("/autos/{docket_id}/auto.pdf.assinatura.json")
    def docket_pdf_signature(docket_id: DocketId, user: FileUser):
        with config.sessions() as session:
            docket = service.get_docket(session, user.actor, docket_id)
            pdf = service.pdf_of(session, user.actor, docket.id)
            if pdf.signature is None:
                raise NotFound("Este PDF não foi assinado.")
            name = f"{docket.file_stem}.pdf.assinatura.json"
            data = json.dumps(pdf.signature, indent=1) + "\n"
        return Response(data, media_type="application/json", headers={"Content-Disposition": _attachment_header(name)})

    @app.get("/autos/{docket_id}/evidencias.zip")
    def docket_bundle(docket_id: DocketId, user: FileUser):
        with config.sessions() as session:
            bundle = service.bundle_of(session, user.actor, docket_id)
            data, digest = bundle.data, bundle.sha256
            name = f"{session.get(Docket, docket_id).file_stem}-evidencias.zip"
        return Response(data, media_type="application/zip",
                        headers={"Content-Disposition": _attachment_header(name),
                                 "X-Evidence-SHA256": digest})

    @app.get("/autos/{docket_id}/graficos/{kind}.png")
    def docket_chart(docket_id: DocketId, kind: str, user: FileUser):
        with config.sessions() as session:
            docket = service.get_docket(session, user.actor, docket_id)
            if kind not in PDF_CHART_KINDS:
                raise NotFound("Gráfico não encontrado.")
            bundle = service.bundle_of(session, user.actor, docket.id)
            png = web.chart_png(docket, bundle, kind)
        if png is None:
            raise NotFound("Este auto não tem este gráfico.")
        return Response(png, media_type="image/png")

    @app.get("/autos/{docket_id}/anexos/{attachment_id}")
    def docket_attachment(docket_id: DocketId, attachment_id: DocketId, user: FileUser):
        with config.sessions() as session:
            docket = service.get_docket(session, user.actor, docket_id)
            try:
                attachment = service.attachment_of(session, user.actor, attachment_id)
            except NotFound:
                attachment = None
            if attachment is None or attachment.docket_id != docket.id:
                raise NotFound("Anexo não encontrado.")
            data, content_type, filename = attachment.data, attachment.content_type, attachment.filename
        return Response(data, media_type=content_type,
                        headers={"Content-Disposition": _attachment_header(filename),
                                 "Content-Security-Policy": "default-src 'none'; sandbox"})

    @app.post("/autos/{docket_id}/acoes/{slug}")
    async def docket_action(request: Request, docket_id: DocketId, slug: str):
        principal, fields, uploads = await read_post(request)
        await run_in_threadpool(_perform, web, principal, docket_id, slug, fields, uploads)
        return RedirectResponse(f"/autos/{docket_id}?feito={slug}", status_code=303)


def _has_pdf(session: Session, docket_id: int) -> bool:
    return session.scalar(select(func.count()).select_from(DocketPdf).where(DocketPdf.docket_id == docket_id)) > 0


def _perform(web: _Web, principal: auth.Principal, docket_id: int, slug: str, fields: dict[str, str],
             uploads: list[Upload]) -> None:
    """One action on a docket. The order of the checks matters: first whether the user may
    see the docket at all (404, as for a nonexistent one), then the role (403), then the form."""
    config = web.config
    actor = principal.actor
    with config.sessions.begin() as session:
        docket = service.get_docket(session, actor, docket_id)
        spec = ACTION_FORMS.get(slug)
        if spec is None:
            raise NotFound("Página não encontrada.")
        late = late_registration(fields, today=web.today(), not_before=docket.service_date)
        if late is not None:
            if actor.role != "gestor" or spec.kind not in workflow.PAPER_ACTS:
                raise Forbidden("Somente o gestor registra tardiamente um ato feito em papel (defesa, recurso, "
                                "ciência, pagamento).")
        elif spec.kind not in workflow.ROLE_ACTIONS.get(actor.role, frozenset()):
            raise Forbidden(f"O perfil {ROLE_LABELS.get(actor.role, actor.role).lower()} não pode "
                            f"{workflow.ACTION_LABELS[spec.kind].lower()}.")
        action, note = build_action(spec, fields, today=web.today(), late=late)
        files = []
        if spec.takes_files:
            if len(uploads) > MAX_FILES:
                raise FormError(f"No máximo {MAX_FILES} anexos por envio.")
            files = [check_upload(u, allowed=config.allowed_upload_types, max_bytes=config.max_upload_bytes)
                     for u in uploads]
        renderer = None
        if isinstance(action, workflow.Lavrar):
            operator = session.get(Operator, docket.operator_id)

            def renderer(lavrado: Docket, bundle: bytes | None, audit_head) -> bytes:
                from dockets import document

                return document.render_pdf(lavrado, bundle, calendar=config.calendar, issuer_name=config.issuer_name,
                                           audit_head=audit_head, fiscal_name=principal.full_name,
                                           fiscal_registration=principal.registration,
                                           operator_name=operator.name if operator else None)

        service.perform(session, actor, docket.id, action, config.calendar, note=note, attachments=files,
                        renderer=renderer, signer=config.signer, late_registration=late is not None)


def _require_staff(user: auth.Principal, *, fiscal_only: bool = False) -> None:
    allowed = ("fiscal",) if fiscal_only else ("fiscal", "gestor")
    if user.role not in allowed:
        raise Forbidden("Esta página é do Órgão Gerencial." if not fiscal_only
                        else "Somente o fiscal tem acesso a esta página.")


def _install_fiscal_routes(app: FastAPI, web: _Web) -> None:
    config = web.config

    def occurrences_page(request: Request, user: auth.Principal, *, status: int = 200) -> HTMLResponse:
        with config.sessions() as session:
            occurrences = fiscal.list_occurrences(session, user.actor)
            rows = [{"id": o.id, "kind": fiscal.OCCURRENCE_KINDS.get(o.kind, o.kind),
                     "start": datetime_br(o.start, web.tz), "end": datetime_br(o.end, web.tz),
                     "route_id": o.route_id or "—", "vehicle_id": o.vehicle_id or "—", "note": o.note or "",
                     "geometry": o.geometry is not None} for o in occurrences]
        return web.render(request, "ocorrencias.html", {"rows": rows, "kinds": fiscal.OCCURRENCE_KINDS,
                                                        "itineraries": web.itineraries()}, status)

    @app.get("/ocorrencias", response_class=HTMLResponse)
    def occurrences(request: Request, user: PageUser):
        _require_staff(user)
        return occurrences_page(request, user)

    @app.get("/ocorrencias.jsonl")
    def occurrences_export(user: FileUser):
        _require_staff(user)
        with config.sessions() as session:
            lines = [json.dumps(fiscal.occurrence_record(o, web.tz), ensure_ascii=False)
                     for o in reversed(fiscal.list_occurrences(session, user.actor, limit=100_000))]
        return Response("".join(line + "\n" for line in lines), media_type="application/x-ndjson",
                        headers={"Content-Disposition": _attachment_header("occurrences.jsonl")})

    @app.post("/ocorrencias")
    async def register_occurrence(request: Request):
        principal, fields, _ = await read_post(request)
        _require_staff(principal, fiscal_only=True)

        def register():
            with config.sessions.begin() as session:
                fiscal.occurrence_from_form(session, principal.actor, fields, web.tz, web.now())

        await run_in_threadpool(register)
        return RedirectResponse("/ocorrencias", status_code=303)

    @app.get("/auditoria", response_class=HTMLResponse)
    async def audit_page(request: Request, user: PageUser):
        if user.role != "gestor":
            raise Forbidden("Somente o gestor confere o registro de auditoria.")

        def check() -> dict:
            # the same check as `fiscaliza audit verify` and the docket sink's on start
            if not config.audit_keys or config.anchors is None:
                return {"error": "O servidor foi iniciado sem a chave de auditoria ou sem as âncoras."}
            try:
                anchors = config.anchors.read()
                with config.sessions() as session:
                    report = audit_log.verify_record(session, config.audit_keys, anchors)
            except audit_log.AuditError as exc:
                return {"error": str(exc)}
            return {"report": report, "destination": config.anchors.describe()}

        result = await run_in_threadpool(check)
        return web.render(request, "auditoria.html", result, 200 if "report" in result else 409)

    @app.get("/infracoes/nova", response_class=HTMLResponse)
    def manual_form(request: Request, user: PageUser):
        _require_staff(user, fiscal_only=True)
        with config.sessions() as session:
            operators = sorted(_operator_names(session).items())
        codes = [(code, ARTICLES[code]) for code in fiscal.manual_codes()]
        vehicles = sorted(config.fleet.values(), key=lambda v: (v.operator_id, v.vehicle_id))
        now_local = web.now().astimezone(web.tz).strftime("%Y-%m-%dT%H:%M")
        return web.render(request, "infracao_nova.html", {"codes": codes, "operators": operators,
                                                          "vehicles": vehicles, "now_local": now_local})

    @app.post("/infracoes/nova")
    async def manual_create(request: Request):
        principal, fields, _ = await read_post(request)
        _require_staff(principal, fiscal_only=True)

        def create() -> int:
            with config.sessions.begin() as session:
                docket = fiscal.manual_from_form(session, principal.actor, fields, tz=web.tz, now=web.now(),
                                                 fleet=config.fleet, ufir_brl=config.ufir_brl,
                                                 registration=principal.registration)
                return docket.id

        docket_id = await run_in_threadpool(create)
        return RedirectResponse(f"/autos/{docket_id}", status_code=303)
