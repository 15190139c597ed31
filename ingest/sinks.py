"""Where converted messages go: a JSON Lines file (its rejections in `rejected.jsonl`
beside it) or Kafka's tachograph topic (its rejections on the dead-letter topic)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import msgspec

from kernel.errors import InputError
from telemetry.validation import Rejection, to_builtins

_encoder = msgspec.json.Encoder()


class Sink(Protocol):
    def send(self, vehicle_id: str, message: dict) -> None: ...
    def reject(self, rejection: Rejection) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


def sent_messages(path: Path) -> list[dict]:
    """The messages a file already holds (a capture continued): what must not be sent again."""
    if not path.exists():
        return []
    decoder = msgspec.json.Decoder(dict)
    found = []
    for line in path.read_bytes().splitlines():
        try:
            found.append(decoder.decode(line))
        except msgspec.DecodeError:
            continue
    return found


class FileSink:
    """`out` and `rejected.jsonl` in its folder; `append` continues them (else rewritten)."""

    def __init__(self, out: Path, append: bool = False):
        self.out = out
        self.rejected_path = out.parent / "rejected.jsonl"
        if self.rejected_path.resolve() == out.resolve():
            raise InputError("--out cannot be rejected.jsonl: the rejections are written there")
        mode = "ab" if append else "wb"
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            self._messages = open(out, mode)
            self._rejected = open(self.rejected_path, mode)
        except OSError as exc:
            raise InputError(f"cannot write {out}: {exc.strerror}") from None

    def send(self, vehicle_id: str, message: dict) -> None:
        self._messages.write(_encoder.encode(message) + b"\n")

    def reject(self, rejection: Rejection) -> None:
        self._rejected.write(_encoder.encode(to_builtins(rejection)) + b"\n")

    def flush(self) -> None:
        self._messages.flush()
        self._rejected.flush()

    def close(self) -> None:
        self._messages.close()
        self._rejected.close()


class KafkaSink:
    """The tachograph topic keyed by vehicle_id; rejections on `rejected` keyed by source,
    as the workers write them."""

    def __init__(self, bootstrap: str, topic: str, dead_letters: str = "rejected"):
        from kafka import KafkaProducer
        from kafka.errors import KafkaError

        self.topic, self.dead_letters = topic, dead_letters
        try:
            self._producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", client_id="fiscaliza-ingest",
                                           linger_ms=20)
        except KafkaError as exc:
            raise InputError(f"cannot reach Kafka at {bootstrap}: {exc}") from None

    def send(self, vehicle_id: str, message: dict) -> None:
        self._producer.send(self.topic, key=vehicle_id.encode(), value=_encoder.encode(message))

    def reject(self, rejection: Rejection) -> None:
        self._producer.send(self.dead_letters, key=rejection.source.encode(),
                            value=_encoder.encode(to_builtins(rejection)))

    def flush(self) -> None:
        from kafka.errors import KafkaError

        try:
            self._producer.flush()
        except KafkaError as exc:
            raise InputError(f"publishing to {self.topic} failed: {exc}") from None

    def close(self) -> None:
        self._producer.close()
