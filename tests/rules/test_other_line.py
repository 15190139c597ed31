"""Carrying passengers on another line (rules.other_line; Conselheiro Lafaiete's art. 17)
on a realized trip of the tiny feed and hand-made catraca readings.

Trip T-0600 (route T, operator OP1) leaves A's zone (its edge at 100 m) at 06:00:00 and
reaches C's (at 7000 - 100 = 6900 m) at 10 m/s: (6900 - 100) / 10 = 680 s, 06:11:20.
The vehicle is licensed for line F only unless a test says otherwise. Thresholds
(tests/rules/shared_law.py): at least 2 boardings; the catraca silent at most 600 s after
the departure and before the arrival. Readings are "v1" at seconds after 06:00.
"""

import dataclasses

import pytest
from shared_law import OTHER_LINE, POLICY, known
from tiny_trip import DATE, PROJECTOR, S, TZ, at, facts_of, track

from rules.justification import justify
from rules.model import Infraction, InsufficientEvidence
from rules.other_line import count_boardings, detect, rule
from telemetry import CatracaReading, Occurrence


@pytest.fixture(autouse=True)
def _law(monkeypatch):
    known(monkeypatch)


UNIFORM = [(-70, 0), (-10, 0), (0, 100), (690, 7000), (750, 7000)]
TRIP = facts_of(track(UNIFORM))


def reading(seconds: float, counter: int, status: str = "ok") -> CatracaReading:
    return CatracaReading(vehicle_id="v1", ts=at(seconds), counter=counter, seal_intact=True, status=status)


def readings(*pairs) -> tuple[CatracaReading, ...]:
    return tuple(reading(s, c) for s, c in pairs)


def judge(catraca, lines=("F",)):
    return detect(dataclasses.replace(TRIP, readings=tuple(catraca), licensed_lines=lines), POLICY, OTHER_LINE)


# a reading a minute from 30 s to 630 s, and one at 670 s: 30 s after the departure and
# 10 s before the arrival (680 s), within the 600 s silence
STEADY = [(30 + 60 * k, 1000) for k in range(11)] + [(670, 1000)]


def with_counters(changes: dict[int, int]):
    """STEADY with the counter raised from the given second on."""
    out, counter = [], 1000
    for s, c in STEADY:
        counter = changes.get(s, counter)
        out.append((s, counter))
    return readings(*out)


def test_five_boardings_on_a_line_not_licensed_yields_infraction():
    # 1000 -> 1002 at 90 s, -> 1005 at 330 s: 2 + 3 = 5 >= 2 boardings, on T (licensed: F)
    [record] = judge(with_counters({90: 1002, 330: 1005}))
    assert isinstance(record, Infraction)
    assert (record.code, record.fine_ufir, record.status) == (OTHER_LINE, 200, "confirmed")
    assert (record.route_id, record.direction_id, record.vehicle_id, record.service_date) == ("T", 0, "v1", DATE)
    assert record.occurred_at == at(90)  # the first boarding counted
    evidence = record.evidence
    assert (evidence["boardings"], evidence["min_boardings"], evidence["licensed_lines"]) == (5, 2, ["F"])
    assert [r["boardings"] for r in evidence["readings"]] == [0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0]
    assert evidence["readings"][1]["msg_id"] == f"v1/{at(90).isoformat()}"
    assert evidence["interval_epoch"] == [TRIP.departed_at, TRIP.arrived_at]
    assert "linha T" in record.description and "contou 5 passagens" in record.description


def test_the_same_trip_on_a_licensed_line_yields_nothing():
    assert judge(with_counters({90: 1002, 330: 1005}), lines=("F", "T")) == []


def test_one_boarding_yields_nothing():
    # 1000 -> 1001: 1 < 2 boardings, the catraca read all along: the bus ran the line empty
    assert judge(with_counters({90: 1001})) == []


def test_counter_wrap_during_the_trip_is_not_boardings_yields_nothing():
    # 99,999 -> 0 on a 100,000 register: 0 + 100,000 - 99,999 = 1 boarding (< 2), not
    # 99,999 read as a difference
    catraca = readings(*((s, 99_999 if s < 330 else 0) for s, _ in STEADY))
    assert judge(catraca) == []
    count = count_boardings(catraca, TRIP.departed_at, TRIP.arrived_at, POLICY, TZ)
    assert (count.boardings, count.unread) == (1, ())


def test_boardings_across_a_wrap_yields_infraction():
    # 99,998 -> 3: 3 + 100,000 - 99,998 = 5 boardings
    [record] = judge(readings(*((s, 99_998 if s < 330 else 3) for s, _ in STEADY)))
    assert isinstance(record, Infraction)
    assert record.evidence["boardings"] == 5
    assert record.occurred_at == at(330)


def test_a_faulty_reading_is_not_boardings_yields_insufficient_evidence():
    # a fault at 330 s reads 5000: not a count, and neither is 1000 -> 1001 across it
    # (the count starts again at 390 s: 1001 -> 1001, 0 boardings)
    catraca = [reading(s, 5000, "fault") if s == 330 else reading(s, 1000 if s < 330 else 1001) for s, _ in STEADY]
    [record] = judge(catraca)
    assert isinstance(record, InsufficientEvidence)
    assert record.evidence["boardings"] == 0
    assert "leitura com falha" in record.reason


def test_a_catraca_clock_running_behind_counts_each_boarding_once_yields_infraction():
    # 100, 120, 110, 130: the high-water mark counts 20 + 0 + 10 = 30, not 20 + 20 = 40;
    # the dip is no count (unread), but 30 >= 2 is enough
    [record] = judge(readings((30, 100), (90, 120), (150, 110), (210, 130), (670, 130)))
    assert isinstance(record, Infraction)
    assert record.evidence["boardings"] == 30
    assert [r["boardings"] for r in record.evidence["readings"]] == [0, 20, None, 10, 0]


def test_silent_catraca_yields_insufficient_evidence():
    [record] = judge(())
    assert isinstance(record, InsufficientEvidence)
    assert "sem leituras" in record.reason


def test_catraca_silent_after_the_first_minute_yields_insufficient_evidence():
    # readings at 30 and 70 s only: silent 680 - 70 = 610 s > 600 s before the arrival
    [record] = judge(readings((30, 1000), (70, 1001)))
    assert isinstance(record, InsufficientEvidence)
    assert "610 s" in record.reason


def test_boardings_outside_the_trip_yields_nothing():
    # 990 at -30 s (before the departure) and 1010 at 690 s (after the arrival at 680 s):
    # only 30 s .. 670 s are read, 1000 -> 1000
    catraca = readings((-30, 990), *STEADY, (690, 1010))
    assert judge(catraca) == []


def test_prefeitura_authorization_justifies_the_trip():
    [record] = judge(with_counters({90: 1002, 330: 1005}))
    authorized = Occurrence(id="AUT-1", kind="authorized_detour", start=at(-600), end=at(3600), vehicle_id="v1",
                            note="reforço da linha T")
    another_bus = Occurrence(id="AUT-2", kind="authorized_detour", start=at(-600), end=at(3600), vehicle_id="v2")
    accident = Occurrence(id="AC-1", kind="accident", start=at(-600), end=at(3600))
    kinds = rule(OTHER_LINE).justified_by
    assert justify(record, kinds, [authorized], PROJECTOR, 50.0).status == "justified"
    assert justify(record, kinds, [another_bus, accident], PROJECTOR, 50.0).status == "confirmed"


def test_facts_without_licensed_lines_yield_nothing():
    # the engine gives no lines (a pack not listing the rule): nothing is read
    assert detect(dataclasses.replace(TRIP, readings=with_counters({90: 1005})), POLICY, OTHER_LINE) == []
    assert S == TRIP.departed_at
