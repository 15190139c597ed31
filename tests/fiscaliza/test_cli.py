"""The command-line contract (DESIGN.md): bad input -> exit 2 with a one-line reason;
a good replay writes DIR/trips.jsonl, infractions.jsonl and rejected.jsonl.

The CLI runs in a subprocess (`python -m fiscaliza.cli`), as a user would run it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import pytest
from cli_helpers import assert_bad_input, fiscaliza
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernel.policy import shipped_policy_path
from samples import canarana, joao_neiva

TINY = Path(__file__).parent.parent / "gtfs" / "fixtures" / "tiny"
POLICY = shipped_policy_path()
FEED, FLEET = joao_neiva()
TRIP_KEYS = {"vehicle_id", "route_id", "direction_id", "trip_id", "service_date", "departed_at", "arrived_at",
             "departure_deviation_s", "coverage"}


@pytest.fixture(scope="module")
def telemetry(tmp_path_factory) -> Path:
    """One simulated day of the sample network (seed 3)."""
    out = tmp_path_factory.mktemp("simulated")
    result = fiscaliza("simulate", "--out", out, "--start", "2026-12-01", "--seed", "3")
    assert result.returncode == 0, result.stderr
    return out


def replay_args(telemetry: Path, out: Path, **overrides) -> list:
    options = {"feed": FEED, "fleet": FLEET, "tachograph": telemetry / "tachograph.jsonl",
               "catraca": telemetry / "catraca.jsonl", "out": out, **overrides}
    args = ["replay"]
    for name, value in options.items():
        if value is not None:
            args += [f"--{name}", value]
    return args


# --- bad input ------------------------------------------------------------------------


def test_python_m_fiscaliza_cli_runs_help_exits_0():
    result = fiscaliza("replay", "--help")
    assert result.returncode == 0
    assert "--tachograph" in result.stdout


def test_replay_missing_required_option_exits_2_naming_it(telemetry, tmp_path):
    assert_bad_input(fiscaliza(*replay_args(telemetry, tmp_path / "out", tachograph=None)), "--tachograph")


def test_replay_unknown_option_exits_2(telemetry, tmp_path):
    assert_bad_input(fiscaliza(*replay_args(telemetry, tmp_path / "out"), "--bogus", "1"), "--bogus")


def test_no_arguments_exits_2_with_nonempty_reason():
    # Help goes to stdout; stderr must still be one line with an actual reason.
    assert_bad_input(fiscaliza())


def test_replay_nonexistent_feed_exits_2(telemetry, tmp_path):
    missing = tmp_path / "no-such-feed"
    assert_bad_input(fiscaliza(*replay_args(telemetry, tmp_path / "out", feed=missing)), str(missing))


def test_replay_feed_without_shapes_exits_2(telemetry, tmp_path):
    feed = tmp_path / "feed"
    shutil.copytree(TINY, feed)
    (feed / "shapes.txt").unlink()
    assert_bad_input(fiscaliza(*replay_args(telemetry, tmp_path / "out", feed=feed)), "shapes.txt")


def test_replay_nonexistent_tachograph_exits_2(telemetry, tmp_path):
    missing = tmp_path / "no-such.jsonl"
    assert_bad_input(fiscaliza(*replay_args(telemetry, tmp_path / "out", tachograph=missing)), str(missing))


def test_replay_tachograph_that_is_a_directory_exits_2(telemetry, tmp_path):
    assert_bad_input(fiscaliza(*replay_args(telemetry, tmp_path / "out", tachograph=tmp_path)), str(tmp_path))


def test_replay_nonexistent_catraca_exits_2(telemetry, tmp_path):
    missing = tmp_path / "no-such-catraca.jsonl"
    assert_bad_input(fiscaliza(*replay_args(telemetry, tmp_path / "out", catraca=missing)), str(missing))


def test_replay_fleet_missing_plate_column_exits_2(telemetry, tmp_path):
    fleet = tmp_path / "fleet.csv"
    fleet.write_text("vehicle_id,operator_id\nJN-1011,VNV\n")
    assert_bad_input(fiscaliza(*replay_args(telemetry, tmp_path / "out", fleet=fleet)), "plate")


def test_replay_fleet_operator_not_in_feed_exits_2(telemetry, tmp_path):
    fleet = tmp_path / "fleet.csv"
    fleet.write_text("vehicle_id,plate,operator_id\nJN-1011,RQB4E17,NOPE\n")
    assert_bad_input(fiscaliza(*replay_args(telemetry, tmp_path / "out", fleet=fleet)), "NOPE")


def test_replay_policy_with_unknown_key_exits_2(telemetry, tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY.read_text(encoding="utf-8").replace("match_window_s = 1800",
                                                                 "match_window_s = 1800\nmatch_windows = 1800"),
                      encoding="utf-8")
    assert_bad_input(fiscaliza(*replay_args(telemetry, tmp_path / "out", policy=policy)), "match_windows")


def test_replay_policy_not_toml_exits_2(telemetry, tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text('{"trips": {"match_window_s": 1800}}\n')
    assert_bad_input(fiscaliza(*replay_args(telemetry, tmp_path / "out", policy=policy)), "TOML")


def test_replay_nonexistent_policy_exits_2(telemetry, tmp_path):
    missing = tmp_path / "no-such.toml"
    assert_bad_input(fiscaliza(*replay_args(telemetry, tmp_path / "out", policy=missing)), str(missing))


def test_replay_policy_lacking_a_section_its_law_reads_exits_2(tmp_path):
    # Canarana's art. 10 § 5º reads [waiting_time]: refused at load, before any message
    text = shipped_policy_path("canarana").read_text(encoding="utf-8")
    start = text.index("\n[waiting_time]\n")
    policy = tmp_path / "policy.toml"
    policy.write_text(text[:start] + text[text.index("# Art. 13", start):], encoding="utf-8")
    tachograph = tmp_path / "tachograph.jsonl"
    tachograph.write_text("")
    feed, fleet = canarana()
    args = ["replay", "--feed", feed, "--fleet", fleet, "--tachograph", tachograph, "--policy", policy,
            "--out", tmp_path / "out"]
    assert_bad_input(fiscaliza(*args), "art. 10 § 5º", "[waiting_time]")


def test_replay_out_is_an_existing_file_exits_2(telemetry, tmp_path):
    out = tmp_path / "out"
    out.write_text("not a directory\n")
    assert_bad_input(fiscaliza(*replay_args(telemetry, out)), str(out))


def test_simulate_bad_start_date_exits_2(tmp_path):
    assert_bad_input(fiscaliza("simulate", "--out", tmp_path / "sim", "--start", "2026-13-01"), "--start")


def test_simulate_unknown_fault_exits_2(tmp_path):
    assert_bad_input(fiscaliza("simulate", "--out", tmp_path / "sim", "--start", "2026-12-01",
                               "--fault", "teleport"), "teleport")


def test_simulate_unmarked_stop_needs_the_door_sensors(tmp_path):
    """Refused without --doors (a fault nothing could tell); with them, every ping reports the doors."""
    args = ("simulate", "--out", tmp_path / "sim", "--start", "2026-12-01", "--fault", "unmarked_stop")
    assert_bad_input(fiscaliza(*args), "unmarked_stop need the door sensors", "--doors")
    result = fiscaliza(*args, "--doors")
    assert result.returncode == 0, result.stderr
    pings = [json.loads(line) for line in (tmp_path / "sim" / "tachograph.jsonl").read_text().splitlines()]
    assert {type(p["doors_open"]) for p in pings} == {bool}
    manifest = json.loads((tmp_path / "sim" / "manifest.json").read_text())
    assert manifest["doors"] is True and [f["fault"] for f in manifest["faults"]] == ["unmarked_stop"]


def test_simulate_end_before_start_exits_2(tmp_path):
    # before: a SimulationError traceback, exit 1
    assert_bad_input(fiscaliza("simulate", "--out", tmp_path / "sim", "--start", "2026-12-05", "--end", "2026-12-01"),
                     "--end 2026-12-01 is before --start 2026-12-05")


def test_simulate_and_demo_on_a_day_without_service_exit_2(tmp_path):
    assert_bad_input(fiscaliza("simulate", "--out", tmp_path / "sim", "--start", "2026-12-06"), "no service")
    assert_bad_input(fiscaliza("demo", "--out", tmp_path / "demo", "--date", "2026-12-06"),
                     "--date 2026-12-06", "no service")


def test_empty_or_all_rejected_input_says_there_was_no_data(tmp_path):
    # before: exit 0 with "Infrações: nenhuma", which reads as a clean day
    empty, garbage = tmp_path / "empty.jsonl", tmp_path / "garbage.jsonl"
    empty.write_text("")
    garbage.write_text('not json\n{"vehicle_id": "JN-1011"}\n')
    for tachograph, read in ((empty, 0), (garbage, 2)):
        result = fiscaliza("replay", "--feed", FEED, "--fleet", FLEET, "--tachograph", tachograph,
                           "--out", tmp_path / tachograph.stem)
        assert result.returncode == 0, result.stderr
        assert result.stderr.strip() == f"fiscaliza: aviso: sem dados: {read} mensagens lidas, nenhuma aceita"
        said = " ".join(result.stdout.split())
        assert "SEM DADOS" in said and "Infrações: nenhuma" not in said


def test_a_file_of_nul_bytes_is_one_bounded_rejection_and_exit_0(tmp_path):
    # before: 512 MiB of NULs took 3.8 GB of memory and wrote a 3.2 GB rejected.jsonl;
    # 2 GiB killed the replay (SIGSEGV). Not telemetry, but a file of the input: recorded
    # as rejected, exit 0, as any bad line (README)
    zeros = tmp_path / "zeros.jsonl"
    zeros.write_bytes(bytes(4 * 1024 * 1024))
    result = fiscaliza("replay", "--feed", FEED, "--fleet", FLEET, "--tachograph", zeros, "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stderr.strip() == "fiscaliza: aviso: sem dados: 1 mensagens lidas, nenhuma aceita"
    assert "rejeitadas: 1 (longa demais: 1)" in " ".join(result.stdout.split())
    [line] = (tmp_path / "out" / "rejected.jsonl").read_text().splitlines()
    rejection = json.loads(line)
    assert (rejection["reason"], rejection["location"], rejection["raw_length"]) == ("too_long", "zeros.jsonl:1",
                                                                                     4 * 1024 * 1024)
    assert len(line) < 8 * 1024  # 1 KiB of NULs, each written as \u0000


def test_serve_on_a_url_that_is_no_database_exits_2(tmp_path):
    # before: a NoSuchModuleError traceback, exit 1 (with every key in place)
    assert fiscaliza("keys", "init", "--out", tmp_path / "orgao.pem").returncode == 0
    assert fiscaliza("keys", "audit-init", "--out", tmp_path / "audit.key").returncode == 0
    assert_bad_input(fiscaliza("serve", "--db", "notaurl://", "--signing-key", tmp_path / "orgao.pem",
                               "--audit-key", tmp_path / "audit.key", "--anchors", tmp_path / "a.jsonl"),
                     "cannot open the docket store notaurl://")


@pytest.mark.parametrize("args", [
    ["simulate", "--start", "2026-12-01", "--end", "2026-11-30"],
    ["simulate", "--start", "2026-12-01", "--ping-interval", "0"],
    ["simulate", "--start", "2026-12-01", "--gps-noise", "-1"],
    ["simulate", "--start", "2026-12-01", "--input-fault", "teleport"],
    ["simulate", "--start", "1-1-1"],
    ["simulate", "--start", "2026-12-01", "--feed", "/nonexistent"],
    ["simulate", "--start", "2026-12-01", "--fleet", "/nonexistent.csv"],
    ["demo", "--date", "2026-02-30"],
    ["demo", "--date", "1999-12-01"],
    ["demo", "--city", "nowhere"],
    ["demo", "--city", "../joao-neiva"],
    ["verify", "/nonexistent.zip"],
    ["audit", "verify", "--db", "sqlite:////nonexistent/dir/x.sqlite3", "--audit-key", "/nonexistent.key"],
    ["ops", "sink", "--feed", "/nonexistent"],
    ["keys", "audit-init"],
    ["serve", "--db", "notaurl://"],
])
def test_every_bad_argument_is_one_line_and_exit_2(tmp_path, args):
    assert_bad_input(fiscaliza(*args, "--out", tmp_path / "o") if args[0] in ("simulate", "demo")
                     else fiscaliza(*args, cwd=tmp_path))


# --- good replay ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def replayed(telemetry, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("replay") / "nested" / "deeper" / "out"
    assert not out.parent.parent.exists()
    result = fiscaliza(*replay_args(telemetry, out))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return out


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_good_replay_creates_nested_dir_with_the_contract_outputs(replayed):
    # the three files of the contract, plus the insufficient-evidence records, the
    # vehicles' live status and the operators' art. 45 months
    assert sorted(p.name for p in replayed.iterdir()) == [
        "infractions.jsonl", "insufficient_evidence.jsonl", "month_efficiency.jsonl", "rejected.jsonl",
        "trips.jsonl", "vehicle_status.jsonl"]
    for name in ("infractions.jsonl", "rejected.jsonl", "insufficient_evidence.jsonl"):
        assert isinstance(read_jsonl(replayed / name), list)  # every line is JSON


def test_good_replay_trips_have_exactly_contract_keys(replayed):
    trips = read_jsonl(replayed / "trips.jsonl")
    assert trips, "the simulated day realizes trips"
    assert [set(t) for t in trips if set(t) != TRIP_KEYS] == []


def test_good_replay_trip_dates_and_times_are_iso_with_offset(replayed):
    offset = re.compile(r".*T\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:\d{2}|Z)")
    for trip in read_jsonl(replayed / "trips.jsonl"):
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", trip["service_date"])
        assert dt.date.fromisoformat(trip["service_date"]) == dt.date(2026, 12, 1)  # one simulated day
        for key in ("departed_at", "arrived_at"):
            assert offset.fullmatch(trip[key]), trip[key]
            assert dt.datetime.fromisoformat(trip[key]).utcoffset() == dt.timedelta(hours=-3)  # São Paulo
        assert trip["departed_at"] < trip["arrived_at"]


def test_good_replay_timetabled_trips_carry_deviation_headway_trips_do_not(replayed):
    # Sample feed: route 101 is timetabled; route 201 runs on frequencies.txt (exact_times=0).
    trips = read_jsonl(replayed / "trips.jsonl")
    timetabled = [t for t in trips if t["route_id"] == "101"]
    headway = [t for t in trips if t["route_id"] == "201"]
    assert timetabled and headway
    assert all((t["trip_id"] is None) == (t["departure_deviation_s"] is None) for t in timetabled)
    assert all(t["departure_deviation_s"] is None for t in headway)
    assert all(0.8 <= t["coverage"] <= 1.0 for t in trips)  # realized: coverage >= min_coverage 0.80


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=st.sampled_from(["2026-12-01", "2026-12-06", "2026-13-01", "hoje", ""]),
       end=st.sampled_from([None, "2026-12-01", "2026-11-30", "x"]),
       ping=st.sampled_from(["10", "0", "-3", "abc"]),
       fault=st.sampled_from([None, "detour", "teleport", ""]))
def test_simulate_never_tracebacks_whatever_the_arguments(tmp_path, start, end, ping, fault):
    args = ["simulate", "--out", tmp_path / "sim", "--start", start, "--ping-interval", ping]
    args += ["--end", end] if end is not None else []
    args += ["--fault", fault] if fault is not None else []
    result = fiscaliza(*args)
    assert "Traceback" not in result.stdout + result.stderr
    if result.returncode != 0:
        assert_bad_input(result)
