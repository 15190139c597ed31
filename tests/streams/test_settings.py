"""The workers' settings from the environment."""

import pytest

from streams.settings import Settings


def test_a_worker_is_live_unless_told_it_is_backfilling():
    # live, a message dated more than 15 min ahead of the worker's clock is a device clock
    # in the future; a backfill of a simulated day still to come must say so
    assert Settings.from_env({}).backfill is False
    assert Settings.from_env({"FISCALIZA_BACKFILL": "1"}).backfill is True
    assert Settings.from_env({"FISCALIZA_BACKFILL": "0"}).backfill is False
    with pytest.raises(ValueError, match="FISCALIZA_BACKFILL must be 0 or 1"):
        Settings.from_env({"FISCALIZA_BACKFILL": "yes"})
