"""A record's `legal_basis` (DESIGN.md contract) is the dispositivo and the law's text
joined in one string; the docket store keeps them apart (#17 item 4). The join must write
exactly what the records always carried, and the split must give back any string."""

import pytest

from rules.joao_neiva.anexo_i import ARTICLES
from rules.model import join_legal_basis, split_legal_basis


@pytest.mark.parametrize("code", sorted(ARTICLES))
def test_the_join_writes_the_contracts_string_and_the_split_takes_it_apart(code):
    article = ARTICLES[code]
    joined = join_legal_basis(article.legal_basis, article.text)
    # the contract's string, byte for byte (infractions.jsonl must not change)
    assert joined == f"{article.legal_basis}. Texto legal: \u201c{article.text}\u201d"
    assert split_legal_basis(joined) == (article.legal_basis, article.text)


def test_a_record_that_quotes_no_law_keeps_its_whole_string_as_the_dispositivo():
    assert join_legal_basis("D-11", None) == "D-11"
    for unquoted in ("D-11", "", "D-11. Texto legal: sem aspas", "D-11. Texto legal: \u201cnão fechado"):
        assert split_legal_basis(unquoted) == (unquoted, None)


@pytest.mark.parametrize("legal_basis", [
    "art. 3º. Texto legal: \u201c\u201d",  # an empty quotation is still one
    "art. 3º. Texto legal: \u201co \u201cmotivo\u201d justificado\u201d",  # quotes inside the law's text
    "art. 3º. Texto legal: \u201ca. Texto legal: \u201cb\u201d\u201d",  # the separator inside it too
    "art. 3º. Texto legal: \u201cnão fechado",
    "art. 3º. Texto legal: \u201ca\u201d e mais",
])
def test_any_string_is_given_back_by_joining_its_halves(legal_basis):
    # what keeps an audit entry certified before the split verifying after it (dockets.audit)
    assert join_legal_basis(*split_legal_basis(legal_basis)) == legal_basis


def test_the_split_cuts_at_the_dispositivos_end_and_keeps_the_laws_own_quotes():
    assert split_legal_basis("art. 3º. Texto legal: \u201co \u201cmotivo\u201d justificado\u201d") == \
        ("art. 3º", "o \u201cmotivo\u201d justificado")
