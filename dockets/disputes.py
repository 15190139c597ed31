"""The defence's marks (issue 30 items 1–2): the readings of its own evidence an operator
disputes, with the reason, stored with the defence while its term runs, each act in the
audit chain; and the auto re-judged without them by `dockets.rejudgment` (the core that
`fiscaliza verify --without` runs), computed when the marks are saved and kept with them.

The signed bundle is never changed. The system informs; the gestor judges the defence.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from dockets import ptbr, workflow
from dockets.bundle import read_bundle
from dockets.calendar import BusinessCalendar
from dockets.rejudgment import (
    DISPUTABLE,
    OUTCOME_PT,
    SOURCE_PT,
    Disputed,
    DisputeError,
    Rejudgment,
    Span,
    cited_readings,
    lines_argument,
    readings_named,
    rejudge_bundle,
)
from dockets.service import AUTOMATIC, Actor, DocketError, Forbidden, audit_docket, get_docket, status_of, utcnow
from dockets.store import DisputedReading, Docket, EvidenceBundle
from dockets.store import Rejudgment as CachedRejudgment
from telemetry import Rejection, decode

ACTION = "MarcarLeituras"
MAX_REASON = 2000


class MarkRefused(DocketError):
    """Marks the form must correct (pt-BR): nothing was recorded."""


@dataclass(frozen=True)
class Marks:
    """What one act marks: bundle lines (source, number) and spans, for one reason."""

    lines: tuple[tuple[str, int], ...] = ()
    spans: tuple[Span, ...] = ()
    reason: str = ""


def marks_refusal(status: workflow.DocketStatus, calendar: BusinessCalendar, today: dt.date) -> str | None:
    """Why the defence cannot mark readings today, or None: the marks are part of the
    defence, made while its term runs (art. 7º), before it is filed."""
    if status.stage is not workflow.Stage.NOTIFICADO:
        return ("As leituras contestadas fazem parte da defesa: só podem ser marcadas enquanto corre o prazo de "
                f"defesa, antes de apresentá-la. Etapa atual: {workflow.STAGE_LABELS[status.stage]}.")
    deadline = workflow.deadlines(status, calendar).defesa
    if deadline is None:
        return "A lei do município não prevê defesa: não há leituras a contestar nela."
    if today > deadline:
        return f"Prazo de defesa encerrado em {deadline:%d/%m/%Y} ({calendar.law_terms.defesa.basis})."
    return None


def may_mark(actor: Actor, docket: Docket, calendar: BusinessCalendar, today: dt.date) -> bool:
    """Whether `actor` may mark readings of this auto now: its own operator, while the
    defence term runs, on an auto the telemetry found (a manual one has no readings)."""
    return (actor.role == "operador" and actor.operator_id == docket.operator_id and docket.source == AUTOMATIC
            and marks_refusal(status_of(docket), calendar, today) is None)


def marks_of(session: Session, docket_id: int) -> list[DisputedReading]:
    return list(session.scalars(select(DisputedReading).where(DisputedReading.docket_id == docket_id)
                                .order_by(DisputedReading.id)))


def rejudgment_of(session: Session, docket_id: int) -> dict | None:
    """The cached re-judgment (`Rejudgment` as JSON) of the auto without its disputed readings."""
    return session.scalar(select(CachedRejudgment.result).where(CachedRejudgment.docket_id == docket_id))


def disputed(marks: Sequence[DisputedReading]) -> Disputed:
    return Disputed(lines=tuple((m.source, m.line) for m in marks if m.line is not None),
                    spans=tuple(Span(m.vehicle_id, m.span_start, m.span_end, m.source) for m in marks
                                if m.line is None))


def check_may_mark(session: Session, actor: Actor, docket_id: int, calendar: BusinessCalendar,
                   today: dt.date) -> Docket:
    """The docket, if `actor` may mark readings of it now: NotFound when it is not the
    actor's to see, Forbidden for any role but its operator, MarkRefused out of term."""
    docket = get_docket(session, actor, docket_id)
    if actor.role != "operador":
        raise Forbidden("Somente a empresa operadora autuada marca leituras contestadas na sua defesa.")
    refusal = marks_refusal(status_of(docket), calendar, today)
    if refusal is not None:
        raise MarkRefused(refusal)
    if docket.source != AUTOMATIC:
        raise MarkRefused("Registro manual do fiscal: não há leituras da telemetria a contestar.")
    return docket


def mark_readings(session: Session, actor: Actor, docket_id: int, marks: Marks, calendar: BusinessCalendar,
                  today: dt.date, tz: dt.tzinfo = dt.timezone.utc,
                  rejudge: Callable[[bytes, Disputed], Rejudgment] = rejudge_bundle) -> Rejudgment:
    """Record `marks` for `actor`'s defence and re-judge the auto without every reading its
    defence disputes so far (`rejudge`, the core, on the signed bundle). Checks in order:
    the docket is the actor's to see (NotFound), the actor is its operator (Forbidden), the
    term runs and the marks hold (MarkRefused)."""
    docket = check_may_mark(session, actor, docket_id, calendar, today)
    reason = marks.reason.strip()
    if not marks.lines and not marks.spans:
        raise MarkRefused("Marque ao menos uma leitura na tabela ou informe um intervalo.")
    if not reason:
        raise MarkRefused("Informe o motivo da contestação.")
    if len(reason) > MAX_REASON:
        raise MarkRefused(f"O motivo tem mais de {MAX_REASON} caracteres.")
    bundle = session.get(EvidenceBundle, docket.id)
    if bundle is None:
        raise MarkRefused("Este auto não tem pacote de evidências.")
    before = marks_of(session, docket.id)
    every = disputed([*before])
    every = Disputed(lines=every.lines + marks.lines, spans=every.spans + marks.spans)
    try:  # seconds of CPU, before anything is written (no write lock is held meanwhile)
        result = rejudge(bundle.data, every)
    except DisputeError as exc:
        raise MarkRefused(f"{exc}.") from None
    session.refresh(docket, with_for_update=True)
    if marks_of(session, docket.id) != before:  # another act marked meanwhile: its result is not this one's
        raise MarkRefused("Outra marcação foi registrada ao mesmo tempo: envie de novo.")
    now = utcnow()
    added = [DisputedReading(docket_id=docket.id, source=source, line=number, reason=reason,
                             created_by=actor.user_id, created_at=now) for source, number in marks.lines]
    added += [DisputedReading(docket_id=docket.id, source=span.source, vehicle_id=span.vehicle_id,
                              span_start=span.start, span_end=span.end, reason=reason, created_by=actor.user_id,
                              created_at=now) for span in marks.spans]
    session.add_all(added)
    cached = session.get(CachedRejudgment, docket.id)
    if cached is None:
        cached = CachedRejudgment(docket_id=docket.id)
        session.add(cached)
    cached.bundle_sha256, cached.disputed_sha256 = result.bundle_sha256, result.disputed_sha256
    cached.result, cached.computed_at = dataclasses.asdict(result), now
    session.flush()
    entry = audit_docket(session, actor, docket, ACTION, {
        "note": f"Motivo: {reason}",
        "marked": [mark_text(m, tz) for m in added],
        "bundle_sha256": result.bundle_sha256, "disputed_sha256": result.disputed_sha256,
        "removed": len(result.removed), "outcome": result.outcome})
    for mark in added:
        mark.audit_id = entry.id
    session.flush()
    return result


# --- what the pages and the PDF show ------------------------------------------------------

def mark_text(mark: DisputedReading, tz: dt.tzinfo) -> str:
    """"linha 123 do tacógrafo (tachograph.jsonl)", "tacógrafo de JN-2014 de 13:25:00 a 13:27:00 (01/12/2026)"."""
    if mark.line is not None:
        return f"linha {readings_named([f'{mark.source}.jsonl:{mark.line}'])}"
    start, end = mark.span_start.astimezone(tz), mark.span_end.astimezone(tz)
    day = f"{start:%d/%m/%Y}" + ("" if end.date() == start.date() else f" a {end:%d/%m/%Y}")
    return (f"{SOURCE_PT.get(mark.source, mark.source)} do veículo {mark.vehicle_id} de {start:%H:%M:%S} a "
            f"{end:%H:%M:%S} ({day})")


@dataclass(frozen=True)
class RejudgmentView:
    """The cached re-judgment as the defence, the gestor and the judgment's PDF read it."""

    outcome: str  # STANDS | INSUFFICIENT | DISAPPEARS
    outcome_pt: str
    fine: str | None  # "200 UFIR" while it stands
    changes: list[tuple[str, str, str]]  # (field, in the auto, without the disputed readings)
    reliance: list[str]
    insufficient_reason: str | None
    removed: str  # the lines removed, as a reader names them
    removed_count: int
    bundle_sha256: str
    disputed_sha256: str
    command: str  # `fiscaliza verify` that runs it again
    reproduced: bool


def rejudgment_view(result: dict, file_stem: str) -> RejudgmentView:
    record = result.get("record")
    return RejudgmentView(
        outcome=result["outcome"], outcome_pt=OUTCOME_PT[result["outcome"]],
        fine=f"{record['fine_ufir']} UFIR" if record else None,
        changes=[(c["label"], c["before"], c["after"]) for c in result["changes"]],
        reliance=list(result["reliance"]), insufficient_reason=result.get("insufficient_reason"),
        removed=readings_named(result["removed"]), removed_count=len(result["removed"]),
        bundle_sha256=result["bundle_sha256"], disputed_sha256=result["disputed_sha256"],
        command=f"fiscaliza verify {file_stem}-evidencias.zip --without {lines_argument(result['removed'])}",
        reproduced=bool(result["reproduced"]))


@dataclass(frozen=True)
class CitedRow:
    """A reading the finding cites, as the evidence table offers it to be marked."""

    value: str  # the form's value: "tachograph:123"
    location: str  # tachograph.jsonl:123
    source: str  # pt-BR
    vehicle_id: str
    time: str
    detail: str  # speed and position, or counter and seal


def cited_rows(data: bytes, record: dict, tz: ZoneInfo) -> list[CitedRow]:
    """The readings the auto's finding cites, with what each reads, in file and line order."""
    bundle = read_bundle(data)
    rows = []
    for reading in cited_readings(bundle, record, tz.key):
        body = decode(reading.source, bundle.lines(reading.source)[reading.number - 1])
        if isinstance(body, Rejection):
            continue
        if reading.source == "tachograph":
            detail = (f"{ptbr.amount(body.speed_kmh, 1)} km/h em {ptbr.amount(body.lat, 6)}, "
                      f"{ptbr.amount(body.lon, 6)}")
        else:
            detail = (f"contador {body.counter}, lacre {'íntegro' if body.seal_intact else 'rompido'}, "
                      f"{body.status}")
        rows.append(CitedRow(f"{reading.source}:{reading.number}", reading.location,
                             SOURCE_PT[reading.source], reading.vehicle_id,
                             f"{dt.datetime.fromtimestamp(reading.epoch, tz):%d/%m/%Y %H:%M:%S}", detail))
    return rows


def parse_line_values(values: Sequence[str]) -> tuple[tuple[str, int], ...]:
    """The table's checked values ("tachograph:123") as bundle lines; MarkRefused if not."""
    lines = []
    for value in values:
        source, _, number = value.partition(":")
        if source not in DISPUTABLE or not number.isdigit():
            raise MarkRefused(f"Leitura inválida: {value!r}.")
        lines.append((source, int(number)))
    return tuple(dict.fromkeys(lines))
