"""Telemetry as JSON Lines files: the replay's input and an evidence bundle's members."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kernel.errors import InputError
from telemetry.validation import RAW_SHOWN_BYTES, SOURCES, CutMessage

# A line longer than the bound is read on in chunks of this size to find its end, none kept.
_SKIP_CHUNK = 1 << 20


@dataclass(frozen=True)
class TelemetryFiles:
    """One file per source (the topics' three); only the tachograph is required."""

    tachograph: Path
    catraca: Path | None = None
    occurrences: Path | None = None

    def present(self) -> dict[str, Path]:
        """The sources given, by name, in SOURCES' order."""
        return {name: path for name in SOURCES if (path := getattr(self, name)) is not None}


def numbered_lines(path: Path, max_bytes: int) -> Iterator[tuple[str, bytes | CutMessage]]:
    """The file's non-blank lines without their line ending, each with its location
    (`name:line`, counted from 1 over every line); an unreadable file is an InputError.

    A line longer than `max_bytes` comes as a `CutMessage`: its first bytes and its
    length, the rest read in chunks only to find its end, so memory stays bounded
    whatever the file holds (a file without a newline is one line)."""
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        number = 0
        # + 2: a line of max_bytes still comes whole with its "\r\n"
        while raw := handle.readline(max_bytes + 2):
            number += 1
            if len(raw) == max_bytes + 2 and not raw.endswith(b"\n"):
                yield f"{path.name}:{number}", _skip_rest(handle, raw)
                continue
            line = raw.rstrip(b"\r\n")
            if line.strip():
                yield f"{path.name}:{number}", line


def _skip_rest(handle, start: bytes) -> CutMessage:
    """The line that begins with `start`, read on to its end keeping only its head."""
    if len(start) < RAW_SHOWN_BYTES:  # a bound below what a rejection shows
        start += handle.readline(RAW_SHOWN_BYTES - len(start))
    length, tail = len(start), start
    while not tail.endswith(b"\n") and (tail := handle.readline(_SKIP_CHUNK)):
        length += len(tail)
    length -= len(tail) - len(tail.rstrip(b"\r\n")) if tail else 0  # the line ending
    return CutMessage(start[: min(length, RAW_SHOWN_BYTES)], length)
