"""Running the `fiscaliza` command as a user does (a subprocess), and the bad-input contract."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def fiscaliza(*args, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fiscaliza.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300, env={**os.environ, **(env or {})})


def assert_bad_input(result: subprocess.CompletedProcess, *needles: str) -> None:
    """Exit 2, exactly one non-empty reason line on stderr, no traceback."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert re.fullmatch(r"fiscaliza: error: \S.*", lines[0]), lines[0]
    for needle in needles:
        assert needle in lines[0]
