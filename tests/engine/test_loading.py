"""Loading the engine's static inputs refuses, before any message, what no rule could run on."""

from __future__ import annotations

import pytest

from engine.loading import load_context
from kernel.errors import InputError
from kernel.inputs import StaticInputs
from kernel.policy import shipped_policy_path
from samples import canarana, conselheiro_lafaiete, joao_neiva


def test_a_policy_naming_an_unknown_law_is_refused_at_load(tmp_path):
    policy = tmp_path / "p.toml"
    policy.write_text(shipped_policy_path().read_text().replace('code = "joao-neiva"', 'code = "atlantida"'))
    feed, fleet = joao_neiva()
    with pytest.raises(InputError, match="unknown law code 'atlantida'"):
        load_context(StaticInputs(feed=feed, fleet=fleet, policy=policy))


def test_a_pack_rule_without_its_policy_section_is_refused_at_load(tmp_path):
    # Lafaiete's pack turns back before the terminal by the policy's [turn_back] thresholds
    text = shipped_policy_path("conselheiro-lafaiete").read_text()
    start = text.index("[turn_back]")
    policy = tmp_path / "p.toml"
    policy.write_text(text[:start] + text[text.index("\n\n", start):])
    feed, fleet = conselheiro_lafaiete()
    with pytest.raises(InputError, match=r"\[turn_back\] section: the policy has none"):
        load_context(StaticInputs(feed=feed, fleet=fleet, policy=policy))


def test_the_shipped_policies_load_on_their_samples():
    feed, fleet = conselheiro_lafaiete()
    context = load_context(StaticInputs(feed=feed, fleet=fleet, policy=shipped_policy_path("conselheiro-lafaiete")))
    assert context.pack.code == "conselheiro-lafaiete"


def test_canarana_without_its_waiting_time_section_is_refused_at_load(tmp_path):
    # art. 10 § 5º reads the policy's [waiting_time]; without it the rule would load and
    # then find nothing, every day, with no one told
    text = shipped_policy_path("canarana").read_text()
    start = text.index("\n[waiting_time]\n")
    policy = tmp_path / "p.toml"
    policy.write_text(text[:start] + text[text.index("# Art. 13", start):])
    feed, fleet = canarana()
    with pytest.raises(InputError, match=r"enforces art\. 10 § 5º, whose thresholds are the policy's "
                                         r"\[waiting_time\] section: the policy has none"):
        load_context(StaticInputs(feed=feed, fleet=fleet, policy=policy))
