"""Streaming settings, read from the environment with documented defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    bootstrap: str = "127.0.0.1:19092"  # FISCALIZA_KAFKA_BOOTSTRAP
    partitions: int = 4  # FISCALIZA_PARTITIONS: of the input and output topics
    replication: int = 1  # FISCALIZA_REPLICATION

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> "Settings":
        env = os.environ if environ is None else environ
        try:
            return cls(
                bootstrap=env.get("FISCALIZA_KAFKA_BOOTSTRAP", cls.bootstrap),
                partitions=int(env.get("FISCALIZA_PARTITIONS", cls.partitions)),
                replication=int(env.get("FISCALIZA_REPLICATION", cls.replication)),
            )
        except ValueError as exc:
            raise ValueError(f"invalid streaming setting in the environment: {exc}") from None
