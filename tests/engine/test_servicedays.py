"""The feed's service days by date and the operating day of an instant (engine.servicedays).

Context: the João Neiva sample feed (America/Sao_Paulo, -03:00) and its policy's 03:00 cutover."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from engine.servicedays import ServiceDays
from gtfs import load_feed
from gtfs.schedule import service_day
from samples import joao_neiva


@pytest.fixture(scope="module")
def feed():
    return load_feed(joao_neiva()[0])


def on_december_2(feed, hour: int, minute: int) -> float:
    return dt.datetime(2026, 12, 2, hour, minute, tzinfo=feed.timezone).timestamp()


def test_an_instant_before_the_cutover_belongs_to_the_day_before(feed):
    days = ServiceDays(feed, cutover_s=3 * 3600)
    assert days.operating_date(on_december_2(feed, 2, 59)) == dt.date(2026, 12, 1)
    assert days.operating_date(on_december_2(feed, 3, 0)) == dt.date(2026, 12, 2)
    assert ServiceDays(feed, cutover_s=0).operating_date(on_december_2(feed, 0, 1)) == dt.date(2026, 12, 2)


def test_a_service_day_is_the_schedules_and_built_once(feed):
    days = ServiceDays(feed, cutover_s=3 * 3600)
    day = days(dt.date(2026, 12, 1))
    assert day.start_epoch == service_day(feed, dt.date(2026, 12, 1)).start_epoch
    assert days(dt.date(2026, 12, 1)) is day


def test_an_operating_day_runs_from_its_cutover_to_the_next_dates(feed):
    days = ServiceDays(feed, cutover_s=3 * 3600)
    start, end = days.window(dt.date(2026, 12, 2))
    # 03:00 of the 2nd to 03:00 of the 3rd, local time (-03:00): 24 h
    assert (start, end) == (on_december_2(feed, 3, 0), on_december_2(feed, 3, 0) + 24 * 3600)
    assert days.operating_date(start) == dt.date(2026, 12, 2) and days.operating_date(end - 1) == dt.date(2026, 12, 2)
    assert days.operating_date(end) == dt.date(2026, 12, 3)


@pytest.mark.parametrize("zone, first, cutover_s", [
    ("America/Sao_Paulo", dt.date(2018, 11, 2), 0),  # clocks went 00:00 -> 01:00 on 2018-11-04
    ("America/Sao_Paulo", dt.date(2018, 2, 15), 0),  # and 00:00 -> 23:00 of the day before on 2018-02-18
    ("Pacific/Apia", dt.date(2011, 12, 28), 3 * 3600),  # 2011-12-30 never happened there
    ("Europe/London", dt.date(2026, 3, 27), 1800),  # a cutover below the 1 h shift at 01:00
])
def test_every_instant_belongs_to_the_operating_day_whose_window_holds_it(feed, zone, first, cutover_s):
    """Where the clocks change nearer midnight than the cutover, a window can start on the
    evening before its date (or a date have no instant at all): the day an instant belongs
    to is still the one whose window holds it, every 10 minutes over five days, whatever
    instant was asked before (the windows tile time, so each instant is in one of them)."""
    import dataclasses
    from zoneinfo import ZoneInfo

    days = ServiceDays(dataclasses.replace(feed, timezone=ZoneInfo(zone)), cutover_s=cutover_s)
    start, _ = days.window(first)
    _, end = days.window(first + dt.timedelta(days=4))
    instants = list(range(int(start), int(end), 600))
    # in time order, then shuffled: the window found last (kept to answer the next instant
    # of the same day) never answers for an instant outside it
    for epoch in instants + random.Random(7).sample(instants, len(instants)):
        date = days.operating_date(float(epoch))
        low, high = days.window(date)
        assert low <= epoch < high, (zone, dt.datetime.fromtimestamp(epoch, ZoneInfo(zone)), date)
