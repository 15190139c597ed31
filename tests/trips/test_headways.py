"""Who follows whom on a headway-based line: pure lookups over sorted departures."""

from __future__ import annotations

import datetime as dt

from gtfs.model import FrequencyWindow, ScheduledTrip
from gtfs.schedule import ServiceDay
from kernel.policy import Headway
from trips.headways import ahead, behind, frequency_window, headway_state, scheduled_headway

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


def timetabled(departure_s: int, direction: int = 0) -> ScheduledTrip:
    return ScheduledTrip(f"101-{direction}-{departure_s}", "101", direction, DAY, "s", None, departure_s,
                         departure_s + 1500, (), 1.0)


def test_a_timetabled_departure_is_scheduled_the_gap_to_the_departure_before_its_nearest():
    # 101 leaves at 06:00, 06:30, 07:00 and 07:20; 201 by headway, 900 s from 06:00 to 09:00
    trips = tuple(timetabled(h * 3600 + m * 60) for h, m in ((6, 0), (6, 30), (7, 0), (7, 20))) + (timetabled(0, 1),)
    day = ServiceDay(DAY, START, trips, (window(6, 9, 900),))
    assert scheduled_headway(day, "201", 0, START + 7 * 3600, 1800) == 900  # the frequency window's
    # 06:33 is the 06:30's (06:30 - 06:00); 07:12 is nearest 07:20 (07:20 - 07:00)
    assert scheduled_headway(day, "101", 0, START + 6 * 3600 + 33 * 60, 1800) == 1800
    assert scheduled_headway(day, "101", 0, START + 7 * 3600 + 12 * 60, 1800) == 1200
    assert scheduled_headway(day, "101", 0, START + 6 * 3600 + 5 * 60, 1800) is None  # the day's first: none before
    assert scheduled_headway(day, "101", 0, START + 9 * 3600, 1800) is None  # no departure within the match window
    assert scheduled_headway(day, "101", 1, START + 60, 1800) is None  # the other direction's only trip
    assert scheduled_headway(day, "105", 0, START + 7 * 3600, 1800) is None  # a line not in the day
    # two trips leaving at 07:00 (variants of the line) are one departure: 07:00 - 06:30, never 0
    doubled = ServiceDay(DAY, START, trips + (timetabled(7 * 3600),), ())
    assert scheduled_headway(doubled, "101", 0, START + 7 * 3600 + 60, 1800) == 1800


def test_bunched_and_gapped_are_the_policys_bounds_inclusive():
    policy = Headway(bunched_max_ratio=0.75, gapped_min_ratio=1.25)
    # 1800 s scheduled: 1350 s is 75 % (bunched), 2250 s is 125 % (gapped)
    assert [headway_state(h, 1800, policy) for h in (600, 1350, 1351, 1800, 2249, 2250, 5400)] == \
        ["bunched", "bunched", "regular", "regular", "regular", "gapped", "gapped"]
    assert headway_state(1351, 1800, Headway(bunched_max_ratio=0.8, gapped_min_ratio=1.1)) == "bunched"
