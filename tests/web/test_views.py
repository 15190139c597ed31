"""How the pages word a running term (web.views): pure, no store."""

from __future__ import annotations

import datetime as dt

import pytest

from dockets import workflow
from dockets.calendar import BusinessCalendar
from rules.joao_neiva.anexo_i import LAW
from web.views import judicial_suspension, term_text, terms_view

D = dt.date
CAL = BusinessCalendar.for_municipality("ES", [D(2026, 12, 8)], law=LAW)


def term(field: str, date: dt.date, days_left: int, overdue: bool = False) -> workflow.Term:
    return workflow.Term(field=field, label=workflow.DEADLINE_LABELS[field], date=date,
                         business_days=field != "pagamento", days_left=days_left, overdue=overdue)


@pytest.mark.parametrize(("given", "text"), [
    (term("defesa", D(2026, 12, 21), 13), "Prazo de defesa: até 21/12/2026 (faltam 13 dias úteis)"),
    (term("recurso", D(2026, 12, 21), 1), "Prazo de recurso: até 21/12/2026 (falta 1 dia útil)"),
    (term("pagamento", D(2026, 12, 21), 1), "Prazo de pagamento: até 21/12/2026 (falta 1 dia)"),
    (term("pagamento", D(2026, 12, 28), 13), "Prazo de pagamento: até 28/12/2026 (faltam 13 dias)"),
    (term("defesa", D(2026, 12, 21), 0), "Prazo de defesa: até 21/12/2026 (vence hoje)"),
    (term("pagamento", D(2026, 12, 14), 0, True), "Prazo de pagamento: até 14/12/2026 (vencido)"),
])
def test_term_text(given, text):
    assert term_text(given) == text


def test_a_notified_auto_shows_the_defence_first_and_the_payment_beside_it():
    # ciência Thu 3/12: defesa 18/12 (the 8th is a municipal holiday), pagamento Mon 14/12
    status = workflow.fold([workflow.Lavrar(D(2026, 12, 1)), workflow.Notificar(D(2026, 12, 3))], CAL)
    view = terms_view(status, CAL, D(2026, 12, 4))
    assert view.current == "Prazo de defesa: até 18/12/2026 (faltam 9 dias úteis)" and not view.overdue
    # art. 8º, I: the payment runs from the ciência "salvo se apresentar defesa"
    assert view.others == ("Prazo de pagamento: até 14/12/2026, salvo se apresentar defesa (art. 8º, I)",)
    # once the defence term has lapsed unused, the payment is due: the condition no longer holds
    lapsed = terms_view(status, CAL, D(2026, 12, 21))
    assert lapsed.current == "Prazo de pagamento: até 14/12/2026 (vencido)" and lapsed.others == ()


def test_no_running_term_says_why():
    status = workflow.fold([workflow.Lavrar(D(2026, 12, 1)), workflow.Notificar(D(2026, 12, 3)),
                            workflow.ApresentarDefesa(D(2026, 12, 4))], CAL)
    assert terms_view(status, CAL, D(2026, 12, 4)).current == "nenhum: a defesa aguarda julgamento"
    paid = workflow.fold([workflow.Lavrar(D(2026, 12, 1)), workflow.Notificar(D(2026, 12, 3)),
                          workflow.RegistrarPagamento(D(2026, 12, 4))], CAL)
    assert terms_view(paid, CAL, D(2026, 12, 4)).current == "nenhum: processo encerrado"


def test_the_judicial_suspension_cites_the_article_only_of_a_law_that_has_one():
    from rules.canarana.lei_179_1991 import LAW as CANARANA
    from rules.conselheiro_lafaiete.lei_4_1948 import LAW as LAFAIETE

    # João Neiva's art. 8º, III gives the challenge itself suspensive effect
    assert judicial_suspension(LAW) == "ação judicial (art. 8º, III)"
    # the other laws say nothing of it: only a court's decision suspends, and no article is cited
    assert judicial_suspension(LAFAIETE) == judicial_suspension(CANARANA) == "decisão judicial"
