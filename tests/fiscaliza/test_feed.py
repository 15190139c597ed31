"""`fiscaliza feed check` as a user runs it, and the commands that refuse a feed with
errors (replay, worker, serve): one line, exit 2, never a traceback. The bad feeds are
the sample's, broken in the test's directory the way a new user's feed is."""

from __future__ import annotations

import pytest
from bad_feeds import sample_copy, with_cell, without_column
from cli_helpers import assert_bad_input, fiscaliza

from samples import joao_neiva

FEED, FLEET = joao_neiva()

BAD_FEEDS = {
    # before: a 66-line pandas traceback (KeyError: 'stop_lat'), exit 1
    "stops_without_stop_lat": (lambda d: without_column(d, "stops", "stop_lat"), "stops.txt:2: stop_without_location"),
    # before: exit 0, and both of VNV's infractions (D-13, D-22) went to no operator
    "routes_without_agency_id": (lambda d: without_column(d, "routes", "agency_id"),
                                 "routes.txt:2: missing_required_agency_id"),
    # before: accepted silently, read as 25 h 99 min
    "time_25_99_00": (lambda d: with_cell(d, "stop_times", 4, "arrival_time", "25:99:00"),
                      "stop_times.txt:4: invalid_time"),
}


def one_ping(tmp_path):
    tachograph = tmp_path / "tachograph.jsonl"
    tachograph.write_text('{"vehicle_id": "JN-1011", "ts": "2026-12-01T06:00:00-03:00", '
                          '"lat": -19.75, "lon": -40.38, "speed_kmh": 0}\n')
    return tachograph


def test_the_sample_feed_passes_with_its_warning_printed():
    result = fiscaliza("feed", "check", FEED, "--fleet", FLEET)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines == ["aviso: feed: missing_feed_contact_email_and_url: missing feed_contact_email and "
                     "feed_contact_url", f"{FEED}: 0 erro(s), 1 aviso(s): o feed pode ser usado"]


@pytest.mark.parametrize("name", BAD_FEEDS)
def test_a_bad_feed_fails_the_check_with_one_line_per_error(tmp_path, name):
    make, first = BAD_FEEDS[name]
    feed = make(tmp_path)
    result = fiscaliza("feed", "check", feed)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    errors = [line for line in result.stdout.splitlines() if line.startswith("erro: ")]
    assert f"erro: {first}" in [line[: len("erro: ") + len(first)] for line in errors]
    assert result.stdout.splitlines()[-1] == f"{feed}: {len(errors)} erro(s), 1 aviso(s)"


def test_routes_without_agency_id_are_two_errors_one_per_route(tmp_path):
    result = fiscaliza("feed", "check", without_column(tmp_path, "routes", "agency_id"))
    assert [line.split(": ")[1] for line in result.stdout.splitlines() if line.startswith("erro: ")] == [
        "routes.txt:2", "routes.txt:3"]


def test_a_fleet_whose_operator_is_no_agency_fails_the_check(tmp_path):
    fleet = tmp_path / "fleet.csv"
    fleet.write_text(FLEET.read_text() + "X-1,XYZ1A23,ACME\n")
    result = fiscaliza("feed", "check", FEED, "--fleet", fleet)
    assert result.returncode == 1, result.stderr
    assert ("erro: fleet.csv: unknown_fleet_operator: operator ACME of 1 vehicle(s) (X-1) is not an agency_id "
            "of agency.txt") in result.stdout.splitlines()


def test_feed_check_of_no_feed_is_a_bad_argument(tmp_path):
    assert_bad_input(fiscaliza("feed", "check", tmp_path / "nothing"), "no such file or directory")
    assert_bad_input(fiscaliza("feed", "check", FLEET), "neither a directory nor a .zip file")


@pytest.mark.parametrize("name", BAD_FEEDS)
def test_replay_refuses_a_bad_feed_naming_its_first_error(tmp_path, name):
    make, first = BAD_FEEDS[name]
    result = fiscaliza("replay", "--feed", make(tmp_path), "--fleet", FLEET, "--tachograph", one_ping(tmp_path),
                       "--out", tmp_path / "out")
    assert_bad_input(result, f"the first: {first}")
    assert not (tmp_path / "out").exists()


def test_worker_refuses_a_bad_feed_before_it_looks_for_a_broker(tmp_path):
    feed = without_column(tmp_path, "routes", "agency_id")
    result = fiscaliza("worker", "--feed", feed, "--fleet", FLEET,
                       env={"FISCALIZA_KAFKA_BOOTSTRAP": "127.0.0.1:1"})
    assert_bad_input(result, "routes.txt:2: missing_required_agency_id")


def test_serve_refuses_a_bad_feed(tmp_path):
    assert fiscaliza("keys", "init", "--out", tmp_path / "orgao.pem").returncode == 0
    assert fiscaliza("keys", "audit-init", "--out", tmp_path / "audit.key").returncode == 0
    feed = with_cell(tmp_path, "stop_times", 4, "arrival_time", "25:99:00")
    result = fiscaliza("serve", "--feed", feed, "--fleet", FLEET, "--db", f"sqlite:///{tmp_path / 'd.sqlite3'}",
                       "--signing-key", tmp_path / "orgao.pem", "--audit-key", tmp_path / "audit.key",
                       "--anchors", tmp_path / "a.jsonl")
    assert_bad_input(result, "stop_times.txt:4: invalid_time")


def test_replay_of_a_csv_given_as_the_tachograph_is_a_bad_argument(tmp_path):
    # before: "8 mensagens lidas, nenhuma aceita", exit 0
    result = fiscaliza("replay", "--feed", FEED, "--fleet", FLEET, "--tachograph", FLEET, "--out", tmp_path / "out")
    assert_bad_input(result, f"--tachograph {FLEET} is not JSON Lines", "none of its 8 line(s) is JSON")


def test_replay_of_a_valid_copy_of_the_sample_feed_runs(tmp_path):
    # the check refuses the bad copies above, not a copy as such
    result = fiscaliza("replay", "--feed", sample_copy(tmp_path), "--fleet", FLEET, "--tachograph", one_ping(tmp_path),
                       "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "infractions.jsonl").exists()
