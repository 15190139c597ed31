"""README's "Your city's data" does what it says: its capture-and-replay commands run as
written on the Metro Transit snapshot served from 127.0.0.1, its worker commands name only
options and settings that exist, and its example mapping loads."""

import functools
import re
import shlex
from pathlib import Path

import pytest
from cli_helpers import fiscaliza
from feed_server import ScriptedFeed, serving
from google.transit import gtfs_realtime_pb2

from ingest.avl import load_mapping, read_records
from kernel.settings import VARIABLES

ROOT = Path(__file__).resolve().parents[2]
METRO = ROOT.parent / "shared" / "realdata" / "metrotransit-gtfs-rt-2019-05-01"
README_URL = "https://city.example/gtfs-rt/vehicle-positions.pb"


def section_blocks(language: str) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Your city's data\n", 1)[1].split("\n## ", 1)[0]
    return [re.sub(r"^ {2}", "", block, flags=re.M)
            for block in re.findall(rf"^ *```{language}\n(.*?)^ *```", section, flags=re.S | re.M)]


def commands(block: str) -> list[tuple[dict[str, str], list[str]]]:
    """(environment, fiscaliza arguments) of each command line of a block."""
    found = []
    for line in block.splitlines():
        words = shlex.split(line.split(" #")[0].removesuffix("&"))
        env = dict(w.split("=", 1) for w in words if re.fullmatch(r"[A-Z_]+=.*", w))
        args = [w for w in words if not re.fullmatch(r"[A-Z_]+=.*", w)]
        assert args[0] == "fiscaliza", line
        found.append((env, args[1:]))
    return found


def test_the_section_has_a_three_command_worker_block_a_capture_and_replay_and_a_mapping():
    worker, capture = (commands(b) for b in section_blocks("sh"))
    assert [args[:2] for _, args in worker] == [["topics", "create"], ["worker", "--feed"], ["ingest", "gtfs-rt"]]
    assert [args[:1] for _, args in capture] == [["ingest"], ["replay"]]
    assert len(section_blocks("toml")) == 1


@pytest.fixture()
def metro_feed():
    class Snapshot(ScriptedFeed):
        script = [(200, (METRO / "vehicle-positions.pb").read_bytes())]
        served: list[int] = []

    with serving(Snapshot) as server:
        yield f"http://127.0.0.1:{server.server_port}/vehicle-positions.pb"


@pytest.mark.realdata
def test_the_capture_and_replay_commands_run_as_written(tmp_path, metro_feed):
    feed = gtfs_realtime_pb2.FeedMessage()
    feed.ParseFromString((METRO / "vehicle-positions.pb").read_bytes())
    (tmp_path / "fleet.csv").write_text("vehicle_id,plate,operator_id\n"
                                        + "".join(f"{e.vehicle.vehicle.id},,0\n" for e in feed.entity))
    (tmp_path / "city-gtfs.zip").symlink_to(METRO / "gtfs.zip")
    _, capture = section_blocks("sh")
    (_, ingest), (_, replay) = commands(capture)
    # the README's capture runs until Ctrl-C: here, two polls 0.1 s apart
    ingest = [metro_feed if word == README_URL else word for word in ingest] + ["--max-polls", "2", "--interval", "0.1"]
    captured = fiscaliza(*ingest, cwd=tmp_path)
    assert captured.returncode == 0, captured.stderr
    assert ": 11; repetidas (já enviadas): 11; rejeitadas: 0 (nenhuma)" in captured.stdout
    replayed = fiscaliza(*replay, cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    assert "Mensagens lidas: 11; rejeitadas: 0" in replayed.stdout
    assert (tmp_path / "replay" / "trips.jsonl").exists()


@functools.cache
def help_of(*command: str) -> str:
    result = fiscaliza(*command, "--help", env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_worker_commands_name_only_options_and_settings_that_exist():
    worker, _ = (commands(b) for b in section_blocks("sh"))
    settings = {variable.name for variable in VARIABLES}
    for env, args in worker:
        assert set(env) <= settings
        command = [a for a in args if not a.startswith("-")][:2] if args[0] in ("topics", "ingest") else args[:1]
        for option in (a for a in args if a.startswith("--")):
            assert option in help_of(*command), (command, option)


def test_the_example_mapping_loads_and_reads_an_export(tmp_path):
    (mapping_text,) = section_blocks("toml")
    (tmp_path / "mapping.toml").write_text(mapping_text)
    mapping = load_mapping(tmp_path / "mapping.toml")
    (tmp_path / "avl.csv").write_text("prefixo;placa;quando;lat;lon;vel;linha;recebido\n"
                                      "101;;02/10/2015 06:00:03;-23.4873;-46.735867;10;8002-10;02/10/2015 06:00:04\n")
    (fix,) = read_records(tmp_path / "avl.csv", mapping)
    assert (fix.vehicle_keys, fix.ts.isoformat(), fix.speed_kmh, fix.route_id, fix.received_at.isoformat()) == (
        ("101",), "2015-10-02T06:00:03-03:00", 36.0, "8002-10", "2015-10-02T06:00:04-03:00")
