"""The shipped Conselheiro Lafaiete policy selects its pack."""

from pathlib import Path

from kernel.policy import load_policy
from rules.conselheiro_lafaiete.lei_4_1948 import LAW
from rules.conselheiro_lafaiete.pack import CATALOGUE
from rules.laws import law_of
from rules.packs import pack_of

POLICY_FILE = Path(__file__).resolve().parents[3] / "kernel" / "policies" / "conselheiro-lafaiete.toml"


def test_the_lafaiete_policy_selects_lei_4_1948():
    policy = load_policy(POLICY_FILE)
    pack = pack_of(policy)
    assert pack.law is LAW is law_of(policy)
    assert pack.law.title == "Lei Municipal nº 4/1948 (Conselheiro Lafaiete)"
    assert pack.catalogue is CATALOGUE
    assert [rule.code for rule in pack.rules_for("service_day")] == ["art. 42 A"]
