"""Security plumbing of the web app: tokens, uploads, response headers, request size."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import unicodedata
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PDF, PNG, JPEG = "application/pdf", "image/png", "image/jpeg"
# What each accepted type starts with, and the file name extensions that go with it.
MAGIC: dict[str, tuple[bytes, tuple[str, ...]]] = {
    PDF: (b"%PDF-", (".pdf",)),
    PNG: (b"\x89PNG\r\n\x1a\n", (".png",)),
    JPEG: (b"\xff\xd8\xff", (".jpg", ".jpeg")),
}
MAX_FILES = 5  # attachments per defence or recurso

# Scripts only from the app's own files (the detour map: web/static/desvio.js and the vendored
# Leaflet), never inline; Leaflet positions its panes through element.style (CSSOM), which
# style-src does not govern, so no 'unsafe-inline' is needed for styles either.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def same_token(given: str | None, expected: str | None) -> bool:
    """Constant-time comparison; an absent token never matches."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


class LoginTokens:
    """The login form's CSRF tokens, issued by the server: a nonce, the time it was issued
    and a MAC over both under the app's secret. A value the client made up (a fixed one
    planted as the cookie and echoed in a forged form) is not one of these and is refused;
    a token is good for `max_age_s`, as its cookie."""

    def __init__(self, secret: bytes, max_age_s: int = 3600) -> None:
        self._secret = secret
        self.max_age_s = max_age_s

    def _mac(self, nonce: str, issued: int) -> str:
        body = f"fiscaliza login csrf\0{nonce}\0{issued}".encode("utf-8")
        return hmac.new(self._secret, body, hashlib.sha256).hexdigest()

    def issue(self, now: float) -> str:
        nonce, issued = secrets.token_urlsafe(24), int(now)
        return f"{nonce}.{issued}.{self._mac(nonce, issued)}"

    def issued(self, token: str | None, now: float) -> bool:
        """Whether `token` is one this server issued, less than `max_age_s` ago."""
        if not token or len(token) > 200 or token.count(".") != 2:
            return False
        nonce, issued, mac = token.split(".")
        if not issued.isdigit() or not 0 <= now - int(issued) < self.max_age_s:
            return False
        return hmac.compare_digest(mac.encode("utf-8"), self._mac(nonce, int(issued)).encode("utf-8"))


# --- uploads ---------------------------------------------------------------------------

class UploadRefused(Exception):
    """A file the app will not store; `status` is 413 (too large) or 415 (type)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True)
class Upload:
    filename: str  # as the client sent it
    declared_type: str
    data: bytes


_UNSAFE = re.compile(r"[^\w .()\-]+")


def safe_filename(name: str, default: str = "anexo") -> str:
    """The base name only, without control or path characters, at most 100 characters."""
    name = unicodedata.normalize("NFKC", name or "")
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C")
    name = _UNSAFE.sub("_", name).strip(" ._")
    name = re.sub(r"_+", "_", name)
    if not name:
        return default
    if len(name) > 100:
        stem, dot, ext = name.rpartition(".")
        name = (stem[: 100 - len(ext) - 1] + "." + ext) if dot and len(ext) <= 10 else name[:100]
    return name


def sniff(data: bytes) -> str | None:
    """The accepted type the content really is, by its magic bytes."""
    for kind, (magic, _) in MAGIC.items():
        if data.startswith(magic):
            return kind
    return None


def check_upload(upload: Upload, *, allowed: frozenset[str], max_bytes: int) -> tuple[str, str, bytes]:
    """(safe filename, content type, data) for `perform`, or UploadRefused.

    The type is what the content is (magic bytes), which must also be what the client
    declared and what the file name says: an HTML page named .pdf is refused."""
    shown = safe_filename(upload.filename)
    if len(upload.data) > max_bytes:
        raise UploadRefused(f"O arquivo “{shown}” excede o limite de {max_bytes // (1024 * 1024) or 1} MiB"
                            f" ({max_bytes} bytes).", 413)
    if not upload.data:
        raise UploadRefused(f"O arquivo “{shown}” está vazio.", 415)
    kind = sniff(upload.data)
    declared = (upload.declared_type or "").split(";", 1)[0].strip().lower()
    if kind is None or kind not in allowed or declared not in (kind, "application/octet-stream", ""):
        raise UploadRefused(f"O arquivo “{shown}” não é um PDF, PNG ou JPEG válido.", 415)
    extensions = MAGIC[kind][1]
    if not shown.lower().endswith(extensions):
        raise UploadRefused(f"A extensão do arquivo “{shown}” não corresponde ao seu conteúdo "
                            f"({extensions[0]}).", 415)
    return shown, kind, upload.data


# --- ASGI middleware -------------------------------------------------------------------

# The public GTFS-Realtime feeds: riders' apps on any origin read them (CORS, and a resource
# policy that lets them), and caches keep them for the 15 s their router says.
PUBLIC_FEEDS = frozenset({"/gtfs-rt/vehicle-positions.pb", "/gtfs-rt/trip-updates.pb", "/gtfs-rt/alerts.pb",
                          # the open data of the public record of what was upheld (web.routers.transparencia)
                          "/transparencia/multas-mantidas.csv", "/transparencia/multas-mantidas.json"})


def security_headers(*, static: bool, hsts: bool, public_feed: bool = False) -> list[tuple[bytes, bytes]]:
    """The headers every response carries (`SecurityHeaders`), and the error page of an
    unexpected exception too, which Starlette sends from outside every middleware.

    A public feed (`public_feed`) keeps its router's Cache-Control (no cache-control here)
    and may be read from any origin: Access-Control-Allow-Origin: * and a cross-origin
    resource policy instead of same-origin."""
    headers = [
        (b"x-content-type-options", b"nosniff"),
        (b"x-frame-options", b"DENY"),
        (b"content-security-policy", CSP.encode()),
        (b"referrer-policy", b"same-origin"),
        (b"cross-origin-opener-policy", b"same-origin"),
        (b"cross-origin-resource-policy", b"cross-origin" if public_feed else b"same-origin"),
        (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
    ]
    if public_feed:
        headers.append((b"access-control-allow-origin", b"*"))
    else:
        headers.append((b"cache-control", b"public, max-age=3600" if static else b"no-store"))
    if hsts:
        headers.append((b"strict-transport-security", b"max-age=31536000"))
    return headers


class SecurityHeaders:
    """Headers on every response: no sniffing, no framing, a CSP that runs only the app's own
    script files, and no caching of anything but the static files and the public feeds."""

    def __init__(self, app: ASGIApp, *, hsts: bool) -> None:
        self.app = app
        self.hsts = hsts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        static = path.startswith("/static/")
        public_feed = path in PUBLIC_FEEDS
        replaced = (b"x-frame-options", b"x-content-type-options", b"access-control-allow-origin") + (
            () if public_feed else (b"cache-control",))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in replaced]
                message = {**message, "headers": headers + security_headers(static=static, hsts=self.hsts,
                                                                            public_feed=public_feed)}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyTooLarge(Exception):
    pass


class BodyLimit:
    """Refuses request bodies above `max_bytes` (413): by Content-Length before reading,
    and by counting while reading (chunked bodies raise BodyTooLarge in `receive`)."""

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared < 0 or declared > self.max_bytes:
                    await _plain(send, 413, "Requisição grande demais.")
                    return
        received = 0

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge()
            return message

        await self.app(scope, counting_receive, send)


async def _plain(send: Send, status: int, text: str) -> None:
    body = text.encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
