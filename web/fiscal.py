"""What a fiscal records by hand: occurrences (the `occurrences` contract of DESIGN.md)
and manual infractions of the codes the telemetry cannot prove."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from zoneinfo import ZoneInfo

from sqlalchemy.orm import Session

from dockets import service
from dockets.occurrences import OCCURRENCE_KINDS, list_occurrences, occurrence_record, register_occurrence  # noqa: F401
from dockets.service import Actor, DocketError, Forbidden
from dockets.store import Docket, Occurrence, Operator
from rules.model import CONFIRMED, infraction_id, join_legal_basis
from rules.pack import Pack
from telemetry.contracts import EARLIEST
from web.format import parse_local_datetime
from web.forms import FormError

_SHORT = 64


def _field(form: Mapping[str, str], name: str, limit: int = _SHORT) -> str:
    value = str(form.get(name) or "").strip()
    if len(value) > limit:
        raise FormError(f"Campo “{name}” longo demais (máximo de {limit} caracteres).")
    return value


# --- occurrences -------------------------------------------------------------------------

def occurrence_from_form(session: Session, actor: Actor, form: Mapping[str, str], tz: ZoneInfo,
                         now: dt.datetime) -> Occurrence:
    kind = _field(form, "kind")
    start = parse_local_datetime(_field(form, "start"), tz)
    end = parse_local_datetime(_field(form, "end"), tz)
    if start is None or end is None:
        raise FormError("Informe o início e o fim da ocorrência (data e hora).")
    geometry = None
    raw_geometry = _field(form, "geometry", limit=200_000)
    if raw_geometry:
        try:
            geometry = json.loads(raw_geometry)
        except (ValueError, RecursionError):  # RecursionError: [ nested beyond the parser's stack
            raise FormError("A geometria deve ser um objeto GeoJSON válido.") from None
        if not isinstance(geometry, dict) or not isinstance(geometry.get("type"), str):
            raise FormError("A geometria deve ser um objeto GeoJSON válido (com “type”).")
    try:
        return register_occurrence(session, actor, occurrence_id=_field(form, "id") or None, kind=kind,
                                   start=start, end=end, route_id=_field(form, "route_id") or None,
                                   vehicle_id=_field(form, "vehicle_id") or None, geometry=geometry,
                                   note=_field(form, "note", limit=2000) or None, now=now)
    except Forbidden:
        raise
    except DocketError as exc:
        raise FormError(str(exc)) from None


# --- manual infractions ----------------------------------------------------------------------

def manual_codes(pack: Pack) -> list[str]:
    """The codes of the municipality's law a fiscal records: every one the telemetry does not detect."""
    return [code for code in pack.law.articles if code not in pack.catalogue]


def manual_record(*, pack: Pack, code: str, operator_id: str, vehicle_id: str | None, route_id: str | None,
                  occurred_at: dt.datetime, place: str, relato: str, fiscal: str) -> dict:
    """The infraction record (DESIGN.md contract) of a fiscal's manual infraction. The
    same facts always give the same `infraction_id`, so it cannot be registered twice."""
    article = pack.law.articles[code]
    return {
        "infraction_id": infraction_id(code, "manual", operator_id, vehicle_id or "", route_id or "",
                                       occurred_at.isoformat()),
        "code": code,
        "group": article.group,
        "fine_ufir": article.fine,
        "status": CONFIRMED,
        "operator_id": operator_id,
        "route_id": route_id,
        "direction_id": None,
        "trip_id": None,
        "vehicle_id": vehicle_id,
        "service_date": occurred_at.date().isoformat(),
        "occurred_at": occurred_at.isoformat(),
        "lat": None,
        "lon": None,
        "place": place,
        "description": relato,
        "legal_basis": join_legal_basis(article.legal_basis, article.text),
        "evidence": {"relato": relato, "fiscal": fiscal},
    }


def manual_from_form(session: Session, actor: Actor, form: Mapping[str, str], *, pack: Pack, tz: ZoneInfo,
                     now: dt.datetime, fleet: Mapping, ufir_brl: float, registration: str | None,
                     attachments: Sequence[tuple[str, str, bytes]] = (), signer=None) -> Docket:
    """The manual infraction of a submitted form, with the files attached to it (already
    checked by `web.security.check_upload`, as a defence's)."""
    if actor.role != "fiscal":
        raise Forbidden("Somente o fiscal registra infrações manuais.")
    code = _field(form, "code")
    if code in pack.catalogue:
        raise FormError(f"{code} é detectada automaticamente pela telemetria: não se registra manualmente.")
    if code not in pack.law.articles:
        raise FormError(f"Escolha a infração da {pack.law.title}.")
    operator_id = _field(form, "operator_id")
    if not operator_id or session.get(Operator, operator_id) is None:
        raise FormError("Escolha a empresa operadora.")
    vehicle_id = _field(form, "vehicle_id") or None
    plate = _field(form, "plate", limit=16).upper() or None
    route_id = _field(form, "route_id") or None
    if vehicle_id is None and route_id is None:
        raise FormError("Identifique a linha ou o veículo (art. 5º, II).")
    if vehicle_id is not None and vehicle_id in fleet:
        vehicle = fleet[vehicle_id]
        if vehicle.operator_id != operator_id:
            raise FormError(f"O veículo {vehicle_id} não pertence à empresa {operator_id}.")
        if plate and plate != vehicle.plate.upper():
            raise FormError(f"A placa cadastrada do veículo {vehicle_id} é {vehicle.plate}.")
        plate = vehicle.plate
    occurred_at = parse_local_datetime(_field(form, "occurred_at"), tz)
    if occurred_at is None:
        raise FormError("Informe a data e a hora da infração.")
    if occurred_at > now:
        raise FormError("A data e a hora da infração não podem estar no futuro.")
    if occurred_at < EARLIEST:  # the same window the engine's decoder holds telemetry to
        raise FormError(f"A data da infração não pode ser anterior a {EARLIEST:%d/%m/%Y}.")
    place = _field(form, "place", limit=500)
    if not place:
        raise FormError("Informe o local da infração (art. 5º, III).")
    relato = _field(form, "relato", limit=10_000).replace("\r\n", "\n")
    if not relato:
        raise FormError("Descreva a infração observada (relato do fiscal).")
    fiscal = actor.name + (f", matrícula {registration}" if registration else "")
    record = manual_record(pack=pack, code=code, operator_id=operator_id, vehicle_id=vehicle_id, route_id=route_id,
                           occurred_at=occurred_at, place=place, relato=relato, fiscal=fiscal)
    plates = {vehicle_id: plate} if vehicle_id and plate else {}
    return service.create_manual(session, actor, record, plates=plates, ufir_brl=ufir_brl, attachments=attachments,
                                 signer=signer)
