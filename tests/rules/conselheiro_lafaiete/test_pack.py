"""The shipped Conselheiro Lafaiete policy selects its pack."""

from pathlib import Path

from kernel.policy import load_policy
from rules.conselheiro_lafaiete.lei_4_1948 import LAW
from rules.conselheiro_lafaiete.pack import CATALOGUE
from rules.laws import law_of
from rules.model import Scope
from rules.packs import pack_of

POLICY_FILE = Path(__file__).resolve().parents[3] / "kernel" / "policies" / "conselheiro-lafaiete.toml"


def test_the_lafaiete_policy_selects_lei_4_1948():
    policy = load_policy(POLICY_FILE)
    pack = pack_of(policy)
    assert pack.law is LAW is law_of(policy)
    assert pack.law.title == "Lei Municipal nº 4/1948 (Conselheiro Lafaiete)"
    assert pack.catalogue is CATALOGUE
    assert [rule.code for rule in pack.rules_for(Scope.SERVICE_DAY)] == ["art. 42 A"]


def test_another_line_is_judged_on_arrival_by_the_shared_detector():
    # art. 17 reads a realized trip (scope "trip") and the policy's [other_line] section
    policy = load_policy(POLICY_FILE)
    rule = pack_of(policy).rules_for(Scope.TRIP)
    assert [r.code for r in rule] == ["art. 17"]
    assert rule[0].detector == "rules.other_line" and rule[0].requires == {"other_line", "d21"}
    assert policy.other_line is not None
