"""fiscaliza.process: the settings every fiscaliza process starts with."""

import gc
import sys

import pytest

from fiscaliza import cli
from fiscaliza.process import YOUNG_COLLECTION_EVERY, tune_garbage_collector


@pytest.fixture
def collector_thresholds():
    kept = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # Python's defaults
    yield
    gc.set_threshold(*kept)


def test_the_collector_runs_its_young_collections_less_often_and_keeps_the_older_thresholds(collector_thresholds):
    gc.set_threshold(700, 11, 12)
    tune_garbage_collector()
    assert gc.get_threshold() == (YOUNG_COLLECTION_EVERY, 11, 12)
    assert YOUNG_COLLECTION_EVERY > 700


def test_the_command_line_tunes_the_collector_before_it_runs_a_command(collector_thresholds, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["fiscaliza", "--help"])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == 0
    assert "replay" in capsys.readouterr().out
    assert gc.get_threshold() == (YOUNG_COLLECTION_EVERY, 10, 10)
