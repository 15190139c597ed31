"""Logging in and out, the health check and the home redirect."""

from __future__ import annotations

import math

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool

from web import auth
from web.dependencies import PageUser, State, load_principal, read_form, read_post, set_cookie
from web.errors import CsrfRefused
from web.security import same_token
from web.state import AppState

router = APIRouter()


def login_form(web: AppState, request: Request, token: str, *, error: str | None = None, username: str = "",
               status: int = 200) -> HTMLResponse:
    response = web.render(request, "entrar.html", {"login_csrf": token, "error": error, "username": username},
                          status)
    set_cookie(web, response, web.login_cookie, token, web.login_tokens.max_age_s)
    return response


def fresh_token(web: AppState) -> str:
    return web.login_tokens.issue(web.now().timestamp())


@router.get("/entrar", response_class=HTMLResponse)
def login_page(request: Request, web: State):
    if load_principal(request) is not None:
        return RedirectResponse("/autos", status_code=303)
    token = request.cookies.get(web.login_cookie)  # kept across tabs, if this server issued it
    if not web.login_tokens.issued(token, web.now().timestamp()):
        token = fresh_token(web)
    return login_form(web, request, token)


@router.post("/entrar")
async def login(request: Request, web: State):
    fields, _ = await read_form(request)
    cookie_token = request.cookies.get(web.login_cookie)
    if not (web.login_tokens.issued(cookie_token, web.now().timestamp())
            and same_token(fields.get("csrf_token"), cookie_token)):
        raise CsrfRefused()
    username = str(fields.get("username") or "").strip()[:80]
    password = str(fields.get("password") or "")[:1024]
    if not (username and password):
        return login_form(web, request, fresh_token(web), error="Usuário ou senha inválidos.", username=username,
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
        response = login_form(web, request, fresh_token(web), username=username, status=429,
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
        return login_form(web, request, fresh_token(web), error="Usuário ou senha inválidos.", username=username,
                          status=401)
    web.throttle.succeeded(username, ip, web.now())
    token, _principal = result
    response = RedirectResponse("/autos", status_code=303)
    set_cookie(web, response, web.cookie, token, int(web.config.session_hours * 3600))
    response.delete_cookie(web.login_cookie, path="/", secure=web.config.secure_cookies, httponly=True,
                           samesite="strict")
    return response


@router.post("/sair")
async def logout(request: Request, web: State):
    principal, _, _ = await read_post(request)

    def end():
        with web.config.sessions.begin() as session:
            auth.log_out(session, principal.token_sha256)

    await run_in_threadpool(end)
    response = RedirectResponse("/entrar", status_code=303)
    response.delete_cookie(web.cookie, path="/", secure=web.config.secure_cookies, httponly=True,
                           samesite="strict")
    return response


@router.get("/saude", response_class=PlainTextResponse)
def health():
    return "ok"


@router.get("/")
def home(user: PageUser):
    return RedirectResponse("/autos", status_code=303)
