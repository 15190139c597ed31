"""Occurrences (motivo justificado) registered by the Órgão Gerencial's fiscais: stored,
audited, and handed to the engine through the `occurrences` topic by an outbox (the
docket sink publishes what is not yet published, then marks it)."""

from __future__ import annotations

import datetime as dt
import json
import re
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from dockets import service
from dockets.service import STAFF_ROLES, Actor, DocketError, Forbidden
from dockets.store import Occurrence, occurrence_record  # noqa: F401 (its callers import it from here)
from telemetry import Rejection, decode

OCCURRENCE_KINDS = {
    "road_closure": "Interdição de via",
    "authorized_detour": "Desvio autorizado",
    "accident": "Acidente",
    "breakdown": "Pane do veículo",
    "other": "Outra",
}
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def register_occurrence(session: Session, actor: Actor, *, occurrence_id: str | None, kind: str,
                        start: dt.datetime, end: dt.datetime, route_id: str | None = None,
                        vehicle_id: str | None = None, geometry: dict | None = None,
                        note: str | None = None, now: dt.datetime | None = None) -> Occurrence:
    """Store one occurrence and audit it. Only a fiscal registers occurrences."""
    if actor.role != "fiscal":
        raise Forbidden("Somente o fiscal registra ocorrências.")
    if kind not in OCCURRENCE_KINDS:
        raise DocketError(f"Tipo de ocorrência desconhecido: {kind}.")
    if start.tzinfo is None or end.tzinfo is None:
        raise ValueError("occurrence times must be timezone-aware")
    if end <= start:
        raise DocketError("O fim da ocorrência deve ser posterior ao início.")
    if occurrence_id is None:
        occurrence_id = f"oc-{start:%Y%m%d}-{secrets.token_hex(4)}"
    if not _ID.match(occurrence_id):
        raise DocketError("Identificador inválido: use letras, números, ponto, hífen ou sublinhado (até 64).")
    if session.get(Occurrence, occurrence_id) is not None:
        raise DocketError(f"Já existe uma ocorrência com o identificador {occurrence_id}.")
    occurrence = Occurrence(id=occurrence_id, kind=kind, start=start.astimezone(dt.UTC),
                            end=end.astimezone(dt.UTC), route_id=route_id or None,
                            vehicle_id=vehicle_id or None, geometry=geometry, note=note or None,
                            created_by=actor.user_id, created_at=now or service.utcnow())
    # the engine's own decoder is the one validator of an occurrence: what it would reject
    # (an unclosed polygon, NaN, an unknown geometry type) is never shown as registered
    checked = decode("occurrences", json.dumps(occurrence_record(occurrence, dt.UTC)).encode(), "formulário")
    if isinstance(checked, Rejection):
        raise DocketError(f"O motor recusaria esta ocorrência: {checked.detail}")
    session.add(occurrence)
    session.flush()
    service.audit(session, actor, "occurrence", occurrence.id, "RegistrarOcorrencia",
                  occurrence_record(occurrence, dt.UTC))
    return occurrence


def list_occurrences(session: Session, actor: Actor, limit: int = 500) -> list[Occurrence]:
    if actor.role not in STAFF_ROLES:
        raise Forbidden("Somente o Órgão Gerencial consulta as ocorrências.")
    return list(session.scalars(select(Occurrence).order_by(Occurrence.start.desc()).limit(limit)))


def pending_publication(session: Session, limit: int = 500) -> list[Occurrence]:
    """Occurrences not yet on the `occurrences` topic, oldest first."""
    return list(session.scalars(select(Occurrence).where(Occurrence.published_at.is_(None))
                                .order_by(Occurrence.created_at, Occurrence.id).limit(limit)))
