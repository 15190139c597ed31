"""`shipped_policy_path(city)`: the shipped policy of a city by its code."""

import pytest

from kernel.policy import DEFAULT_POLICY_NAME, PolicyError, load_policy, shipped_policy_path


def test_without_a_city_it_is_the_default_and_joao_neiva_by_its_code():
    assert shipped_policy_path().name == DEFAULT_POLICY_NAME
    assert shipped_policy_path("joao-neiva") == shipped_policy_path()
    assert load_policy(shipped_policy_path("joao-neiva")).policy.code == "joao-neiva"


def test_a_city_follows_the_convention_whether_or_not_it_is_shipped():
    path = shipped_policy_path("canarana")
    assert path.name == "canarana.toml" and path.parent == shipped_policy_path().parent


@pytest.mark.parametrize("city", ["../joao-neiva", "a/b", "Canarana", "", "x.toml"])
def test_a_city_is_a_code_never_a_path(city):
    with pytest.raises(PolicyError, match="not a city code"):
        shipped_policy_path(city)
