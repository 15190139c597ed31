"""Recidivism: art. 42 § 1º of Conselheiro Lafaiete's Lei 4/1948 doubles a fine."""

import datetime as dt

import pytest

from rules.conselheiro_lafaiete.lei_4_1948 import LAW as LAFAIETE
from rules.joao_neiva.anexo_i import LAW as JOAO_NEIVA
from rules.recidivism import Prior, fine_with_recidivism, recurrence

NOW = dt.datetime(2026, 6, 15, 8, 0, tzinfo=dt.timezone(dt.timedelta(hours=-3)))
YEAR = dt.timedelta(days=365)
CODE = "art. 42 A"  # Cr$ 20,00


def fine(history, code=CODE, operator="OP1", window=YEAR, law=LAFAIETE, **kw):
    return fine_with_recidivism(law, code, operator, NOW, history, window, **kw)


def test_same_article_upheld_10_days_before_is_doubled():
    prior = Prior("OP1", CODE, NOW - dt.timedelta(days=10), upheld=True)
    assert fine([prior]) == 40  # 20 × 2: 10 days <= 365 days
    assert recurrence(LAFAIETE, CODE, "OP1", NOW, [prior], YEAR) == prior


def test_at_the_window_edge_is_doubled():
    assert fine([Prior("OP1", CODE, NOW - YEAR, upheld=True)]) == 40  # exactly 365 days: within


@pytest.mark.parametrize("prior", [
    Prior("OP1", CODE, NOW - dt.timedelta(days=366), upheld=True),  # 366 days > 365: outside
    Prior("OP1", "art. 42 F", NOW - dt.timedelta(days=10), upheld=True),  # another article
    Prior("OP1", CODE, NOW - dt.timedelta(days=10), upheld=False),  # not upheld (contested, archived)
    Prior("OP2", CODE, NOW - dt.timedelta(days=10), upheld=True),  # another operator
    Prior("OP1", CODE, NOW, upheld=True),  # not before it
    Prior("OP1", CODE, NOW + dt.timedelta(days=1), upheld=True),  # after it
])
def test_no_earlier_upheld_infraction_of_the_same_article_is_not_doubled(prior):
    assert fine([prior]) == 20  # the article's Cr$ 20,00, × 1


def test_many_priors_double_once():
    history = [Prior("OP1", CODE, NOW - dt.timedelta(days=d), upheld=True) for d in (10, 20, 30)]
    assert fine(history) == 40  # 20 × 2, not 20 × 2 × 2 × 2
    assert recurrence(LAFAIETE, CODE, "OP1", NOW, history, YEAR).occurred_at == NOW - dt.timedelta(days=10)


def test_a_given_fine_is_the_one_doubled():
    # art. 33 A graded Cr$ 30,00 by the Chefe do Serviço: 30 × 2 = 60
    prior = Prior("OP1", "art. 33 A", NOW - dt.timedelta(days=10), upheld=True)
    assert fine([prior], code="art. 33 A", fine=30) == 60


def test_a_law_without_recidivism_never_doubles():
    prior = Prior("OP1", "D-22", NOW - dt.timedelta(days=10), upheld=True)
    assert fine([prior], code="D-22", law=JOAO_NEIVA) == 200  # group D, 200 UFIR, × 1
