"""What the pages show of a docket: plain values computed from the store, so that the
templates only lay them out."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from dockets import disputes, ptbr, service, workflow
from dockets.calendar import BusinessCalendar
from dockets.document import pickable_readings
from dockets.store import Attachment, AuditEntry, Docket, Operator, User
from rules.law import Law
from web import picking
from web.format import (
    ROLE_LABELS,
    brl,
    date_br,
    datetime_br,
    fine_brl,
    integer,
    size,
    ufir_value,
)

CHART_TITLES = {
    "velocidade": "Tacógrafo: velocidade × tempo",
    "disco": "Disco diagrama de 24 horas",
    "mapa": "Trajeto registrado × itinerário",
    "catraca": "Catraca: contador e lacre ao longo do dia",
}
CHART_ALTS = {
    "velocidade": "Gráfico da velocidade registrada pelo tacógrafo ao longo do tempo, com o intervalo da "
                  "infração destacado",
    "disco": "Disco diagrama de 24 horas do tacógrafo do veículo no dia da infração",
    "mapa": "Mapa do trajeto registrado pelo veículo sobre o itinerário da linha e seu corredor de tolerância",
    "catraca": "Registros da catraca no dia da infração: contador de passagens, estado do lacre e períodos em "
               "serviço, com o período da infração destacado",
}
EXTRA_ACTION_LABELS = {
    "Registrar": "Infração registrada (detecção automática)",
    "RegistrarManual": "Infração registrada pelo fiscal",
    "NovosDadosAposLavratura": "Novos dados após a lavratura",
    disputes.ACTION: "Leituras contestadas pela defesa",
}
ACTION_NAME_LABELS = {kind.__name__: label for kind, label in workflow.ACTION_LABELS.items()} | EXTRA_ACTION_LABELS
STATUS_DATES = (
    ("lavrado_em", "Lavratura"),
    ("notificado_em", "Ciência do autuado"),
    ("defesa_em", "Defesa apresentada"),
    ("julgado_em", "Julgamento da defesa"),
    ("recurso_em", "Recurso interposto"),
    ("recurso_julgado_em", "Julgamento do recurso"),
    ("suspenso_em", "Suspensão judicial"),
    ("retomado_em", "Fim da suspensão judicial"),
    ("pago_em", "Pagamento"),
    ("anistiado_em", "Anistia"),
)
def code_text(code: str, law: Law) -> str:
    article = law.articles.get(code)
    return article.text if article else ""


def stage_label(stage: str) -> str:
    return workflow.STAGE_LABELS[workflow.Stage(stage)]


def occurred_local(docket: Docket, tz: ZoneInfo) -> dt.datetime:
    """The infraction's date and time in local time (the store keeps the instant in UTC
    and reads it back aware)."""
    return docket.occurred_at.astimezone(tz)


@dataclass(frozen=True)
class DeadlineView:
    field: str
    label: str
    date: dt.date | None
    note: str
    overdue: bool
    unless: str | None = None  # workflow.Term.unless: "salvo se apresentar defesa (art. 8º, I)"

    @property
    def text(self) -> str:
        return date_br(self.date) + (f", {self.unless}" if self.unless else "")


# why no deadline runs, where the stage tells
NO_TERM = {
    workflow.Stage.RASCUNHO: "nenhum: aguarda a lavratura",
    workflow.Stage.DEFESA_APRESENTADA: "nenhum: a defesa aguarda julgamento",
    workflow.Stage.RECURSO_INTERPOSTO: "nenhum: o recurso aguarda julgamento",
} | {stage: "nenhum: processo encerrado" for stage in workflow.CLOSED_STAGES}


def _until(term: workflow.Term) -> str:
    """"Prazo de pagamento: até 14/12/2026, salvo se apresentar defesa (art. 8º, I)"."""
    return f"{term.label}: até {date_br(term.date)}" + (f", {term.unless}" if term.unless else "")


def term_text(term: workflow.Term) -> str:
    """"Prazo de defesa: até 21/12/2026 (faltam 13 dias úteis)"."""
    text = _until(term)
    if term.overdue:
        return f"{text} (vencido)"
    if term.days_left == 0:
        return f"{text} (vence hoje)"
    n = term.days_left
    unit = ("dia útil" if n == 1 else "dias úteis") if term.business_days else ("dia" if n == 1 else "dias")
    return f"{text} ({'falta' if n == 1 else 'faltam'} {n} {unit})"


@dataclass(frozen=True)
class TermsView:
    """The term running now, emphasized; the other running deadlines beside it, secondary."""

    current: str
    overdue: bool
    others: tuple[str, ...]


def terms_view(status: workflow.DocketStatus, calendar: BusinessCalendar, today: dt.date) -> TermsView:
    terms = workflow.running_terms(status, calendar, today)
    if not terms:
        return TermsView(NO_TERM.get(status.stage, "—"), False, ())
    first, *others = terms
    return TermsView(term_text(first), first.overdue, tuple(_until(t) for t in others))


@dataclass(frozen=True)
class DocketRow:
    id: int
    label: str
    code: str
    code_text: str  # the law's words for the code (Anexo I), so that a list reads without the law at hand
    occurred: str
    operator: str
    vehicle: str
    fine_ufir: str
    fine_brl: str
    stage: str
    stage_label: str
    terms: TermsView
    suspended: bool


def docket_rows(dockets: Iterable[Docket], operators: Mapping[str, str], calendar: BusinessCalendar,
                today: dt.date, tz: ZoneInfo, law: Law) -> list[DocketRow]:
    rows = []
    for docket in dockets:
        status = service.status_of(docket)
        vehicle = " / ".join(v for v in (docket.vehicle_id, docket.plate) if v) or "—"
        rows.append(DocketRow(
            id=docket.id, label=docket.label, code=docket.code, code_text=code_text(docket.code, law),
            occurred=occurred_local(docket, tz).strftime("%d/%m/%Y %H:%M"),
            operator=operators.get(docket.operator_id, docket.operator_id), vehicle=vehicle,
            fine_ufir=integer(docket.fine_ufir), fine_brl=brl(fine_brl(docket.fine_ufir, docket.ufir_brl)),
            stage=docket.stage, stage_label=stage_label(docket.stage), terms=terms_view(status, calendar, today),
            suspended=status.suspenso))
    return rows


@dataclass(frozen=True)
class FineSummary:
    operator: str
    due_count: int
    due_ufir: str
    due_brl: str
    open_count: int
    open_brl: str
    paid_count: int
    paid_brl: str


def fine_summary(dockets: Iterable[Docket], operators: Mapping[str, str]) -> list[FineSummary]:
    """Per operator: fines due, in process and paid. Art. 10: each auto carries its own fine."""
    closed_or_draft = {workflow.Stage.RASCUNHO, workflow.Stage.ARQUIVADO, workflow.Stage.ANISTIADO,
                       workflow.Stage.PAGO, workflow.Stage.MULTA_DEVIDA}
    totals: dict[str, dict[str, list]] = {}
    for docket in dockets:
        bucket = totals.setdefault(docket.operator_id, {"due": [0, 0, Decimal(0)], "open": [0, 0, Decimal(0)],
                                                        "paid": [0, 0, Decimal(0)]})
        stage = workflow.Stage(docket.stage)
        key = ("due" if stage is workflow.Stage.MULTA_DEVIDA else "paid" if stage is workflow.Stage.PAGO
               else None if stage in closed_or_draft else "open")
        if key is None:
            continue
        entry = bucket[key]
        entry[0] += 1
        entry[1] += docket.fine_ufir
        entry[2] += fine_brl(docket.fine_ufir, docket.ufir_brl)
    return [FineSummary(operator=operators.get(op, op), due_count=t["due"][0], due_ufir=integer(t["due"][1]),
                        due_brl=brl(t["due"][2]), open_count=t["open"][0], open_brl=brl(t["open"][2]),
                        paid_count=t["paid"][0], paid_brl=brl(t["paid"][2]))
            for op, t in sorted(totals.items())]


@dataclass(frozen=True)
class AttachmentView:
    id: int
    filename: str
    content_type: str
    size: str
    sha256: str
    uploaded_at: str
    audit_id: int | None


@dataclass(frozen=True)
class HistoryRow:
    at: str
    who: str
    action: str
    act_date: str
    details: list[str]
    attachments: list[AttachmentView]


def _payload_details(payload: Mapping) -> tuple[str, list[str]]:
    action = payload.get("action") or {}
    details = []
    if "number" in payload:
        details.append(f"Auto nº {payload['number']}")
    if action.get("procedente") is not None:
        details.append("Decisão: auto julgado " + ("procedente (multa mantida)" if action["procedente"]
                                                    else "improcedente (arquivamento)"))
    if action.get("provido") is not None:
        details.append("Decisão: recurso " + ("provido (arquivamento)" if action["provido"]
                                              else "não provido (multa devida)"))
    if action.get("fundamentacao"):
        details.append(f"Fundamentação: {action['fundamentacao']}")
    if action.get("processo"):
        details.append(f"Processo judicial nº {action['processo']}")
    if action.get("ato"):
        details.append(f"Ato do Prefeito: {action['ato']}")
    if payload.get("marked"):
        details.append("Leituras contestadas: " + "; ".join(map(str, payload["marked"])))
    if payload.get("note"):
        details.append(str(payload["note"]))
    if payload.get("outcome") in disputes.OUTCOME_PT:
        details.append(f"Reexame sem todas as leituras contestadas: {disputes.OUTCOME_PT[payload['outcome']]} "
                       f"(SHA-256 das leituras retiradas {payload.get('disputed_sha256')})")
    on = action.get("on")
    act_date = "—"
    if isinstance(on, str):
        try:
            act_date = date_br(dt.date.fromisoformat(on))
        except ValueError:
            act_date = on
    return act_date, details


def actor_names(session: Session, entries: list[AuditEntry]) -> dict[int, str]:
    user_ids = {e.actor_id for e in entries if e.actor_id is not None}
    if not user_ids:
        return {}
    return dict(session.execute(select(User.id, User.full_name).where(User.id.in_(user_ids))).all())


def history_rows(entries: list[AuditEntry], attachments: list[AttachmentView], names: Mapping[int, str],
                 tz: ZoneInfo) -> list[HistoryRow]:
    rows = []
    for entry in entries:
        role = ROLE_LABELS.get(entry.actor_role, entry.actor_role)
        who = f"{role} — {names[entry.actor_id]}" if entry.actor_id in names else role
        payload = entry.payload or {}
        if entry.action == "RegistrarManual":  # its note is the relato, which the auto's field V shows
            payload = {k: v for k, v in payload.items() if k != "note"}
        act_date, details = _payload_details(payload)
        rows.append(HistoryRow(at=datetime_br(entry.at, tz), who=who,
                               action=ACTION_NAME_LABELS.get(entry.action, entry.action), act_date=act_date,
                               details=details, attachments=[a for a in attachments if a.audit_id == entry.id]))
    return rows


@dataclass(frozen=True)
class PleadingView:
    """The operator's defence or recurso as the gestor reads it beside the judgment form."""

    on: str  # the act's date
    who: str
    text: str
    attachments: list[AttachmentView]


def pleading(entries: list[AuditEntry], attachments: list[AttachmentView], action: type,
             names: Mapping[int, str]) -> PleadingView | None:
    """The latest `action` (ApresentarDefesa or InterporRecurso) of the history: its text is
    the note the act was recorded with, its files the attachments sent with it."""
    entry = next((e for e in reversed(entries) if e.action == action.__name__), None)
    if entry is None:
        return None
    act_date, _ = _payload_details(entry.payload or {})
    who = names.get(entry.actor_id) or ROLE_LABELS.get(entry.actor_role, entry.actor_role)
    return PleadingView(on=act_date, who=who, text=str((entry.payload or {}).get("note") or ""),
                        attachments=[a for a in attachments if a.audit_id == entry.id])


def attachment_views(session: Session, docket_id: int, tz: ZoneInfo) -> list[AttachmentView]:
    rows = session.execute(select(Attachment.id, Attachment.filename, Attachment.content_type, Attachment.size,
                                  Attachment.sha256, Attachment.uploaded_at, Attachment.audit_id)
                           .where(Attachment.docket_id == docket_id).order_by(Attachment.id)).all()
    return [AttachmentView(id=r.id, filename=r.filename, content_type=r.content_type, size=size(r.size),
                           sha256=r.sha256, uploaded_at=datetime_br(r.uploaded_at, tz), audit_id=r.audit_id)
            for r in rows]


def judicial_suspension(law: Law) -> str:
    """What suspends the payment, as the page words it: under a law that gives a judicial
    challenge suspensive effect, the challenge and its article; elsewhere only a court's
    decision does, and no article of the municipality's law is cited for it."""
    if law.judicial_suspension:
        return f"ação judicial ({law.judicial_suspension})"
    return "decisão judicial"


def docket_context(session: Session, docket: Docket, *, actor: service.Actor, calendar: BusinessCalendar,
                   today: dt.date, tz: ZoneInfo, charts: list[str], wording, law: Law) -> dict:
    """`wording` is the auto's `dockets.document.Wording`: the page reads as the PDF does."""
    status = service.status_of(docket)
    running = workflow.deadlines(status, calendar)
    notes = workflow.term_notes(calendar.law_terms)
    after_appeal = calendar.law_terms.pagamento_apos_recurso or calendar.law_terms.pagamento
    unless = {t.field: t.unless for t in workflow.running_terms(status, calendar, today)}
    deadlines = [DeadlineView(field, label, getattr(running, field), notes.get(field, "prazo não fixado na lei"),
                              getattr(running, field) is not None and getattr(running, field) < today,
                              unless.get(field))
                 for field, label in workflow.DEADLINE_LABELS.items()]
    operator = session.get(Operator, docket.operator_id)
    fiscal = session.get(User, docket.lavrado_por) if docket.lavrado_por else None
    attachments = attachment_views(session, docket.id, tz)
    entries = service.history(session, actor, docket.id)
    names = actor_names(session, entries)
    article = law.articles.get(docket.code)
    role = actor.role
    allowed = workflow.allowed_actions(status, role, law) if role in workflow.ROLE_ACTIONS else frozenset()
    if workflow.JulgarRecurso in allowed and service.judged_the_defence(session, actor, docket):
        allowed -= {workflow.JulgarRecurso}  # art. 7º § 3º: the recurso goes to another person
    # the gestor registers paper acts late (protocol number, reason; audited)
    paper = workflow.allowed_actions(status, law=law) & workflow.PAPER_ACTS if role == "gestor" else frozenset()
    evidence = (docket.infraction or {}).get("evidence") or {}
    return {
        "docket": docket,
        "status": status,
        "stage_label": stage_label(docket.stage),
        "operator_name": operator.name if operator else docket.operator_id,
        "occurred": occurred_local(docket, tz).strftime("%d/%m/%Y às %H:%M:%S"),
        "zone": ptbr.zone(occurred_local(docket, tz)),  # as the auto's PDF words it
        "service_date": date_br(docket.service_date),
        "legal_basis": docket.legal_basis,
        "law_text": wording.law_text,
        "category": article.category if article else "",
        "code_text": code_text(docket.code, law),
        # what the page cites of the municipality's law: the auto's form and its terms in words
        "auto": law.auto,
        "amnesty": law.amnesty or "",
        "judicial_suspension": judicial_suspension(law),
        "term_notes": notes,
        "payment_after_appeal": (f"pagamento em {after_appeal.days} {'dias úteis' if after_appeal.business_days else 'dias'}"
                                 f" ({after_appeal.basis})"),
        "fine_ufir": integer(docket.fine_ufir),
        "fine_brl": brl(fine_brl(docket.fine_ufir, docket.ufir_brl)),
        "ufir_brl": ufir_value(docket.ufir_brl),
        "deadlines": deadlines,
        "deadline_of": {d.field: d for d in deadlines},
        "terms": terms_view(status, calendar, today),
        "status_dates": [(label, date_br(getattr(status, field))) for field, label in STATUS_DATES
                         if getattr(status, field) is not None],
        "fiscal": fiscal,
        "attachments": attachments,
        "history": history_rows(entries, attachments, names, tz),
        # beside the judgment forms: what is being judged
        "defence": pleading(entries, attachments, workflow.ApresentarDefesa, names),
        "appeal": pleading(entries, attachments, workflow.InterporRecurso, names),
        "allowed": allowed,
        "paper_allowed": paper,
        "today_br": date_br(today),
        "charts": [(kind, CHART_TITLES[kind], CHART_ALTS[kind]) for kind in charts],
        # a manual infraction's description is the fiscal's relato: shown once, as such
        "relato": evidence.get("relato") if docket.source == service.MANUAL else None,
        "driver_id": evidence.get("driver_id"),
        "description": wording.description,
        "place": wording.place,
        "vehicles": wording.vehicles,
        "evidence_rows": wording.evidence_rows,
        "fine_explanation": wording.fine_explanation,
    }


# Rows of cited readings offered as checkboxes; beyond them, the span form marks the rest.
MAX_CITED_ROWS = 300


def disputes_context(session: Session, docket: Docket, *, actor: service.Actor, calendar: BusinessCalendar,
                     today: dt.date, tz: ZoneInfo, bundle: bytes | None) -> dict:
    """The readings its defence disputes and the auto re-judged without them (issue 30), for
    whoever sees the auto; for its operator while the defence term runs, the form to mark
    more: the readings the finding cites (decoded from the bundle only then)."""
    marks = disputes.marks_of(session, docket.id)
    cached = disputes.rejudgment_of(session, docket.id)
    can_mark = bundle is not None and disputes.may_mark(actor, docket, calendar, today)
    cited = disputes.cited_rows(bundle, docket.infraction, tz) if can_mark else []
    picked = pickable_readings(docket, bundle) if can_mark else None
    return {
        "marks": [(disputes.mark_text(m, tz), m.reason) for m in marks],
        "rejudgment": disputes.rejudgment_view(cached, docket.file_stem) if cached else None,
        "can_mark": can_mark,
        "cited": cited[:MAX_CITED_ROWS],
        "cited_more": max(0, len(cited) - MAX_CITED_ROWS),
        "marked_lines": {f"{m.source}:{m.line}" for m in marks if m.line is not None},
        "disputable_sources": disputes.SOURCE_PT,
        "span_day": docket.service_date.isoformat(),
        # the same readings to pick on the speed chart and the map (web/static/contestar.js)
        "pick_speed": picking.speed_chart(picked, tz) if picked else None,
        "pick_map": picking.track_map(picked) if picked else None,
    }
