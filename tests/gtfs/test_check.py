"""A feed checked before it accuses anyone (gtfs.check): the GTFS reference rules (the
gtfs-guru validator) beside this project's own needs, each bad feed made from the sample
in the test's directory; `require_valid` names the first reference error."""

import shutil
from pathlib import Path

import pytest
from bad_feeds import sample_copy, with_cell, without_column

from gtfs import FeedError
from gtfs.check import check_feed, reference_problems, require_valid
from kernel.fleet import load_fleet
from samples import canarana, conselheiro_lafaiete, joao_neiva

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("city", [joao_neiva, conselheiro_lafaiete, canarana])
def test_the_sample_feeds_have_no_error(city):
    feed, fleet = city()[:2]
    operators = {v.vehicle_id: v.operator_id for v in load_fleet(fleet).values()}
    report = check_feed(feed, operators)
    assert report.errors == ()
    # the samples publish no feed contact: a warning, which never refuses a feed
    assert [p.code for p in report.warnings] == ["missing_feed_contact_email_and_url"]
    require_valid(feed)


def test_routes_without_agency_id_among_two_agencies_are_named_once_per_route(tmp_path):
    feed = without_column(tmp_path, "routes", "agency_id")
    report = check_feed(feed)
    # the reference rules and this project's contract both find it: named once, as the reference names it
    assert [(p.code, p.file, p.row) for p in report.errors] == [
        ("missing_required_agency_id", "routes.txt", 2), ("missing_required_agency_id", "routes.txt", 3)]
    with pytest.raises(FeedError, match=r"2 error\(s\) of the GTFS reference rules .*; the first: "
                                        r"routes\.txt:2: missing_required_agency_id: "):
        require_valid(feed)


def test_a_time_of_25_99_00_is_one_error(tmp_path):
    feed = with_cell(tmp_path, "stop_times", 4, "arrival_time", "25:99:00")
    [error] = check_feed(feed).errors
    assert (error.code, error.file, error.row) == ("invalid_time", "stop_times.txt", 4)
    assert "25:99:00" in error.line()


def test_stops_without_stop_lat_are_the_missing_column_and_every_stop(tmp_path):
    feed = without_column(tmp_path, "stops", "stop_lat")
    errors = check_feed(feed).errors
    assert errors[0].line() == "stops.txt: missing_required_column: no column stop_lat"  # this project's, first
    stops = len((feed / "stops.txt").read_text().splitlines()) - 1
    assert [(p.code, p.row) for p in errors[1:]] == [("stop_without_location", row) for row in range(2, stops + 2)]


def test_a_trip_without_shape_is_an_error_the_reference_rules_allow(tmp_path):
    feed = with_cell(tmp_path, "trips", 2, "shape_id", "")
    assert [p for p in reference_problems(feed) if p.severity == "error"] == []
    [error] = check_feed(feed).errors
    assert error.code == "trip_without_shape" and "101-DU-0-0530" in error.message
    require_valid(feed)  # the reader refuses it (tests/gtfs/test_contract.py)


def test_a_fleet_operator_not_in_agency_txt_is_an_error(tmp_path):
    feed = sample_copy(tmp_path)
    [error] = check_feed(feed, {"JN-1": "VNV", "X-9": "ACME"}, "frota.csv").errors
    assert error.line() == ("frota.csv: unknown_fleet_operator: operator ACME of 1 vehicle(s) (X-9) "
                            "is not an agency_id of agency.txt")


def test_a_foreign_key_error_names_the_referencing_file_and_row():
    [error] = check_feed(FIXTURES / "unknown_stop").errors
    assert (error.code, error.file, error.row) == ("foreign_key_violation", "stop_times.txt", 3)
    assert "stop_id: " in error.message and "parentFilename stops.txt" in error.message


def test_a_path_that_is_no_feed_is_a_feed_error(tmp_path):
    with pytest.raises(FeedError, match=r"no such file or directory"):
        check_feed(tmp_path / "nothing")
    text = tmp_path / "feed.csv"
    text.write_text("a,b\n")
    with pytest.raises(FeedError, match=r"neither a directory nor a \.zip file"):
        require_valid(text)


def test_a_zip_feed_is_checked_as_its_directory(tmp_path):
    feed = without_column(tmp_path, "routes", "agency_id")
    archive = Path(shutil.make_archive(str(tmp_path / "feed"), "zip", feed))
    assert check_feed(archive) == check_feed(feed)
