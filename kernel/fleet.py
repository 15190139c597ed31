"""The fleet: which operator each vehicle belongs to (`fleet.csv`)."""

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


REQUIRED = ("vehicle_id", "plate", "operator_id")


def load_fleet(path: Path, operators: set[str] | None = None) -> dict[str, Vehicle]:
    """Read fleet.csv; `operators` (the feed's agency_ids) are checked when given."""
    fleet: dict[str, Vehicle] = {}
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
            if missing:
                raise FleetError(f"fleet {path} needs the columns {', '.join(REQUIRED)} and at least one vehicle")
            for row in reader:
                fleet_row(fleet, row, f"{path}:{reader.line_num}", operators)
    except OSError as exc:
        raise FleetError(f"cannot read fleet {path}: {exc.strerror}") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise FleetError(f"cannot read fleet {path}: {exc}") from None
    if not fleet:
        raise FleetError(f"fleet {path} needs at least one vehicle")
    return fleet


def fleet_row(fleet: dict[str, Vehicle], row: dict, where: str, operators: set[str] | None) -> None:
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
    fleet[vehicle_id] = Vehicle(vehicle_id, plate, operator, int(capacity) if capacity else None)
