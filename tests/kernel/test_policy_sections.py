"""The optional policy sections some laws need ([waiting_time], [fines]): absent is None,
João Neiva's file parses as before, each refusal is one line naming the field."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from kernel.policy import PolicyError, load_policy, parse_policy, shipped_policy_path

CANARANA = Path(shipped_policy_path()).with_name("canarana.toml")


def canarana_edited(old: str, new: str) -> str:
    text = CANARANA.read_text(encoding="utf-8")
    assert old in text
    return text.replace(old, new, 1)


def test_joao_neiva_has_neither_section():
    policy = load_policy()
    assert (policy.waiting_time, policy.fines) == (None, None)


def test_canarana_reads_both_sections():
    policy = load_policy(CANARANA)
    assert policy.policy.code == "canarana"
    assert policy.waiting_time.max_wait_s == 1800  # art. 10 § 5º: 30 (trinta) minutos
    assert policy.waiting_time.periods[0].name == "pico da manhã"
    assert (policy.waiting_time.periods[0].start, policy.waiting_time.periods[0].end) == (dt.time(5, 30), dt.time(8, 30))
    assert policy.fines.table["art. 10 § 5º"] > 0


@pytest.mark.parametrize("old, new, message", [
    ("start = 05:30:00\nend = 08:30:00", "start = 08:30:00\nend = 05:30:00",
     "waiting_time period 'pico da manhã' must start before it ends"),
    ('name = "entrepico da manhã"', 'name = "pico da manhã"', "waiting_time.periods names must be unique"),
    ("max_wait_s = 1800", "max_wait_s = 0", "waiting_time.max_wait_s must be positive, got 0"),
    ('"art. 10 § 5º" = 100', '"art. 10 § 5º" = 0', "fines.table.'art. 10 § 5º' must be positive, got 0"),
    ("max_wait_s = 1800", "max_wait_s = 1800\nmax_wait_min = 30", "max_wait_min"),
])
def test_optional_sections_are_checked_in_one_line(old, new, message):
    with pytest.raises(PolicyError, match=message) as caught:
        parse_policy(canarana_edited(old, new), "canarana.toml")
    assert "\n" not in str(caught.value)
