"""The catalogues: every pack's automatic rules are listed, documented and tested both ways."""

import ast
import dataclasses
import importlib
import inspect
from pathlib import Path

import msgspec
import pytest

from kernel.policy import Policy, load_policy
from rules.joao_neiva.pack import CATALOGUE
from rules.model import LIVE_MOMENTS, Live, Scope
from rules.packs import PACKS

HERE = Path(__file__).parent
POLICY = load_policy()
# each pack's rules read with its own shipped policy (kernel/policies/<code>.toml)
POLICIES = {code: load_policy(HERE.parents[1] / "kernel" / "policies" / f"{code}.toml") for code in PACKS}
RULES = [(pack.code, code) for pack in PACKS.values() for code in sorted(pack.catalogue)]


@pytest.mark.parametrize("pack", sorted(PACKS))
def test_catalogue_lists_exactly_the_automatic_articles_of_the_law(pack):
    assert set(PACKS[pack].catalogue) == {a.code for a in PACKS[pack].law.articles.values() if a.automatic}


@pytest.mark.parametrize("pack, code", RULES)
def test_rule_is_filed_under_its_own_code(pack, code):
    rule = PACKS[pack].catalogue[code]
    assert rule.code == code
    # enum members, not strings that only compare equal (the engine branches on the members)
    assert type(rule.scope) is Scope
    assert rule.live is None or type(rule.live) is Live
    # judged live only at a moment the engine knows, over the facts of its own scope
    assert rule.live is None or LIVE_MOMENTS[rule.live] == rule.scope


@pytest.mark.parametrize("pack, code", [(p, c) for p, c in RULES if PACKS[p].catalogue[c].live == Live.DEPARTURE_DUE])
def test_a_rule_judged_when_departures_are_due_takes_the_moment(pack, code):
    # the engine judges it live with due_by= the moment (engine.operator._judge_live)
    assert "due_by" in inspect.signature(PACKS[pack].catalogue[code].detect).parameters


def test_every_live_moment_is_judged_over_one_scope():
    assert set(LIVE_MOMENTS) == set(Live)


@pytest.mark.parametrize("scope, live, refused", [
    ("service_day", None, TypeError),  # the plain string: a typo of it would load silently
    (Scope.SERVICE_DAY, "window_end", TypeError),
    (Scope.SERVICE_DAY, "window_ends", TypeError),
    (Scope.VEHICLE_DAY, Live.WINDOW_END, ValueError),  # D-12's moment over a vehicle's day
])
def test_a_rule_with_an_unknown_scope_or_live_moment_is_refused_at_load(scope, live, refused):
    d12 = CATALOGUE["D-12"]
    with pytest.raises(refused):
        dataclasses.replace(d12, scope=scope, live=live)
    assert dataclasses.replace(d12, scope=Scope.SERVICE_DAY, live=Live.WINDOW_END) == d12


@pytest.mark.parametrize("pack, code", RULES)
def test_rule_is_documented(pack, code):
    rule, article = PACKS[pack].catalogue[code], PACKS[pack].law.articles[code]
    module = importlib.import_module(rule.detect.__module__)
    # a shared detector (`rule(code)`) is documented under the code its pack files it as
    doc = rule.doc or module.__doc__ or ""
    # the module's documentation opens with the code and the law's words for it
    assert doc.startswith(f"{code} — ")
    first_words = " ".join(article.text.split()[:4]).rstrip(",.")
    assert first_words.lower() in " ".join(doc.split()).lower()
    assert rule.summary(POLICIES[pack]).endswith(".")


def _scaled(policy: Policy, factor: int) -> Policy:
    """The policy with every numeric threshold of every section multiplied."""
    def scale(section):
        if section is None:
            return None  # an optional section the policy leaves out
        changes = {name: getattr(section, name) * factor for name in section.__struct_fields__
                   if isinstance(getattr(section, name), (int, float)) and not isinstance(getattr(section, name), bool)}
        return msgspec.structs.replace(section, **changes)
    return msgspec.structs.replace(policy, **{name: scale(getattr(policy, name)) for name in policy.__struct_fields__
                                              if name != "policy" and getattr(policy, name) is not None})


@pytest.mark.parametrize("pack, code", RULES)
def test_rule_summary_numbers_come_from_the_policy(pack, code):
    # a summary that states a number must state the policy's: with every threshold tripled
    # it must read differently (D-11's 50 m -> 150 m); one without numbers stays the same
    summary, policy = PACKS[pack].catalogue[code].summary, POLICIES[pack]
    states_a_threshold = any(ch.isdigit() for ch in summary(policy).replace("44, III", "").replace("E[h²] / (2 E[h])", ""))
    assert (summary(_scaled(policy, 3)) != summary(policy)) is states_a_threshold


def test_d11_summary_states_the_policy_distance():
    # the shipped 50 m off the shape, 300 m travelled, 60 s = 1 min
    assert CATALOGUE["D-11"].summary(POLICY) == "Mais de 50 m fora do traçado da viagem por pelo menos 300 m e 1 min."


@pytest.mark.parametrize("pack, code", RULES)
def test_rule_has_tests_both_ways(pack, code):
    # the detector's tests mirror its module: rules/d11.py -> tests/rules/test_d11.py
    module = PACKS[pack].catalogue[code].detect.__module__.split(".")
    path = HERE.joinpath(*module[1:-1], f"test_{module[-1]}.py")
    assert path.exists(), f"{code} has no test module {path.name}"
    names = [n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)]
    assert any(n.startswith("test_") and n.endswith("_yields_infraction") for n in names), code
    assert any(n.startswith("test_") and n.endswith("_yields_nothing") for n in names), code


@pytest.mark.parametrize("pack, code", RULES)
def test_rule_thresholds_come_from_the_policy(pack, code):
    # no threshold literal in a detector: numbers other than 0, 1, 2 (indices, halves)
    # and 60/100 (minutes, percent) would be a threshold written in the code
    module = importlib.import_module(PACKS[pack].catalogue[code].detect.__module__)
    tree = ast.parse(Path(module.__file__).read_text())
    literals = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
                and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)}
    assert literals <= {0, 1, 2, 3, 60, 100}, sorted(literals)


def test_a_policy_naming_no_known_law_is_refused_with_the_known_ones():
    from kernel.policy import PolicyError
    from rules.packs import pack_of

    policy = msgspec.structs.replace(POLICY, policy=msgspec.structs.replace(POLICY.policy, code="atlantida"))
    with pytest.raises(PolicyError, match="unknown law code 'atlantida'.*joao-neiva"):
        pack_of(policy)


def test_the_shipped_policy_selects_joao_neiva():
    from rules.packs import pack_of

    assert pack_of(POLICY).law.title == "Lei Municipal nº 867/1998 (João Neiva)"
    assert pack_of(POLICY).catalogue is CATALOGUE


def test_shared_detectors_are_documented_under_the_code_their_pack_gives():
    from rules import turn_back, unmarked_stop

    for module, code, first in ((turn_back, "art. 14 § único", "Os ônibus deverão sempre"),
                                (unmarked_stop, "art. 19 § único", "É expressamente proibida a")):
        rule = module.rule(code)
        assert rule.code == code and rule.detect.__module__ == module.__name__
        assert rule.doc.startswith(f"{code} — ") and first.lower() in " ".join(rule.doc.split()).lower()
        # without its policy section the summary says so instead of failing
        assert rule.summary(POLICY).startswith("Requer a seção")


def test_a_pack_listing_a_detector_whose_section_the_policy_lacks_is_refused(monkeypatch):
    from kernel.policy import PolicyError
    from rules import packs, turn_back
    from rules.joao_neiva.anexo_i import LAW
    from rules.pack import Pack

    pack = Pack(law=LAW, catalogue={**CATALOGUE, "X-01": turn_back.rule("X-01")})
    monkeypatch.setitem(packs.PACKS, LAW.code, pack)
    with pytest.raises(PolicyError, match=r"enforces X-01.*\[turn_back\] section: the policy has none"):
        packs.pack_of(POLICY)


# the sections a policy may leave out (None by default): those a pack must check for
OPTIONAL_SECTIONS = {field.name for field in msgspec.structs.fields(Policy) if field.default is None}


@pytest.mark.parametrize("module, section", [
    ("waiting_time", "waiting_time"), ("terminal_crowding", "terminal_crowding"), ("line_interruption", "interruption"),
    ("turn_back", "turn_back"), ("unmarked_stop", "unmarked_stop"), ("other_line", "other_line")])
def test_a_shared_detector_requires_the_section_its_code_reads(module, section):
    # read from the code, not declared: art. 10 § 5º once forgot its declaration, so a
    # Canarana policy without [waiting_time] loaded and the article found nothing
    rule = importlib.import_module(f"rules.{module}").rule("X-01")
    assert section in rule.requires


@pytest.mark.parametrize("pack, code", RULES)
def test_a_rule_reads_optional_sections_only_through_the_names_that_are_scanned(pack, code):
    # Rule.requires sees `policy.<section>` and `p.<section>` only: a module reading an
    # optional section under another name would load without it
    from rules.model import POLICY_NAMES

    rule = PACKS[pack].catalogue[code]
    for module in {rule.detect.__module__, rule.detector}:
        tree = ast.parse(Path(importlib.import_module(module).__file__).read_text())
        receivers = {ast.unparse(n.value) for n in ast.walk(tree)
                     if isinstance(n, ast.Attribute) and n.attr in OPTIONAL_SECTIONS}
        assert receivers <= POLICY_NAMES, (module, receivers)
