"""The README is the operators' manual: every setting the code reads is in one of its tables,
and the code reads them in one place (`kernel.settings`)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from kernel.settings import VARIABLES

ROOT = Path(__file__).resolve().parents[1]
VARIABLE = re.compile(r"""["'](FISCALIZA_[A-Z0-9_]+)["']""")


def variables_by_file() -> dict[str, set[str]]:
    """The quoted FISCALIZA_* names in each source file of the shipped packages."""
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    top_levels = {name.split(".")[0] for name in packages}
    found = {}
    for top in top_levels:
        for source in (ROOT / top).rglob("*.py"):
            if names := set(VARIABLE.findall(source.read_text(encoding="utf-8"))):
                found[str(source.relative_to(ROOT))] = names
    return found


def variables_the_code_reads() -> set[str]:
    return set().union(*variables_by_file().values())


def documented_variables() -> set[str]:
    rows = (line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("| `FISCALIZA_"))
    return {name for row in rows for name in re.findall(r"`(FISCALIZA_[A-Z0-9_]+)`", row.split("|")[1])}


def test_the_scan_finds_the_worker_settings():
    # guards the test below against a scan that silently finds nothing
    assert {"FISCALIZA_KAFKA_BOOTSTRAP", "FISCALIZA_PARTITIONS", "FISCALIZA_DB"} <= variables_the_code_reads()


def test_every_environment_variable_the_code_reads_has_a_readme_row():
    missing = variables_the_code_reads() - documented_variables()
    assert not missing, f"add a row with the default and meaning to README.md for: {sorted(missing)}"


def test_only_the_settings_module_names_a_variable():
    assert set(variables_by_file()) == {"kernel/settings.py"}


def test_the_readme_rows_are_the_settings_variables():
    assert documented_variables() == {variable.name for variable in VARIABLES}
