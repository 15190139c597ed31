"""The comparison file of a replay (benchmarks/equivalence.py): what tells two commits'
outputs apart, and a network replayed twice writing the same bytes."""

from __future__ import annotations

import pytest

from benchmarks.equivalence import main, replayed, written


@pytest.fixture(scope="module")
def network(tmp_path_factory):
    from benchmarks import metro

    network = tmp_path_factory.mktemp("network")
    metro.build(network, 3, 1)
    return network


def status(vehicle_id: str, lat: float) -> dict:
    return {"vehicle_id": vehicle_id, "ts": "2026-12-01T07:00:00-03:00", "lat": lat, "lon": -40.0}


def test_each_record_is_a_line_after_its_kind_in_the_order_given():
    data = written(infractions=[{"id": "b"}, {"id": "a"}], trips=[{"t": 1}], insufficient=[], rejected=[{"r": 1}],
                   months=[], statuses=[])
    assert data.splitlines()[:4] == [b'change {"id":"b"}', b'change {"id":"a"}', b'trip {"t":1}', b'rejected {"r":1}']


def test_the_statuses_are_told_apart_by_their_digest_in_order():
    one, two = status("V1", -19.5), status("V2", -19.6)
    digest = lambda statuses: written([], [], [], [], [], statuses).splitlines()[-1]  # noqa: E731
    assert digest([one, two]).startswith(b"statuses 2 ")
    assert digest([one, two]) == digest([one, two])
    assert digest([one, two]) != digest([two, one])  # another order is another live view
    assert digest([one, two]) != digest([one, status("V2", -19.61)])


@pytest.mark.parametrize("argv", [[], ["net", "0", "out"], ["net", "x", "out"], ["net", "²", "out"], ["net", "13"]])
def test_a_bad_command_line_is_one_line_and_exit_2(argv, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_directory_that_is_no_network_is_named_with_exit_2(tmp_path, capsys):
    assert main([str(tmp_path), "13", str(tmp_path / "out.txt")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(tmp_path / "feed") in err
    assert not (tmp_path / "out.txt").exists()


def test_an_output_where_no_directory_is_fails_before_the_replay_with_exit_2(network, capsys):
    assert main([str(network), "13", "/nonexistent/out.txt"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_telemetry_file_that_is_no_json_lines_is_one_line_and_exit_2(network, tmp_path, capsys):
    (tmp_path / "telemetry").mkdir()
    for part in ("feed", "fleet.csv", "telemetry/catraca.jsonl"):
        (tmp_path / part).symlink_to(network / part)
    (tmp_path / "telemetry" / "tachograph.jsonl").write_bytes(b"\x00\x01 not json\n")
    assert main([str(tmp_path), "2000", str(tmp_path / "out.txt")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tachograph" in err


def test_a_network_replayed_twice_writes_the_same_bytes(network):
    # the tool is only worth its cmp if one commit writes one file: no set or id() order leaks in
    first, _ = replayed(network, 2000)
    again, _ = replayed(network, 2000)
    assert first == again
    # every output `fiscaliza replay` writes is in it (the 3-vehicle day has each kind)
    kinds = {line.split(b" ", 1)[0] for line in first.splitlines()}
    assert kinds == {b"change", b"trip", b"insufficient", b"rejected", b"month", b"statuses"}
