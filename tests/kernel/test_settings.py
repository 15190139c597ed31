"""Every FISCALIZA_* variable read in one place: its value, its default, its refusal."""

from pathlib import Path

import pytest

from kernel.settings import DEFAULT_DB_URL, VARIABLES, Settings, SettingsError, StaticSettings, variable_of
from samples import joao_neiva


def test_nothing_set_gives_the_documented_defaults():
    settings = Settings.from_env({})
    assert settings.stream.bootstrap == "127.0.0.1:19092" and settings.stream.partitions == 4
    assert settings.stream.inputs == frozenset({"tachograph", "catraca"})
    assert settings.dockets.db == DEFAULT_DB_URL and settings.dockets.signing_key is None
    assert settings.static == StaticSettings() and settings.given == frozenset()


def test_each_variable_lands_in_its_field():
    env = {"FISCALIZA_FEED": "/srv/feed", "FISCALIZA_PARTITIONS": "12", "FISCALIZA_SESSION_TIMEOUT_S": "7.5",
           "FISCALIZA_INPUTS": "tachograph", "FISCALIZA_DB": "postgresql://x/y", "FISCALIZA_AUDIT_KEY": "/k/audit",
           "FISCALIZA_PUBLISH_TIMEOUT_S": "4"}
    settings = Settings.from_env(env)
    assert settings.stream.publish_timeout_s == 4
    assert settings.static.feed == Path("/srv/feed")
    assert settings.stream.partitions == 12 and settings.stream.session_timeout_s == 7.5
    assert settings.stream.inputs == frozenset({"tachograph"})
    assert settings.dockets.db == "postgresql://x/y" and settings.dockets.audit_key == Path("/k/audit")
    assert settings.given == frozenset(env)


def test_a_worker_is_live_unless_told_it_is_backfilling():
    # live, a message dated more than 15 min ahead of the worker's clock is a device clock
    # in the future; a backfill of a simulated day still to come must say so
    assert Settings.from_env({}).stream.backfill is False
    assert Settings.from_env({"FISCALIZA_BACKFILL": "1"}).stream.backfill is True
    assert Settings.from_env({"FISCALIZA_BACKFILL": "0"}).stream.backfill is False
    with pytest.raises(SettingsError, match="FISCALIZA_BACKFILL: must be 0 or 1"):
        Settings.from_env({"FISCALIZA_BACKFILL": "yes"})


@pytest.mark.parametrize(("name", "value"), [
    ("FISCALIZA_PARTITIONS", "0"), ("FISCALIZA_PARTITIONS", "four"), ("FISCALIZA_WEB_PORT", "70000"),
    ("FISCALIZA_SESSION_TIMEOUT_S", "-1"), ("FISCALIZA_INPUTS", "catraca"), ("FISCALIZA_GUARANTEE", "maybe"),
    ("FISCALIZA_PUBLISH_TIMEOUT_S", "0"),
])
def test_an_unusable_value_is_refused_naming_its_variable(name, value):
    with pytest.raises(SettingsError, match=f"^{name}: "):
        Settings.from_env({name: value})


def test_an_empty_variable_means_its_default():
    assert Settings.from_env({"FISCALIZA_KAFKA_BOOTSTRAP": "", "FISCALIZA_PARTITIONS": ""}) == Settings.from_env({})


def test_static_inputs_take_the_option_then_the_variable_then_the_sample():
    sample_feed, sample_fleet = joao_neiva()
    settings = Settings.from_env({"FISCALIZA_FEED": "/env/feed", "FISCALIZA_POLICY": "/env/policy.toml"})
    inputs = settings.static.inputs(feed=Path("/option/feed"))
    assert inputs.feed == Path("/option/feed")  # the option wins
    assert inputs.policy == Path("/env/policy.toml")  # then the variable
    assert inputs.fleet == sample_fleet and inputs.geofences is None  # then the sample, the shipped default
    assert Settings.from_env({}).static.inputs().feed == sample_feed


def test_the_audit_anchors_know_whether_a_broker_was_named():
    # the default bootstrap is not a broker someone named: anchors go to Kafka only if one was
    assert Settings.from_env({}).kafka_given is False
    assert Settings.from_env({"FISCALIZA_KAFKA_BOOTSTRAP": "kafka:9092"}).kafka_given is True


def test_every_variable_names_a_field_of_its_section():
    settings = Settings()
    for variable in VARIABLES:
        section, name = variable.field.split(".")
        assert hasattr(getattr(settings, section), name), variable.name
    assert len({v.name for v in VARIABLES}) == len(VARIABLES) == len({v.field for v in VARIABLES})


def test_a_message_can_name_the_variable_of_a_field():
    settings = Settings.from_env({"FISCALIZA_SIGNING_KEY": "/k/orgao.pem"})
    assert variable_of("dockets.signing_key") == "FISCALIZA_SIGNING_KEY"
    assert settings.value("dockets.signing_key") == Path("/k/orgao.pem")


def test_the_trusted_proxy_is_addresses_or_networks_and_none_by_default():
    assert Settings.from_env({}).dockets.trusted_proxies == ()
    given = Settings.from_env({"FISCALIZA_TRUSTED_PROXY": "10.0.0.2, 2001:db8::/64"})
    assert given.dockets.trusted_proxies == ("10.0.0.2", "2001:db8::/64")
    with pytest.raises(SettingsError, match="FISCALIZA_TRUSTED_PROXY: must be IP addresses or networks .*'proxy'"):
        Settings.from_env({"FISCALIZA_TRUSTED_PROXY": "10.0.0.2,proxy"})
