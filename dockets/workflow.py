"""The life of an auto de infração (Código Disciplinar, Lei 867/1998, Anexo I, arts. 5–8, 12).

A pure state machine: `apply(status, action, calendar)` returns the next `DocketStatus` or
raises `WorkflowError` with a message for the user (pt-BR). Actions are the acts of the
process, each with the legal date it happened on (`on`); the append-only audit log stores
them encoded with `encode_action`, and `fold` rebuilds the status from it.

Stages change only through actions, never with the passage of time: a `notificado` auto
whose defence deadline lapsed stays `notificado` (its payment deadline is then the one
that matters); `deadlines`, `next_deadline` and `running_terms` tell what is running.

Interpretations of the law (the code is terse; these choices are deliberate):

* `JulgarDefesa.procedente` qualifies the auto de infração, as art. 7º §§2º–3º do:
  procedente = the auto is upheld (the defence failed, the fine stands, recurso is open);
  improcedente = the auto is archived. `JulgarRecurso.provido` = the recurso succeeded:
  the auto is archived.
* The date of a decision counts as the operator's ciência of it (the decision is taken to
  be communicated through the system the day it is rendered): the recurso deadline
  (art. 7º §3º) runs from `julgado_em`, the payment deadline of art. 8º II from
  `recurso_julgado_em`.
* A late notification (art. 5 §3º) is recorded, not refused: that deadline binds the
  Órgão, `Notificar.on` is the day of ciência (which postal delivery can push past it) and
  the operator's deadlines run from the actual ciência. `deadlines().notificacao` lets the
  UI flag it.
* Payment is accepted at any time in a payable stage (`notificado`, `julgado_procedente`,
  `multa_devida`); late payment consequences are outside this machine.
* Judicial suspension (art. 8º III) suspends the payment only: the administrative process
  (defesa, julgamento, recurso and their deadlines) goes on. While suspended no payment
  deadline runs, yet a voluntary payment is accepted (the operator may drop the judicial
  challenge; refusing money owed would serve no one). When the suspension ends the full
  10 days of art. 8º run again from `retomado_em`, as from a new communication to the
  operator; this is never earlier than resuming the remaining days, so it never demands
  payment too soon.
* Reaching a closed stage (`pago`, `arquivado`, `anistiado`) ends any suspension: it no
  longer has an object. Nothing can be recorded on a closed auto.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Iterable

import msgspec

from dockets.calendar import BusinessCalendar
from kernel.errors import FiscalizaError
from rules.law import Law, Terms
from rules.law import Term as LawTerm


class WorkflowError(FiscalizaError, ValueError):
    """An act the Código Disciplinar does not allow now; `message` is shown to the user (pt-BR)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Stage(enum.StrEnum):
    RASCUNHO = "rascunho"  # a confirmed automatic infraction awaiting a fiscal to lavrar the auto
    LAVRADO = "lavrado"
    NOTIFICADO = "notificado"  # the operator took ciência
    DEFESA_APRESENTADA = "defesa_apresentada"
    JULGADO_PROCEDENTE = "julgado_procedente"
    RECURSO_INTERPOSTO = "recurso_interposto"
    MULTA_DEVIDA = "multa_devida"  # the final decision upheld the fine: payment due
    PAGO = "pago"
    ARQUIVADO = "arquivado"  # auto julgado improcedente, or recurso provido
    ANISTIADO = "anistiado"  # art. 12


# The open stages in the order the process walks them; "before"/"after" messages use it.
_OPEN = (
    Stage.RASCUNHO,
    Stage.LAVRADO,
    Stage.NOTIFICADO,
    Stage.DEFESA_APRESENTADA,
    Stage.JULGADO_PROCEDENTE,
    Stage.RECURSO_INTERPOSTO,
    Stage.MULTA_DEVIDA,
)
CLOSED_STAGES = frozenset({Stage.PAGO, Stage.ARQUIVADO, Stage.ANISTIADO})

STAGE_LABELS: dict[Stage, str] = {
    Stage.RASCUNHO: "Aguardando lavratura",
    Stage.LAVRADO: "Lavrado",
    Stage.NOTIFICADO: "Notificado",
    Stage.DEFESA_APRESENTADA: "Defesa apresentada",
    Stage.JULGADO_PROCEDENTE: "Julgado procedente",
    Stage.RECURSO_INTERPOSTO: "Recurso interposto",
    Stage.MULTA_DEVIDA: "Multa devida",
    Stage.PAGO: "Pago",
    Stage.ARQUIVADO: "Arquivado",
    Stage.ANISTIADO: "Anistiado",
}


# --- actions -------------------------------------------------------------------------------


class _Act(msgspec.Struct, frozen=True, tag=True, forbid_unknown_fields=True):
    # tag=True is inherited: each action is tagged with its class name ({"type": "Lavrar", ...})
    on: dt.date  # the legal date of the act


class Lavrar(_Act):
    """The fiscal lavra the auto de infração (art. 5º)."""


class Notificar(_Act):
    """The operator took ciência of the auto: receipt signed, or AR postal receipt (art. 5 §1º)."""


class ApresentarDefesa(_Act):
    """Written defence, within 10 business days of ciência (art. 7º)."""


class JulgarDefesa(_Act):
    """Judgment of the auto after the defence; `procedente` = the auto is upheld (art. 7º §§1º–3º)."""

    procedente: bool
    fundamentacao: str


class InterporRecurso(_Act):
    """Recurso to the titular of the Órgão, within 10 business days of the judgment (art. 7º §3º)."""


class JulgarRecurso(_Act):
    """Judgment of the recurso by the titular of the Órgão, who did not judge the defence
    (art. 7º §3º, art. 4º); `provido` = the recurso succeeded and the auto is archived."""

    provido: bool
    fundamentacao: str


class RegistrarPagamento(_Act):
    """The fine was paid (art. 8º)."""


class SuspenderJudicial(_Act):
    """A judicial challenge suspends the payment (art. 8º III)."""

    processo: str


class RetomarJudicial(_Act):
    """The judicial suspension ended."""


class Anistiar(_Act):
    """Anistia by the Prefeito (art. 12), recorded by the gestor; `ato` identifies the act."""

    ato: str


Action = (
    Lavrar
    | Notificar
    | ApresentarDefesa
    | JulgarDefesa
    | InterporRecurso
    | JulgarRecurso
    | RegistrarPagamento
    | SuspenderJudicial
    | RetomarJudicial
    | Anistiar
)
ACTION_TYPES: tuple[type, ...] = Action.__args__

_decoder = msgspec.json.Decoder(Action)


def encode_action(action: Action) -> bytes:
    """JSON with the action's name under "type", e.g. `{"type":"Lavrar","on":"2026-12-01"}`."""
    return msgspec.json.encode(action)


def decode_action(data: bytes | str) -> Action:
    """The inverse of `encode_action`; raises `msgspec.ValidationError` on malformed input."""
    return _decoder.decode(data)


ACTION_LABELS: dict[type, str] = {
    Lavrar: "Lavrar auto",
    Notificar: "Registrar ciência",
    ApresentarDefesa: "Apresentar defesa",
    JulgarDefesa: "Julgar defesa",
    InterporRecurso: "Interpor recurso",
    JulgarRecurso: "Julgar recurso",
    RegistrarPagamento: "Registrar pagamento",
    SuspenderJudicial: "Registrar suspensão judicial",
    RetomarJudicial: "Encerrar suspensão judicial",
    Anistiar: "Registrar anistia",
}

# Acts done on paper outside the system (a defence delivered at the counter, a ciência
# by registered mail whose receipt comes back days later, a payment at the bank): the
# gestor may register them late, with their own date, a protocol number and a reason.
PAPER_ACTS: frozenset[type] = frozenset({Notificar, ApresentarDefesa, InterporRecurso, RegistrarPagamento})

ROLE_ACTIONS: dict[str, frozenset[type]] = {
    "fiscal": frozenset({Lavrar, Notificar}),
    "operador": frozenset({ApresentarDefesa, InterporRecurso}),
    # Anistiar is the Prefeito's act (art. 12); the gestor records it
    "gestor": frozenset({JulgarDefesa, RegistrarPagamento, SuspenderJudicial, RetomarJudicial, Anistiar}),
    # the head of the Órgão (art. 4º) judges the recurso (art. 7º §3º), never one whose
    # defence they judged (dockets.service checks the person: the role cannot tell)
    "titular": frozenset({JulgarRecurso}),
}


# --- status --------------------------------------------------------------------------------


class DocketStatus(msgspec.Struct, frozen=True, kw_only=True):
    """Where an auto stands, and the date of every act so far."""

    stage: Stage = Stage.RASCUNHO
    lavrado_em: dt.date | None = None
    notificado_em: dt.date | None = None
    defesa_em: dt.date | None = None
    julgado_em: dt.date | None = None
    procedente: bool | None = None
    recurso_em: dt.date | None = None
    recurso_julgado_em: dt.date | None = None
    recurso_provido: bool | None = None
    pago_em: dt.date | None = None
    suspenso: bool = False
    suspenso_em: dt.date | None = None  # the latest suspension
    retomado_em: dt.date | None = None  # the latest end of a suspension
    anistiado_em: dt.date | None = None

    @classmethod
    def initial(cls) -> DocketStatus:
        return cls()

    @property
    def last_act_on(self) -> dt.date | None:
        dates = [
            self.lavrado_em, self.notificado_em, self.defesa_em, self.julgado_em, self.recurso_em,
            self.recurso_julgado_em, self.pago_em, self.suspenso_em, self.retomado_em, self.anistiado_em,
        ]
        return max((d for d in dates if d is not None), default=None)


class Deadlines(msgspec.Struct, frozen=True, kw_only=True):
    """The deadlines running now; a deadline is present while the auto awaits the act it limits."""

    notificacao: dt.date | None = None  # lavrado: the Órgão sends the auto (art. 5 §3º)
    defesa: dt.date | None = None  # notificado (art. 7º)
    recurso: dt.date | None = None  # julgado_procedente (art. 7º §3º)
    pagamento: dt.date | None = None  # art. 8º; None while suspended (art. 8º III)


DEADLINE_LABELS: dict[str, str] = {
    "notificacao": "Prazo de notificação",
    "defesa": "Prazo de defesa",
    "recurso": "Prazo de recurso",
    "pagamento": "Prazo de pagamento",
}


# each deadline's act and what it counts from, in words; its days and the article that
# sets them are the law's (rules.law.Terms)
_TERM_ACTS = {
    "notificacao": ("envio do auto à empresa operadora", "após a lavratura"),
    "defesa": ("defesa por escrito", "contados da ciência"),
    "recurso": ("recurso", "contados da decisão"),
    "pagamento": ("pagamento da multa", ""),
}


def term_notes(terms: Terms) -> dict[str, str]:
    """Each deadline the law sets, in words, by `Deadlines` field: "defesa por escrito,
    10 dias úteis contados da ciência (art. 7º)"; the ones it does not set are absent."""
    notes = {}
    for field, (act, counted) in _TERM_ACTS.items():
        term: LawTerm | None = getattr(terms, field)
        if term is not None:
            days = f"{term.days} {'dias úteis' if term.business_days else 'dias'}"
            counted = term.counted_from or counted
            notes[field] = f"{term.act or act}, {days}{' ' + counted if counted else ''} ({term.basis})"
    return notes


def _fmt(d: dt.date) -> str:
    return d.strftime("%d/%m/%Y")


def deadlines(status: DocketStatus, calendar: BusinessCalendar) -> Deadlines:
    """Deadlines of the current stage.

    * notificacao: `lavrado_em` + 5 business days (art. 5 §3º), while `lavrado`;
    * defesa: `notificado_em` + 10 business days (art. 7º), while `notificado`;
    * recurso: `julgado_em` + 10 business days (art. 7º §3º; the decision's date is the
      operator's ciência of it), while `julgado_procedente`;
    * pagamento: 10 days (art. 8º, `add_calendar_days`) counted from
      (I) `notificado_em` while `notificado` (no defence filed);
      (II) `recurso_julgado_em` while `multa_devida` (recurso não provido);
      and, while `julgado_procedente` — the law is silent on an upheld auto that is not
      appealed — from the last day of the recurso deadline, so that paying never competes
      with the right to appeal.
      After a judicial suspension ended, the 10 days count from `retomado_em` when that is
      later. None while suspended and in every other stage.
    """
    stage = status.stage
    terms = calendar.law_terms  # the municipality's law: how many days, business or not
    notificacao = defesa = recurso = start = None
    if stage is Stage.LAVRADO and terms.notificacao is not None:
        notificacao = calendar.add_term(status.lavrado_em, terms.notificacao)
    elif stage is Stage.NOTIFICADO:
        if terms.defesa is not None:
            defesa = calendar.add_term(status.notificado_em, terms.defesa)
        elif terms.recurso is not None:  # a law with no defence stage: the appeal runs from the ciência
            recurso = calendar.add_term(status.notificado_em, terms.recurso)
        start = status.notificado_em
    elif stage is Stage.JULGADO_PROCEDENTE:
        recurso = calendar.add_term(status.julgado_em, terms.recurso) if terms.recurso is not None else None
        start = recurso if recurso is not None else status.julgado_em
    elif stage is Stage.MULTA_DEVIDA:
        start = status.recurso_julgado_em
    pagamento = None
    if start is not None and not status.suspenso:
        if status.retomado_em is not None and status.retomado_em > start:
            start = status.retomado_em
        term = terms.pagamento_apos_recurso if stage is Stage.MULTA_DEVIDA and terms.pagamento_apos_recurso \
            else terms.pagamento
        pagamento = calendar.add_term(start, term)
    return Deadlines(notificacao=notificacao, defesa=defesa, recurso=recurso, pagamento=pagamento)


def next_deadline(
    status: DocketStatus, calendar: BusinessCalendar, *, today: dt.date | None = None,
) -> tuple[str, dt.date] | None:
    """The earliest running deadline as (pt-BR label, date), for the UI; None if none runs.

    With `today`, deadlines that ended before `today` are skipped (one ending today is
    still open). Ties go to notificação, defesa, recurso, pagamento in that order.
    """
    running = deadlines(status, calendar)
    candidates = [
        (date, label)
        for field, label in DEADLINE_LABELS.items()
        if (date := getattr(running, field)) is not None and (today is None or date >= today)
    ]
    if not candidates:
        return None
    date, label = min(candidates, key=lambda c: c[0])  # min keeps the first of equal dates
    return label, date


class Term(msgspec.Struct, frozen=True, kw_only=True):
    """A running deadline as the operator (and the Órgão) should read it today."""

    field: str  # a `Deadlines` field
    label: str  # pt-BR, from DEADLINE_LABELS
    date: dt.date
    business_days: bool  # counted in dias úteis (notificação, defesa, recurso) or in days (pagamento)
    days_left: int  # after today up to `date`, in the term's own unit; 0 on its last day and once ended
    overdue: bool  # `date` is before today
    # what stops it, while that can still happen: the payment term, while the defence may
    # be filed, runs "salvo se apresentar defesa (art. 8º, I)" (Terms.pagamento_unless)
    unless: str | None = None


def _term(field: str, date: dt.date, calendar: BusinessCalendar, today: dt.date) -> Term:
    business = getattr(calendar.law_terms, field).business_days
    left = calendar.business_days_between(today, date) if business else max(0, (date - today).days)
    return Term(field=field, label=DEADLINE_LABELS[field], date=date, business_days=business, days_left=left,
                overdue=date < today)


def running_terms(status: DocketStatus, calendar: BusinessCalendar, today: dt.date) -> tuple[Term, ...]:
    """The deadlines running on `today`, the one that matters now first; empty if none runs.

    The first is the earliest act of the process still open today, in the order the
    process walks (notificação, defesa, recurso, pagamento), not the earliest date:
    while `notificado` the payment deadline (10 days) often ends before the defence's
    (10 dias úteis), yet the defence is what the operator can still do and what decides
    whether anything is paid. When every deadline has ended, the last one of that
    order is first, overdue (a lapsed defence leaves the payment deadline). The others
    follow as secondary, by date, without the ones that have ended."""
    running = deadlines(status, calendar)
    terms = [_term(field, date, calendar, today) for field in DEADLINE_LABELS
             if (date := getattr(running, field)) is not None]
    if not terms:
        return ()
    unless = calendar.law_terms.pagamento_unless
    if unless and any(t.field == "defesa" and not t.overdue for t in terms):
        terms = [msgspec.structs.replace(t, unless=unless) if t.field == "pagamento" else t for t in terms]
    current = next((t for t in terms if not t.overdue), terms[-1])
    others = sorted((t for t in terms if t is not current and not t.overdue), key=lambda t: t.date)
    return (current, *others)


# The stages where the fine stands: upheld after the recurso, or paid (closed: nothing more
# can be recorded, the operator accepted it).
_FINE_FINAL = frozenset({Stage.MULTA_DEVIDA, Stage.PAGO})
# The stages where the fine stands unless the operator contests it within its term: ciência
# taken (defence, or recurso under a law without a defence stage) and julgado procedente (recurso).
_FINAL_UNLESS_CONTESTED = frozenset({Stage.NOTIFICADO, Stage.JULGADO_PROCEDENTE})


def is_final(status: DocketStatus, calendar: BusinessCalendar, today: dt.date) -> bool:
    """Whether the auto's fine is imposed for good on `today`: the decision can no longer be
    contested in the administrative process and it upheld the auto.

    * `multa_devida` (recurso não provido) and `pago`: final;
    * `notificado` and `julgado_procedente`: final once every contest term `deadlines`
      runs in that stage (defesa, recurso) ended before `today` (one ending today is still
      open, as in `next_deadline`): not contested in time;
    * a judicial suspension (art. 8º III) is a contest still running: not final;
    * every other stage is either still under contest (lavrado, defesa apresentada,
      recurso interposto), not yet an auto (rascunho) or did not uphold a fine
      (arquivado, anistiado): not final.
    """
    if status.suspenso:
        return False
    if status.stage in _FINE_FINAL:
        return True
    if status.stage not in _FINAL_UNLESS_CONTESTED:
        return False
    running = deadlines(status, calendar)
    contest = [d for d in (running.defesa, running.recurso) if d is not None]
    return all(d < today for d in contest)


# --- transitions ---------------------------------------------------------------------------

# action type -> (stages it is allowed in, message for an earlier stage, message for a later one)
_RULES: dict[type, tuple[frozenset[Stage], str, str]] = {
    Lavrar: (frozenset({Stage.RASCUNHO}), "", "O auto já foi lavrado."),
    Notificar: (
        frozenset({Stage.LAVRADO}),
        "Ciência só pode ser registrada após a lavratura do auto.",
        "A ciência do auto já foi registrada.",
    ),
    ApresentarDefesa: (
        frozenset({Stage.NOTIFICADO}),
        "Defesa só pode ser apresentada após a notificação do auto.",
        "A defesa já foi apresentada.",
    ),
    JulgarDefesa: (
        frozenset({Stage.DEFESA_APRESENTADA}),
        "Não há defesa apresentada a julgar.",
        "A defesa já foi julgada.",
    ),
    InterporRecurso: (
        frozenset({Stage.JULGADO_PROCEDENTE}),
        "Recurso só cabe contra auto julgado procedente (art. 7º, § 3º).",
        "O recurso já foi interposto.",
    ),
    JulgarRecurso: (
        frozenset({Stage.RECURSO_INTERPOSTO}),
        "Não há recurso interposto a julgar.",
        "O recurso já foi julgado.",
    ),
    RegistrarPagamento: (
        frozenset({Stage.NOTIFICADO, Stage.JULGADO_PROCEDENTE, Stage.MULTA_DEVIDA}),
        "Pagamento só pode ser registrado após a notificação do auto.",
        "Pagamento não pode ser registrado enquanto a defesa ou o recurso aguarda julgamento.",
    ),
    SuspenderJudicial: (
        frozenset(_OPEN[1:]),
        "Suspensão judicial só se aplica a auto lavrado.",
        "",
    ),
    RetomarJudicial: (frozenset(_OPEN), "", ""),
    Anistiar: (
        frozenset(_OPEN[1:]),
        "Anistia só pode ser concedida a auto lavrado.",
        "",
    ),
}


def _refusal(status: DocketStatus, kind: type, law: Law | None = None) -> str | None:
    """Why an action of type `kind` cannot be recorded in `status` (dates aside), or None.
    Under `law`: one without a defence stage appeals straight from the notification, and
    one without an anistia grants none."""
    label = STAGE_LABELS[status.stage]
    if status.stage in CLOSED_STAGES:
        return f"Processo encerrado ({label}): nenhum ato pode ser registrado."
    allowed, early, late = _RULES[kind]
    if law is not None and kind is Anistiar and law.amnesty is None:
        return "A lei do município não prevê anistia."
    terms = law.terms if law is not None else None
    if terms is not None and terms.defesa is None:
        if kind is ApresentarDefesa:
            return f"A lei do município não prevê defesa: cabe recurso ({terms.recurso.basis})." if terms.recurso \
                else "A lei do município não prevê defesa."
        if kind is InterporRecurso and terms.recurso is not None:
            allowed = frozenset({Stage.NOTIFICADO, Stage.JULGADO_PROCEDENTE})
    if status.stage not in allowed:
        before = _OPEN.index(status.stage) < min(_OPEN.index(s) for s in allowed)
        return f"{early if before else late} Etapa atual: {label}."
    if kind is SuspenderJudicial and status.suspenso:
        return f"O auto já está suspenso judicialmente desde {_fmt(status.suspenso_em)}."
    if kind is RetomarJudicial and not status.suspenso:
        return "O auto não está suspenso judicialmente."
    return None


def allowed_actions(status: DocketStatus, role: str | None = None, law: Law | None = None) -> frozenset[type]:
    """Action types the stage admits (for `role` if given; under `law` if given); dates,
    deadlines and art. 12's first-time condition are checked only by `apply`."""
    kinds = ROLE_ACTIONS[role] if role is not None else ACTION_TYPES
    return frozenset(k for k in kinds if _refusal(status, k, law) is None)


def _require_text(value: str, message: str) -> None:
    if not value.strip():
        raise WorkflowError(message)


def apply(
    status: DocketStatus, action: Action, calendar: BusinessCalendar, *, first_time: bool = False,
) -> DocketStatus:
    """The status after `action`, or `WorkflowError` (pt-BR message) if the act is not allowed.

    `first_time` is the fact art. 12 requires for an anistia: this is the operator's first
    infraction (the caller knows the operator's record; the "promptly corrected" condition is
    the Prefeito's judgment and is not checked here). It is ignored by every other action.
    """
    kind = type(action)
    if kind not in _RULES:
        raise TypeError(f"not a docket action: {action!r}")
    refusal = _refusal(status, kind, calendar.law)
    if refusal is not None:
        raise WorkflowError(refusal)
    if kind is Anistiar and not first_time:
        raise WorkflowError("Anistia só pode ser concedida a quem cometeu a infração pela primeira vez (art. 12).")
    last = status.last_act_on
    if last is not None and action.on < last:
        raise WorkflowError(
            f"Data do ato ({_fmt(action.on)}) anterior ao último ato registrado ({_fmt(last)}).")

    update = msgspec.structs.replace
    on = action.on
    match action:
        case Lavrar():
            return update(status, stage=Stage.LAVRADO, lavrado_em=on)
        case Notificar():
            return update(status, stage=Stage.NOTIFICADO, notificado_em=on)
        case ApresentarDefesa():
            deadline = deadlines(status, calendar).defesa
            if on > deadline:
                raise WorkflowError(
                    f"Prazo de defesa encerrado em {_fmt(deadline)} ({calendar.law_terms.defesa.basis}).")
            return update(status, stage=Stage.DEFESA_APRESENTADA, defesa_em=on)
        case JulgarDefesa(procedente=procedente, fundamentacao=fundamentacao):
            _require_text(fundamentacao, "A decisão deve ser fundamentada: informe a fundamentação.")
            if procedente:
                return update(status, stage=Stage.JULGADO_PROCEDENTE, julgado_em=on, procedente=True)
            return update(status, stage=Stage.ARQUIVADO, julgado_em=on, procedente=False, suspenso=False)
        case InterporRecurso():
            deadline = deadlines(status, calendar).recurso
            if on > deadline:
                raise WorkflowError(
                    f"Prazo de recurso encerrado em {_fmt(deadline)} ({calendar.law_terms.recurso.basis}).")
            return update(status, stage=Stage.RECURSO_INTERPOSTO, recurso_em=on)
        case JulgarRecurso(provido=provido, fundamentacao=fundamentacao):
            _require_text(fundamentacao, "A decisão deve ser fundamentada: informe a fundamentação.")
            if provido:
                return update(status, stage=Stage.ARQUIVADO, recurso_julgado_em=on, recurso_provido=True,
                              suspenso=False)
            return update(status, stage=Stage.MULTA_DEVIDA, recurso_julgado_em=on, recurso_provido=False)
        case RegistrarPagamento():
            return update(status, stage=Stage.PAGO, pago_em=on, suspenso=False)
        case SuspenderJudicial(processo=processo):
            _require_text(processo, "Informe o número do processo judicial.")
            return update(status, suspenso=True, suspenso_em=on)
        case RetomarJudicial():
            return update(status, suspenso=False, retomado_em=on)
        case Anistiar(ato=ato):
            _require_text(ato, "Informe o ato do Prefeito que concede a anistia.")
            return update(status, stage=Stage.ANISTIADO, anistiado_em=on, suspenso=False)
    raise AssertionError(kind)  # unreachable: _RULES covers every action type


def fold(actions: Iterable[Action], calendar: BusinessCalendar, *, first_time: bool = False) -> DocketStatus:
    """Replay the audit log: apply `actions` in order from `DocketStatus.initial()`.

    `first_time` is the art. 12 fact as recorded when the anistia was granted (not as it is
    today: later infractions must not undo a granted anistia). One flag per docket is
    enough because an auto can be anistiado only once and nothing follows it.
    """
    status = DocketStatus.initial()
    for action in actions:
        status = apply(status, action, calendar, first_time=first_time)
    return status
