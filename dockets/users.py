"""Accounts of the web app: the Órgão Gerencial's fiscais and gestores, and each
operator's representatives. Passwords are stored as argon2 hashes (pwdlib).

A username is stored and looked up normalized (`normalized_username`): "TRD", " trd" and
"ｔｒｄ" are one account, so one cannot be made beside another to share its login lock
or pass for it on an auto. Every change to an account is an audit entry certifying its
resulting state (`dockets.audit.user_state`): a role or password hash changed behind the
application no longer matches it."""

from __future__ import annotations

import logging
import unicodedata
from functools import lru_cache

from pwdlib import PasswordHash
from sqlalchemy import select
from sqlalchemy.orm import Session

from dockets.audit import user_state
from dockets.service import Actor, DocketError, audit, utcnow
from dockets.store import ROLES, Operator, User

MIN_PASSWORD = 10
log = logging.getLogger(__name__)


def normalized_username(username: str) -> str:
    """The username as stored and compared: NFKC, case-folded (then NFKC again, as
    Unicode's NFKC_Casefold), and trimmed."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", username).casefold()).strip()


def _same_username(session: Session, key: str) -> list[User]:
    """The users whose name normalizes to `key`: the one stored so, and any stored before
    names were normalized (the table is small: a fiscal's or an operator's staff)."""
    exact = session.scalars(select(User).where(User.username == key)).all()
    legacy = [u for u in session.scalars(select(User).where(User.username != key))
              if normalized_username(u.username) == key]
    return [*exact, *legacy]


@lru_cache(maxsize=1)
def hasher() -> PasswordHash:
    return PasswordHash.recommended()  # argon2id


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return hasher().hash("fiscaliza-dummy-password")


def create_user(session: Session, *, username: str, full_name: str, role: str, password: str,
                operator_id: str | None = None, registration: str | None = None,
                actor: Actor | None = None) -> User:
    if role not in ROLES:
        raise DocketError(f"perfil desconhecido: {role} (use {', '.join(ROLES)})")
    if (role == "operador") != (operator_id is not None):
        raise DocketError("um usuário operador precisa da sua empresa operadora; os demais, de nenhuma")
    if operator_id is not None and session.get(Operator, operator_id) is None:
        raise DocketError(f"empresa operadora desconhecida: {operator_id}")
    if len(password) < MIN_PASSWORD:
        raise DocketError(f"a senha precisa de pelo menos {MIN_PASSWORD} caracteres")
    name = normalized_username(username)
    if not name:
        raise DocketError("o nome de usuário não pode ser vazio")
    existing = _same_username(session, name)
    if existing:
        raise DocketError(f"o usuário {username.strip()} já existe (como {existing[0].username})")
    user = User(username=name, full_name=full_name, role=role, operator_id=operator_id,
                registration=registration, password_hash=hasher().hash(password), active=True,
                created_at=utcnow())
    session.add(user)
    session.flush()
    audit(session, actor or Actor(None, "sistema"), "user", user.id, "CriarUsuario",
          {"username": name, "role": role, "operator_id": operator_id, "state": user_state(user)})
    return user


def change_password(session: Session, username: str, password: str, *, actor: Actor | None = None) -> User:
    """A new password for an account, audited (the entry certifies the new hash's digest)."""
    if len(password) < MIN_PASSWORD:
        raise DocketError(f"a senha precisa de pelo menos {MIN_PASSWORD} caracteres")
    found = _same_username(session, normalized_username(username))
    if len(found) != 1:
        raise DocketError(f"usuário desconhecido: {username.strip()}")
    user = found[0]
    user.password_hash = hasher().hash(password)
    session.flush()
    audit(session, actor or Actor(None, "sistema"), "user", user.id, "AlterarSenha", {"state": user_state(user)})
    return user


def authenticate(session: Session, username: str, password: str) -> User | None:
    """The active user with this password, or None. A missing user costs the same hash
    verification as a wrong password, so timing does not reveal which usernames exist."""
    found = _same_username(session, normalized_username(username))
    if len(found) > 1:  # stored before names were normalized: which one is meant is unknown
        log.warning("login refused: %d accounts normalize to the username given", len(found))
    user = found[0] if len(found) == 1 else None
    if user is None or not user.active:
        hasher().verify(password, _dummy_hash())
        return None
    return user if hasher().verify(password, user.password_hash) else None
