"""Every FISCALIZA_* environment variable, read in one place into one `Settings` value.

An entry point builds it once (`Settings.from_env()`) and passes its parts down: the
engine's static inputs, the workers' streaming settings, the docket store's. A
command-line option, when given, wins over its variable. `VARIABLES` lists each
variable with its meaning; README's tables are checked against it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from kernel.errors import FiscalizaError
from kernel.inputs import StaticInputs
from samples import joao_neiva

DEFAULT_DB_URL = "sqlite:///fiscaliza-dockets.sqlite3"
VEHICLE_INPUTS = frozenset({"tachograph", "catraca"})


class SettingsError(FiscalizaError, ValueError):
    """A variable holds a value that cannot be used; the message names it."""


@dataclass(frozen=True)
class StaticSettings:
    """What the engine enforces against; None: the sample network, the shipped policy."""

    feed: Path | None = None
    fleet: Path | None = None
    policy: Path | None = None
    geofences: Path | None = None

    def inputs(self, feed: Path | None = None, fleet: Path | None = None, policy: Path | None = None,
               geofences: Path | None = None) -> StaticInputs:
        """The options given, else these settings, else the João Neiva sample."""
        sample_feed, sample_fleet = joao_neiva()
        return StaticInputs(feed or self.feed or sample_feed, fleet or self.fleet or sample_fleet,
                            policy or self.policy, geofences or self.geofences)


@dataclass(frozen=True)
class StreamSettings:
    """The Kafka topics and the Faust workers."""

    bootstrap: str = "127.0.0.1:19092"
    partitions: int = 4
    replication: int = 1
    app_id: str = "fiscaliza"
    store: str = "memory://"
    # exactly_once (Kafka transactions) produced no visible output with faust-streaming 0.15.3
    processing_guarantee: str = "at_least_once"
    session_timeout_s: float = 60.0
    # the longest a published message waits for the brokers' acknowledgement (kafka-python's
    # delivery, request and blocking timeouts derive from it): brokers down, publish says so
    publish_timeout_s: float = 20.0
    web_port: int = 0
    inputs: frozenset[str] = VEHICLE_INPUTS
    datadir: str = ""
    backfill: bool = False


@dataclass(frozen=True)
class DocketSettings:
    """The autos' store and the keys that sign and chain it (never stored in it)."""

    db: str = DEFAULT_DB_URL
    signing_key: Path | None = None
    audit_key: Path | None = None
    audit_anchors: str | None = None
    password: str | None = None
    # the reverse proxy whose X-Forwarded-For / -Proto the web app believes (none: no one's)
    trusted_proxies: tuple[str, ...] = ()


@dataclass(frozen=True)
class Settings:
    static: StaticSettings = field(default_factory=StaticSettings)
    stream: StreamSettings = field(default_factory=StreamSettings)
    dockets: DocketSettings = field(default_factory=DocketSettings)
    # the variables the environment set: some defaults depend on whether one was given
    given: frozenset[str] = frozenset()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        sections = {"static": StaticSettings(), "stream": StreamSettings(), "dockets": DocketSettings()}
        given = set()
        for variable in VARIABLES:
            text = env.get(variable.name)
            if text is None or (text == "" and variable.empty_is_unset):
                continue
            try:
                value = variable.parse(text)
            except ValueError as exc:
                raise SettingsError(f"{variable.name}: {exc}") from None
            section, name = variable.field.split(".")
            sections[section] = replace(sections[section], **{name: value})
            given.add(variable.name)
        return cls(**sections, given=frozenset(given))

    def value(self, field: str):
        """The value of `section.attribute` (a Variable's field)."""
        section, name = field.split(".")
        return getattr(getattr(self, section), name)

    @property
    def kafka_given(self) -> bool:
        """Whether a broker was named (the audit anchors default to Kafka only then)."""
        return "FISCALIZA_KAFKA_BOOTSTRAP" in self.given


def _flag(text: str) -> bool:
    if text.strip() in ("", "0", "false"):
        return False
    if text.strip() in ("1", "true"):
        return True
    raise ValueError(f"must be 0 or 1, got {text!r}")


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError(f"must be positive, got {text!r}")
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise ValueError(f"must be a port (0 for off), got {text!r}")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise ValueError(f"must be positive seconds, got {text!r}")
    return value


def _vehicle_inputs(text: str) -> frozenset[str]:
    names = frozenset(n.strip() for n in text.split(",") if n.strip())
    if not names or not names <= VEHICLE_INPUTS or "tachograph" not in names:
        raise ValueError(f"must be tachograph or tachograph,catraca, got {text!r}")
    return names


def parse_addresses(text: str) -> tuple[str, ...]:
    import ipaddress

    names = tuple(n.strip() for n in text.split(",") if n.strip())
    for name in names:
        try:
            ipaddress.ip_network(name, strict=False)
        except ValueError:
            raise ValueError(f"must be IP addresses or networks separated by commas, got {name!r}") from None
    return names


def _guarantee(text: str) -> str:
    if text not in ("at_least_once", "exactly_once"):
        raise ValueError(f"must be at_least_once or exactly_once, got {text!r}")
    return text


@dataclass(frozen=True)
class Variable:
    name: str
    field: str  # section.attribute of Settings
    parse: Callable[[str], object]
    meaning: str
    empty_is_unset: bool = True  # an empty value (VAR=) means the default


VARIABLES: tuple[Variable, ...] = (
    Variable("FISCALIZA_FEED", "static.feed", Path, "GTFS feed: a directory or a .zip"),
    Variable("FISCALIZA_FLEET", "static.fleet", Path, "fleet.csv"),
    Variable("FISCALIZA_POLICY", "static.policy", Path, "policy TOML"),
    Variable("FISCALIZA_GEOFENCES", "static.geofences", Path, "GeoJSON geofence overrides"),
    Variable("FISCALIZA_KAFKA_BOOTSTRAP", "stream.bootstrap", str, "Kafka bootstrap servers"),
    Variable("FISCALIZA_PARTITIONS", "stream.partitions", _positive_int, "partitions of the topics"),
    Variable("FISCALIZA_REPLICATION", "stream.replication", _positive_int, "replication factor of the topics"),
    Variable("FISCALIZA_APP_ID", "stream.app_id", str, "the workers' consumer group and table names"),
    Variable("FISCALIZA_STORE", "stream.store", str, "the workers' table store"),
    Variable("FISCALIZA_GUARANTEE", "stream.processing_guarantee", _guarantee, "Faust's processing guarantee"),
    Variable("FISCALIZA_SESSION_TIMEOUT_S", "stream.session_timeout_s", _seconds,
             "how long a silent (crashed) worker keeps its partitions"),
    Variable("FISCALIZA_PUBLISH_TIMEOUT_S", "stream.publish_timeout_s", _seconds,
             "how long a published message may wait for the brokers' acknowledgement"),
    Variable("FISCALIZA_WEB_PORT", "stream.web_port", _port, "a worker's HTTP port for health and /metrics"),
    Variable("FISCALIZA_INPUTS", "stream.inputs", _vehicle_inputs, "the inputs every partition's watermark waits for"),
    Variable("FISCALIZA_DATADIR", "stream.datadir", str, "a worker's local data directory"),
    Variable("FISCALIZA_BACKFILL", "stream.backfill", _flag, "1: the input is history or a simulation, not live"),
    Variable("FISCALIZA_DB", "dockets.db", str, "the docket store's SQLAlchemy URL"),
    Variable("FISCALIZA_SIGNING_KEY", "dockets.signing_key", Path, "the Órgão's Ed25519 signing key"),
    Variable("FISCALIZA_AUDIT_KEY", "dockets.audit_key", Path, "the audit log's HMAC key"),
    Variable("FISCALIZA_AUDIT_ANCHORS", "dockets.audit_anchors", str, "where the audit chain's heads are anchored"),
    Variable("FISCALIZA_PASSWORD", "dockets.password", str, "a new user's password (users add)"),
    Variable("FISCALIZA_TRUSTED_PROXY", "dockets.trusted_proxies", parse_addresses,
             "the reverse proxy whose X-Forwarded-For the web app believes"),
)


def variable_of(field: str) -> str:
    """The variable that sets `section.attribute`, for messages that tell the user to set it."""
    return next(variable.name for variable in VARIABLES if variable.field == field)
