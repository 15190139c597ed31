"""The catalogue: every automatic rule is listed, documented and tested both ways."""

import ast
import importlib
from pathlib import Path

import msgspec
import pytest

from kernel.policy import Policy, load_policy
from rules.anexo_i import ANEXO_I, ARTICLES
from rules.catalogue import CATALOGUE

HERE = Path(__file__).parent
POLICY = load_policy()


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
    assert CATALOGUE[code].summary(POLICY).endswith(".")


def _scaled(policy: Policy, factor: int) -> Policy:
    """The policy with every numeric threshold of every section multiplied."""
    def scale(section):
        changes = {name: getattr(section, name) * factor for name in section.__struct_fields__
                   if isinstance(getattr(section, name), (int, float)) and not isinstance(getattr(section, name), bool)}
        return msgspec.structs.replace(section, **changes)
    return msgspec.structs.replace(policy, **{name: scale(getattr(policy, name)) for name in policy.__struct_fields__
                                              if name != "policy"})


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_rule_summary_numbers_come_from_the_policy(code):
    # a summary that states a number must state the policy's: with every threshold tripled
    # it must read differently (D-11's 50 m -> 150 m); one without numbers stays the same
    summary = CATALOGUE[code].summary
    states_a_threshold = any(ch.isdigit() for ch in summary(POLICY).replace("44, III", ""))
    assert (summary(_scaled(POLICY, 3)) != summary(POLICY)) is states_a_threshold


def test_d11_summary_states_the_policy_distance():
    # the shipped 50 m off the shape, 300 m travelled, 60 s = 1 min
    assert CATALOGUE["D-11"].summary(POLICY) == "Mais de 50 m fora do traçado da viagem por pelo menos 300 m e 1 min."


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
