"""Accounts of the web app: the Órgão Gerencial's fiscais and gestores, and each
operator's representatives. Passwords are stored as argon2 hashes (pwdlib)."""

from __future__ import annotations

from functools import lru_cache

from pwdlib import PasswordHash
from sqlalchemy import select
from sqlalchemy.orm import Session

from dockets.service import Actor, DocketError, audit, utcnow
from dockets.store import ROLES, Operator, User

MIN_PASSWORD = 10


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
    if session.scalar(select(User.id).where(User.username == username)):
        raise DocketError(f"o usuário {username} já existe")
    user = User(username=username, full_name=full_name, role=role, operator_id=operator_id,
                registration=registration, password_hash=hasher().hash(password), active=True,
                created_at=utcnow())
    session.add(user)
    session.flush()
    audit(session, actor or Actor(None, "sistema"), "user", user.id, "CriarUsuario",
          {"username": username, "role": role, "operator_id": operator_id})
    return user


def authenticate(session: Session, username: str, password: str) -> User | None:
    """The active user with this password, or None. A missing user costs the same hash
    verification as a wrong password, so timing does not reveal which usernames exist."""
    user = session.scalar(select(User).where(User.username == username))
    if user is None or not user.active:
        hasher().verify(password, _dummy_hash())
        return None
    return user if hasher().verify(password, user.password_hash) else None
