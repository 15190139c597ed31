"""Where the audit chain's heads are written outside the database (#13).

In production the anchor log is the Kafka topic `audit-anchors` (one partition, kept
forever): the database's owner cannot rewrite it. Without a broker (a local SQLite store,
the demo) it is a file written only by appending. `open_anchor_log` picks one; the store
appends the head of every commit that wrote audit entries (`dockets.db`).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Protocol

from sqlalchemy.engine import make_url

from dockets.audit import Anchor, AuditError

ANCHOR_TOPIC = "audit-anchors"
log = logging.getLogger(__name__)


class AnchorLog(Protocol):
    def append(self, anchor: Anchor) -> None: ...

    def read(self) -> list[Anchor]: ...

    def describe(self) -> str: ...


class FileAnchorLog:
    def __init__(self, path: Path):
        self.path = Path(path)

    def append(self, anchor: Anchor) -> None:
        # O_APPEND: each line lands whole at the end, whoever else appends
        descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(descriptor, anchor.encode() + b"\n")
            os.fsync(descriptor)
        finally:
            os.close(descriptor)

    def read(self) -> list[Anchor]:
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise AuditError(f"não foi possível ler as âncoras {self.path}: {exc.strerror}") from None
        return [Anchor.decode(line) for line in lines if line.strip()]

    def describe(self) -> str:
        return str(self.path)


class KafkaAnchorLog:
    def __init__(self, bootstrap: str, topic: str = ANCHOR_TOPIC, timeout_s: float = 15.0):
        self.bootstrap, self.topic, self.timeout_s = bootstrap, topic, timeout_s
        self._producer = None

    def append(self, anchor: Anchor) -> None:
        from kafka import KafkaProducer
        from kafka.errors import KafkaError

        try:
            if self._producer is None:
                # its wait for a first broker too: kafka-python's is 30 s, and a commit of
                # the docket store (a clerk's request) waits on this append
                self._producer = KafkaProducer(bootstrap_servers=self.bootstrap, acks="all",
                                               client_id="fiscaliza-audit-anchors",
                                               max_block_ms=int(self.timeout_s * 1000),
                                               bootstrap_timeout_ms=int(self.timeout_s * 1000))
            self._producer.send(self.topic, anchor.encode()).get(timeout=self.timeout_s)
        except KafkaError as exc:
            raise AuditError(f"âncora não gravada em {self.describe()}: {exc}") from None

    def read(self) -> list[Anchor]:
        from kafka import KafkaConsumer, TopicPartition
        from kafka.errors import KafkaError

        try:
            consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False,
                                     client_id="fiscaliza-audit-verify",
                                     bootstrap_timeout_ms=int(self.timeout_s * 1000),
                                     request_timeout_ms=int(self.timeout_s * 1000) + 1000,
                                     consumer_timeout_ms=int(self.timeout_s * 1000))
        except KafkaError as exc:
            raise AuditError(f"não foi possível ler as âncoras em {self.describe()}: {exc}") from None
        try:
            partitions = consumer.partitions_for_topic(self.topic)
            if not partitions:
                return []
            assigned = [TopicPartition(self.topic, p) for p in sorted(partitions)]
            consumer.assign(assigned)
            consumer.seek_to_beginning(*assigned)
            end = consumer.end_offsets(assigned)
            anchors = []
            deadline = time.monotonic() + self.timeout_s
            while any(consumer.position(tp) < end[tp] for tp in assigned):
                if time.monotonic() > deadline:
                    raise AuditError(f"as âncoras em {self.describe()} não foram lidas até o fim "
                                     f"em {self.timeout_s:.0f} s")
                batch = consumer.poll(timeout_ms=1000)
                for records in batch.values():
                    anchors.extend(Anchor.decode(r.value) for r in records)
            return anchors
        except KafkaError as exc:
            raise AuditError(f"não foi possível ler as âncoras em {self.describe()}: {exc}") from None
        finally:
            consumer.close()

    def describe(self) -> str:
        return f"kafka://{self.bootstrap}/{self.topic}"

    def close(self) -> None:
        if self._producer is not None:
            self._producer.close()


def open_anchor_log(destination: str) -> AnchorLog:
    """`kafka://host:port[,host:port]` (topic audit-anchors) or a file path."""
    if destination.startswith("kafka://"):
        return KafkaAnchorLog(destination.removeprefix("kafka://").rstrip("/"))
    return FileAnchorLog(Path(destination))


def rollback_warning(db_url: str, anchors: AnchorLog) -> str | None:
    """What a server store anchored in a file cannot protect, for the long-running writers
    to say on start: whoever restores the database can restore or edit the file beside it,
    and a rolled-back record then verifies. None for Kafka's topic, and for a SQLite store
    (the documented local use of the file mode)."""
    if not isinstance(anchors, FileAnchorLog) or make_url(db_url).get_backend_name() != "postgresql":
        return None
    return (f"atenção: as âncoras do registro de auditoria estão no arquivo {anchors.path}, não no tópico "
            f"{ANCHOR_TOPIC} do Kafka: um banco restaurado junto com esse arquivo não é detectado "
            "(defina FISCALIZA_KAFKA_BOOTSTRAP ou FISCALIZA_AUDIT_ANCHORS=kafka://HOST:PORTA)")


def default_destination(db_url: str, *, anchors: str | None, kafka_bootstrap: str | None) -> str:
    """Where a store's anchors go: the one named; else Kafka's audit-anchors when a broker
    is configured; else, for a SQLite store, a file beside it. A server database
    without either is refused (its anchors must leave the machine)."""
    if anchors:
        return anchors
    if kafka_bootstrap:
        return f"kafka://{kafka_bootstrap}"
    url = make_url(db_url)
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        return f"{url.database}.ancoras.jsonl"
    raise AuditError("o registro de auditoria precisa de âncoras fora do banco: defina FISCALIZA_AUDIT_ANCHORS "
                     "(kafka://HOST:PORTA ou um arquivo) ou FISCALIZA_KAFKA_BOOTSTRAP")
