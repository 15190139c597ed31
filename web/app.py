"""The web app: autos de infração for the Órgão Gerencial's fiscais and gestores and for the
operators' representatives (FastAPI + Jinja2, server-rendered pages; the one script, the
detour map of the occurrences form, is a static file).

`create_app(WebConfig(...))` builds an app over a docket store; nothing is global. Every
docket, file and action goes through `dockets.service`, which scopes an operator to its
own autos lavrados: another operator's docket, and a draft not yet lavrado (even the
operator's own), answer exactly like a nonexistent one (404).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from web.config import WebConfig
from web.errors import install_error_handlers
from web.routers import autos, gtfs_rt, session, staff, transparencia
from web.security import MAX_FILES, BodyLimit, SecurityHeaders
from web.state import AppState

__all__ = ["WebConfig", "create_app"]
HERE = Path(__file__).resolve().parent


def create_app(config: WebConfig) -> FastAPI:
    """The app over `config`: its state, middleware, error pages and one router per resource."""
    app = FastAPI(title="fiscaliza — autos de infração", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.web = AppState(config)
    # Innermost first: the body limit sits inside the security headers.
    app.add_middleware(BodyLimit, max_bytes=config.max_upload_bytes * MAX_FILES + 1024 * 1024)
    app.add_middleware(SecurityHeaders, hsts=config.secure_cookies)
    if config.trusted_proxies:  # outermost: the throttle and the cookies see the client's own address
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=list(config.trusted_proxies))
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    install_error_handlers(app)
    for router in (session.router, autos.router, staff.router, transparencia.router):
        app.include_router(router)
    if config.feed is not None:
        app.include_router(gtfs_rt.router)
    return app
