"""The window profiler's command line (benchmarks/profile_window.py)."""

from __future__ import annotations

import pstats

import pytest

from benchmarks.profile_window import main


@pytest.mark.parametrize("argv", [[], ["net", "07:10-07:20@13"], ["net", "7h-8h", "out.prof"],
                                  ["net", "07:10-07:20@0", "out.prof"],
                                  ["net", "07:10-07:20@13", "out.prof", "many"],
                                  ["net", "07:10-07:20@13", "out.prof", "²"]])
def test_a_bad_command_line_is_one_line_and_exit_2(argv, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_directory_that_is_no_network_is_named_with_exit_2(tmp_path, capsys):
    assert main([str(tmp_path), "07:10-07:20@13", str(tmp_path / "w.prof")]) == 2
    assert str(tmp_path) in capsys.readouterr().err
    assert not (tmp_path / "w.prof").exists()


@pytest.fixture(scope="module")
def network(tmp_path_factory):
    from benchmarks import metro

    network = tmp_path_factory.mktemp("network")
    metro.build(network, 3, 1)
    return network


def test_a_network_without_its_fleet_is_named_with_exit_2(network, tmp_path, capsys):
    for part in ("feed", "telemetry"):
        (tmp_path / part).symlink_to(network / part)
    assert main([str(tmp_path), "07:00-07:05@13", str(tmp_path / "w.prof")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fleet.csv" in err


def test_an_output_where_no_directory_is_fails_before_the_profile_with_exit_2(network, capsys):
    assert main([str(network), "07:00-07:05@13", "/nonexistent/w.prof"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_only_the_windows_calls_are_profiled(network, capsys):
    out = network / "w.prof"
    assert main([str(network), "07:00-07:05@13", str(out), "5"]) == 0
    printed = capsys.readouterr().out
    events = int(printed.split(": ", 1)[1].split(" events")[0])
    assert events > 0
    # every engine call in the window is profiled, none outside it: the window's events in
    # calls of 13, the last one short (a call stops at the window's end); one warming call
    # of 2,000 profiled too would add a call
    calls = next(n for (path, _, name), (n, *_) in pstats.Stats(str(out)).stats.items()
                 if path.endswith("engine/core.py") and name == "ingest")
    assert calls == -(-events // 13)
