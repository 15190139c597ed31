"""A docket store of the demo day's confirmed infractions, made once and copied per test."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest
from stores import open_test_store

from dockets.calendar import BusinessCalendar
from dockets.sink import ingest_replay
from rules.joao_neiva.anexo_i import LAW


@pytest.fixture(scope="session")
def calendar() -> BusinessCalendar:
    return BusinessCalendar.for_municipality("ES", municipal_holidays=[dt.date(2026, 12, 8)], law=LAW)


@pytest.fixture(scope="session")
def demo_store_file(demo_day, tmp_path_factory, signing_key):
    path = tmp_path_factory.mktemp("store") / "dockets.sqlite3"
    sessions = open_test_store(f"sqlite:///{path}")
    ingest_replay(sessions, demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context, demo_day.records(), signer=signing_key)
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


# --- a simulated day with every detector's fault: an auto of each automatic code ---

class EveryCodeDay:
    """The João Neiva sample on 1 Dec 2026 (seed 7) with every fault the simulator injects
    (one per detector), replayed with the shipped policy except art. 45's threshold at
    100 %, so that the day's suppressed trip (98,5 % of the month's km were run) is a
    confirmed D-22 and not exempt: one confirmed infraction of each automatic code. Two
    pings of a parked bus on 1 Jan 2027 close December's other days, which had no telemetry
    at all (left out of art. 45, README): a month not seen whole confirms no D-22."""

    def __init__(self, root):
        from engine.loading import load_context
        from fiscaliza.demo import simulate_files
        from fiscaliza.replay import ReplayInputs, replay
        from kernel.policy import shipped_policy_path
        from rules.model import infraction_record
        from samples import joao_neiva
        from simulator import FAULTS, SimulationSettings

        date = dt.date(2026, 12, 1)
        simulated = simulate_files(None, None, SimulationSettings(date, date, 7, tuple(FAULTS)), root / "telemetry")
        with simulated.tachograph.open("a", encoding="utf-8") as tachograph:
            for second in (0, 10):
                tachograph.write(f'{{"vehicle_id": "JN-1011", "ts": "2027-01-01T10:00:{second:02d}-03:00", '
                                 '"lat": -19.7574776, "lon": -40.3852385, "speed_kmh": 0.0}\n')
        shipped = shipped_policy_path().read_text("utf-8")
        assert "min_efficiency = 0.98" in shipped
        policy = root / "policy.toml"
        policy.write_text(shipped.replace("min_efficiency = 0.98", "min_efficiency = 1.0"), "utf-8")
        feed, fleet = joao_neiva()
        self.inputs = ReplayInputs(feed=feed, fleet=fleet, tachograph=simulated.tachograph,
                                   catraca=simulated.catraca, policy=policy)
        self.context = load_context(self.inputs)
        self.result = replay(self.inputs)
        self.records = [infraction_record(i) for i in self.result.infractions]


@pytest.fixture(scope="session")
def every_code_day(tmp_path_factory) -> EveryCodeDay:
    return EveryCodeDay(tmp_path_factory.mktemp("every-code-day"))


@pytest.fixture(scope="session")
def every_code_sessions(every_code_day, tmp_path_factory, signing_key):
    """A docket store of `every_code_day`'s confirmed infractions (read only: shared)."""
    path = tmp_path_factory.mktemp("every-code-store") / "dockets.sqlite3"
    sessions = open_test_store(f"sqlite:///{path}")
    ingest_replay(sessions, every_code_day.inputs.static, every_code_day.inputs.telemetry, every_code_day.context,
                  [r for r in every_code_day.records], signer=signing_key)
    yield sessions
    sessions.kw["bind"].dispose()
