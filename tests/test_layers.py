"""The packages form layers that only point down: a module may import its own package and
the layers below it, never one above or beside it (function-local imports included);
and no module imports itself back through others.

Bottom up; packages on one line are side by side and may not import each other."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LAYERS: tuple[tuple[str, ...], ...] = (
    ("samples",),  # the sample network's data (the settings' default)
    ("kernel",),  # policy, fleet, money, errors, settings
    ("gtfs",),
    ("geofences",),
    ("telemetry",),
    ("trips",),
    ("rules",),
    ("engine",),
    ("streams", "dockets"),  # the Faust shell; the autos de infração
    ("ops",),  # the operations room's live tables, fed from the topics
    ("ingest",),  # adapters from a city's telemetry (GTFS-Realtime, AVL) to the tachograph contract
    ("web", "dashboards"),
    ("simulator",),  # the telemetry a day of the schedule would produce (demo and tests)
    ("fiscaliza",),  # the entry points: command line, replay runner, demo, reporting
    ("benchmarks",),  # development time
)
LEVEL = {package: level for level, packages in enumerate(LAYERS) for package in packages}


def imported_names(path: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of every absolute import in the file, wherever it is; `from a
    import b` gives both `a` and `a.b` (b may be a module)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.lineno, node.module)] + [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def imported_packages(path: Path) -> list[tuple[int, str]]:
    """(line, top-level package) of every absolute import in the file."""
    return sorted({(line, name.split(".")[0]) for line, name in imported_names(path)})


def modules(root: Path) -> dict[str, Path]:
    found = {}
    for package in LEVEL:
        for path in (root / package).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def module_cycle(root: Path) -> list[str] | None:
    """One cycle of module imports, if any (graphlib names it)."""
    known = modules(root)
    graph = {name: {target for _, target in imported_names(path) if target in known and target != name}
             for name, path in known.items()}
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        return exc.args[1]
    return None


def violations(root: Path) -> list[str]:
    wrong = []
    for package, level in LEVEL.items():
        for path in sorted((root / package).rglob("*.py")):
            for line, target in imported_packages(path):
                if target in LEVEL and target != package and LEVEL[target] >= level:
                    where = "beside" if LEVEL[target] == level else "above"
                    wrong.append(f"{path.relative_to(root)}:{line} imports {target}, {where} {package}")
    return wrong


def test_every_import_points_down():
    assert violations(ROOT) == []


def test_no_module_imports_itself_back():
    assert module_cycle(ROOT) is None


def test_a_module_cycle_is_found(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "catalogue.py").write_text("from rules import d13\n")
    (tmp_path / "rules" / "d13.py").write_text("from rules.justification import covering\n")
    (tmp_path / "rules" / "justification.py").write_text("def covering():\n    from rules.catalogue import C\n")
    assert sorted(set(module_cycle(tmp_path))) == ["rules.catalogue", "rules.d13", "rules.justification"]


def test_every_package_of_the_tree_has_a_layer():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages - set(LEVEL) == set()


@pytest.mark.parametrize(("package", "source", "expected"), [
    ("rules", "from engine.values import Context\n", "rules/bad.py:1 imports engine, above rules"),
    ("trips", "def f():\n    from fiscaliza.replay import replay\n", "trips/bad.py:2 imports fiscaliza, above trips"),
    ("dockets", "import streams.app\n", "dockets/bad.py:1 imports streams, beside dockets"),
])
def test_an_import_up_or_sideways_is_found(tmp_path, package, source, expected):
    (tmp_path / package).mkdir()
    (tmp_path / package / "bad.py").write_text(source)
    assert violations(tmp_path) == [expected]


def test_imports_down_and_within_are_allowed(tmp_path):
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "ok.py").write_text("import json\nfrom engine.values import Context\nfrom trips import memo\n"
                                               "from kernel.policy import Policy\n")
    assert violations(tmp_path) == []
