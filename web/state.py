"""Per-app state the routers share: the configuration, the templates, the chart cache,
the login throttle and the feed's itineraries."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import logging
import secrets
import threading
from collections import OrderedDict
from pathlib import Path
from zoneinfo import ZoneInfo

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from dockets.config import ORGAN
from dockets.document import PDF_CHART_KINDS
from dockets.store import Docket, EvidenceBundle
from web.config import WebConfig
from web.format import ROLE_LABELS, as_aware
from web.itineraries import itineraries
from web.security import LoginTokens
from web.throttle import LoginThrottle

log = logging.getLogger("web.app")
HERE = Path(__file__).resolve().parent


class AppState:
    """Per-app state: the configuration, the templates, the chart cache, the login throttle and
    the login form's tokens."""

    def __init__(self, config: WebConfig) -> None:
        self.config = config
        self.tz = ZoneInfo(config.timezone)
        self.cookie = "__Host-fiscaliza_sessao" if config.secure_cookies else "fiscaliza_sessao"
        self.login_cookie = "__Host-fiscaliza_entrada" if config.secure_cookies else "fiscaliza_entrada"
        self.env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(),
                               undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
        self.env.globals.update(role_labels=ROLE_LABELS, municipality=config.municipality,
                                issuer_name=config.issuer_name, organ_name=ORGAN, law=config.policy.policy.name,
                                timezone=config.timezone, fine_unit=config.pack.law.fine_unit,
                                auto_form=config.pack.law.auto)
        self._charts: OrderedDict[tuple, bytes | None] = OrderedDict()
        self.throttle = LoginThrottle(max_failures=config.login_max_failures,
                                      max_failures_per_ip=config.login_max_failures_per_ip,
                                      window=dt.timedelta(minutes=config.login_window_minutes),
                                      lockout=dt.timedelta(minutes=config.login_lockout_minutes))
        # one secret for every web process over the same audit key (a token issued by one is
        # good at the next), derived apart from the key's own use; else this process's own
        current = next(iter(config.audit_keys.values()), None)
        secret = (hmac.new(current.secret, b"fiscaliza login csrf key", hashlib.sha256).digest() if current
                  else secrets.token_bytes(32))
        self.login_tokens = LoginTokens(secret)
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


def state_of(request: Request) -> AppState:
    return request.app.state.web
