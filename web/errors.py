"""What the web app refuses, and the one place each refusal becomes its page and status."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from dockets.service import DocketError, Forbidden, NotFound
from web.forms import FormError
from web.security import MAX_FILES, BodyTooLarge, UploadRefused, security_headers
from web.state import state_of

log = logging.getLogger("web.app")


class LoginRequired(Exception):
    """A page without a valid session: 303 to the login form."""


class FileLoginRequired(Exception):
    """A file without a valid session: 401, no content."""


class CsrfRefused(Exception):
    pass


def upload_refusal(exc: UploadRefused, max_upload_bytes: int) -> str:
    """What a refused file is told, with what the app accepts."""
    return (exc.message + " Anexos aceitos: PDF, PNG ou JPEG, até "
            f"{max_upload_bytes // (1024 * 1024) or 1} MiB cada, no máximo {MAX_FILES}.")


def error_page(request: Request, status: int, title: str, message: str) -> HTMLResponse:
    return state_of(request).render(request, "erro.html", {"title": title, "message": message}, status)


def install_error_handlers(app: FastAPI) -> None:
    """Each refusal its page and status, in one place."""
    @app.exception_handler(LoginRequired)
    async def login_required(request: Request, exc: LoginRequired):
        return RedirectResponse("/entrar", status_code=303)

    @app.exception_handler(FileLoginRequired)
    async def file_login_required(request: Request, exc: FileLoginRequired):
        return Response(status_code=401)

    @app.exception_handler(CsrfRefused)
    async def csrf_refused(request: Request, exc: CsrfRefused):
        return error_page(request, 403, "Formulário recusado",
                           "O formulário expirou ou não veio desta página. Recarregue a página e tente novamente.")

    @app.exception_handler(NotFound)
    async def not_found(request: Request, exc: NotFound):
        return error_page(request, 404, "Não encontrado", str(exc))

    @app.exception_handler(Forbidden)
    async def forbidden(request: Request, exc: Forbidden):
        return error_page(request, 403, "Ato não permitido", str(exc))

    @app.exception_handler(DocketError)
    async def docket_error(request: Request, exc: DocketError):
        return error_page(request, 409, "Ato recusado", str(exc))

    @app.exception_handler(FormError)
    async def form_error(request: Request, exc: FormError):
        return error_page(request, 400, "Corrija o formulário", exc.message)

    @app.exception_handler(UploadRefused)
    async def upload_refused(request: Request, exc: UploadRefused):
        return error_page(request, exc.status, "Arquivo recusado",
                           upload_refusal(exc, state_of(request).config.max_upload_bytes))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception):
        # sent by Starlette's outermost layer, past SecurityHeaders: the headers go on here
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        response = error_page(request, 500, "Erro interno",
                               "O sistema não pôde concluir o pedido. Nada foi registrado; tente de novo.")
        for name, value in security_headers(static=False, hsts=state_of(request).config.secure_cookies):
            response.headers[name.decode()] = value.decode()
        return response

    @app.exception_handler(BodyTooLarge)
    async def body_too_large(request: Request, exc: BodyTooLarge):
        return PlainTextResponse("Requisição grande demais.", status_code=413)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError):
        return error_page(request, 404, "Não encontrado", "Página não encontrada.")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 404:
            return error_page(request, 404, "Não encontrado", "Página não encontrada.")
        if exc.status_code == 405:
            return error_page(request, 405, "Método não permitido", "Método não permitido.")
        return error_page(request, exc.status_code, "Erro", "Requisição inválida.")
