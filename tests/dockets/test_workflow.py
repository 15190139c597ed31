"""The auto de infração's workflow (Código Disciplinar arts. 5–8, 12) on the real calendar.

Calendar: ES with the project's municipal holiday Tue 2026-12-08 and the pontos facultativos
(Véspera de Natal Thu 2026-12-24, Véspera de Ano-Novo Thu 2026-12-31, Carnaval Mon 8 and
Tue 9 Feb 2027, Cinzas Wed 10 Feb 2027); national holidays Natal Fri 2026-12-25 and
Confraternização Fri 2027-01-01. Every deadline is counted by hand in a comment (the
starting day is excluded).

The canonical auto: lavrado Mon 2026-11-30, ciência Thu 2026-12-03, defesa Fri 2026-12-11,
julgado procedente Mon 2026-12-21, recurso Fri 2027-01-08, recurso não provido Fri 2027-01-29.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re

import msgspec
import pytest

from dockets.calendar import BusinessCalendar
from dockets.workflow import (
    ACTION_LABELS,
    ACTION_TYPES,
    ROLE_ACTIONS,
    STAGE_LABELS,
    Anistiar,
    ApresentarDefesa,
    Deadlines,
    DocketStatus,
    InterporRecurso,
    JulgarDefesa,
    JulgarRecurso,
    Lavrar,
    Notificar,
    RegistrarPagamento,
    RetomarJudicial,
    Stage,
    SuspenderJudicial,
    WorkflowError,
    allowed_actions,
    apply,
    deadlines,
    decode_action,
    encode_action,
    fold,
    is_final,
    next_deadline,
    running_terms,
)
from rules.joao_neiva.anexo_i import LAW

D = dt.date
CAL = BusinessCalendar.for_municipality("ES", [D(2026, 12, 8)], law=LAW)

LAVRADO_EM = D(2026, 11, 30)  # Monday
NOTIFICADO_EM = D(2026, 12, 3)  # Thursday
DEFESA_EM = D(2026, 12, 11)
JULGADO_EM = D(2026, 12, 21)  # Monday
RECURSO_EM = D(2027, 1, 8)  # the last day of the recurso deadline
RECURSO_JULGADO_EM = D(2027, 1, 29)  # Friday
FUNDAMENTO = "Excesso de velocidade comprovado pelo gráfico do tacógrafo."
ATO = "Decreto nº 1/2026 (ilustrativo)"

P_LAVRADO = [Lavrar(LAVRADO_EM)]
P_NOTIFICADO = P_LAVRADO + [Notificar(NOTIFICADO_EM)]
P_DEFESA = P_NOTIFICADO + [ApresentarDefesa(DEFESA_EM)]
P_JULGADO = P_DEFESA + [JulgarDefesa(JULGADO_EM, True, FUNDAMENTO)]
P_RECURSO = P_JULGADO + [InterporRecurso(RECURSO_EM)]
P_MULTA = P_RECURSO + [JulgarRecurso(RECURSO_JULGADO_EM, False, "Recurso não traz fato novo.")]
PATHS = {
    Stage.RASCUNHO: [],
    Stage.LAVRADO: P_LAVRADO,
    Stage.NOTIFICADO: P_NOTIFICADO,
    Stage.DEFESA_APRESENTADA: P_DEFESA,
    Stage.JULGADO_PROCEDENTE: P_JULGADO,
    Stage.RECURSO_INTERPOSTO: P_RECURSO,
    Stage.MULTA_DEVIDA: P_MULTA,
    Stage.PAGO: P_NOTIFICADO + [RegistrarPagamento(D(2026, 12, 10))],
    Stage.ARQUIVADO: P_DEFESA + [JulgarDefesa(JULGADO_EM, False, "Velocidade dentro do limite.")],
    Stage.ANISTIADO: P_NOTIFICADO + [Anistiar(D(2026, 12, 10), ATO)],
}
OPEN = [Stage.LAVRADO, Stage.NOTIFICADO, Stage.DEFESA_APRESENTADA, Stage.JULGADO_PROCEDENTE,
        Stage.RECURSO_INTERPOSTO, Stage.MULTA_DEVIDA]  # open and lavrado
CLOSED = [Stage.PAGO, Stage.ARQUIVADO, Stage.ANISTIADO]


def at(stage: Stage) -> DocketStatus:
    return fold(PATHS[stage], CAL, first_time=True)


def sample(kind: type, on: dt.date, **fields):
    defaults = {
        JulgarDefesa: {"procedente": True, "fundamentacao": FUNDAMENTO},
        JulgarRecurso: {"provido": False, "fundamentacao": FUNDAMENTO},
        SuspenderJudicial: {"processo": "5000123-45.2026.8.08.0030"},
        Anistiar: {"ato": ATO},
    }
    return kind(on=on, **{**defaults.get(kind, {}), **fields})


def test_paths_reach_their_stage():
    for stage in Stage:
        assert at(stage).stage is stage


def test_initial_status_is_rascunho_with_no_dates():
    status = DocketStatus.initial()
    assert status.stage is Stage.RASCUNHO
    assert status.last_act_on is None and not status.suspenso
    assert deadlines(status, CAL) == Deadlines()
    assert next_deadline(status, CAL) is None


# --- every allowed transition -------------------------------------------------------------

ALLOWED = [
    (Stage.RASCUNHO, Lavrar, {}, Stage.LAVRADO),
    (Stage.LAVRADO, Notificar, {}, Stage.NOTIFICADO),
    (Stage.NOTIFICADO, ApresentarDefesa, {}, Stage.DEFESA_APRESENTADA),
    (Stage.NOTIFICADO, RegistrarPagamento, {}, Stage.PAGO),  # art. 8º I: pays without defence
    (Stage.DEFESA_APRESENTADA, JulgarDefesa, {"procedente": True}, Stage.JULGADO_PROCEDENTE),
    (Stage.DEFESA_APRESENTADA, JulgarDefesa, {"procedente": False}, Stage.ARQUIVADO),  # art. 7º §2º
    (Stage.JULGADO_PROCEDENTE, InterporRecurso, {}, Stage.RECURSO_INTERPOSTO),
    (Stage.JULGADO_PROCEDENTE, RegistrarPagamento, {}, Stage.PAGO),  # pays instead of appealing
    (Stage.RECURSO_INTERPOSTO, JulgarRecurso, {"provido": False}, Stage.MULTA_DEVIDA),
    (Stage.RECURSO_INTERPOSTO, JulgarRecurso, {"provido": True}, Stage.ARQUIVADO),
    (Stage.MULTA_DEVIDA, RegistrarPagamento, {}, Stage.PAGO),
    *[(stage, SuspenderJudicial, {}, stage) for stage in OPEN],
    *[(stage, Anistiar, {}, Stage.ANISTIADO) for stage in OPEN],
]


@pytest.mark.parametrize(("stage", "kind", "fields", "expected"), ALLOWED,
                         ids=[f"{s}-{k.__name__}-{e}" for s, k, _, e in ALLOWED])
def test_allowed_transition_yields_expected_stage(stage, kind, fields, expected):
    status = at(stage)
    on = status.last_act_on or LAVRADO_EM  # same day as the last act: within every deadline
    after = apply(status, sample(kind, on, **fields), CAL, first_time=True)
    assert after.stage is expected
    assert kind in allowed_actions(status)


@pytest.mark.parametrize("stage", OPEN)
def test_retomar_ends_a_suspension_in_every_open_stage(stage):
    status = at(stage)
    on = status.last_act_on
    suspended = apply(status, sample(SuspenderJudicial, on), CAL)
    assert suspended.suspenso and suspended.stage is stage
    assert allowed_actions(suspended) >= {RetomarJudicial} and SuspenderJudicial not in allowed_actions(suspended)
    resumed = apply(suspended, RetomarJudicial(on), CAL)
    assert not resumed.suspenso and resumed.stage is stage and resumed.retomado_em == on


# --- every forbidden transition -----------------------------------------------------------

ALREADY_LAVRADO = "O auto já foi lavrado."
REFUSALS: dict[type, dict[Stage, str]] = {
    Lavrar: {s: ALREADY_LAVRADO for s in OPEN},
    Notificar: {
        Stage.RASCUNHO: "Ciência só pode ser registrada após a lavratura do auto.",
        **{s: "A ciência do auto já foi registrada." for s in OPEN[1:]},
    },
    ApresentarDefesa: {
        Stage.RASCUNHO: "Defesa só pode ser apresentada após a notificação do auto.",
        Stage.LAVRADO: "Defesa só pode ser apresentada após a notificação do auto.",
        **{s: "A defesa já foi apresentada." for s in OPEN[2:]},
    },
    JulgarDefesa: {
        **{s: "Não há defesa apresentada a julgar." for s in [Stage.RASCUNHO, *OPEN[:2]]},
        **{s: "A defesa já foi julgada." for s in OPEN[3:]},
    },
    InterporRecurso: {
        **{s: "Recurso só cabe contra auto julgado procedente (art. 7º, § 3º)."
           for s in [Stage.RASCUNHO, *OPEN[:3]]},
        **{s: "O recurso já foi interposto." for s in OPEN[4:]},
    },
    JulgarRecurso: {
        **{s: "Não há recurso interposto a julgar." for s in [Stage.RASCUNHO, *OPEN[:4]]},
        Stage.MULTA_DEVIDA: "O recurso já foi julgado.",
    },
    RegistrarPagamento: {
        Stage.RASCUNHO: "Pagamento só pode ser registrado após a notificação do auto.",
        Stage.LAVRADO: "Pagamento só pode ser registrado após a notificação do auto.",
        Stage.DEFESA_APRESENTADA:
            "Pagamento não pode ser registrado enquanto a defesa ou o recurso aguarda julgamento.",
        Stage.RECURSO_INTERPOSTO:
            "Pagamento não pode ser registrado enquanto a defesa ou o recurso aguarda julgamento.",
    },
    SuspenderJudicial: {Stage.RASCUNHO: "Suspensão judicial só se aplica a auto lavrado."},
    RetomarJudicial: {},  # refused everywhere when not suspended: see the test below
    Anistiar: {Stage.RASCUNHO: "Anistia só pode ser concedida a auto lavrado."},
}
FORBIDDEN = [(stage, kind, message) for kind, table in REFUSALS.items() for stage, message in table.items()]


@pytest.mark.parametrize(("stage", "kind", "message"), FORBIDDEN,
                         ids=[f"{s}-{k.__name__}" for s, k, _ in FORBIDDEN])
def test_forbidden_transition_in_open_stage_is_refused_in_portuguese(stage, kind, message):
    status = at(stage)
    with pytest.raises(WorkflowError, match=f"^{re.escape(message)} Etapa atual: {STAGE_LABELS[stage]}\\.$"):
        apply(status, sample(kind, D(2027, 1, 29)), CAL, first_time=True)
    assert kind not in allowed_actions(status)


@pytest.mark.parametrize("stage", CLOSED)
@pytest.mark.parametrize("kind", ACTION_TYPES, ids=lambda k: k.__name__)
def test_nothing_can_be_recorded_on_a_closed_auto(stage, kind):
    with pytest.raises(WorkflowError, match=rf"^Processo encerrado \({STAGE_LABELS[stage]}\): nenhum ato"):
        apply(at(stage), sample(kind, D(2027, 3, 1)), CAL, first_time=True)
    assert allowed_actions(at(stage)) == frozenset()


@pytest.mark.parametrize("stage", [Stage.RASCUNHO, *OPEN])
def test_retomar_without_suspension_is_refused(stage):
    with pytest.raises(WorkflowError, match="^O auto não está suspenso judicialmente.$"):
        apply(at(stage), RetomarJudicial(D(2027, 3, 1)), CAL)


def test_allowed_and_forbidden_tables_cover_every_stage_and_action():
    allowed = {(s, k) for s, k, _, _ in ALLOWED} | {(s, RetomarJudicial) for s in OPEN}  # when suspended
    forbidden = {(s, k) for s, k, _ in FORBIDDEN} | {(s, k) for s in CLOSED for k in ACTION_TYPES}
    assert allowed.isdisjoint(forbidden)
    assert allowed | forbidden | {(Stage.RASCUNHO, RetomarJudicial)} == set(itertools.product(Stage, ACTION_TYPES))


# --- other refusals -----------------------------------------------------------------------


def test_suspending_twice_is_refused():
    suspended = apply(at(Stage.NOTIFICADO), sample(SuspenderJudicial, D(2026, 12, 7)), CAL)
    with pytest.raises(WorkflowError, match="^O auto já está suspenso judicialmente desde 07/12/2026.$"):
        apply(suspended, sample(SuspenderJudicial, D(2026, 12, 9)), CAL)


def test_act_dated_before_the_last_act_is_refused():
    message = "Data do ato (29/11/2026) anterior ao último ato registrado (30/11/2026)."
    with pytest.raises(WorkflowError, match=f"^{re.escape(message)}$"):
        apply(at(Stage.LAVRADO), Notificar(D(2026, 11, 29)), CAL)
    with pytest.raises(WorkflowError, match="anterior ao último ato registrado"):
        apply(at(Stage.JULGADO_PROCEDENTE), RegistrarPagamento(D(2026, 12, 18)), CAL)


def test_anistia_refused_when_not_first_infraction():
    message = "Anistia só pode ser concedida a quem cometeu a infração pela primeira vez (art. 12)."
    with pytest.raises(WorkflowError, match=f"^{re.escape(message)}$"):
        apply(at(Stage.NOTIFICADO), Anistiar(D(2026, 12, 10), ATO), CAL)  # first_time defaults to False


def test_anistia_requires_the_prefeito_act():
    with pytest.raises(WorkflowError, match="^Informe o ato do Prefeito"):
        apply(at(Stage.NOTIFICADO), Anistiar(D(2026, 12, 10), "  "), CAL, first_time=True)


def test_anistia_records_the_date_and_ends_a_suspension():
    suspended = apply(at(Stage.MULTA_DEVIDA), sample(SuspenderJudicial, D(2027, 2, 1)), CAL)
    after = apply(suspended, Anistiar(D(2027, 2, 15), ATO), CAL, first_time=True)
    assert after.stage is Stage.ANISTIADO and after.anistiado_em == D(2027, 2, 15) and not after.suspenso


@pytest.mark.parametrize("kind", [JulgarDefesa, JulgarRecurso])
def test_judgment_without_fundamentacao_is_refused(kind):
    stage = Stage.DEFESA_APRESENTADA if kind is JulgarDefesa else Stage.RECURSO_INTERPOSTO
    with pytest.raises(WorkflowError, match="^A decisão deve ser fundamentada"):
        apply(at(stage), sample(kind, D(2027, 1, 29), fundamentacao=""), CAL)


def test_suspension_without_processo_is_refused():
    with pytest.raises(WorkflowError, match="^Informe o número do processo judicial.$"):
        apply(at(Stage.NOTIFICADO), SuspenderJudicial(D(2026, 12, 7), ""), CAL)


def test_workflow_error_is_a_value_error_with_the_message():
    with pytest.raises(ValueError) as caught:
        apply(at(Stage.LAVRADO), Lavrar(D(2026, 12, 1)), CAL)
    assert isinstance(caught.value, WorkflowError)
    assert caught.value.message == "O auto já foi lavrado. Etapa atual: Lavrado."


# --- deadlines: no defence, pay -----------------------------------------------------------


def test_lavrado_notification_deadline_is_five_business_days():
    # lavrado Mon 2026-11-30 (excluded); Tue Dec 1 (1), 2 (2), 3 (3), Fri 4 (4); 5-6 weekend;
    # Mon 7 (5)
    assert deadlines(at(Stage.LAVRADO), CAL) == Deadlines(notificacao=D(2026, 12, 7))
    assert next_deadline(at(Stage.LAVRADO), CAL) == ("Prazo de notificação", D(2026, 12, 7))


def test_notificado_defence_and_payment_deadlines():
    # defesa: ciência Thu 2026-12-03 (excluded); Fri 4 (1); 5-6 weekend; Mon 7 (2);
    # Tue 8 feriado municipal; Wed 9 (3), Thu 10 (4), Fri 11 (5); 12-13 weekend; Mon 14 (6),
    # 15 (7), 16 (8), 17 (9), Fri 18 (10) -> 2026-12-18
    # pagamento (art. 8º I, 10 days): Dec 4..13 are days 1..10; Sun 13 -> Mon 14
    status = at(Stage.NOTIFICADO)
    assert deadlines(status, CAL) == Deadlines(defesa=D(2026, 12, 18), pagamento=D(2026, 12, 14))
    assert next_deadline(status, CAL) == ("Prazo de pagamento", D(2026, 12, 14))
    # once the payment deadline has passed the defence one is still open, up to its last day
    assert next_deadline(status, CAL, today=D(2026, 12, 15)) == ("Prazo de defesa", D(2026, 12, 18))
    assert next_deadline(status, CAL, today=D(2026, 12, 18)) == ("Prazo de defesa", D(2026, 12, 18))
    assert next_deadline(status, CAL, today=D(2026, 12, 19)) is None


def test_no_defence_and_pay_closes_the_auto():
    paid = apply(at(Stage.NOTIFICADO), RegistrarPagamento(D(2026, 12, 10)), CAL)
    assert paid.stage is Stage.PAGO and paid.pago_em == D(2026, 12, 10)
    assert deadlines(paid, CAL) == Deadlines()
    assert next_deadline(paid, CAL) is None


def test_late_payment_is_still_recorded():
    # pagamento deadline was Mon 2026-12-14 (see above); paying on Tue 2026-12-22 is recorded
    assert apply(at(Stage.NOTIFICADO), RegistrarPagamento(D(2026, 12, 22)), CAL).stage is Stage.PAGO


def test_defence_on_the_last_day_is_accepted():
    # last day of the defence deadline: Fri 2026-12-18 (counted above)
    after = apply(at(Stage.NOTIFICADO), ApresentarDefesa(D(2026, 12, 18)), CAL)
    assert after.stage is Stage.DEFESA_APRESENTADA and after.defesa_em == D(2026, 12, 18)
    assert deadlines(after, CAL) == Deadlines()  # art. 8º I: no payment deadline once defended


def test_defence_the_day_after_the_last_day_is_refused():
    with pytest.raises(WorkflowError, match=r"^Prazo de defesa encerrado em 18/12/2026 \(art\. 7º\)\.$"):
        apply(at(Stage.NOTIFICADO), ApresentarDefesa(D(2026, 12, 19)), CAL)


def test_late_notification_is_recorded_and_the_defence_counts_from_the_actual_ciencia():
    # notification deadline Mon 2026-12-07 (see above); ciência only on Wed 2026-12-16.
    # defesa: Thu 17 (1), Fri 18 (2); 19-20 weekend; Mon 21 (3), Tue 22 (4), Wed 23 (5);
    # Thu 24 Véspera de Natal; Fri 25 Natal; 26-27 weekend; Mon 28 (6), 29 (7), Wed 30 (8);
    # Thu 31 Véspera de Ano-Novo; Fri 2027-01-01 Confraternização; 2-3 weekend;
    # Mon 4 (9), Tue 5 (10) -> 2027-01-05
    status = apply(at(Stage.LAVRADO), Notificar(D(2026, 12, 16)), CAL)
    assert deadlines(status, CAL).defesa == D(2027, 1, 5)


# --- deadlines: defence judged ------------------------------------------------------------


def test_defence_improcedente_archives_the_auto():
    status = at(Stage.ARQUIVADO)
    assert status.procedente is False and status.julgado_em == JULGADO_EM
    assert deadlines(status, CAL) == Deadlines()


def test_julgado_procedente_recurso_and_payment_deadlines():
    # recurso: julgado Mon 2026-12-21 (excluded); Tue 22 (1), Wed 23 (2); Thu 24 Véspera de
    # Natal; Fri 25 Natal; 26-27 weekend; Mon 28 (3), 29 (4), Wed 30 (5); Thu 31 Véspera de
    # Ano-Novo; Fri 2027-01-01 Confraternização; 2-3 weekend; Mon 4 (6), 5 (7), 6 (8), 7 (9),
    # Fri 8 (10) -> 2027-01-08
    # pagamento if not appealed (counted from the lapse of the recurso deadline): Jan 9..18
    # are days 1..10; Mon 18 is a business day -> 2027-01-18
    status = at(Stage.JULGADO_PROCEDENTE)
    assert deadlines(status, CAL) == Deadlines(recurso=D(2027, 1, 8), pagamento=D(2027, 1, 18))
    assert next_deadline(status, CAL) == ("Prazo de recurso", D(2027, 1, 8))
    assert next_deadline(status, CAL, today=D(2027, 1, 11)) == ("Prazo de pagamento", D(2027, 1, 18))


def test_recurso_on_the_last_day_is_accepted():
    after = apply(at(Stage.JULGADO_PROCEDENTE), InterporRecurso(D(2027, 1, 8)), CAL)
    assert after.stage is Stage.RECURSO_INTERPOSTO and after.recurso_em == D(2027, 1, 8)
    assert deadlines(after, CAL) == Deadlines()


def test_recurso_the_day_after_the_last_day_is_refused():
    with pytest.raises(WorkflowError, match=r"^Prazo de recurso encerrado em 08/01/2027 \(art\. 7º, § 3º\)\.$"):
        apply(at(Stage.JULGADO_PROCEDENTE), InterporRecurso(D(2027, 1, 9)), CAL)


def test_paying_instead_of_appealing():
    paid = apply(at(Stage.JULGADO_PROCEDENTE), RegistrarPagamento(D(2027, 1, 4)), CAL)
    assert paid.stage is Stage.PAGO


def test_recurso_nao_provido_then_payment_deadline_across_carnival_then_paid():
    # pagamento (art. 8º II): recurso julgado Fri 2027-01-29 (excluded); Jan 30..Feb 8 are
    # days 1..10; Mon Feb 8 Carnaval, Tue 9 Carnaval, Wed 10 Cinzas -> Thu 2027-02-11
    status = at(Stage.MULTA_DEVIDA)
    assert status.recurso_provido is False and status.recurso_julgado_em == RECURSO_JULGADO_EM
    assert deadlines(status, CAL) == Deadlines(pagamento=D(2027, 2, 11))
    assert next_deadline(status, CAL) == ("Prazo de pagamento", D(2027, 2, 11))
    paid = apply(status, RegistrarPagamento(D(2027, 2, 11)), CAL)
    assert paid.stage is Stage.PAGO and paid.pago_em == D(2027, 2, 11)


def test_recurso_provido_archives_the_auto():
    status = apply(at(Stage.RECURSO_INTERPOSTO), JulgarRecurso(D(2027, 1, 29), True, "Tacógrafo descalibrado."), CAL)
    assert status.stage is Stage.ARQUIVADO and status.recurso_provido is True
    assert deadlines(status, CAL) == Deadlines()


# --- judicial suspension (art. 8º III) ----------------------------------------------------


def test_suspension_stops_the_payment_deadline_but_not_the_defence_deadline():
    status = apply(at(Stage.NOTIFICADO), sample(SuspenderJudicial, D(2026, 12, 7)), CAL)
    assert status.stage is Stage.NOTIFICADO and status.suspenso and status.suspenso_em == D(2026, 12, 7)
    # defesa still Fri 2026-12-18 (counted above); no payment demanded
    assert deadlines(status, CAL) == Deadlines(defesa=D(2026, 12, 18))
    assert next_deadline(status, CAL) == ("Prazo de defesa", D(2026, 12, 18))
    assert apply(status, ApresentarDefesa(D(2026, 12, 18)), CAL).stage is Stage.DEFESA_APRESENTADA


def test_payment_deadline_counts_again_in_full_from_the_end_of_the_suspension():
    # suspended Mon 2026-12-07, resumed Mon 2027-01-11 (excluded); Jan 12..21 are days 1..10;
    # Thu 21 is a business day -> 2027-01-21
    status = fold(P_NOTIFICADO + [sample(SuspenderJudicial, D(2026, 12, 7)), RetomarJudicial(D(2027, 1, 11))], CAL)
    assert deadlines(status, CAL).pagamento == D(2027, 1, 21)


def test_voluntary_payment_while_suspended_is_accepted_and_ends_the_suspension():
    suspended = apply(at(Stage.NOTIFICADO), sample(SuspenderJudicial, D(2026, 12, 7)), CAL)
    paid = apply(suspended, RegistrarPagamento(D(2026, 12, 9)), CAL)
    assert paid.stage is Stage.PAGO and not paid.suspenso and paid.suspenso_em == D(2026, 12, 7)


def test_suspension_after_the_final_decision():
    # suspended Mon 2027-02-01: no payment demanded. Resumed Fri 2027-02-26 (excluded);
    # Feb 27..Mar 8 are days 1..10 (February 2027 has 28 days); Mon Mar 8 business -> 2027-03-08
    suspended = apply(at(Stage.MULTA_DEVIDA), sample(SuspenderJudicial, D(2027, 2, 1)), CAL)
    assert deadlines(suspended, CAL) == Deadlines()
    assert next_deadline(suspended, CAL) is None
    resumed = apply(suspended, RetomarJudicial(D(2027, 2, 26)), CAL)
    assert resumed.stage is Stage.MULTA_DEVIDA
    assert deadlines(resumed, CAL).pagamento == D(2027, 3, 8)


def test_suspension_ended_after_the_recurso_lapsed_restarts_the_payment_count():
    # recurso deadline Fri 2027-01-08 (counted above) lapsed while suspended; resumed Mon
    # 2027-01-11 (excluded); Jan 12..21 are days 1..10; Thu 21 -> 2027-01-21
    status = fold(P_JULGADO + [sample(SuspenderJudicial, D(2026, 12, 22)), RetomarJudicial(D(2027, 1, 11))], CAL)
    assert deadlines(status, CAL) == Deadlines(recurso=D(2027, 1, 8), pagamento=D(2027, 1, 21))


def test_suspension_ended_before_notification_does_not_move_the_payment_deadline():
    # suspended Tue 2026-12-01, resumed Wed 2026-12-02, ciência Thu 2026-12-03: the 10 days
    # count from the ciência: Dec 4..13 are days 1..10; Sun 13 -> Mon 2026-12-14
    status = fold([Lavrar(LAVRADO_EM), sample(SuspenderJudicial, D(2026, 12, 1)), RetomarJudicial(D(2026, 12, 2)),
                   Notificar(NOTIFICADO_EM)], CAL)
    assert deadlines(status, CAL).pagamento == D(2026, 12, 14)


# --- roles, labels, encoding, replay ------------------------------------------------------


def test_every_action_belongs_to_exactly_one_role():
    roles = list(ROLE_ACTIONS.values())
    assert sorted(ROLE_ACTIONS) == ["fiscal", "gestor", "operador", "titular"]
    assert sum(len(r) for r in roles) == len(ACTION_TYPES)
    assert frozenset().union(*roles) == frozenset(ACTION_TYPES)
    assert ROLE_ACTIONS["fiscal"] == {Lavrar, Notificar}
    assert ROLE_ACTIONS["operador"] == {ApresentarDefesa, InterporRecurso}
    assert ROLE_ACTIONS["titular"] == {JulgarRecurso}  # art. 7º § 3º: not the gestor's


def test_allowed_actions_by_role_in_notificado():
    status = at(Stage.NOTIFICADO)
    assert allowed_actions(status, "operador") == {ApresentarDefesa}
    assert allowed_actions(status, "fiscal") == frozenset()
    assert allowed_actions(status, "gestor") == {RegistrarPagamento, SuspenderJudicial, Anistiar}


def test_labels_cover_every_action_and_stage():
    assert set(ACTION_LABELS) == set(ACTION_TYPES)
    assert set(STAGE_LABELS) == set(Stage)
    assert ACTION_LABELS[Notificar] == "Registrar ciência"
    assert STAGE_LABELS[Stage.RASCUNHO] == "Aguardando lavratura"


ALL_ACTIONS = [
    Lavrar(D(2026, 11, 30)),
    Notificar(D(2026, 12, 3)),
    ApresentarDefesa(D(2026, 12, 11)),
    JulgarDefesa(D(2026, 12, 21), True, FUNDAMENTO),
    InterporRecurso(D(2027, 1, 8)),
    JulgarRecurso(D(2027, 1, 29), False, "Recurso não traz fato novo."),
    RegistrarPagamento(D(2027, 2, 11)),
    SuspenderJudicial(D(2027, 2, 1), "5000123-45.2026.8.08.0030"),
    RetomarJudicial(D(2027, 2, 26)),
    Anistiar(D(2027, 2, 15), ATO),
]


def test_round_trip_list_has_every_action_type():
    assert {type(a) for a in ALL_ACTIONS} == set(ACTION_TYPES)


@pytest.mark.parametrize("action", ALL_ACTIONS, ids=lambda a: type(a).__name__)
def test_encode_decode_round_trip(action):
    data = encode_action(action)
    assert msgspec.json.decode(data)["type"] == type(action).__name__
    assert msgspec.json.decode(data)["on"] == action.on.isoformat()
    assert decode_action(data) == action


def test_encoding_is_the_tagged_json():
    assert encode_action(Lavrar(D(2026, 11, 30))) == b'{"type":"Lavrar","on":"2026-11-30"}'
    assert msgspec.json.encode(JulgarDefesa(D(2026, 12, 21), False, "x")) == (
        b'{"type":"JulgarDefesa","on":"2026-12-21","procedente":false,"fundamentacao":"x"}')


def test_malformed_log_entries_are_rejected():
    with pytest.raises(msgspec.ValidationError):
        decode_action(b'{"type":"Multar","on":"2026-11-30"}')
    with pytest.raises(msgspec.ValidationError):
        decode_action(b'{"type":"Lavrar","on":"2026-11-30","extra":1}')
    with pytest.raises(msgspec.ValidationError):
        decode_action(b'{"type":"JulgarDefesa","on":"2026-12-21"}')


def test_actions_are_frozen():
    with pytest.raises(AttributeError):
        Lavrar(D(2026, 11, 30)).on = D(2026, 12, 1)


def test_fold_replays_the_encoded_audit_log():
    log = [encode_action(a) for a in P_MULTA + [RegistrarPagamento(D(2027, 2, 11))]]
    status = fold((decode_action(line) for line in log), CAL)
    assert status == DocketStatus(
        stage=Stage.PAGO, lavrado_em=LAVRADO_EM, notificado_em=NOTIFICADO_EM, defesa_em=DEFESA_EM,
        julgado_em=JULGADO_EM, procedente=True, recurso_em=RECURSO_EM, recurso_julgado_em=RECURSO_JULGADO_EM,
        recurso_provido=False, pago_em=D(2027, 2, 11))


def test_fold_passes_the_recorded_first_time_fact_to_the_anistia():
    log = P_NOTIFICADO + [Anistiar(D(2026, 12, 10), ATO)]
    assert fold(log, CAL, first_time=True).stage is Stage.ANISTIADO
    with pytest.raises(WorkflowError, match="pela primeira vez"):
        fold(log, CAL)


# --- the term running now (what the operator's list and page put first) ------------------------


def _terms(status, today):
    return [(t.field, t.date, t.days_left, t.overdue) for t in running_terms(status, CAL, today)]


def test_notified_the_defence_runs_first_though_payment_ends_earlier():
    # ciência Thu 3/12: pagamento 3/12 + 10 = Sun 13/12 -> Mon 14/12; defesa 18/12.
    # On Fri 4/12 the defence has 7, (8 holiday), 9, 10, 11, 14..18 = 9 dias úteis left;
    # the payment 10 days (5/12 .. 14/12).
    assert _terms(at(Stage.NOTIFICADO), D(2026, 12, 4)) == [
        ("defesa", D(2026, 12, 18), 9, False), ("pagamento", D(2026, 12, 14), 10, False)]


def test_notified_after_the_payment_date_the_defence_alone_runs():
    # Tue 15/12: 16, 17, 18 = 3 dias úteis left; the payment's 14/12 has ended and is not shown
    assert _terms(at(Stage.NOTIFICADO), D(2026, 12, 15)) == [("defesa", D(2026, 12, 18), 3, False)]
    # its last day: 0 left, not overdue
    assert _terms(at(Stage.NOTIFICADO), D(2026, 12, 18)) == [("defesa", D(2026, 12, 18), 0, False)]


def test_notified_with_every_deadline_ended_the_payment_is_first_and_overdue():
    assert _terms(at(Stage.NOTIFICADO), D(2026, 12, 19)) == [("pagamento", D(2026, 12, 14), 0, True)]


def test_judged_the_appeal_runs_first_then_the_payment():
    status = at(Stage.JULGADO_PROCEDENTE)  # julgado Mon 21/12: recurso 8/1/2027, pagamento 18/1/2027
    terms = running_terms(status, CAL, D(2026, 12, 22))
    assert [(t.field, t.date, t.business_days) for t in terms] == [
        ("recurso", D(2027, 1, 8), True), ("pagamento", D(2027, 1, 18), False)]
    assert terms[0].label == "Prazo de recurso"
    # Mon 11/1: the recurso ended, the payment runs (12..18/1 = 7 days)
    assert _terms(status, D(2027, 1, 11)) == [("pagamento", D(2027, 1, 18), 7, False)]


def test_lavrado_runs_the_notification_and_a_pending_decision_runs_nothing():
    assert _terms(at(Stage.LAVRADO), D(2026, 12, 1)) == [("notificacao", D(2026, 12, 7), 4, False)]
    for stage in (Stage.RASCUNHO, Stage.DEFESA_APRESENTADA, Stage.RECURSO_INTERPOSTO, *CLOSED):
        assert running_terms(at(stage), CAL, D(2026, 12, 22)) == (), stage


def test_suspended_notified_auto_runs_only_the_defence():
    status = apply(at(Stage.NOTIFICADO), sample(SuspenderJudicial, D(2026, 12, 4)), CAL)
    assert _terms(status, D(2026, 12, 4)) == [("defesa", D(2026, 12, 18), 9, False)]


# --- the terms come from the municipality's law -----------------------------------------------

def test_deadlines_follow_the_terms_of_the_calendars_law():
    # a law with no notification or defence term, a 5-day appeal and a 15-day payment, both
    # in calendar days (Conselheiro Lafaiete's art. 42 §§ 2º and 4º read that way)
    from rules.law import Law, Term, Terms
    calendar_days = Terms(notificacao=None, defesa=None, recurso=Term(5, False, "art. 42, § 4º"),
                          pagamento=Term(15, False, "art. 42, § 2º"))
    cal = BusinessCalendar.for_municipality("MG", law=Law("x", "Lei X", "Cr$", terms=calendar_days))
    assert deadlines(at(Stage.LAVRADO), cal).notificacao is None
    notified = deadlines(at(Stage.NOTIFICADO), cal)
    # 3 Dec + 15 calendar days = 18 Dec (João Neiva: 10 days = 13 Dec, defence 10 dias úteis)
    assert (notified.defesa, notified.pagamento) == (None, D(2026, 12, 18))
    judged = deadlines(at(Stage.JULGADO_PROCEDENTE), cal)
    # 21 Dec + 5 calendar days = Saturday 26 Dec, moved to Monday 28 Dec (a term never ends on
    # a closed day); payment counts from the appeal's last day: 28 Dec + 15 = Tuesday 12 Jan
    assert (judged.recurso, judged.pagamento) == (D(2026, 12, 28), D(2027, 1, 12))
    assert [t.business_days for t in running_terms(at(Stage.JULGADO_PROCEDENTE), cal, JULGADO_EM)] == [False, False]


def test_a_calendar_without_the_laws_terms_computes_no_deadline():
    with pytest.raises(ValueError, match="calendar_for"):
        deadlines(at(Stage.NOTIFICADO), BusinessCalendar.for_municipality("ES"))


def test_calendar_for_the_shipped_policy_carries_joao_neivas_terms():
    from dockets.config import calendar_for
    from kernel.policy import load_policy

    assert calendar_for(load_policy()).law == LAW
    # art. 7º: 10 dias úteis from Thursday 3 Dec skips 8 Dec (municipal holiday) -> 18 Dec
    assert deadlines(at(Stage.NOTIFICADO), calendar_for(load_policy())).defesa == D(2026, 12, 18)


def test_a_law_without_a_defence_stage_appeals_from_the_notification():
    # Conselheiro Lafaiete (Lei 4/1948 art. 42): no defence; appeal to the Prefeito within 5
    # days of the notification (§ 4º); paid 15 days from the imposição (§ 2º), or within 5
    # days of the appeal's denial (§ 4º); calendar days
    from rules.conselheiro_lafaiete.lei_4_1948 import LAW as LAFAIETE

    cal = BusinessCalendar.for_municipality("MG", law=LAFAIETE)
    notified = at(Stage.NOTIFICADO)
    assert ApresentarDefesa not in allowed_actions(notified, law=LAFAIETE)
    assert InterporRecurso in allowed_actions(notified, "operador", LAFAIETE)
    # nor does Lei 4/1948 know an anistia (João Neiva's art. 12)
    assert Anistiar not in allowed_actions(notified, "gestor", LAFAIETE)
    with pytest.raises(WorkflowError, match="não prevê anistia"):
        apply(notified, Anistiar(D(2026, 12, 4), "Decreto 1/2026"), cal, first_time=True)
    with pytest.raises(WorkflowError, match=r"não prevê defesa: cabe recurso \(art\. 42, § 4º\)"):
        apply(notified, ApresentarDefesa(D(2026, 12, 4)), cal)
    # notified Thursday 3 Dec: appeal until 3 + 5 = Tuesday 8 Dec; payment 3 + 15 = Friday 18 Dec
    running = deadlines(notified, cal)
    assert (running.defesa, running.recurso, running.pagamento) == (None, D(2026, 12, 8), D(2026, 12, 18))
    with pytest.raises(WorkflowError, match=r"^Prazo de recurso encerrado em 08/12/2026 \(art\. 42, § 4º\)\.$"):
        apply(notified, InterporRecurso(D(2026, 12, 9)), cal)
    appealed = apply(notified, InterporRecurso(D(2026, 12, 7)), cal)
    denied = apply(appealed, JulgarRecurso(D(2026, 12, 14), False, "Sem força maior comprovada."), cal)
    # denied Monday 14 Dec: 5 days -> Saturday 19 Dec, moved to Monday 21 Dec (not 15 days)
    assert deadlines(denied, cal).pagamento == D(2026, 12, 21)


# --- final decisions (the public record of what was upheld) -------------------------------

FAR_FUTURE = D(2030, 1, 1)


def test_a_fine_upheld_after_the_recurso_or_paid_is_final_at_once():
    assert is_final(at(Stage.MULTA_DEVIDA), CAL, RECURSO_JULGADO_EM)
    assert is_final(at(Stage.PAGO), CAL, D(2026, 12, 10))


def test_an_auto_not_defended_is_final_the_day_after_its_defence_term_ends():
    # defence term of the canonical ciência: Fri 2026-12-18 (counted above)
    assert not is_final(at(Stage.NOTIFICADO), CAL, D(2026, 12, 18))
    assert is_final(at(Stage.NOTIFICADO), CAL, D(2026, 12, 19))


def test_an_auto_julgado_procedente_is_final_the_day_after_its_recurso_term_ends():
    # recurso term: Fri 2027-01-08 (counted above)
    assert not is_final(at(Stage.JULGADO_PROCEDENTE), CAL, D(2027, 1, 8))
    assert is_final(at(Stage.JULGADO_PROCEDENTE), CAL, D(2027, 1, 9))


@pytest.mark.parametrize("stage", [Stage.RASCUNHO, Stage.LAVRADO, Stage.DEFESA_APRESENTADA,
                                   Stage.RECURSO_INTERPOSTO, Stage.ARQUIVADO, Stage.ANISTIADO])
def test_under_contest_not_yet_an_auto_or_not_upheld_is_never_final(stage):
    assert not is_final(at(stage), CAL, FAR_FUTURE)


@pytest.mark.parametrize("stage", [Stage.NOTIFICADO, Stage.JULGADO_PROCEDENTE, Stage.MULTA_DEVIDA])
def test_a_judicial_challenge_keeps_the_auto_from_being_final(stage):
    status = at(stage)
    suspended = apply(status, sample(SuspenderJudicial, status.last_act_on), CAL)
    assert not is_final(suspended, CAL, FAR_FUTURE)
    resumed = apply(suspended, RetomarJudicial(status.last_act_on), CAL)
    assert is_final(resumed, CAL, FAR_FUTURE)
