"""Fixtures of the engine tests."""

import pytest

from engine.loading import load_context
from fiscaliza.replay import ReplayInputs
from samples import joao_neiva


@pytest.fixture(scope="module")
def context():
    """The sample João Neiva network's context (load_context does not read the
    tachograph file: any path will do); one per test module, as each module built its own."""
    feed, fleet = joao_neiva()
    return load_context(ReplayInputs(feed=feed, fleet=fleet, tachograph=fleet))
