"""fleet.csv: vehicle_id,plate,operator_id (= GTFS agency_id) and optional capacity."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernel.fleet import FleetError, Vehicle, load_fleet
from samples import joao_neiva

SAMPLE = joao_neiva()[1]
OPERATORS = {"VNV", "TRD"}  # agency_ids of the sample feed


def write(tmp_path: Path, text: str, name: str = "fleet.csv", encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding=encoding)
    return path


def test_sample_fleet_loads_with_capacities():
    fleet = load_fleet(SAMPLE, operators=OPERATORS)
    assert fleet["JN-1011"] == Vehicle("JN-1011", "RQB4E17", "VNV", 70)
    assert fleet["JN-2011"] == Vehicle("JN-2011", "RQE3A59", "TRD", 44)
    assert {v.operator_id for v in fleet.values()} <= OPERATORS


def test_fleet_without_capacity_column_loads_capacity_none(tmp_path):
    path = write(tmp_path, "vehicle_id,plate,operator_id\nA-1,ABC1D23,VNV\n")
    assert load_fleet(path) == {"A-1": Vehicle("A-1", "ABC1D23", "VNV", None)}


def test_fleet_with_bom_and_padded_cells_loads_trimmed(tmp_path):
    path = write(tmp_path, "vehicle_id,plate,operator_id,capacity\n A-1 , ABC1D23 , VNV , 40 \n",
                 encoding="utf-8-sig")
    assert load_fleet(path, operators=OPERATORS) == {"A-1": Vehicle("A-1", "ABC1D23", "VNV", 40)}


def test_vehicle_listed_twice_refused_naming_line(tmp_path):
    path = write(tmp_path, "vehicle_id,plate,operator_id\nA-1,P1,VNV\nA-1,P2,VNV\n")
    # header is line 1, so the second A-1 is on line 3
    with pytest.raises(FleetError, match=re.escape(f"{path}:3: vehicle A-1 listed twice")):
        load_fleet(path)


def test_duplicate_after_blank_line_refused_naming_physical_line(tmp_path):
    path = write(tmp_path, "vehicle_id,plate,operator_id\nA-1,P1,VNV\n\nA-1,P2,VNV\n")
    # line 1 header, 2 A-1, 3 blank, 4 the second A-1
    with pytest.raises(FleetError, match=re.escape(f"{path}:4: vehicle A-1 listed twice")):
        load_fleet(path)


def test_empty_operator_refused_naming_line(tmp_path):
    path = write(tmp_path, "vehicle_id,plate,operator_id\nA-1,P1,VNV\nA-2,P2,  \n")
    with pytest.raises(FleetError, match=re.escape(f"{path}:3: ") + ".*operator_id must not be empty"):
        load_fleet(path)


def test_empty_vehicle_id_refused_naming_line(tmp_path):
    path = write(tmp_path, "vehicle_id,plate,operator_id\n,P1,VNV\n")
    with pytest.raises(FleetError, match=re.escape(f"{path}:2: ") + "vehicle_id .*must not be empty"):
        load_fleet(path)


def test_short_row_without_operator_refused_as_empty_operator(tmp_path):
    path = write(tmp_path, "vehicle_id,plate,operator_id\nA-1,P1\n")
    with pytest.raises(FleetError, match="operator_id must not be empty"):
        load_fleet(path)


@pytest.mark.parametrize("capacity", ["seventy", "70.5", "-3", "7O"])
def test_non_numeric_capacity_refused(tmp_path, capacity):
    path = write(tmp_path, f"vehicle_id,plate,operator_id,capacity\nA-1,P1,VNV,{capacity}\n")
    with pytest.raises(FleetError, match=re.escape(f"{path}:2: capacity must be a whole number")):
        load_fleet(path)


def test_superscript_digit_capacity_refused_with_fleet_error(tmp_path):
    # "²".isdigit() is True but int("²") raises ValueError: must still be a FleetError.
    path = write(tmp_path, "vehicle_id,plate,operator_id,capacity\nA-1,P1,VNV,²\n")
    with pytest.raises(FleetError, match="capacity must be a whole number"):
        load_fleet(path)


def test_operator_not_in_feed_refused_naming_it(tmp_path):
    path = write(tmp_path, "vehicle_id,plate,operator_id\nA-1,P1,VNV\nA-2,P2,XYZ\n")
    with pytest.raises(FleetError, match=re.escape(f"{path}:3: operator XYZ is not an agency_id of the feed")):
        load_fleet(path, operators=OPERATORS)


def test_unknown_operator_accepted_when_operators_not_given(tmp_path):
    path = write(tmp_path, "vehicle_id,plate,operator_id\nA-1,P1,XYZ\n")
    assert load_fleet(path)["A-1"].operator_id == "XYZ"


def test_missing_file_refused_naming_path(tmp_path):
    missing = tmp_path / "nope.csv"
    with pytest.raises(FleetError, match=re.escape(f"cannot read fleet {missing}")):
        load_fleet(missing)


def test_directory_instead_of_file_refused(tmp_path):
    with pytest.raises(FleetError, match=re.escape(f"cannot read fleet {tmp_path}")):
        load_fleet(tmp_path)


def test_non_utf8_file_refused(tmp_path):
    path = tmp_path / "fleet.csv"
    path.write_bytes("vehicle_id,plate,operator_id\nJoão-1,P1,VNV\n".encode("latin-1"))
    with pytest.raises(FleetError, match=re.escape(f"cannot read fleet {path}")):
        load_fleet(path)


def test_missing_plate_column_refused_listing_required_columns(tmp_path):
    path = write(tmp_path, "vehicle_id,operator_id\nA-1,VNV\n")
    with pytest.raises(FleetError, match="vehicle_id, plate, operator_id"):
        load_fleet(path)


def test_header_only_refused(tmp_path):
    path = write(tmp_path, "vehicle_id,plate,operator_id\n")
    with pytest.raises(FleetError, match="at least one vehicle"):
        load_fleet(path)


def test_empty_file_refused(tmp_path):
    path = write(tmp_path, "")
    with pytest.raises(FleetError, match="at least one vehicle"):
        load_fleet(path)


def test_lines_column_lists_the_licensed_routes_separated_by_bars(tmp_path):
    path = write(tmp_path, "vehicle_id,plate,operator_id,capacity,lines\nA-1,P1,VNV,40, 101 | 102 \nA-2,P2,VNV,40,\n")
    fleet = load_fleet(path, operators=OPERATORS, routes={"101", "102", "103"})
    assert fleet["A-1"] == Vehicle("A-1", "P1", "VNV", 40, ("101", "102"))
    # empty: every line of its operator (the engine reads it so)
    assert fleet["A-2"].lines == ()


def test_sample_fleet_without_lines_column_licenses_every_line():
    assert all(v.lines == () for v in load_fleet(SAMPLE, operators=OPERATORS).values())


@pytest.mark.parametrize("cell, reason", [
    ("101||102", "lines must be route_ids separated by '|'"),
    ("101|", "lines must be route_ids separated by '|'"),
    ("101|101", "lines lists a route twice"),
    ("101|999", "line 999 is not a route_id of the feed"),
])
def test_bad_lines_refused_with_one_line(tmp_path, cell, reason):
    path = write(tmp_path, f"vehicle_id,plate,operator_id,lines\nA-1,P1,VNV,{cell}\n")
    with pytest.raises(FleetError, match=re.escape(f"{path}:2: {reason}")) as raised:
        load_fleet(path, operators=OPERATORS, routes={"101", "102"})
    assert "\n" not in str(raised.value)
