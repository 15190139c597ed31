"""This project's needs of a feed (gtfs.contract): each bad feed made from the sample in
the test's directory, refused by the reader in one line naming the file, row and rule;
the full list is what `feed check` shows beside the reference rules."""

import gtfs_kit as gk
import pytest
from bad_feeds import sample_copy, with_cell, without_column

from gtfs import FeedError, load_feed
from gtfs.contract import Problem, contract_problems, fleet_problems
from samples import canarana, conselheiro_lafaiete, joao_neiva


def raw(feed):
    return gk.read_feed(feed, dist_units="m")


@pytest.mark.parametrize("city", [joao_neiva, conselheiro_lafaiete, canarana])
def test_the_sample_feeds_have_no_problem(city):
    assert contract_problems(raw(city()[0])) == []


def test_stops_without_the_stop_lat_column_are_refused_in_one_line(tmp_path):
    # before: a 66-line pandas traceback (KeyError: 'stop_lat'), exit 1
    feed = without_column(tmp_path, "stops", "stop_lat")
    with pytest.raises(FeedError, match=r"stops\.txt: missing_required_column: no column stop_lat$"):
        load_feed(feed)


def test_a_stop_with_an_empty_stop_lat_is_refused_by_its_row(tmp_path):
    feed = with_cell(tmp_path, "stops", 3, "stop_lat", "")  # row 3: stop 1002
    with pytest.raises(FeedError, match=r"stops\.txt:3: stop_without_location: stop 1002 has no stop_lat/stop_lon$"):
        load_feed(feed)


def test_routes_without_agency_id_among_two_agencies_are_refused(tmp_path):
    # before: exit 0, and route 101's infractions (VNV's D-13 and D-22) went to no operator
    feed = without_column(tmp_path, "routes", "agency_id")
    with pytest.raises(FeedError, match=r"routes\.txt:2: missing_required_agency_id: route 101 has no agency_id, "
                                        r"and agency\.txt has 2 agencies$"):
        load_feed(feed)
    assert [p.line() for p in contract_problems(raw(feed))] == [
        "routes.txt:2: missing_required_agency_id: route 101 has no agency_id, and agency.txt has 2 agencies",
        "routes.txt:3: missing_required_agency_id: route 201 has no agency_id, and agency.txt has 2 agencies"]


def test_one_route_with_an_empty_agency_id_is_named(tmp_path):
    feed = with_cell(tmp_path, "routes", 3, "agency_id", " ")
    assert [(p.code, p.row) for p in contract_problems(raw(feed))] == [("missing_required_agency_id", 3)]


def test_a_route_without_agency_id_under_one_agency_is_the_agencys(tmp_path):
    feed = sample_copy(tmp_path)
    (feed / "agency.txt").write_text((feed / "agency.txt").read_text().splitlines()[0] + "\n"
                                     + (feed / "agency.txt").read_text().splitlines()[1] + "\n")
    routes = (feed / "routes.txt").read_text().replace(",TRD,", ",,")
    (feed / "routes.txt").write_text(routes)
    assert contract_problems(raw(feed)) == []  # GTFS lets a single-agency feed omit it
    assert load_feed(feed).routes["201"].agency_id == "VNV"


def test_a_time_of_25_99_00_is_refused(tmp_path):
    # before: read silently as 25 h + 99 min
    feed = with_cell(tmp_path, "stop_times", 4, "arrival_time", "25:99:00")
    with pytest.raises(FeedError, match=r"stop_times\.txt:4: invalid_time: arrival_time '25:99:00' is not a time"):
        load_feed(feed)


@pytest.mark.parametrize("value", ["5:30:60", "05:30", "aa:30:00", "05:30:00:00", "-1:30:00"])
def test_times_that_do_not_parse_are_each_a_problem(tmp_path, value):
    feed = with_cell(tmp_path, "stop_times", 2, "departure_time", value)
    assert [(p.code, p.file, p.row) for p in contract_problems(raw(feed))] == [("invalid_time", "stop_times.txt", 2)]


@pytest.mark.parametrize("value", ["5:30:00", "05:30:00", "24:10:00", "47:59:59", " 05:30:00 "])
def test_times_past_midnight_and_with_one_hour_digit_parse(tmp_path, value):
    feed = with_cell(tmp_path, "stop_times", 2, "departure_time", value)
    assert contract_problems(raw(feed)) == []


def test_a_frequency_window_that_does_not_parse_is_a_problem(tmp_path):
    feed = with_cell(tmp_path, "frequencies", 2, "end_time", "09:00:0x")
    assert [(p.code, p.file, p.row) for p in contract_problems(raw(feed))] == [("invalid_time", "frequencies.txt", 2)]


def test_a_trip_without_shape_is_a_problem_of_this_project(tmp_path):
    feed = with_cell(tmp_path, "trips", 2, "shape_id", "")
    [problem] = contract_problems(raw(feed))
    assert problem.line() == "trips.txt: trip_without_shape: 1 trip(s) have no shape in shapes.txt: 101-DU-0-0530"


def test_fleet_operators_not_in_agency_txt_are_one_problem_each():
    problems = fleet_problems({"JN-1": "VNV", "X-1": "NOPE", "X-2": "NOPE", "Y-1": "ACME"}, {"VNV", "TRD"}, "fleet.csv")
    assert [p.line() for p in problems] == [
        "fleet.csv: unknown_fleet_operator: operator ACME of 1 vehicle(s) (Y-1) is not an agency_id of agency.txt",
        "fleet.csv: unknown_fleet_operator: operator NOPE of 2 vehicle(s) (X-1, X-2) is not an agency_id of agency.txt"]
    assert fleet_problems({"JN-1": "VNV"}, {"VNV"}, "fleet.csv") == []


def test_a_problem_without_a_row_names_its_file_and_one_without_a_file_the_feed():
    assert Problem("error", "c", "m", "trips.txt").line() == "trips.txt: c: m"
    assert Problem("warning", "c", "m").line() == "feed: c: m"
