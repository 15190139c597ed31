"""Who follows whom on a headway-based line: pure lookups over sorted departures."""

from __future__ import annotations

import datetime as dt

from gtfs.model import FrequencyWindow
from gtfs.schedule import ServiceDay
from trips.headways import ahead, behind, frequency_window

DAY = dt.date(2026, 12, 1)
START = 1_796_094_000.0  # GTFS time 0 of the day (any epoch will do)


def window(start_h: int, end_h: int, headway_s: int, direction: int = 0) -> FrequencyWindow:
    return FrequencyWindow("201-f", "201", direction, DAY, "s", start_h * 3600, end_h * 3600, headway_s, False, 1.0)


DEPARTURES = [(100.0, "A"), (200.0, "B"), (250.0, "A"), (300.0, "C")]


def test_the_bus_ahead_is_the_latest_earlier_departure_of_another_vehicle():
    assert ahead(DEPARTURES, 300.0, "C") == (250.0, "A")
    # A's own earlier departure is not a bus ahead of A
    assert ahead(DEPARTURES, 250.0, "A") == (200.0, "B")
    assert ahead(DEPARTURES, 100.0, "A") is None  # the first of the day


def test_the_bus_behind_is_the_earliest_later_departure_of_another_vehicle():
    assert behind(DEPARTURES, 200.0, "B") == (250.0, "A")
    assert behind(DEPARTURES, 250.0, "A") == (300.0, "C")
    assert behind(DEPARTURES, 300.0, "C") is None


def test_a_departure_falls_in_the_window_of_its_line_and_direction_only():
    day = ServiceDay(DAY, START, (), (window(6, 9, 900), window(9, 12, 1200), window(6, 12, 600, direction=1)))
    assert frequency_window(day, "201", 0, START + 8 * 3600).headway_s == 900
    # [start, end): 09:00 is the next window's
    assert frequency_window(day, "201", 0, START + 9 * 3600).headway_s == 1200
    assert frequency_window(day, "201", 1, START + 9 * 3600).headway_s == 600
    assert frequency_window(day, "201", 0, START + 12 * 3600) is None
    assert frequency_window(day, "101", 0, START + 8 * 3600) is None
