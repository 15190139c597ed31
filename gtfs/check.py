"""Checking a feed before it accuses anyone: the GTFS reference rules (MobilityData's rule
set, as the gtfs-guru validator implements it) and this project's own needs
(`gtfs.contract`), and a fleet's operators against agency.txt.

`fiscaliza feed check` prints the whole report; the engine and the web app refuse a feed
with errors through `require_valid`, naming the first."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from gtfs.contract import Problem, contract_problems, fleet_problems
from gtfs.errors import FeedError

# Context fields a notice's line already shows (where), or that say nothing to a reader.
_WHERE_FIELDS = frozenset({"csvRowNumber", "filename", "fieldName", "childFilename", "childFieldName"})


@dataclass(frozen=True)
class FeedReport:
    """Every problem found, errors before warnings, each group in a stable order."""

    problems: tuple[Problem, ...]

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")

    @property
    def warnings(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "warning")


@functools.cache
def _notice_files() -> dict[str, str]:
    """The file a notice concerns when it names exactly one (the validator's schema)."""
    import gtfs_guru

    files = {}
    for code, schema in gtfs_guru.notice_schema().items():
        named = schema.get("references", {}).get("fileReferences", [])
        if len(named) == 1:
            files[code] = named[0]
    return files


def _problem(notice) -> Problem:
    context = notice.context()
    # a foreign key's row is the referencing (child) file's
    file = notice.file or context.get("filename") or context.get("childFilename") or _notice_files().get(notice.code)
    row = notice.row or context.get("csvRowNumber")
    field = notice.field or context.get("fieldName") or context.get("childFieldName")
    details = ", ".join(f"{key} {value}" for key, value in sorted(context.items())
                        if key not in _WHERE_FIELDS and value not in (None, ""))
    message = (f"{field}: " if field else "") + notice.message + (f" ({details})" if details else "")
    return Problem("error" if notice.severity == "ERROR" else "warning", notice.code, message,
                   file, int(row) if row else None)


def _order(problem: Problem) -> tuple:
    return (problem.severity != "error", problem.file or "", problem.row or 0, problem.code, problem.message)


def reference_problems(path: Path) -> list[Problem]:
    """The reference rules' errors and warnings (its informational notices left out)."""
    import gtfs_guru

    try:
        result = gtfs_guru.validate(str(path))
    except Exception as exc:  # the validator's own refusal of an unreadable feed
        return [Problem("error", "unreadable_feed", " ".join(str(exc).split()) or type(exc).__name__)]
    return sorted((_problem(n) for n in result.notices if n.severity in ("ERROR", "WARNING")), key=_order)


def _unusable(path: Path) -> str | None:
    if not path.exists():
        return f"cannot read feed {path}: no such file or directory"
    if path.is_file() and not _is_zip(path):
        return f"cannot read feed {path}: neither a directory nor a .zip file"
    return None


def _is_zip(path: Path) -> bool:
    import zipfile

    return zipfile.is_zipfile(path)


def require_valid(path: str | Path) -> None:
    """FeedError naming the first error of the reference rules, if any. The reader
    (`load_feed`) refuses the first of this project's own needs after it."""
    path = Path(path)
    unusable = _unusable(path)
    if unusable:
        raise FeedError(unusable)
    errors = [p for p in reference_problems(path) if p.severity == "error"]
    if errors:
        raise FeedError(f"feed {path}: {len(errors)} error(s) of the GTFS reference rules "
                        f"(fiscaliza feed check lists them); the first: {errors[0].line()}")


def check_feed(path: str | Path, fleet: dict[str, str] | None = None, fleet_name: str = "fleet.csv") -> FeedReport:
    """The full report on a feed (and on `fleet`, vehicle_id → operator_id, when given).
    An unusable path is a FeedError (a bad argument), not a report."""
    import gtfs_kit as gk

    path = Path(path)
    unusable = _unusable(path)
    if unusable:
        raise FeedError(unusable)
    reference = reference_problems(path)
    found = {p.code for p in reference}
    try:
        raw = gk.read_feed(path, dist_units="m")
    except Exception as exc:  # gtfs-kit raises assorted errors for broken feeds
        own = [Problem("error", "unreadable_feed", " ".join(str(exc).split())[:300] or type(exc).__name__)]
    else:
        # a need the reference rules already found is named once, as they name it
        own = [p for p in contract_problems(raw) if p.code not in found]
        if fleet is not None and raw.agency is not None:
            ids = raw.agency["agency_id"].dropna().astype(str) if "agency_id" in raw.agency else ()
            own += fleet_problems(fleet, set(ids), fleet_name)
    return FeedReport(tuple(sorted(reference + own, key=_order)))
