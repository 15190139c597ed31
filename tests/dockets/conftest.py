"""A docket store of the demo day's confirmed infractions, made once and copied per test."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest

from dockets.calendar import BusinessCalendar
from stores import open_test_store
from dockets.sink import ingest_replay


@pytest.fixture(scope="session")
def calendar() -> BusinessCalendar:
    return BusinessCalendar.for_municipality("ES", municipal_holidays=[dt.date(2026, 12, 8)])


@pytest.fixture(scope="session")
def demo_store_file(demo_day, tmp_path_factory, signing_key):
    path = tmp_path_factory.mktemp("store") / "dockets.sqlite3"
    sessions = open_test_store(f"sqlite:///{path}")
    ingest_replay(sessions, demo_day.inputs, demo_day.context, demo_day.records(), signer=signing_key)
    sessions.kw["bind"].dispose()
    return path


@pytest.fixture
def sessions(demo_store_file, tmp_path):
    """A fresh copy of the demo store: 5 draft autos (4 of TRD, 1 of VNV)."""
    path = tmp_path / "dockets.sqlite3"
    shutil.copy(demo_store_file, path)
    sessions = open_test_store(f"sqlite:///{path}")
    yield sessions
    sessions.kw["bind"].dispose()


@pytest.fixture
def actors(sessions):
    """Users of every role in the store: fiscal, gestor, and one operador per operator."""
    from dockets.service import Actor
    from dockets.users import create_user

    accounts = {"fiscal": ("fiscal", None), "gestor": ("gestor", None), "trd": ("operador", "TRD"),
                "vnv": ("operador", "VNV")}
    with sessions.begin() as session:
        return {name: Actor.of(create_user(session, username=name, full_name=f"Usuário {name}", role=role,
                                           password="senha-de-teste", operator_id=operator,
                                           registration="0042" if role == "fiscal" else None))
                for name, (role, operator) in accounts.items()}
