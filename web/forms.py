"""The action forms of a docket page: one URL slug per workflow action, and how a
submitted form becomes the action (with its note and attachments)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from dockets import workflow
from web.format import date_br, parse_date


class FormError(Exception):
    """A form the user must correct (HTTP 400); the message is shown (pt-BR)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class ActionForm:
    slug: str
    kind: type
    takes_files: bool = False


ACTION_FORMS: dict[str, ActionForm] = {
    form.slug: form
    for form in (
        ActionForm("lavrar", workflow.Lavrar),
        ActionForm("ciencia", workflow.Notificar),
        ActionForm("defesa", workflow.ApresentarDefesa, takes_files=True),
        ActionForm("julgar-defesa", workflow.JulgarDefesa),
        ActionForm("recurso", workflow.InterporRecurso, takes_files=True),
        ActionForm("julgar-recurso", workflow.JulgarRecurso),
        ActionForm("pagamento", workflow.RegistrarPagamento),
        ActionForm("suspender", workflow.SuspenderJudicial),
        ActionForm("retomar", workflow.RetomarJudicial),
        ActionForm("anistia", workflow.Anistiar),
    )
}
SLUG_OF: dict[type, str] = {form.kind: form.slug for form in ACTION_FORMS.values()}

CIENCIA_MEANS = {
    "recibo": "entrega ao autuado, preposto ou representante, contra recibo (art. 5º, § 1º)",
    "postal": "registro postal com aviso de recebimento (art. 5º, § 1º)",
}
MAX_TEXT = 20_000


def _text(form: Mapping[str, str], name: str, *, required: str | None = None, limit: int = MAX_TEXT) -> str:
    value = str(form.get(name) or "").replace("\r\n", "\n").strip()
    if required and not value:
        raise FormError(required)
    if len(value) > limit:
        raise FormError(f"Texto longo demais (máximo de {limit} caracteres).")
    return value


@dataclass(frozen=True)
class LateRegistration:
    """A paper act registered after the day it was done (workflow.PAPER_ACTS): its own
    date, the protocol number it was received under, and why it comes late."""

    on: dt.date
    protocolo: str
    justificativa: str

    def note(self, today: dt.date) -> str:
        return (f"Registro tardio de ato em papel: ato de {date_br(self.on)}, protocolo nº {self.protocolo}, "
                f"registrado em {date_br(today)}. Justificativa: {self.justificativa}")


def late_registration(form: Mapping[str, str], *, today: dt.date, not_before: dt.date) -> LateRegistration | None:
    """The form's late registration of a paper act, if it is one. Any other act is dated
    by the server's clock: a date typed in a form is never an act's date."""
    if not form.get("registro_tardio"):
        return None
    on = parse_date(str(form.get("on") or ""))
    if on is None:
        raise FormError("Informe a data do ato em papel (dd/mm/aaaa).")
    if on > today:
        raise FormError(f"A data do ato ({date_br(on)}) não pode ser posterior a hoje ({date_br(today)}).")
    if on < not_before:
        raise FormError(f"A data do ato ({date_br(on)}) é anterior à data da infração ({date_br(not_before)}).")
    protocolo = _text(form, "protocolo", required="Informe o número de protocolo do ato em papel.", limit=100)
    justificativa = _text(form, "justificativa", required="Justifique o registro tardio.", limit=2000)
    return LateRegistration(on, protocolo, justificativa)


def build_action(spec: ActionForm, form: Mapping[str, str], *, today: dt.date,
                 late: LateRegistration | None = None) -> tuple[workflow.Action, str | None]:
    """(the workflow action, the note for the audit log) from a submitted form, dated
    `today` (the server's clock in the policy's timezone) unless it is a late registration."""
    action, note = _action(spec, form, late.on if late is not None else today)
    if late is not None:
        note = late.note(today) + (f"\n\n{note}" if note else "")
    return action, note


def _action(spec: ActionForm, form: Mapping[str, str], on: dt.date) -> tuple[workflow.Action, str | None]:
    kind = spec.kind
    if kind is workflow.Lavrar:
        return workflow.Lavrar(on=on), None
    if kind is workflow.Notificar:
        means = CIENCIA_MEANS.get(str(form.get("meio") or ""))
        if means is None:
            raise FormError("Informe como o autuado tomou ciência do auto.")
        return workflow.Notificar(on=on), f"Ciência por {means}."
    if kind is workflow.ApresentarDefesa:
        return workflow.ApresentarDefesa(on=on), _text(form, "texto", required="Escreva a defesa (art. 7º).")
    if kind is workflow.InterporRecurso:
        return workflow.InterporRecurso(on=on), _text(form, "texto", required="Escreva as razões do recurso.")
    if kind is workflow.JulgarDefesa:
        decision = str(form.get("decisao") or "")
        if decision not in ("procedente", "improcedente"):
            raise FormError("Escolha a decisão: auto procedente ou improcedente.")
        fundamentacao = _text(form, "fundamentacao", required="A decisão deve ser fundamentada: informe a "
                                                              "fundamentação.")
        return workflow.JulgarDefesa(on=on, procedente=decision == "procedente", fundamentacao=fundamentacao), None
    if kind is workflow.JulgarRecurso:
        decision = str(form.get("decisao") or "")
        if decision not in ("negar", "prover"):
            raise FormError("Escolha a decisão: negar ou dar provimento ao recurso.")
        fundamentacao = _text(form, "fundamentacao", required="A decisão deve ser fundamentada: informe a "
                                                              "fundamentação.")
        return workflow.JulgarRecurso(on=on, provido=decision == "prover", fundamentacao=fundamentacao), None
    if kind is workflow.RegistrarPagamento:
        return workflow.RegistrarPagamento(on=on), _text(form, "nota", limit=500) or None
    if kind is workflow.SuspenderJudicial:
        processo = _text(form, "processo", required="Informe o número do processo judicial.", limit=100)
        return workflow.SuspenderJudicial(on=on, processo=processo), None
    if kind is workflow.RetomarJudicial:
        return workflow.RetomarJudicial(on=on), _text(form, "nota", limit=500) or None
    if kind is workflow.Anistiar:
        ato = _text(form, "ato", required="Informe o ato do Prefeito que concede a anistia (art. 12).", limit=300)
        return workflow.Anistiar(on=on, ato=ato), None
    raise AssertionError(kind)
