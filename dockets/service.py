"""The docket service: what the docket sink, the CLI and the web app do to the store.

Every function takes a SQLAlchemy session and an `Actor`, enforces who may see and do
what, and writes an audit entry for every state change. The legal logic (stages,
deadlines) is the pure `dockets.workflow`; rendering is `dockets.document`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
from sqlalchemy import Select, delete, func, select
from sqlalchemy.orm import Session

from dockets import audit as audit_log
from dockets import concurrent
from dockets import workflow
from dockets.bundle import BundledFile, build_manual_bundle
from dockets.calendar import BusinessCalendar
from dockets.signing import SigningKey
from dockets.store import (AppealPdf, Attachment, AuditEntry, Docket, DocketPdf, EvidenceBundle, JudgmentPdf, Operator,
                           User, YearCounter)
from kernel.errors import FiscalizaError
from rules.model import split_legal_basis
from rules.recidivism import Prior, recurrence

AUTOMATIC, MANUAL = "automatico", "manual"
SYSTEM_ROLE = "sistema"


class DocketError(FiscalizaError):
    """A refused request, with a message for the user (pt-BR)."""


class NotFound(DocketError):
    """No such docket for this actor: also what another operator's docket looks like."""


class Forbidden(DocketError):
    """The actor's role may not do this."""


@dataclass(frozen=True)
class Actor:
    user_id: int | None
    role: str  # fiscal | gestor | titular | operador | sistema
    operator_id: str | None = None
    name: str = "fiscaliza"

    @classmethod
    def of(cls, user: User) -> Actor:
        return cls(user.id, user.role, user.operator_id, user.full_name)


SYSTEM = Actor(None, SYSTEM_ROLE)
STAFF_ROLES = ("fiscal", "gestor", "titular")  # the Órgão Gerencial's people


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


# --- audit log -----------------------------------------------------------------------

def audit(session: Session, actor: Actor, entity: str, entity_id: str | int, action: str,
          payload: Mapping[str, Any], at: dt.datetime | None = None) -> AuditEntry:
    """Append one entry to the keyed chain (dockets.audit)."""
    try:
        return audit_log.append(session, actor_id=actor.user_id, actor_role=actor.role, entity=entity,
                                entity_id=str(entity_id), action=action, payload=payload, at=at)
    except audit_log.AuditError as exc:
        raise DocketError(str(exc)) from None


def audit_docket(session: Session, actor: Actor, docket: Docket, action: str,
                 payload: Mapping[str, Any]) -> AuditEntry:
    """An entry about a docket, certifying its resulting state (stage, fine, digests of
    its record, bundle, PDF and attachments): written after every change to them."""
    return audit(session, actor, "docket", docket.id, action,
                 {**payload, "state": audit_log.docket_state(session, docket)})


# --- ingestion (the docket sink) -----------------------------------------------------

@dataclass
class IngestReport:
    created: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)  # drafts a newer record of theirs updated
    # autos lavrados a newer record of theirs came for (a vehicle-day judged again on late
    # data, engine.late): noted in their history, the auto unchanged
    noted: list[int] = field(default_factory=list)
    already: int = 0
    not_confirmed: int = 0
    # confirmed records without a fine: findings for the Órgão (Canarana's art. 6º II, under
    # pena de rescisão), never an auto de infração
    without_fine: int = 0


def ensure_operators(session: Session, operators: Mapping[str, str]) -> None:
    for operator_id, name in operators.items():
        if session.get(Operator, operator_id) is None:
            session.add(Operator(id=operator_id, name=name))
    session.flush()


def ingest(session: Session, records: Iterable[Mapping], *, plates: Mapping[str, str], ufir_brl: float,
           bundle_for: Callable[[Mapping], bytes] | None = None,
           place_for: Callable[[Mapping], str | None] | None = None) -> IngestReport:
    """Make a draft docket (awaiting lavratura) for every confirmed infraction not yet
    seen. Idempotent by `infraction_id`: the same infraction twice never makes two.

    The `infractions` topic is a change log: a later record with the id of a draft (its
    trip_id filled in at day close, or turned `justified` by an occurrence registered
    since) updates the draft and its bundle, recorded in the audit log. An auto already
    lavrado stays as issued."""
    report = IngestReport()
    for record in records:
        # locked: a fiscal lavrando it meanwhile waits, and then sees it updated, or the
        # update sees it lavrado (no change to an auto as issued)
        existing = session.scalar(select(Docket).where(Docket.infraction_id == record["infraction_id"])
                                  .with_for_update())
        if existing is not None:
            if _update_draft(session, existing, record, plates, ufir_brl, bundle_for, place_for):
                report.updated.append(existing.id)
            elif _note_after_lavratura(session, existing, record):
                report.noted.append(existing.id)
            else:
                report.already += 1
            continue
        if record["status"] != "confirmed":
            report.not_confirmed += 1
            continue
        if int(record["fine_ufir"]) == 0:  # no fine to charge: not an auto (rules.line_interruption)
            report.without_fine += 1
            continue
        docket = _docket_from_record(record, plates, ufir_brl, place_for)
        session.add(docket)
        session.flush()
        _attach_bundle(session, docket, record, bundle_for)
        audit_docket(session, SYSTEM, docket, "Registrar",
                     {"infraction_id": docket.infraction_id, "code": docket.code, "bundle_sha256": docket.bundle_sha256})
        report.created.append(docket.id)
    session.flush()
    return report


def _attach_bundle(session: Session, docket: Docket, record: Mapping,
                   bundle_for: Callable[[Mapping], bytes] | None) -> None:
    if bundle_for is None:
        return
    data = bundle_for(record)
    digest = hashlib.sha256(data).hexdigest()
    if docket.bundle_sha256 is not None:
        session.execute(delete(EvidenceBundle).where(EvidenceBundle.docket_id == docket.id))
        session.flush()
    session.add(EvidenceBundle(docket_id=docket.id, sha256=digest, data=data))
    docket.bundle_sha256 = digest


# The record's fields a draft copies (the rest is the docket's own life); its legal_basis
# fills two columns, legal_basis and legal_text.
_RECORD_FIELDS = ("route_id", "direction_id", "trip_id", "description", "legal_basis", "lat", "lon")


def _update_draft(session: Session, docket: Docket, record: Mapping, plates, ufir_brl: float,
                  bundle_for, place_for) -> bool:
    """A newer record of a draft's infraction updates the draft; anything else, nothing."""
    if dict(record) == docket.infraction or docket.stage != workflow.Stage.RASCUNHO.value \
            or docket.source != AUTOMATIC:
        return False
    fresh = _docket_from_record(record, plates, ufir_brl, place_for)
    changed = {name: record.get(name) for name in ("status", *_RECORD_FIELDS, "fine_ufir")
               if record.get(name) != docket.infraction.get(name)}
    for name in (*_RECORD_FIELDS, "legal_text", "fine_ufir", "occurred_at", "place"):
        setattr(docket, name, getattr(fresh, name))
    docket.infraction = dict(record)
    _attach_bundle(session, docket, record, bundle_for)
    audit_docket(session, SYSTEM, docket, "Atualizar registro",
                 {"infraction_id": docket.infraction_id, "changed": changed, "bundle_sha256": docket.bundle_sha256})
    return True


NEW_DATA_AFTER_LAVRATURA = "NovosDadosAposLavratura"


def _note_after_lavratura(session: Session, docket: Docket, record: Mapping) -> bool:
    """A newer record of an automatic auto already lavrado (its day judged again on late
    data): the auto stays as issued, changed only by the docket workflow, and its history
    shows the fiscal what the new data say, against the record it was lavrado on. Once per
    distinct record."""
    if docket.source != AUTOMATIC or docket.stage == workflow.Stage.RASCUNHO.value or \
            dict(record) == docket.infraction:
        return False
    digest = hashlib.sha256(json.dumps(dict(record), sort_keys=True).encode()).hexdigest()
    noted = session.scalars(select(AuditEntry.payload).where(
        AuditEntry.entity == "docket", AuditEntry.entity_id == str(docket.id),
        AuditEntry.action == NEW_DATA_AFTER_LAVRATURA))
    if any(payload.get("record_sha256") == digest for payload in noted):
        return False
    changed = {name: {"lavrado": docket.infraction.get(name), "novo": record.get(name)}
               for name in sorted(set(record) | set(docket.infraction))
               if name != "detected_at" and record.get(name) != docket.infraction.get(name)}
    fields = ", ".join(f"{name}: {_shown(v['lavrado'])} → {_shown(v['novo'])}"
                       for name, v in changed.items() if name != "evidence")
    if "evidence" in changed:
        fields = f"{fields}, evidências alteradas" if fields else "evidências alteradas"
    audit_docket(session, SYSTEM, docket, NEW_DATA_AFTER_LAVRATURA, {
        "infraction_id": docket.infraction_id, "record_sha256": digest, "changed": changed,
        "note": f"Novos dados após a lavratura ({fields}). O auto lavrado não muda: só o rito do Código "
                "Disciplinar o altera."})
    return True


def _shown(value) -> str:
    return "—" if value is None else str(value)


def _docket_from_record(record: Mapping, plates: Mapping[str, str], ufir_brl: float,
                        place_for: Callable[[Mapping], str | None] | None, source: str = AUTOMATIC) -> Docket:
    vehicle = record.get("vehicle_id")
    dispositivo, law_text = split_legal_basis(record["legal_basis"])
    return Docket(
        infraction_id=record["infraction_id"], source=source, code=record["code"], group=record["group"],
        fine_ufir=int(record["fine_ufir"]), ufir_brl=ufir_brl, operator_id=record["operator_id"],
        route_id=record.get("route_id"), direction_id=record.get("direction_id"), trip_id=record.get("trip_id"),
        vehicle_id=vehicle, plate=plates.get(vehicle) if vehicle else None,
        service_date=dt.date.fromisoformat(record["service_date"]),
        occurred_at=dt.datetime.fromisoformat(record["occurred_at"]),
        lat=record.get("lat"), lon=record.get("lon"),
        place=place_for(record) if place_for else record.get("place"),
        description=record["description"], legal_basis=dispositivo, legal_text=law_text, infraction=dict(record),
        stage=workflow.Stage.RASCUNHO.value, status=_status_json(workflow.DocketStatus.initial()),
        created_at=utcnow(),
    )


# --- reading, with the operator isolation ---------------------------------------------

def visible(actor: Actor) -> Select:
    """The dockets an actor may see: an operator only its own company's, once lavrados."""
    query = select(Docket)
    if actor.role == "operador":
        # Only autos lavrados reach the company (art. 5 § 3º): drafts stay inside the Órgão.
        query = query.where(Docket.operator_id == actor.operator_id,
                            Docket.stage != workflow.Stage.RASCUNHO.value)
    elif actor.role not in (*STAFF_ROLES, SYSTEM_ROLE):
        query = query.where(False)
    return query


def get_docket(session: Session, actor: Actor, docket_id: int) -> Docket:
    docket = session.scalar(visible(actor).where(Docket.id == docket_id))
    if docket is None:
        raise NotFound("Auto de infração não encontrado.")
    return docket


def bundle_of(session: Session, actor: Actor, docket_id: int) -> EvidenceBundle:
    docket = get_docket(session, actor, docket_id)
    bundle = session.get(EvidenceBundle, docket.id)
    if bundle is None:
        raise NotFound("Este auto não tem pacote de evidências.")
    return bundle


def pdf_of(session: Session, actor: Actor, docket_id: int) -> DocketPdf:
    docket = get_docket(session, actor, docket_id)
    pdf = session.get(DocketPdf, docket.id)
    if pdf is None:
        raise NotFound("O auto ainda não foi lavrado: não há PDF.")
    return pdf


def judgment_pdf_of(session: Session, actor: Actor, docket_id: int) -> JudgmentPdf:
    """The judgment of the defence as stored by the act that recorded it: the document of
    record, served as it was signed (never rendered again)."""
    return _judgment_of(session, actor, docket_id, JudgmentPdf, "julgado_em", "A defesa deste auto ainda não foi "
                        "julgada.", "O julgamento desta defesa")


def appeal_pdf_of(session: Session, actor: Actor, docket_id: int) -> AppealPdf:
    """The judgment of the recurso as stored by the act that recorded it, as
    `judgment_pdf_of` serves the defence's."""
    return _judgment_of(session, actor, docket_id, AppealPdf, "recurso_julgado_em", "O recurso deste auto ainda não "
                        "foi julgado.", "O julgamento deste recurso")


def _judgment_of(session: Session, actor: Actor, docket_id: int, model, judged_at: str, not_judged: str,
                 judgment: str):
    docket = get_docket(session, actor, docket_id)
    pdf = session.get(model, docket.id)
    if pdf is None:
        if getattr(status_of(docket), judged_at) is None:
            raise NotFound(not_judged)
        raise NotFound(f"{judgment} foi registrado sem o seu PDF (antes de o sistema guardá-lo no ato): não há "
                       "documento do julgamento a baixar; a decisão e a fundamentação constam do histórico do auto.")
    return pdf


def attachment_of(session: Session, actor: Actor, attachment_id: int) -> Attachment:
    attachment = session.get(Attachment, attachment_id)
    if attachment is None:
        raise NotFound("Anexo não encontrado.")
    get_docket(session, actor, attachment.docket_id)  # NotFound when not the actor's
    return attachment


@dataclass(frozen=True)
class Listing:
    """One page of the dockets an actor sees, with what the list's header counts."""

    total: int  # of the stage filtered, all pages
    dockets: list[Docket]  # this page, newest first
    fines: list[tuple]  # (operator_id, stage, fine_ufir, ufir_brl) of every visible docket
    by_stage: dict[str, int]  # visible dockets per stage, whatever the filter


def listing(session: Session, actor: Actor, stage: str, page: int, page_size: int) -> Listing:
    query = visible(actor)
    if stage:
        query = query.where(Docket.stage == stage)
    total = session.scalar(select(func.count()).select_from(query.subquery()))
    dockets = session.scalars(query.order_by(Docket.occurred_at.desc(), Docket.id.desc())
                              .offset((page - 1) * page_size).limit(page_size)).all()
    fines = session.execute(visible(actor).with_only_columns(
        Docket.operator_id, Docket.stage, Docket.fine_ufir, Docket.ufir_brl)).all()
    by_stage = dict(session.execute(visible(actor).with_only_columns(Docket.stage, func.count())
                                    .group_by(Docket.stage)).all())
    return Listing(total, list(dockets), list(fines), by_stage)


def operator_names(session: Session) -> dict[str, str]:
    return dict(session.execute(select(Operator.id, Operator.name)).all())


def pdf_state(session: Session, docket_id: int,
              model: type[DocketPdf] | type[JudgmentPdf] | type[AppealPdf] = DocketPdf) -> tuple[bool, bool]:
    """(whether the docket has its PDF, whether that PDF is signed): the auto's, or with
    `model=JudgmentPdf` (`AppealPdf`) the judgment of its defence (of its recurso)."""
    signed = session.scalar(select(model.signature.is_not(None)).where(model.docket_id == docket_id))
    return signed is not None, bool(signed)


def history(session: Session, actor: Actor, docket_id: int) -> list[AuditEntry]:
    docket = get_docket(session, actor, docket_id)
    return list(session.scalars(select(AuditEntry).where(AuditEntry.entity == "docket",
                                                         AuditEntry.entity_id == str(docket.id))
                                .order_by(AuditEntry.id)))


# --- acting on a docket ---------------------------------------------------------------

def status_of(docket: Docket) -> workflow.DocketStatus:
    return msgspec.convert(docket.status, workflow.DocketStatus)


def _status_json(status: workflow.DocketStatus) -> dict:
    return json.loads(msgspec.json.encode(status))


def first_time(session: Session, docket: Docket) -> bool:
    """Art. 12: no earlier auto of the same operator was upheld (julgado procedente,
    multa devida or paga)."""
    upheld = (workflow.Stage.JULGADO_PROCEDENTE.value, workflow.Stage.RECURSO_INTERPOSTO.value,
              workflow.Stage.MULTA_DEVIDA.value, workflow.Stage.PAGO.value)
    earlier = session.scalar(select(func.count(Docket.id)).where(
        Docket.operator_id == docket.operator_id, Docket.id != docket.id,
        Docket.occurred_at < docket.occurred_at, Docket.stage.in_(upheld)))
    return not earlier


# the judgments kept as documents of record: where each is stored, and the name its act's
# audit entry certifies its digest under (as dockets.audit's docket state does)
_JUDGMENT_PDFS: dict[type, tuple[type[JudgmentPdf] | type[AppealPdf], str]] = {
    workflow.JulgarDefesa: (JudgmentPdf, "judgment_pdf_sha256"),
    workflow.JulgarRecurso: (AppealPdf, "appeal_pdf_sha256"),
}


def perform(session: Session, actor: Actor, docket_id: int, action: workflow.Action, calendar: BusinessCalendar,
            *, note: str | None = None, attachments: Iterable[tuple[str, str, bytes]] = (),
            renderer: Callable[[Docket, bytes | None, audit_log.Head | None], bytes] | None = None,
            judgment_renderer: Callable[[Docket, workflow.JulgarDefesa | workflow.JulgarRecurso, Actor], bytes]
            | None = None,
            signer: SigningKey | None = None, late_registration: bool = False) -> Docket:
    """Apply one workflow action for `actor`; the audit entry records it.

    `late_registration`: the gestor registers a paper act (workflow.PAPER_ACTS) of
    another role with its own date; the shell has checked its protocol and reason,
    which `note` carries into the audit entry.

    `Lavrar` numbers the auto (sequential per year), renders its PDF with `renderer` and
    signs the PDF with `signer`, the Órgão's key. `JulgarDefesa` renders the judgment's PDF
    with `judgment_renderer` (the docket judged, the decision, the judge), signs and keeps it
    the same way: the act's entry certifies its digest, and it is never rendered again.
    `JulgarRecurso` does the same with the judgment of the recurso (AppealPdf).
    """
    docket = get_docket(session, actor, docket_id)
    if isinstance(action, workflow.Lavrar):
        # the autos of its drive may be lavrados in this act: lock them all, in id order, so
        # that two fiscals lavrando a D-11 and its A-07 at once wait, not deadlock
        drive = sorted([docket.id, *(d.id for d in _same_drive(session, docket, calendar))])
        session.scalars(select(Docket.id).where(Docket.id.in_(drive)).order_by(Docket.id).with_for_update()).all()
    session.refresh(docket, with_for_update=True)  # one act at a time on an auto (and not during a sink update)
    allowed = workflow.ROLE_ACTIONS.get(actor.role, frozenset())
    if late_registration:
        if actor.role != "gestor" or type(action) not in workflow.PAPER_ACTS:
            raise Forbidden("Somente o gestor registra tardiamente um ato feito em papel (defesa, recurso, "
                            "ciência, pagamento).")
    elif actor.role != SYSTEM_ROLE and type(action) not in allowed:
        raise Forbidden(f"O perfil {actor.role} não pode {workflow.ACTION_LABELS[type(action)].lower()}.")
    if isinstance(action, workflow.JulgarRecurso) and judged_the_defence(session, actor, docket):
        raise Forbidden(appeal_judge_refusal(calendar))
    if isinstance(action, workflow.Lavrar) and docket.source == AUTOMATIC \
            and docket.infraction.get("status") != "confirmed":
        # the engine's latest record no longer accuses (justified by an occurrence
        # registered since, or withdrawn): no auto is issued on it
        raise DocketError(f"O registro da infração está {docket.infraction.get('status')!r}, não confirmado: "
                          "o auto não pode ser lavrado.")
    try:
        status = workflow.apply(status_of(docket), action, calendar, first_time=first_time(session, docket))
    except workflow.WorkflowError as exc:
        raise DocketError(str(exc)) from None
    docket.status = _status_json(status)
    docket.stage = status.stage.value
    upcoming = workflow.next_deadline(status, calendar)
    docket.next_deadline_label, docket.next_deadline = upcoming if upcoming else (None, None)
    payload: dict[str, Any] = {"action": json.loads(workflow.encode_action(action)), "stage": docket.stage}
    if note:
        payload["note"] = note
    if late_registration:
        payload["late_registration"] = True
    if isinstance(action, workflow.Lavrar):
        docket.year = action.on.year
        docket.number = _next_number(session, action.on.year)
        docket.lavrado_por = actor.user_id
        payload["number"] = docket.label
        prior = _recidivism(session, docket, calendar)
        if prior is not None:
            payload["reincidencia"] = prior.label
            _double_for_recidivism(docket, prior, calendar)
        drive = _same_drive(session, docket, calendar)
        for other in drive:
            if other.stage == workflow.Stage.RASCUNHO.value and other.infraction.get("status") == "confirmed":
                # art. 10: both penalties of one drive apply together, so both autos are
                # lavrados in one act and each can name the other by its number
                perform(session, actor, other.id, action, calendar, renderer=renderer, signer=signer)
        named = [other for other in drive if other.number is not None]
        if named:
            payload["concomitantes"] = [other.label for other in named]
            _name_same_drive(docket, named, calendar)
    added = []
    for filename, content_type, data in attachments:
        added.append(Attachment(docket_id=docket.id, filename=filename, content_type=content_type, size=len(data),
                                sha256=hashlib.sha256(data).hexdigest(), data=data, uploaded_by=actor.user_id,
                                uploaded_at=utcnow()))
    session.add_all(added)
    session.flush()
    if isinstance(action, workflow.Lavrar) and renderer is not None:
        bundle = session.get(EvidenceBundle, docket.id)
        # the auto prints the chain's head as it stands before its own entry (anchored)
        pdf = renderer(docket, bundle.data if bundle else None, audit_log.head(session))
        session.add(DocketPdf(docket_id=docket.id, sha256=hashlib.sha256(pdf).hexdigest(), data=pdf,
                              rendered_at=utcnow(), signature=signer.sign(pdf) if signer is not None else None))
        session.flush()
    judgment = _JUDGMENT_PDFS.get(type(action))
    if judgment is not None and judgment_renderer is not None:
        model, name = judgment
        pdf = judgment_renderer(docket, action, actor)
        digest = hashlib.sha256(pdf).hexdigest()
        session.add(model(docket_id=docket.id, sha256=digest, data=pdf, rendered_at=utcnow(),
                          signature=signer.sign(pdf) if signer is not None else None))
        session.flush()
        payload[name] = digest
    entry = audit_docket(session, actor, docket, type(action).__name__, payload)
    for attachment in added:
        attachment.audit_id = entry.id  # the act that filed it
    session.flush()
    return docket


def judged_the_defence(session: Session, actor: Actor, docket: Docket) -> bool:
    """Whether `actor` is the person who judged this auto's defence: the recurso goes to
    someone else (art. 7º §3º), even if that person has since become the titular."""
    if actor.user_id is None:
        return False
    judges = session.scalars(select(AuditEntry.actor_id).where(
        AuditEntry.entity == "docket", AuditEntry.entity_id == str(docket.id),
        AuditEntry.action == workflow.JulgarDefesa.__name__))
    return actor.user_id in set(judges)


def appeal_judge_refusal(calendar: BusinessCalendar) -> str:
    recurso = calendar.law_terms.recurso
    basis = f" ({recurso.basis})" if recurso is not None else ""
    return ("Quem julgou a defesa não julga o recurso: ele cabe ao titular do Órgão Gerencial que não "
            f"julgou a defesa{basis}.")


# an earlier auto counts for recidivism once its fine is imposed: judged procedente (and
# not reversed), due after the appeal, or paid
_UPHELD = (workflow.Stage.JULGADO_PROCEDENTE, workflow.Stage.RECURSO_INTERPOSTO, workflow.Stage.MULTA_DEVIDA,
           workflow.Stage.PAGO)


def _recidivism(session: Session, docket: Docket, calendar: BusinessCalendar) -> Docket | None:
    """The operator's latest auto of the same article, upheld, within the policy's window
    before this one's facts (the law's `Recidivism`, e.g. Lafaiete's art. 42 § 1º); None
    where the law has no recidivism rule or none counts."""
    law, days = calendar.law, calendar.recidivism_window_days
    if law is None or law.recidivism is None or days is None:
        return None
    earlier = session.scalars(select(Docket).where(
        Docket.operator_id == docket.operator_id, Docket.code == docket.code, Docket.id != docket.id,
        Docket.number.is_not(None))).all()
    by_id = {d.id: d for d in earlier}
    history = [Prior(d.operator_id, d.code, _aware(d.occurred_at), upheld=d.stage in _UPHELD, ref=d.id)
               for d in earlier]
    found = recurrence(law, docket.code, docket.operator_id, _aware(docket.occurred_at), history,
                       dt.timedelta(days=days))
    return None if found is None else by_id[found.ref]


def _aware(moment: dt.datetime) -> dt.datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


def _double_for_recidivism(docket: Docket, prior: Docket, calendar: BusinessCalendar) -> None:
    """The auto's fine multiplied by the law's factor, the reason written in its description
    (which the auto prints and the audit certifies)."""
    recidivism = calendar.law.recidivism
    base = docket.fine_ufir
    docket.fine_ufir = base * recidivism.factor
    times = "em dobro" if recidivism.factor == 2 else f"multiplicada por {recidivism.factor}"
    docket.description = (f"{docket.description.rstrip('.')}. Reincidência: auto nº {prior.label} pela mesma "
                          f"infração, mantido; multa {times} ({recidivism.basis}): {base} × {recidivism.factor} = "
                          f"{docket.fine_ufir} {calendar.law.fine_unit}")


def _same_drive(session: Session, docket: Docket, calendar: BusinessCalendar) -> list[Docket]:
    """The operator's other autos of the same drive (dockets.concurrent), in order."""
    form = calendar.law.auto if calendar.law is not None else None
    if form is None or not form.duties or docket.vehicle_id is None:
        return []
    mine = concurrent.facts_of(docket)
    candidates = session.scalars(select(Docket).where(
        Docket.operator_id == docket.operator_id, Docket.vehicle_id == docket.vehicle_id,
        Docket.service_date == docket.service_date, Docket.id != docket.id, Docket.source == AUTOMATIC)
        .order_by(Docket.occurred_at, Docket.id)).all()
    return [d for d in candidates if concurrent.same_drive(mine, concurrent.facts_of(d), form)]


def _name_same_drive(docket: Docket, others: list[Docket], calendar: BusinessCalendar) -> None:
    """The auto's description names the autos of its drive and why both apply (art. 10)."""
    words = concurrent.note(calendar.law.auto, docket.code, [(d.label, d.code) for d in others])
    if words:
        docket.description = f"{docket.description.rstrip('.')}. {words}"


def _next_number(session: Session, year: int) -> int:
    """The year's next auto number, atomically: one upsert, so two lavraturas at once
    (even the year's first two) wait for each other instead of colliding."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    statement = insert(YearCounter).values(year=year, last_number=1)
    statement = statement.on_conflict_do_update(
        index_elements=[YearCounter.year], set_={"last_number": YearCounter.last_number + 1}
    ).returning(YearCounter.last_number)
    return session.execute(statement).scalar_one()


def create_manual(session: Session, actor: Actor, record: Mapping, *, plates: Mapping[str, str],
                  ufir_brl: float, attachments: Iterable[tuple[str, str, bytes]] = (),
                  signer: SigningKey | None = None) -> Docket:
    """A fiscal's manual infraction (a code the telemetry cannot prove), as a draft, with the
    files the fiscal attached (photos, documents: checked as a defence's are). They are
    stored as the auto's attachments and make its evidence bundle with the record, signed
    (`bundle.build_manual_bundle`), which the PDF names by its SHA-256 and lists."""
    if actor.role != "fiscal":
        raise Forbidden("Somente o fiscal registra infrações manuais.")
    if session.scalar(select(Docket.id).where(Docket.infraction_id == record["infraction_id"])):
        raise DocketError("Esta infração já foi registrada.")
    docket = _docket_from_record(record, plates, ufir_brl, None, source=MANUAL)
    session.add(docket)
    session.flush()
    files = [BundledFile(filename, content_type, data) for filename, content_type, data in attachments]
    added = [Attachment(docket_id=docket.id, filename=f.filename, content_type=f.content_type, size=len(f.data),
                        sha256=hashlib.sha256(f.data).hexdigest(), data=f.data, uploaded_by=actor.user_id,
                        uploaded_at=utcnow()) for f in files]
    session.add_all(added)
    _attach_bundle(session, docket, record, lambda r: build_manual_bundle(infraction=r, attachments=files,
                                                                          signer=signer))
    session.flush()
    entry = audit_docket(session, actor, docket, "RegistrarManual",
                         {"infraction_id": docket.infraction_id, "code": docket.code,
                          "note": record.get("evidence", {}).get("relato"), "bundle_sha256": docket.bundle_sha256})
    for attachment in added:
        attachment.audit_id = entry.id  # the act that filed it
    session.flush()
    return docket


def totals_by_operator(session: Session, actor: Actor) -> list[tuple[str, int, int]]:
    """(operator, autos, UFIR) of the autos whose fine is due or paid (art. 10: each counts)."""
    due = (workflow.Stage.MULTA_DEVIDA.value, workflow.Stage.PAGO.value)
    query = visible(actor).where(Docket.stage.in_(due)).subquery()
    rows = session.execute(select(query.c.operator_id, func.count(), func.sum(query.c.fine_ufir))
                           .group_by(query.c.operator_id).order_by(query.c.operator_id))
    return [(r[0], r[1], int(r[2] or 0)) for r in rows]
