"""Occurrences registered by a fiscal: the contract's JSON, audited, and the outbox."""

from __future__ import annotations

import datetime as dt
import json
from zoneinfo import ZoneInfo

import pytest

from dockets.occurrences import occurrence_record, pending_publication, register_occurrence
from dockets.service import DocketError, Forbidden
from telemetry import Rejection, decode
from stores import verified_entries

SP = ZoneInfo("America/Sao_Paulo")


def _register(sessions, actor, **fields):
    with sessions.begin() as session:
        occurrence = register_occurrence(session, actor, **{
            "occurrence_id": "obra-1", "kind": "authorized_detour",
            "start": dt.datetime(2026, 12, 1, 13, 0, tzinfo=SP), "end": dt.datetime(2026, 12, 1, 15, 0, tzinfo=SP),
            "route_id": "201", "note": "obra na Rua Cachoeiro", **fields})
        return occurrence_record(occurrence, SP)


def test_an_occurrence_is_stored_as_the_contract_decodes_it(sessions, actors):
    record = _register(sessions, actors["fiscal"])
    assert record == {"id": "obra-1", "kind": "authorized_detour", "start": "2026-12-01T13:00:00-03:00",
                      "end": "2026-12-01T15:00:00-03:00", "route_id": "201", "note": "obra na Rua Cachoeiro"}
    decoded = decode("occurrences", json.dumps(record).encode())
    assert not isinstance(decoded, Rejection) and decoded.id == "obra-1"
    with sessions() as session:
        assert verified_entries(session) == 4 + 5 + 1  # users, dockets, the occurrence


def test_only_a_fiscal_registers_and_times_must_make_sense(sessions, actors):
    with pytest.raises(Forbidden):
        _register(sessions, actors["gestor"])
    with pytest.raises(DocketError, match="posterior"):
        _register(sessions, actors["fiscal"], end=dt.datetime(2026, 12, 1, 12, 0, tzinfo=SP))


@pytest.mark.parametrize("geometry", [
    {"type": "Polygon", "coordinates": [[[-40.4, -19.7], [-40.41, -19.7], [-40.41, -19.71]]]},  # not closed
    {"type": "Point", "coordinates": [float("nan"), -19.7]},
    {"type": "Hexagon", "coordinates": []},
])
def test_an_occurrence_the_engine_would_reject_is_refused(sessions, actors, geometry):
    # before: shown as registered, and never justified anything (the workers rejected it)
    with pytest.raises(DocketError, match="O motor recusaria esta ocorrência"):
        _register(sessions, actors["fiscal"], geometry=geometry)
    with sessions() as session:
        assert pending_publication(session) == []


def test_the_outbox_holds_what_is_not_yet_published(sessions, actors):
    _register(sessions, actors["fiscal"])
    _register(sessions, actors["fiscal"], occurrence_id="obra-2")
    with sessions.begin() as session:
        pending = pending_publication(session)
        assert [o.id for o in pending] == ["obra-1", "obra-2"]
        pending[0].published_at = dt.datetime(2026, 12, 1, 16, tzinfo=dt.timezone.utc)
    with sessions() as session:
        assert [o.id for o in pending_publication(session)] == ["obra-2"]
