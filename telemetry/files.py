"""Telemetry as JSON Lines files: the replay's input and an evidence bundle's members."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kernel.errors import InputError
from telemetry.validation import SOURCES


@dataclass(frozen=True)
class TelemetryFiles:
    """One file per source (the topics' three); only the tachograph is required."""

    tachograph: Path
    catraca: Path | None = None
    occurrences: Path | None = None

    def present(self) -> dict[str, Path]:
        """The sources given, by name, in SOURCES' order."""
        return {name: path for name in SOURCES if (path := getattr(self, name)) is not None}


def numbered_lines(path: Path) -> Iterator[tuple[str, bytes]]:
    """The file's non-blank lines without their line ending, each with its location
    (`name:line`, counted from 1 over every line); an unreadable file is an InputError."""
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.rstrip(b"\r\n")
            if line.strip():
                yield f"{path.name}:{number}", line
