"""The fleet: which operator each vehicle belongs to (`fleet.csv`)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path


class FleetError(ValueError):
    """fleet.csv is missing, unreadable or invalid."""


@dataclass(frozen=True)
class Vehicle:
    vehicle_id: str
    plate: str
    operator_id: str
    capacity: int | None = None


REQUIRED = ("vehicle_id", "plate", "operator_id")


def load_fleet(path: Path, operators: set[str] | None = None) -> dict[str, Vehicle]:
    """Read fleet.csv; `operators` (the feed's agency_ids) are checked when given."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.DictReader(handle))
            header = rows[0].keys() if rows else []
    except OSError as exc:
        raise FleetError(f"cannot read fleet {path}: {exc.strerror}") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise FleetError(f"cannot read fleet {path}: {exc}") from None
    missing = [c for c in REQUIRED if c not in header]
    if not rows or missing:
        raise FleetError(f"fleet {path} needs the columns {', '.join(REQUIRED)} and at least one vehicle")
    fleet: dict[str, Vehicle] = {}
    for line, row in enumerate(rows, start=2):
        vehicle_id, plate, operator = (str(row[c] or "").strip() for c in REQUIRED)
        if not vehicle_id or not operator:
            raise FleetError(f"{path}:{line}: vehicle_id and operator_id must not be empty")
        if vehicle_id in fleet:
            raise FleetError(f"{path}:{line}: vehicle {vehicle_id} listed twice")
        if operators is not None and operator not in operators:
            raise FleetError(f"{path}:{line}: operator {operator} is not an agency_id of the feed")
        capacity = (row.get("capacity") or "").strip()
        if capacity and not capacity.isdigit():
            raise FleetError(f"{path}:{line}: capacity must be a whole number")
        fleet[vehicle_id] = Vehicle(vehicle_id, plate, operator, int(capacity) if capacity else None)
    return fleet
