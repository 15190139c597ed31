"""Every evidence key a detector or the engine emits has its label on the auto
(dockets.labels): the keys are read from real output, not copied by hand — the
infractions of a simulated day with every detector fault, and those of every rule
test's scenario that yields one (tests/rules) — so a detector that starts emitting a
new key fails here until the key is named in legal Portuguese."""

from __future__ import annotations

import datetime as dt
import importlib.util
import inspect
from pathlib import Path

import msgspec
import pytest

from dockets import labels
from rules import a07, art45, b04, c01, d11, d12, d13, d19, d21, d22, justification
from rules.model import Infraction

RULE_TESTS = Path(__file__).resolve().parents[1] / "rules"


def key_paths(evidence: dict, parent: str | None = None):
    """(key, the key it sits under) of every key, nested ones included."""
    for key, value in evidence.items():
        yield key, parent
        if isinstance(value, dict):
            yield from key_paths(value, key)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    yield from key_paths(item, key)


def _unlabelled(infractions) -> set[str]:
    return {f"{parent}.{key}" if parent else key for infraction in infractions
            for key, parent in key_paths(infraction.evidence) if labels.label(key, parent) is None}


def _recording(function, found: list):
    def recorded(*args, **kwargs):
        result = function(*args, **kwargs)
        found.extend(r for r in (result if isinstance(result, list) else [result]) if isinstance(r, Infraction))
        return result
    return recorded


@pytest.fixture(scope="module")
def scenario_infractions():
    """The infractions of the rule tests' scenarios named `..._yields_..._infraction...`
    (those that need no fixture but the tiny feed), recorded as the detectors, the
    justification and the month close return them."""
    from tiny_day import Tiny

    found: list[Infraction] = []
    patch = pytest.MonkeyPatch()
    targets = [(m, "detect") for m in (a07, b04, c01, d11, d12, d13, d19, d21, d22)]
    targets += [(justification, "justify"), (art45, "close_month")]
    try:
        for module, name in targets:
            patch.setattr(module, name, _recording(getattr(module, name), found))
        tiny = Tiny()
        ran = 0
        for path in sorted(RULE_TESTS.glob("test_*.py")):
            if "shared_law" in path.read_text():
                continue  # another law's shared detectors: their test law is registered by a fixture
            spec = importlib.util.spec_from_file_location(f"labels_scenarios_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)  # after patching: `from rules.x import detect` binds the recorder
            for name, test in vars(module).items():
                if not (name.startswith("test_") and "yield" in name and "infraction" in name and callable(test)):
                    continue
                params = set(inspect.signature(test).parameters)
                if params <= {"tiny"} and not getattr(test, "is_hypothesis_test", False):
                    test(**({"tiny": tiny} if params else {}))
                    ran += 1
    finally:
        patch.undo()
    assert ran > 40, ran  # the scenarios were found and run
    return found


def test_every_code_yields_in_the_rule_scenarios(scenario_infractions):
    from rules.joao_neiva.pack import CATALOGUE

    assert {i.code for i in scenario_infractions} == set(CATALOGUE)


def test_every_key_of_the_rule_scenarios_has_a_label(scenario_infractions):
    assert _unlabelled(scenario_infractions) == set()


def test_every_key_of_a_day_with_every_fault_has_a_label(every_code_day):
    assert _unlabelled(every_code_day.result.infractions) == set()


def test_every_key_the_engine_adds_has_a_label(every_code_day):
    from engine.changelog import at_most_provisional

    d11_record = next(i for i in every_code_day.result.infractions if i.code == "D-11")
    cited = d11_record.evidence["episodes"][0]["pings"][0]
    conflicted = at_most_provisional(d11_record, {cited})
    assert "conflicting_duplicates" in conflicted.evidence
    justified = msgspec.structs.replace(d11_record, evidence={**d11_record.evidence, "justified_by": ["oc-1"],
                                                              "justification": ["authorized_detour: obra"]})
    assert _unlabelled([conflicted, justified]) == set()


def test_every_key_of_a_record_judged_on_two_versions_has_a_label():
    from test_c01 import POLICY, facts, pings

    from rules import c01
    from rules.versions import OtherVersion, judged_on_both_versions, version_key

    day = facts(pings((0, 50), (10, 80), (20, 80), (30, 50)))
    other = msgspec.structs.replace(day.fixes[1], speed_kmh=50.0)
    [record] = judged_on_both_versions(c01.detect(day, POLICY), day,
                                       {version_key(other.t, other.msg_id): OtherVersion(other, ("a", "b"))},
                                       [c01.RULE], POLICY, lambda records: records,
                                       lambda rule, f: rule.detect(f, POLICY))
    assert "conflicting_versions" in record.evidence and _unlabelled([record]) == set()


def test_a_key_without_a_label_is_found():
    from rules.model import Infraction as Record

    record = Record(infraction_id="x", code="D-11", group="D", fine_ufir=200, status="confirmed", operator_id="OP",
                    route_id=None, direction_id=None, trip_id=None, vehicle_id=None,
                    service_date=dt.date(2026, 12, 1), occurred_at=dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc),
                    lat=None, lon=None, description="", legal_basis="",
                    evidence={"max_distance_m": 50, "episodes": [{"max_distance_m": 155.3, "new_key_m": 1}]})
    assert _unlabelled([record]) == {"episodes.new_key_m"}


def test_a_measured_distance_is_not_named_as_the_tolerance():
    tolerated, measured = labels.label("max_distance_m"), labels.label("max_distance_m", "episodes")
    assert "tolerada" in tolerated.text and "registrada" in measured.text
    assert measured.format(155.3, labels.Context()) == "155,3 m"


OTHER_LAWS_TESTS = ("test_turn_back", "test_unmarked_stop", "test_other_line", "test_waiting_time",
                    "test_terminal_crowding", "test_line_interruption", "conselheiro_lafaiete/test_art42a")


@pytest.fixture(scope="module")
def other_laws_infractions():
    """The infractions of the other laws' detectors in their tests' scenarios, run as
    their own fixtures would: the shared detectors' test law registered."""
    from shared_law import LAW
    from tiny_day import Tiny

    from rules import laws, line_interruption, other_line, terminal_crowding, turn_back, unmarked_stop, waiting_time

    found: list[Infraction] = []
    patch = pytest.MonkeyPatch()
    try:
        patch.setitem(laws.LAWS, LAW.code, LAW)
        for module in (turn_back, unmarked_stop, other_line, waiting_time, terminal_crowding, line_interruption, d22):
            patch.setattr(module, "make_infraction", _recording(module.make_infraction, found))
        tiny, ran = Tiny(), 0
        for name in OTHER_LAWS_TESTS:
            path = RULE_TESTS / f"{name}.py"
            spec = importlib.util.spec_from_file_location(f"labels_other_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            for test_name, test in vars(module).items():
                if not (test_name.startswith("test_") and test_name.endswith("yields_infraction") and callable(test)):
                    continue
                params = set(inspect.signature(test).parameters)
                fixtures = {"tiny": tiny, "lafaiete": _lafaiete_policy()}
                if params <= set(fixtures) and not getattr(test, "is_hypothesis_test", False):
                    test(**{p: fixtures[p] for p in params})
                    ran += 1
    finally:
        patch.undo()
    assert ran > 15, ran  # the scenarios were found and run
    return found


def _lafaiete_policy():
    from kernel.policy import load_policy, shipped_policy_path

    return load_policy(shipped_policy_path("conselheiro-lafaiete"))


def test_every_key_of_the_other_laws_scenarios_has_a_label(other_laws_infractions):
    assert {i.code for i in other_laws_infractions} >= {"art. 14 § único", "art. 19 § único", "art. 17",
                                                        "art. 10 § 5º", "art. 13", "art. 42 A"}
    assert _unlabelled(other_laws_infractions) == set()


def test_the_other_laws_evidence_prints_on_the_auto(other_laws_infractions):
    # every value formats under its label, as the PDF's evidence table prints it
    from dockets.document import _evidence_rows

    for infraction in other_laws_infractions:
        rows = _evidence_rows(infraction.evidence, labels.Context(day=infraction.service_date))
        assert rows and all(row["label"] and ("value" in row or "table" in row) for row in rows), infraction.code
