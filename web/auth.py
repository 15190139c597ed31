"""Logging in and out: server-side sessions whose random token only the browser keeps
(the store holds its SHA-256), each with its own CSRF token."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from dockets.service import Actor
from dockets.store import Operator, User, WebSession
from dockets.users import authenticate
from web.security import new_token, token_digest


@dataclass(frozen=True)
class Principal:
    """The logged-in user of one request (plain data, detached from the store)."""

    user_id: int
    username: str
    full_name: str
    role: str
    operator_id: str | None
    operator_name: str | None
    registration: str | None
    csrf_token: str
    token_sha256: str

    @property
    def actor(self) -> Actor:
        return Actor(self.user_id, self.role, self.operator_id, self.full_name)


def _principal(session: Session, user: User, web_session: WebSession) -> Principal:
    operator = session.get(Operator, user.operator_id) if user.operator_id else None
    return Principal(user.id, user.username, user.full_name, user.role, user.operator_id,
                     operator.name if operator else None, user.registration, web_session.csrf_token,
                     web_session.token_sha256)


def log_in(session: Session, username: str, password: str, *, now: dt.datetime, hours: float,
           previous_token: str | None = None) -> tuple[str, Principal] | None:
    """(the new session's token for the cookie, its principal), or None for bad credentials.
    The browser's previous session, if any, ends: a login always gets a fresh token."""
    user = authenticate(session, username, password)
    if user is None:
        return None
    session.execute(delete(WebSession).where(WebSession.expires_at < now))
    if previous_token:
        session.execute(delete(WebSession).where(WebSession.token_sha256 == token_digest(previous_token)))
    token = new_token()
    web_session = WebSession(token_sha256=token_digest(token), user_id=user.id, csrf_token=new_token(),
                             created_at=now, expires_at=now + dt.timedelta(hours=hours))
    session.add(web_session)
    session.flush()
    return token, _principal(session, user, web_session)


def principal_of(session: Session, token: str | None, *, now: dt.datetime) -> Principal | None:
    """The principal of a session cookie; None when absent, unknown, expired (the row is
    then deleted) or the user was deactivated."""
    if not token or len(token) > 200:
        return None
    web_session = session.get(WebSession, token_digest(token))
    if web_session is None:
        return None
    if web_session.expires_at <= now:  # the store reads instants back aware (UTC)
        session.delete(web_session)
        return None
    user = session.get(User, web_session.user_id)
    if user is None or not user.active:
        return None
    return _principal(session, user, web_session)


def log_out(session: Session, token_sha256: str) -> None:
    session.execute(delete(WebSession).where(WebSession.token_sha256 == token_sha256))


def sessions_of(session: Session, user_id: int) -> list[WebSession]:
    return list(session.scalars(select(WebSession).where(WebSession.user_id == user_id)))
