"""`fiscaliza ingest gtfs-rt`: the Metro Transit snapshot (../shared/realdata), snapshots the
tests make (no timestamp, no trip, repeated across snapshots), and a feed polled over HTTP
that fails and recovers."""

import json
from pathlib import Path

import numpy
import pytest
from cli_helpers import assert_bad_input, fiscaliza
from feed_server import ScriptedFeed, serving
from google.transit import gtfs_realtime_pb2

from ingest.fixes import FleetIndex
from ingest.gtfs_rt import decode_snapshot
from ingest.run import Ingest, backoff_s, poll
from ingest.sinks import FileSink
from kernel.fleet import Vehicle

METRO = Path(__file__).resolve().parents[3] / "shared" / "realdata" / "metrotransit-gtfs-rt-2019-05-01"
HEADER_TS = 1_772_452_800  # 2026-03-02 12:00:00 UTC


def entity(feed, ident, vehicle_id="", label="", plate="", lat=-19.74, lon=-40.38, ts=None, speed=None, route=None):
    e = feed.entity.add()
    e.id = ident
    v = e.vehicle
    if vehicle_id or label or plate:
        v.vehicle.id, v.vehicle.label, v.vehicle.license_plate = vehicle_id, label, plate
    if lat is not None:
        v.position.latitude, v.position.longitude = lat, lon
        if speed is not None:
            v.position.speed = speed
    if ts is not None:
        v.timestamp = ts
    if route is not None:
        v.trip.route_id = route
    return e


def snapshot(header_ts=HEADER_TS, build=lambda feed: None) -> bytes:
    feed = gtfs_realtime_pb2.FeedMessage()
    feed.header.gtfs_realtime_version = "2.0"
    feed.header.timestamp = header_ts
    build(feed)
    return feed.SerializeToString()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture()
def fleet(tmp_path):
    path = tmp_path / "fleet.csv"
    path.write_text("vehicle_id,plate,operator_id\n101,ABC1D23,OP\n102,XYZ9876,OP\n")
    return path


# --- the real snapshot ----------------------------------------------------------------

@pytest.mark.realdata
def test_the_metro_transit_snapshot_is_every_entity_accounted_for(tmp_path):
    pb = METRO / "vehicle-positions.pb"
    feed = gtfs_realtime_pb2.FeedMessage()
    feed.ParseFromString(pb.read_bytes())
    ids = [e.vehicle.vehicle.id for e in feed.entity]
    assert len(ids) == 11
    # one bus left out of the fleet: it must come back as a rejection, not vanish
    (tmp_path / "fleet.csv").write_text("vehicle_id,plate,operator_id\n" + "".join(f"{v},,0\n" for v in ids[1:]))
    result = fiscaliza("ingest", "gtfs-rt", "--file", pb, "--fleet", tmp_path / "fleet.csv",
                       "--out", tmp_path / "t.jsonl")
    assert result.returncode == 0, result.stderr
    sent, rejected = read_jsonl(tmp_path / "t.jsonl"), read_jsonl(tmp_path / "rejected.jsonl")
    assert (len(sent), len(rejected)) == (10, 1)
    assert rejected[0]["reason"] == "unknown_vehicle" and rejected[0]["location"] == f"vehicle-positions.pb#{ids[0]}"
    by_vehicle = {m["vehicle_id"]: m for m in sent}
    for e in feed.entity[1:]:
        message = by_vehicle[e.vehicle.vehicle.id]
        assert message["ts"] == f"2019-05-01T{(e.vehicle.timestamp - 1556668800) // 3600:02d}:" \
            f"{(e.vehicle.timestamp // 60) % 60:02d}:{e.vehicle.timestamp % 60:02d}+00:00"
        # the same float32 as on the wire, written as its shortest decimal
        assert numpy.float32(message["lat"]) == numpy.float32(e.vehicle.position.latitude)
        assert numpy.float32(message["lon"]) == numpy.float32(e.vehicle.position.longitude)
        # the feed gives no speed: the first fix of each bus has nothing to derive from
        assert (message["route_id"], message["speed_kmh"], message["speed_source"]) == ("2-110", 0.0, "derived")
        assert "ts_source" not in message  # every entity has its own timestamp
    assert ": 10; repetidas (já enviadas): 0; rejeitadas: 1 (veículo fora da frota: 1)" in result.stdout


@pytest.mark.realdata
def test_the_metro_transit_messages_replay_against_its_gtfs_without_a_rejection(tmp_path):
    feed = gtfs_realtime_pb2.FeedMessage()
    feed.ParseFromString((METRO / "vehicle-positions.pb").read_bytes())
    (tmp_path / "fleet.csv").write_text("vehicle_id,plate,operator_id\n"
                                        + "".join(f"{e.vehicle.vehicle.id},,0\n" for e in feed.entity))
    assert fiscaliza("ingest", "gtfs-rt", "--file", METRO / "vehicle-positions.pb", "--fleet", tmp_path / "fleet.csv",
                     "--out", tmp_path / "in" / "t.jsonl").returncode == 0
    replayed = fiscaliza("replay", "--feed", METRO / "gtfs.zip", "--fleet", tmp_path / "fleet.csv",
                         "--tachograph", tmp_path / "in" / "t.jsonl", "--out", tmp_path / "out")
    assert replayed.returncode == 0, replayed.stderr
    assert "Mensagens lidas: 11; rejeitadas: 0" in replayed.stdout
    assert (tmp_path / "out" / "rejected.jsonl").read_text() == ""


# --- snapshots the tests make ---------------------------------------------------------

def two_snapshots(directory: Path) -> None:
    directory.mkdir()

    def first(feed):
        entity(feed, "a", vehicle_id="101", ts=HEADER_TS - 20, speed=10.0, route="R1")  # 10 m/s = 36 km/h
        entity(feed, "b", label="XYZ-9876")  # no timestamp, no trip: found by its plate-like label
        entity(feed, "c", vehicle_id="777", ts=HEADER_TS - 5)  # not in the fleet
        entity(feed, "d", vehicle_id="101", lat=None, ts=HEADER_TS - 1)  # no position
        entity(feed, "e")  # no vehicle at all

    def second(feed):
        entity(feed, "a", vehicle_id="101", ts=HEADER_TS - 20, speed=10.0, route="R1")  # repeated
        # 0.001° of latitude (111.2 m) in 30 s: 13.3 km/h derived
        entity(feed, "b", plate="xyz9876", lat=-19.739, ts=HEADER_TS + 30)
        alert = feed.entity.add()
        alert.id = "alert"
        alert.alert.header_text.translation.add().text = "não é posição"

    (directory / "2026-03-02T12-00-00.pb").write_bytes(snapshot(HEADER_TS, first))
    (directory / "2026-03-02T12-00-30.pb").write_bytes(snapshot(HEADER_TS + 30, second))
    (directory / "2026-03-02T12-01-00.pb").write_bytes(b"<html>502 Bad Gateway</html>")  # an archive's garbage


def test_snapshots_of_a_folder_in_name_order_each_position_sent_once(tmp_path, fleet):
    two_snapshots(tmp_path / "snaps")
    result = fiscaliza("ingest", "gtfs-rt", "--dir", tmp_path / "snaps", "--fleet", fleet,
                       "--out", tmp_path / "t.jsonl")
    assert result.returncode == 0, result.stderr
    assert "2026-03-02T12-01-00.pb is not a GTFS-Realtime FeedMessage" in result.stderr
    sent = read_jsonl(tmp_path / "t.jsonl")
    assert sent[0] == {"vehicle_id": "101", "ts": "2026-03-02T11:59:40+00:00", "lat": -19.74, "lon": -40.38,
                       "speed_kmh": 36.0, "speed_source": "reported", "route_id": "R1"}
    assert sent[1] == {"vehicle_id": "102", "ts": "2026-03-02T12:00:00+00:00", "lat": -19.74, "lon": -40.38,
                       "speed_kmh": 0.0, "speed_source": "derived", "ts_source": "feed_header"}
    assert sent[2]["vehicle_id"] == "102" and sent[2]["ts"] == "2026-03-02T12:00:30+00:00"
    assert sent[2]["speed_kmh"] == pytest.approx(111.2 / 30 * 3.6, abs=0.1) and "ts_source" not in sent[2]
    assert len(sent) == 3
    reasons = {(r["location"], r["reason"]) for r in read_jsonl(tmp_path / "rejected.jsonl")}
    assert reasons == {("2026-03-02T12-00-00.pb#c", "unknown_vehicle"), ("2026-03-02T12-00-00.pb#d", "no_position"),
                       ("2026-03-02T12-00-00.pb#e", "no_vehicle")}
    assert (": 3; repetidas (já enviadas): 1; rejeitadas: 3 (sem posição: 1, sem veículo: 1, "
            "veículo fora da frota: 1)") in result.stdout


def test_a_single_file_that_is_not_gtfs_realtime_is_one_line_and_exit_2(tmp_path, fleet):
    (tmp_path / "x.pb").write_text("not protobuf at all")
    assert_bad_input(fiscaliza("ingest", "gtfs-rt", "--file", tmp_path / "x.pb", "--fleet", fleet,
                               "--out", tmp_path / "t.jsonl"), "x.pb is not a GTFS-Realtime FeedMessage")


@pytest.mark.parametrize(("args", "needle"), [
    (["--out", "t.jsonl"], "give one source"),
    (["--file", "a.pb", "--dir", ".", "--out", "t.jsonl"], "give one source"),
    (["--url", "ftp://x", "--out", "t.jsonl"], "--url must be an http"),
    (["--url", "http://127.0.0.1:9", "--interval", "0", "--out", "t.jsonl"], "--interval must be positive"),
    (["--dir", "nowhere", "--out", "t.jsonl"], "is not a folder"),
    (["--file", "a.pb"], "give either --out"),
    (["--file", "missing.pb", "--out", "t.jsonl"], "cannot read missing.pb"),
])
def test_bad_arguments_are_one_line_and_exit_2(tmp_path, fleet, args, needle):
    assert_bad_input(fiscaliza("ingest", "gtfs-rt", *args, "--fleet", fleet, cwd=tmp_path), needle)


def test_an_unreadable_fleet_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "a.pb").write_bytes(snapshot())
    assert_bad_input(fiscaliza("ingest", "gtfs-rt", "--file", tmp_path / "a.pb", "--fleet", tmp_path / "none.csv",
                               "--out", tmp_path / "t.jsonl"), "cannot read fleet")


# --- polling a feed that fails and recovers -------------------------------------------

class Feed(ScriptedFeed):
    script: list[tuple[int, bytes]] = []
    served: list[int] = []


@pytest.fixture()
def feed_server():
    with serving(Feed) as server:
        yield server


def one_bus(ts):
    return lambda feed: entity(feed, "a", vehicle_id="101", ts=ts, speed=5.0)


def test_polling_survives_a_feed_down_then_garbage_and_loses_nothing(tmp_path, fleet, feed_server):
    Feed.served = []
    Feed.script = [(200, snapshot(HEADER_TS, one_bus(HEADER_TS))),
                   (503, b"Service Unavailable"),
                   (200, b"<html>maintenance</html>"),
                   (200, snapshot(HEADER_TS + 15, one_bus(HEADER_TS))),  # the same position again
                   (200, snapshot(HEADER_TS + 30, one_bus(HEADER_TS + 30)))]
    url = f"http://127.0.0.1:{feed_server.server_port}/vehicle-positions.pb"
    result = fiscaliza("ingest", "gtfs-rt", "--url", url, "--interval", "0.05", "--max-polls", "5",
                       "--fleet", fleet, "--out", tmp_path / "t.jsonl")
    assert result.returncode == 0, result.stderr
    assert Feed.served == [200, 503, 200, 200, 200]
    failures = [line for line in result.stderr.splitlines() if "falha ao ler" in line]
    assert len(failures) == 2, result.stderr  # one line per failure
    assert "HTTP 503" in failures[0] and "1ª seguida, nova tentativa em 0.1 s" in failures[0]
    assert "não é GTFS-Realtime" in failures[1] and "2ª seguida, nova tentativa em 0.2 s" in failures[1]
    assert "respondeu de novo após 2 falha(s)" in result.stderr
    assert [m["ts"] for m in read_jsonl(tmp_path / "t.jsonl")] == ["2026-03-02T12:00:00+00:00",
                                                                    "2026-03-02T12:00:30+00:00"]

    # a capture started again continues its file and never sends again what it holds
    Feed.served = []
    Feed.script = [(200, snapshot(HEADER_TS + 30, one_bus(HEADER_TS + 30))),
                   (200, snapshot(HEADER_TS + 45, one_bus(HEADER_TS + 45)))]
    again = fiscaliza("ingest", "gtfs-rt", "--url", url, "--interval", "0.05", "--max-polls", "2",
                      "--fleet", fleet, "--out", tmp_path / "t.jsonl")
    assert again.returncode == 0, again.stderr
    assert [m["ts"][11:19] for m in read_jsonl(tmp_path / "t.jsonl")] == ["12:00:00", "12:00:30", "12:00:45"]


def test_a_feed_that_is_not_there_costs_a_line_per_try_and_the_wait_grows(tmp_path):
    waits, lines = [], []
    fleet = FleetIndex.of({"101": Vehicle("101", "", "OP")})
    sink = FileSink(tmp_path / "t.jsonl")
    poll("http://127.0.0.1:9/vp.pb", 15.0, Ingest(fleet, sink), lines.append, max_polls=4, sleep=waits.append)
    sink.close()
    assert len(lines) == 4 and all("sem conexão" in line for line in lines)
    assert waits == [30.0, 60.0, 120.0]  # no wait after the last poll
    assert (backoff_s(15.0, 5), backoff_s(15.0, 9), backoff_s(600.0, 3)) == (300.0, 300.0, 600.0)


def test_decoding_keeps_every_vehicle_position_and_counts_the_rest():
    def build(feed):
        entity(feed, "a", vehicle_id="101", ts=HEADER_TS)
        feed.entity.add(id="t").trip_update.trip.trip_id = "T1"

    decoded = decode_snapshot(snapshot(HEADER_TS, build), "s.pb")
    assert ([f.location for f in decoded.fixes], decoded.skipped) == (["s.pb#a"], 1)
    assert decoded.header_ts.timestamp() == HEADER_TS
