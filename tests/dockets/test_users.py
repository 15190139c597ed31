"""Accounts (#32 item 8): a username is one account however it is typed, so a second one
cannot be made beside it to share its login lock or pass for it on an auto."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from stores import open_test_store, verified_entries

from dockets.service import DocketError
from dockets.users import authenticate, change_password, create_user, normalized_username

PASSWORD = "uma-senha-longa"


@pytest.fixture
def store(tmp_path):
    sessions = open_test_store(f"sqlite:///{tmp_path / 'users.sqlite3'}")
    with sessions.begin() as session:
        create_user(session, username="gestor", full_name="Gestora", role="gestor", password=PASSWORD)
    yield sessions
    sessions.kw["bind"].dispose()


@pytest.mark.parametrize("typed,stored", [
    ("TRD", "trd"), ("  trd\t", "trd"), ("ｔｒｄ", "trd"),  # fullwidth letters (NFKC)
    ("Straße", "strasse"),  # casefold, not lower
    ("ﬁscal", "fiscal"),  # the ligature
])
def test_a_username_is_normalized_as_unicode_nfkc_casefold_then_trimmed(typed, stored):
    assert normalized_username(typed) == stored


@pytest.mark.parametrize("second", ["GESTOR", " gestor ", "Ｇｅｓｔｏｒ"])
def test_a_second_account_normalizing_the_same_is_refused(store, second):
    # before: "TRD" was created beside "trd", and five failures on it locked the real one out
    with store.begin() as session, pytest.raises(DocketError, match=f"o usuário {second.strip()} já existe "
                                                                    r"\(como gestor\)"):
        create_user(session, username=second, full_name="Outro", role="gestor", password=PASSWORD)
    with store() as session:
        assert session.scalars(sa.text("SELECT username FROM users")).all() == ["gestor"]


def test_an_account_is_stored_normalized_and_logs_in_however_its_name_is_typed(store):
    with store.begin() as session:
        user = create_user(session, username=" Fiscal ", full_name="Fiscal", role="fiscal", password=PASSWORD,
                           registration="1")
    assert user.username == "fiscal"
    with store() as session:
        assert authenticate(session, "FISCAL", PASSWORD).id == user.id
        assert authenticate(session, "fiscal", "outra-senha-qualquer") is None


def test_an_empty_username_is_refused(store):
    with store.begin() as session, pytest.raises(DocketError, match="não pode ser vazio"):
        create_user(session, username="   ", full_name="Ninguém", role="gestor", password=PASSWORD)


def test_two_accounts_stored_before_normalization_log_in_as_neither(store):
    # made by an older version: which of the two a login means cannot be told
    with store.begin() as session:
        session.execute(sa.text("UPDATE users SET username = 'Gestor'"))
        create_user(session, username="fiscal", full_name="Fiscal", role="fiscal", password=PASSWORD,
                    registration="1")
        session.execute(sa.text("UPDATE users SET username = 'gestor ' WHERE username = 'fiscal'"))
    with store() as session:
        assert authenticate(session, "gestor", PASSWORD) is None


def test_a_password_change_is_audited_and_refuses_a_short_one(store):
    with store.begin() as session, pytest.raises(DocketError, match="10 caracteres"):
        change_password(session, "gestor", "curta")
    with store.begin() as session:
        change_password(session, "GESTOR", "outra-senha-longa")
    with store() as session:
        assert authenticate(session, "gestor", "outra-senha-longa") is not None
        assert authenticate(session, "gestor", PASSWORD) is None
        assert verified_entries(session) == 2  # CriarUsuario, AlterarSenha
