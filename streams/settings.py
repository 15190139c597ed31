"""Streaming settings, read from the environment with documented defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    bootstrap: str = "127.0.0.1:19092"  # FISCALIZA_KAFKA_BOOTSTRAP
    partitions: int = 4  # FISCALIZA_PARTITIONS: of the input and output topics
    replication: int = 1  # FISCALIZA_REPLICATION
    app_id: str = "fiscaliza"  # FISCALIZA_APP_ID: the consumer group and table prefix
    store: str = "memory://"  # FISCALIZA_STORE: rocksdb:// in production
    # FISCALIZA_GUARANTEE: Faust's processing guarantee. exactly_once (Kafka
    # transactions) produced no visible output with faust-streaming 0.15.3 here.
    processing_guarantee: str = "at_least_once"
    # FISCALIZA_SESSION_TIMEOUT_S: how long a silent (crashed) worker keeps its partitions
    session_timeout_s: float = 60.0
    # FISCALIZA_WEB_PORT: the worker's HTTP port for health and Prometheus /metrics (0: off)
    web_port: int = 0
    # FISCALIZA_INPUTS: the telemetry topics every partition's watermark waits for
    inputs: frozenset[str] = frozenset({"tachograph", "catraca"})
    # FISCALIZA_DATADIR: the worker's local data directory (Faust's datadir: the RocksDB
    # tables live under it); empty: Faust's default, "<app id>-data" in the working directory
    datadir: str = ""
    # FISCALIZA_BACKFILL: 1 when the input is recorded history or a simulation fed faster
    # than real time, not live telemetry: no message is refused for being dated more than
    # stream.max_clock_jump_s ahead of the worker's clock (a simulated day still to come)
    backfill: bool = False

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> "Settings":
        env = os.environ if environ is None else environ
        try:
            return cls(
                bootstrap=env.get("FISCALIZA_KAFKA_BOOTSTRAP", cls.bootstrap),
                partitions=int(env.get("FISCALIZA_PARTITIONS", cls.partitions)),
                replication=int(env.get("FISCALIZA_REPLICATION", cls.replication)),
                app_id=env.get("FISCALIZA_APP_ID", cls.app_id),
                store=env.get("FISCALIZA_STORE", cls.store),
                inputs=_inputs(env.get("FISCALIZA_INPUTS")),
                processing_guarantee=env.get("FISCALIZA_GUARANTEE", cls.processing_guarantee),
                session_timeout_s=float(env.get("FISCALIZA_SESSION_TIMEOUT_S", cls.session_timeout_s)),
                web_port=int(env.get("FISCALIZA_WEB_PORT", cls.web_port)),
                datadir=env.get("FISCALIZA_DATADIR", cls.datadir),
                backfill=_flag(env.get("FISCALIZA_BACKFILL"), "FISCALIZA_BACKFILL"),
            )
        except ValueError as exc:
            raise ValueError(f"invalid streaming setting in the environment: {exc}") from None


def _flag(text: str | None, name: str) -> bool:
    if text is None or text.strip() in ("", "0", "false"):
        return False
    if text.strip() in ("1", "true"):
        return True
    raise ValueError(f"{name} must be 0 or 1, got {text!r}")


def _inputs(text: str | None) -> frozenset[str]:
    if text is None:
        return Settings.inputs
    names = frozenset(n.strip() for n in text.split(",") if n.strip())
    if not names or not names <= {"tachograph", "catraca"} or "tachograph" not in names:
        raise ValueError(f"FISCALIZA_INPUTS must be tachograph or tachograph,catraca, got {text!r}")
    return names
