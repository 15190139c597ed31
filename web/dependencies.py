"""What the routers' endpoints depend on: the app's state, the logged-in user (a page
redirects to the login form, a file answers 401), the posted form after its CSRF check,
and the role checks."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import Depends, Request
from fastapi import Path as PathParam
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from dockets.service import STAFF_ROLES, Forbidden
from web import auth
from web.errors import CsrfRefused, FileLoginRequired, LoginRequired
from web.forms import FormError
from web.security import MAX_FILES, BodyTooLarge, Upload, UploadRefused, same_token
from web.state import AppState, state_of

MAX_ID = 2**31 - 1
State = Annotated[AppState, Depends(state_of)]


def load_principal(request: Request) -> auth.Principal | None:
    web = state_of(request)
    token = request.cookies.get(web.cookie)
    principal = None
    if token:
        with web.config.sessions.begin() as session:
            principal = auth.principal_of(session, token, now=web.now())
    request.state.principal = principal
    return principal


def page_user(request: Request) -> auth.Principal:
    principal = load_principal(request)
    if principal is None:
        raise LoginRequired()
    return principal


def file_user(request: Request) -> auth.Principal:
    principal = load_principal(request)
    if principal is None:
        raise FileLoginRequired()
    return principal


PageUser = Annotated[auth.Principal, Depends(page_user)]
FileUser = Annotated[auth.Principal, Depends(file_user)]
DocketId = Annotated[int, PathParam(ge=1, le=MAX_ID)]


# fields a form repeats (a checkbox per row), read as their values joined by commas; of any
# other field the first value counts
MULTI_FIELDS = frozenset({"leituras"})


async def read_form(request: Request) -> tuple[dict[str, str], list[Upload]]:
    try:
        form = await request.form(max_files=MAX_FILES * 2, max_fields=400)  # a checkbox per cited reading
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
            elif name in MULTI_FIELDS:  # checkboxes of one name: every value checked
                fields[name] = f"{fields[name]},{value}" if name in fields else value
            elif name not in fields:
                fields[name] = value
        return fields, uploads
    except BodyTooLarge:
        raise UploadRefused("Envio grande demais.", 413) from None
    finally:
        await form.close()


async def read_post(request: Request) -> tuple[auth.Principal, dict[str, str], list[Upload]]:
    """The logged-in user and the submitted form, after checking its CSRF token."""
    principal = await run_in_threadpool(load_principal, request)
    if principal is None:
        raise LoginRequired()
    fields, uploads = await read_form(request)
    if not same_token(fields.get("csrf_token"), principal.csrf_token):
        raise CsrfRefused()
    return principal, fields, uploads


def set_cookie(web: AppState, response: Response, name: str, value: str, max_age: int | None) -> None:
    response.set_cookie(name, value, max_age=max_age, path="/", httponly=True, samesite="strict",
                        secure=web.config.secure_cookies)


def attachment_header(filename: str) -> str:
    ascii_name = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "._-") else "_" for ch in filename) or "anexo"
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename)}"


def require_staff(user: auth.Principal, *, fiscal_only: bool = False) -> None:
    allowed = ("fiscal",) if fiscal_only else STAFF_ROLES
    if user.role not in allowed:
        raise Forbidden("Esta página é do Órgão Gerencial." if not fiscal_only
                        else "Somente o fiscal tem acesso a esta página.")
