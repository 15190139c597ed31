"""The catalogue: every automatic rule is listed, documented and tested both ways."""

import ast
import importlib
from pathlib import Path

import pytest

from rules.anexo_i import ANEXO_I, ARTICLES
from rules.catalogue import CATALOGUE

HERE = Path(__file__).parent


def test_catalogue_lists_exactly_the_automatic_codes_of_anexo_i():
    assert set(CATALOGUE) == {a.code for a in ANEXO_I if a.automatic}


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_rule_is_filed_under_its_own_code(code):
    assert CATALOGUE[code].code == code
    assert CATALOGUE[code].article is ARTICLES[code]
    assert CATALOGUE[code].scope in {"trip", "matched_trip", "service_day", "vehicle_day"}


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_rule_is_documented(code):
    module = importlib.import_module(CATALOGUE[code].detect.__module__)
    doc = module.__doc__ or ""
    # the module's documentation opens with the code and the law's words for it
    assert doc.startswith(f"{code} — ")
    first_words = " ".join(ARTICLES[code].text.split()[:4]).rstrip(",.")
    assert first_words.lower() in " ".join(doc.split()).lower()
    assert CATALOGUE[code].summary


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_rule_has_tests_both_ways(code):
    path = HERE / f"test_{code.replace('-', '').lower()}.py"
    assert path.exists(), f"{code} has no test module {path.name}"
    names = [n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)]
    assert any(n.startswith("test_") and n.endswith("_yields_infraction") for n in names), code
    assert any(n.startswith("test_") and n.endswith("_yields_nothing") for n in names), code


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_rule_thresholds_come_from_the_policy(code):
    # no threshold literal in a detector: numbers other than 0, 1, 2 (indices, halves)
    # and 60/100 (minutes, percent) would be a threshold written in the code
    module = importlib.import_module(CATALOGUE[code].detect.__module__)
    tree = ast.parse(Path(module.__file__).read_text())
    literals = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
                and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)}
    assert literals <= {0, 1, 2, 3, 60, 100}, sorted(literals)
