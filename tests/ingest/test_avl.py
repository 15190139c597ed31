"""`fiscaliza ingest avl`: the São Paulo AVL file (../shared/realdata) through the shipped
mapping and replay, an Olho Vivo /Posicao response the test writes, a CSV export of our own
mapping, and what a mapping or an export can get wrong."""

import csv
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from cli_helpers import assert_bad_input, fiscaliza
from sptrans import REALDATA

from fiscaliza.replay import ReplayInputs, replay
from ingest.avl import TimeTable, load_mapping, parse_time, shipped_mappings, to_fix
from telemetry.validation import INVALID_TIMESTAMP, TIMESTAMP_WITHOUT_OFFSET

BRT = timezone(timedelta(hours=-3))


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture()
def fleet(tmp_path):
    path = tmp_path / "fleet.csv"
    path.write_text("vehicle_id,plate,operator_id\n101,ABC1D23,OP\n102,XYZ9876,OP\n11433,,SPTRANS\n11434,,SPTRANS\n")
    return path


# --- the time column ----------------------------------------------------------------------

@pytest.mark.parametrize(("value", "rule", "expected"), [
    ("2026-03-02T12:00:00-03:00", TimeTable(), datetime(2026, 3, 2, 15, tzinfo=timezone.utc)),
    ("2017-05-12T22:57:02Z", TimeTable(zone="America/Sao_Paulo"), datetime(2017, 5, 12, 22, 57, 2, tzinfo=timezone.utc)),
    # no offset: the mapping's zone; São Paulo was at UTC-3 on 2015-10-02 (DST began on the 18th)
    ("2015-10-02 06:00:03.000", TimeTable("%Y-%m-%d %H:%M:%S.%f", "America/Sao_Paulo"),
     datetime(2015, 10, 2, 9, 0, 3, tzinfo=timezone.utc)),
    # ... and UTC-2 once DST began
    ("2015-10-19 06:00:03.000", TimeTable("%Y-%m-%d %H:%M:%S.%f", "America/Sao_Paulo"),
     datetime(2015, 10, 19, 8, 0, 3, tzinfo=timezone.utc)),
    ("1772452800", TimeTable("epoch"), datetime(2026, 3, 2, 12, tzinfo=timezone.utc)),
    (1772452800500, TimeTable("epoch_ms"), datetime(2026, 3, 2, 12, 0, 0, 500_000, tzinfo=timezone.utc)),
    ("02/03/2026 09:00", TimeTable("%d/%m/%Y %H:%M"), TIMESTAMP_WITHOUT_OFFSET),
    ("ontem", TimeTable(zone="America/Sao_Paulo"), INVALID_TIMESTAMP),
    ("12:00", TimeTable("epoch"), INVALID_TIMESTAMP),
])
def test_a_time_is_read_in_the_mappings_format_and_zone(value, rule, expected):
    assert parse_time(value, rule) == expected


def test_the_shipped_mappings_load_by_name():
    assert set(shipped_mappings()) == {"sptrans-avl", "sptrans-olho-vivo-posicao"}
    for name in shipped_mappings():
        assert load_mapping(Path(name)).fields.time


# --- the São Paulo AVL file ---------------------------------------------------------------

@pytest.fixture(scope="module")
def ingested_sptrans(sptrans_files, tmp_path_factory):
    """(stdout, messages, rejections, ReplayInputs) of the SPTrans day through the shipped mapping."""
    root, _, inputs = sptrans_files
    out = tmp_path_factory.mktemp("ingested") / "tachograph.jsonl"
    result = fiscaliza("ingest", "avl", "--mapping", "sptrans-avl", REALDATA / "day_15102_line_34020.csv",
                       "--fleet", inputs.fleet, "--out", out)
    assert result.returncode == 0, result.stderr
    return (result.stdout, read_jsonl(out), read_jsonl(out.parent / "rejected.jsonl"),
            ReplayInputs(feed=inputs.feed, fleet=inputs.fleet, tachograph=out))


@pytest.mark.realdata
def test_the_sptrans_file_is_each_vehicle_and_time_once_every_row_accounted_for(ingested_sptrans):
    stdout, sent, rejected, _ = ingested_sptrans
    with open(REALDATA / "day_15102_line_34020.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    positions: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for row in rows:
        positions.setdefault((row[5], row[1]), set()).add((row[3], row[4]))
    # 3129 rows; 3028 (vehicle, dt_avl) pairs; 4 pairs come with a second position
    assert (len(rows), len(positions), sum(len(p) > 1 for p in positions.values())) == (3129, 3028, 4)
    assert len(sent) == len({(m["vehicle_id"], m["ts"]) for m in sent}) == 3028
    assert [r["reason"] for r in rejected] == ["conflicting_duplicate"] * 4
    assert ": 3028; repetidas (já enviadas): 97; rejeitadas: 4 (duplicada com conteúdo diferente: 4)" in stdout
    # local times without an offset, read at UTC-3; no speed column: derived, in time order per
    # vehicle; dt_server, the AVL server's receipt, as received_at
    first = min((m for m in sent if m["vehicle_id"] == "34411"), key=lambda m: m["ts"])
    assert first == {"vehicle_id": "34411", "ts": "2015-10-02T06:00:03-03:00", "lat": -23.4873, "lon": -46.735867,
                     "speed_kmh": 0.0, "speed_source": "derived", "received_at": "2015-10-02T06:00:03.883000-03:00"}
    assert {m["speed_source"] for m in sent} == {"derived"}
    assert all(m["ts"].endswith("-03:00") and m["received_at"].endswith("-03:00") for m in sent)


@pytest.mark.realdata
def test_the_sptrans_file_through_ingest_and_replay_gives_the_hand_conversions_trips_or_more(
        sptrans_files, ingested_sptrans):
    *_, hand_inputs = sptrans_files
    *_, ingested_inputs = ingested_sptrans
    by_hand, ingested = replay(hand_inputs), replay(ingested_inputs)

    def key(trip):
        return trip.vehicle_id, trip.route_id, trip.direction_id, trip.trip_id, trip.departed_at, trip.arrived_at

    assert len(by_hand.trips) == 15  # 11 before zones passed between two fixes were read (#29 item 5)
    assert {key(t) for t in by_hand.trips} <= {key(t) for t in ingested.trips}
    # derived speeds accuse no one the hand conversion (speed 0) did not
    assert sorted(i.code for i in ingested.infractions) == sorted(i.code for i in by_hand.infractions)
    # the repeats never reach the replay: ingest sent each (vehicle, time) once; the units'
    # clocks, checked against dt_server (received_at, at most 801 s behind), show no fault
    reasons = {r.reason for r in ingested.rejected}
    assert not reasons & {"duplicate", "conflicting_duplicate", "clock_offset", "future"}, reasons


# --- the Olho Vivo API's /Posicao ---------------------------------------------------------

POSICAO = {
    "hr": "19:57",
    "l": [
        {"c": "8000-10", "cl": 1273, "sl": 1, "lt0": "PÇA. RAMOS DE AZEVEDO", "lt1": "TERMINAL LAPA", "qv": 3, "vs": [
            {"p": 11433, "a": False, "ta": "2017-05-12T22:57:02Z", "py": -23.540150375, "px": -46.64414075},
            {"p": 99999, "a": True, "ta": "2017-05-12T22:57:10Z", "py": -23.54, "px": -46.64},  # not in the fleet
            {"p": 11434, "a": True, "ta": "2017-05-12T22:56:40Z", "px": -46.65},  # no latitude
        ]},
        {"c": "8000-10", "cl": 34041, "sl": 2, "lt0": "PÇA. RAMOS DE AZEVEDO", "lt1": "TERMINAL LAPA", "qv": 2, "vs": [
            {"p": 11434, "a": True, "ta": "2017-05-12T19:56:00", "py": -23.527, "px": -46.678},  # local time
            {"p": 11434, "a": True, "ta": "ontem", "py": -23.527, "px": -46.678},
        ]},
        {"c": "6262-10", "cl": 609, "sl": 1, "qv": 0, "vs": []},
    ],
}


def test_an_olho_vivo_posicao_response_is_each_vehicle_sent_or_rejected_with_its_reason(tmp_path, fleet):
    source = tmp_path / "posicao.json"
    source.write_text(json.dumps(POSICAO, ensure_ascii=False))
    result = fiscaliza("ingest", "avl", "--mapping", "sptrans-olho-vivo-posicao", source, "--fleet", fleet,
                       "--out", tmp_path / "t.jsonl")
    assert result.returncode == 0, result.stderr
    sent, rejected = read_jsonl(tmp_path / "t.jsonl"), read_jsonl(tmp_path / "rejected.jsonl")
    # in time order; the line's letreiro (l[].c) as route_id; `ta` without offset read in São Paulo
    assert sent == [
        {"vehicle_id": "11434", "ts": "2017-05-12T19:56:00-03:00", "lat": -23.527, "lon": -46.678,
         "speed_kmh": 0.0, "speed_source": "derived", "route_id": "8000-10"},
        {"vehicle_id": "11433", "ts": "2017-05-12T22:57:02+00:00", "lat": -23.540150375, "lon": -46.64414075,
         "speed_kmh": 0.0, "speed_source": "derived", "route_id": "8000-10"},
    ]
    assert {(r["location"], r["reason"]) for r in rejected} == {
        ("posicao.json#l[0].vs[1]", "unknown_vehicle"),
        ("posicao.json#l[0].vs[2]", "no_position"),
        ("posicao.json#l[1].vs[1]", "invalid_timestamp"),
    }
    unknown = next(r for r in rejected if r["reason"] == "unknown_vehicle")
    assert "99999" in unknown["detail"] and json.loads(unknown["raw"])["p"] == 99999
    assert (": 2; repetidas (já enviadas): 0; rejeitadas: 3 (horário inválido: 1, sem posição: 1, "
            "veículo fora da frota: 1)") in result.stdout


def test_the_same_vehicle_a_second_time_later_has_its_speed_derived_from_the_first(tmp_path, fleet):
    # 500 m north in 60 s = 30 km/h
    later = {"p": 11433, "a": False, "ta": "2017-05-12T22:58:02Z", "py": -23.540150375 + 500 / 111_195,
             "px": -46.64414075}
    document = {"hr": "19:58", "l": [{**POSICAO["l"][0], "vs": [later, POSICAO["l"][0]["vs"][0], later]}]}
    (tmp_path / "posicao.json").write_text(json.dumps(document))
    result = fiscaliza("ingest", "avl", "--mapping", "sptrans-olho-vivo-posicao", tmp_path / "posicao.json",
                       "--fleet", fleet, "--out", tmp_path / "t.jsonl")
    assert result.returncode == 0, result.stderr
    sent = read_jsonl(tmp_path / "t.jsonl")
    assert [m["speed_kmh"] for m in sent] == [0.0, pytest.approx(30.0, abs=0.05)]
    assert "repetidas (já enviadas): 1;" in result.stdout


# --- a CSV export with a header, plates, epoch times and a speed in m/s -------------------

MAPPING = """
[source]
format = "csv"
delimiter = ";"

[fields]
vehicle = ["prefixo", "placa"]
time = "quando"
lat = "lat"
lon = "lon"
speed = "vel"
speed_unit = "m/s"
route = "linha"

[time]
format = "epoch"
"""


def test_a_csv_export_with_our_own_mapping(tmp_path, fleet):
    (tmp_path / "map.toml").write_text(MAPPING)
    (tmp_path / "avl.csv").write_text(
        "prefixo;placa;quando;lat;lon;vel;linha\n"
        ";abc-1d23;1772452800;-19.74;-40.38;10;101\n"  # found by its plate; 10 m/s = 36 km/h
        "102;;1772452815;-19.75;-40.39;;\n"  # no speed: derived (its first fix: 0)
        "102;;1772452830;norte;-40.39;1;\n"
        "102;;1772452845;-19.75\n"
        "\n"
        "777;;1772452800;-19.74;-40.38;1;101\n")
    result = fiscaliza("ingest", "avl", "--mapping", tmp_path / "map.toml", tmp_path / "avl.csv",
                       "--fleet", fleet, "--out", tmp_path / "out" / "t.jsonl")
    assert result.returncode == 0, result.stderr
    assert read_jsonl(tmp_path / "out" / "t.jsonl") == [
        {"vehicle_id": "101", "ts": "2026-03-02T12:00:00+00:00", "lat": -19.74, "lon": -40.38, "speed_kmh": 36.0,
         "speed_source": "reported", "route_id": "101"},
        {"vehicle_id": "102", "ts": "2026-03-02T12:00:15+00:00", "lat": -19.75, "lon": -40.39, "speed_kmh": 0.0,
         "speed_source": "derived"},
    ]
    assert [(r["location"], r["reason"]) for r in read_jsonl(tmp_path / "out" / "rejected.jsonl")] == [
        ("avl.csv:4", "wrong_type"), ("avl.csv:5", "wrong_type"), ("avl.csv:7", "unknown_vehicle")]


# --- bad mappings and exports: one line, exit 2 -------------------------------------------

@pytest.mark.parametrize(("mapping", "export", "needle"), [
    ("missing.toml", "a,b\n", "cannot read the mapping missing.toml"),
    ("[source]\nformat = 'xml'\n", "a,b\n", "Invalid enum value 'xml' - at `$.source.format`"),
    ("[source]\nformat = 'csv'\n[fields]\nvehicle = 'v'\ntime = 't'\nlat = 'y'\n", "a,b\n", "mapping map.toml"),
    ("[source]\nformat = 'json'\n[fields]\nvehicle = 'v'\ntime = 't'\nlat = 'y'\nlon = 'x'\n", "{}",
     "needs source.records"),
    ("[source]\nformat = 'csv'\n[fields]\nvehicle = 'v'\ntime = 't'\nlat = 'y'\nlon = 'x'\n[time]\nzone = 'Brasil'\n",
     "a,b\n", "'Brasil' is not an IANA time zone"),
    ("[source]\nformat = 'csv'\n[fields]\nvehicle = []\ntime = 't'\nlat = 'y'\nlon = 'x'\n", "t,y,x\n",
     "fields.vehicle must name at least one column"),
    ("[source]\nformat = 'csv'\n[fields]\nvehicle = 'v'\ntime = 't'\nlat = 'y'\nlon = 'x'\n", "v,t,y\n1,2,3\n",
     "export has no column 'x'"),
    ("[source]\nformat = 'csv'\ndelimiter = ';'\n[fields]\nvehicle = 'v'\ntime = 't'\nlat = 'y'\nlon = 'x'\n",
     "v;t;y;x\n1,2,3,4\n5,6,7,8\n", "export: no row has the mapping's 4 columns (the first has 1)"),
    ("[source]\nformat = 'json'\nrecords = 'vs[]'\n[fields]\nvehicle = 'vs[].p'\ntime = 'vs[].ta'\nlat = 'vs[].py'\n"
     "lon = 'vs[].px'\n", "v,t\n", "export is not JSON"),
])
def test_a_bad_mapping_or_export_is_one_line_and_exit_2(tmp_path, fleet, mapping, export, needle):
    if mapping != "missing.toml":
        (tmp_path / "map.toml").write_text(mapping)
    (tmp_path / "export").write_text(export)
    assert_bad_input(fiscaliza("ingest", "avl", "--mapping", mapping if mapping == "missing.toml" else "map.toml",
                               "export", "--fleet", fleet, "--out", "t.jsonl", cwd=tmp_path), needle)


def test_no_destination_is_one_line_and_exit_2(tmp_path, fleet):
    (tmp_path / "avl.csv").write_text("v,t,y,x\n")
    assert_bad_input(fiscaliza("ingest", "avl", "--mapping", "sptrans-avl", tmp_path / "avl.csv", "--fleet", fleet),
                     "give either --out")


def test_a_receipt_time_is_read_as_the_time_is_and_a_bad_one_rejects_the_record():
    mapping = load_mapping(Path("sptrans-avl"))
    row = ["2015-10-02 18:51:08.613", "2015-10-02 18:51:05.000", "34020", "-23.488313", "-46.730512", "32603",
           "64", "0", "18", "18", "3.613", "PIRITUBA"]
    fix = to_fix(dict(zip(mapping.source.columns, row)), mapping, "mo.csv:1", ",".join(row))
    assert (fix.ts, fix.received_at) == (datetime(2015, 10, 2, 18, 51, 5, tzinfo=BRT),
                                         datetime(2015, 10, 2, 18, 51, 8, 613_000, tzinfo=BRT))
    row[0] = "18:51"
    rejected = to_fix(dict(zip(mapping.source.columns, row)), mapping, "mo.csv:1", ",".join(row))
    assert (rejected.reason, rejected.detail) == ("invalid_timestamp", "dt_server '18:51' does not parse as "
                                                  "%Y-%m-%d %H:%M:%S.%f")
