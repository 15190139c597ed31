"""The fleet: which operator each vehicle belongs to (`fleet.csv`).

Columns: `vehicle_id`, `plate`, `operator_id` (a GTFS agency_id), and optionally
`capacity` (a whole number) and `lines`: the route_ids the vehicle is licensed to run,
separated by `|` (route_ids may hold spaces, never a `|` in practice), e.g. `101|102`.
Empty or absent: licensed for every line of its operator (a fleet file without the
column keeps its meaning). Read by art. 17 of Conselheiro Lafaiete (rules.other_line).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from kernel.errors import FiscalizaError


class FleetError(FiscalizaError, ValueError):
    """fleet.csv is missing, unreadable or invalid."""


@dataclass(frozen=True)
class Vehicle:
    vehicle_id: str
    plate: str
    operator_id: str
    capacity: int | None = None
    # the route_ids it is licensed for; empty: every line of its operator
    lines: tuple[str, ...] = ()


REQUIRED = ("vehicle_id", "plate", "operator_id")


def load_fleet(path: Path, operators: set[str] | None = None, routes: set[str] | None = None) -> dict[str, Vehicle]:
    """Read fleet.csv; `operators` (the feed's agency_ids) and `routes` (its route_ids,
    against the `lines` column) are checked when given."""
    fleet: dict[str, Vehicle] = {}
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
            if missing:
                raise FleetError(f"fleet {path} needs the columns {', '.join(REQUIRED)} and at least one vehicle")
            for row in reader:
                fleet_row(fleet, row, f"{path}:{reader.line_num}", operators, routes)
    except OSError as exc:
        raise FleetError(f"cannot read fleet {path}: {exc.strerror}") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise FleetError(f"cannot read fleet {path}: {exc}") from None
    if not fleet:
        raise FleetError(f"fleet {path} needs at least one vehicle")
    return fleet


def fleet_row(fleet: dict[str, Vehicle], row: dict, where: str, operators: set[str] | None,
              routes: set[str] | None = None) -> None:
    vehicle_id, plate, operator = (str(row[c] or "").strip() for c in REQUIRED)
    if not vehicle_id or not operator:
        raise FleetError(f"{where}: vehicle_id and operator_id must not be empty")
    if vehicle_id in fleet:
        raise FleetError(f"{where}: vehicle {vehicle_id} listed twice")
    if operators is not None and operator not in operators:
        raise FleetError(f"{where}: operator {operator} is not an agency_id of the feed")
    capacity = (row.get("capacity") or "").strip()
    if capacity and not (capacity.isascii() and capacity.isdigit()):
        raise FleetError(f"{where}: capacity must be a whole number")
    lines = licensed_lines(row.get("lines"), where, routes)
    fleet[vehicle_id] = Vehicle(vehicle_id, plate, operator, int(capacity) if capacity else None, lines)


def licensed_lines(cell: str | None, where: str, routes: set[str] | None) -> tuple[str, ...]:
    """The `lines` cell as route_ids, in the file's order: `|`-separated, each trimmed.
    An empty part (`101||102`, a trailing `|`), a line listed twice or one the feed
    does not have is refused: a typo must not license or unlicense a bus silently."""
    text = (cell or "").strip()
    if not text:
        return ()
    lines = tuple(part.strip() for part in text.split("|"))
    if "" in lines:
        raise FleetError(f"{where}: lines must be route_ids separated by '|', got {text!r}")
    if len(set(lines)) != len(lines):
        raise FleetError(f"{where}: lines lists a route twice: {text!r}")
    unknown = [line for line in lines if routes is not None and line not in routes]
    if unknown:
        raise FleetError(f"{where}: line {unknown[0]} is not a route_id of the feed")
    return lines
