"""Fixtures of the rule tests."""

import pytest
from tiny_day import Tiny


@pytest.fixture(scope="module")
def tiny() -> Tiny:
    """The tiny feed, the shipped policy and its geofences (tests/rules/tiny_day.py)."""
    return Tiny()
