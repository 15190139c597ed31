"""What this project needs of a GTFS feed beyond reading it: pure checks over the tables
gtfs-kit read, each problem one line. `load_feed` refuses the first; `fiscaliza feed check`
lists them all beside the GTFS reference rules (`gtfs.check`).

A problem the reference rules also find carries the reference's notice code
(`missing_required_agency_id`, `invalid_time`, …), so a full check names it once."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import pandas as pd

_LISTED = 10  # how many offending ids one problem names

# The columns the reader uses, per table: without one, the feed cannot be read as this
# project reads it (GTFS requires all of them too, where the table is present).
READ_COLUMNS: dict[str, tuple[str, ...]] = {
    "agency": ("agency_name", "agency_timezone"),
    "routes": ("route_id",),
    "trips": ("route_id", "service_id", "trip_id"),
    "stop_times": ("trip_id", "arrival_time", "departure_time", "stop_id", "stop_sequence"),
    "stops": ("stop_id", "stop_lat", "stop_lon"),
    "shapes": ("shape_id", "shape_pt_lat", "shape_pt_lon", "shape_pt_sequence"),
    "calendar": ("service_id", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
                 "start_date", "end_date"),
    "calendar_dates": ("service_id", "date", "exception_type"),
    "frequencies": ("trip_id", "start_time", "end_time", "headway_secs"),
}
# GTFS times: H:MM:SS or HH:MM:SS, hours past 24 allowed, minutes and seconds below 60.
_TIME = r"\d{1,3}:[0-5]\d:[0-5]\d"
_TIMES = {"stop_times": ("arrival_time", "departure_time"), "frequencies": ("start_time", "end_time")}


@dataclass(frozen=True)
class Problem:
    """One finding about a feed: where (`file` and 1-based CSV row, header = 1), what
    (`code`, a reference notice code where the reference knows it) and why."""

    severity: Literal["error", "warning"]
    code: str
    message: str
    file: str | None = None
    row: int | None = None

    def line(self) -> str:
        where = f"{self.file}:{self.row}" if self.file and self.row else (self.file or "feed")
        return f"{where}: {self.code}: {self.message}"


def _named(ids: list[str]) -> str:
    more = f" and {len(ids) - _LISTED} more" if len(ids) > _LISTED else ""
    return ", ".join(ids[:_LISTED]) + more


def _table(raw, name: str) -> pd.DataFrame | None:
    table = getattr(raw, name, None)
    return table if isinstance(table, pd.DataFrame) else None


def _csv_row(table: pd.DataFrame, index) -> int:
    """The CSV row of a table's row: gtfs-kit keeps the file's order from 0, after the header."""
    return int(table.index.get_loc(index)) + 2


def missing_columns(raw) -> Iterator[Problem]:
    for name, needed in READ_COLUMNS.items():
        table = _table(raw, name)
        if table is None:
            continue
        for column in needed:
            if column not in table.columns:
                yield Problem("error", "missing_required_column", f"no column {column}", f"{name}.txt")


def stops_without_location(raw) -> Iterator[Problem]:
    stops = _table(raw, "stops")
    if stops is None or not {"stop_lat", "stop_lon"} <= set(stops.columns):
        return
    lat = pd.to_numeric(stops["stop_lat"], errors="coerce")
    lon = pd.to_numeric(stops["stop_lon"], errors="coerce")
    for index in stops.index[lat.isna() | lon.isna()]:
        yield Problem("error", "stop_without_location", f"stop {stops.at[index, 'stop_id']} has no stop_lat/stop_lon",
                      "stops.txt", _csv_row(stops, index))


def trips_without_shape(raw) -> Iterator[Problem]:
    """Every trip needs its itinerary: GTFS makes shape_id optional, enforcement does not."""
    trips, shapes = _table(raw, "trips"), _table(raw, "shapes")
    if trips is None or "trip_id" not in trips.columns or shapes is None or "shape_id" not in shapes.columns:
        return
    known = set(shapes["shape_id"].astype(str))
    shape_ids = trips["shape_id"].astype("string") if "shape_id" in trips else pd.Series(pd.NA, index=trips.index)
    missing = trips.loc[shape_ids.isna() | ~shape_ids.fillna("").isin(known), "trip_id"].astype(str).tolist()
    if missing:
        yield Problem("error", "trip_without_shape",
                      f"{len(missing)} trip(s) have no shape in shapes.txt: {_named(missing)}", "trips.txt")


def routes_without_agency(raw) -> Iterator[Problem]:
    """With several agencies a route must say whose it is: its infractions go to an operator."""
    agency, routes = _table(raw, "agency"), _table(raw, "routes")
    if agency is None or routes is None or len(agency) < 2 or "route_id" not in routes.columns:
        return
    agency_id = routes["agency_id"].astype("string").str.strip() if "agency_id" in routes else None
    empty = routes.index if agency_id is None else routes.index[agency_id.isna() | (agency_id == "")]
    for index in empty:
        yield Problem("error", "missing_required_agency_id",
                      f"route {routes.at[index, 'route_id']} has no agency_id, and agency.txt has {len(agency)} agencies",
                      "routes.txt", _csv_row(routes, index))


def unparsable_times(raw) -> Iterator[Problem]:
    for name, fields in _TIMES.items():
        table = _table(raw, name)
        if table is None:
            continue
        for field in fields:
            if field not in table.columns:
                continue
            text = table[field].astype("string").str.strip()
            wrong = text.notna() & (text != "") & ~text.str.fullmatch(_TIME).fillna(False)
            for index in table.index[wrong.to_numpy(dtype=bool)]:
                yield Problem("error", "invalid_time", f"{field} {text[index]!r} is not a time (HH:MM:SS)",
                              f"{name}.txt", _csv_row(table, index))


CHECKS = (missing_columns, stops_without_location, trips_without_shape, routes_without_agency, unparsable_times)


def contract_problems(raw) -> list[Problem]:
    """Every problem of the checks, in the checks' order (a missing column first: the
    others skip what it lacks)."""
    return [problem for check in CHECKS for problem in check(raw)]


def first_problem(raw) -> Problem | None:
    """The first problem, without looking for the rest (the reader's refusal)."""
    return next((problem for check in CHECKS for problem in check(raw)), None)


def fleet_problems(operators: dict[str, str], agencies: set[str], fleet_name: str) -> list[Problem]:
    """Vehicles of `operators` (vehicle_id → operator_id) whose operator is no agency_id."""
    unknown: dict[str, list[str]] = {}
    for vehicle, operator in operators.items():
        if operator not in agencies:
            unknown.setdefault(operator, []).append(vehicle)
    return [Problem("error", "unknown_fleet_operator",
                    f"operator {operator} of {len(vehicles)} vehicle(s) ({_named(vehicles)}) is not an agency_id "
                    "of agency.txt", fleet_name)
            for operator, vehicles in sorted(unknown.items())]
