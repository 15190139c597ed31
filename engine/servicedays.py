"""The feed's service days as the vehicle stage reads them: each date's `ServiceDay`
built once (a cache, not state: a restarted worker builds the same), and the operating
day an instant belongs to, from the cutover (03:00) of its date to the next one."""

from __future__ import annotations

import datetime as dt

from gtfs.model import Feed
from gtfs.schedule import ServiceDay, service_day


class ServiceDays:
    """A lookup of the feed's service days by date; callable as `days(date)`."""

    def __init__(self, feed: Feed, cutover_s: float):
        self._feed = feed
        self._cutover_s = cutover_s
        self._days: dict[dt.date, ServiceDay] = {}
        # the window `operating_date` found last, [start, end) and its date: the instants a
        # stage asks about mostly fall in the same operating day (a look-up per beat)
        self._last: tuple[float, float, dt.date] = (float("inf"), float("-inf"), dt.date.min)

    def __call__(self, date: dt.date) -> ServiceDay:
        if date not in self._days:
            self._days[date] = service_day(self._feed, date)
        return self._days[date]

    def window(self, date: dt.date) -> tuple[float, float]:
        """The operating day `date` as instants: [its cutover, the next date's cutover)."""
        return (self(date).start_epoch + self._cutover_s,
                self(date + dt.timedelta(days=1)).start_epoch + self._cutover_s)

    def operating_date(self, epoch: float) -> dt.date:
        """The operating day an instant belongs to: the one whose `window` holds it. Usually
        its local date's or the one before; where the clocks change nearer midnight than the
        cutover (a cutover below a daylight-saving shift, a zone that skipped a day), the
        windows, which tile time, can start on the evening before their date or hold no
        instant of it, so the search walks from the local date to the window that holds it."""
        start, end, date = self._last
        if start <= epoch < end:
            return date
        date = dt.datetime.fromtimestamp(epoch, self._feed.timezone).date()
        one = dt.timedelta(days=1)
        start, end = self.window(date)
        while epoch < start:
            date -= one
            start, end = self.window(date)
        while epoch >= end:
            date += one
            start, end = self.window(date)
        self._last = (start, end, date)
        return date
