"""What was scheduled on a service date: trips, frequency windows, day boundaries."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cached_property
from zoneinfo import ZoneInfo

from gtfs.model import Feed, FrequencyWindow, ScheduledStop, ScheduledTrip


def service_day_start(date: dt.date, tz: ZoneInfo) -> dt.datetime:
    """The instant GTFS times of `date` count from: noon minus 12 h, local time.

    On days with a DST change this differs from midnight, as the GTFS spec requires.
    """
    noon = dt.datetime.combine(date, dt.time(12), tzinfo=tz)
    return (noon.astimezone(dt.timezone.utc) - dt.timedelta(hours=12)).astimezone(tz)


def gtfs_seconds_to_datetime(date: dt.date, seconds: float, tz: ZoneInfo) -> dt.datetime:
    # Elapsed seconds, so the addition is done in UTC (aware local arithmetic is wall-clock).
    start = service_day_start(date, tz).astimezone(dt.timezone.utc)
    return (start + dt.timedelta(seconds=seconds)).astimezone(tz)


def service_dates(feed: Feed, start: dt.date, end: dt.date) -> list[dt.date]:
    """Dates in [start, end] on which any service runs."""
    all_dates = set(feed.dates)
    return [d for d in _date_range(start, end) if d in all_dates]


def _date_range(start: dt.date, end: dt.date):
    day = start
    while day <= end:
        yield day
        day += dt.timedelta(days=1)


def _active_trip_ids(feed: Feed, date: dt.date) -> list[str]:
    services = {sid for sid, days in feed.service_days.items() if date in days}
    return [t.trip_id for t in feed.trips.values() if t.service_id in services]


def scheduled_trips(feed: Feed, date: dt.date) -> tuple[ScheduledTrip, ...]:
    """Timetabled trips of `date`, plus the departures of exact_times=1 frequencies.

    Frequency templates with exact_times=0 are headway service: see frequency_windows.
    """
    by_template: dict[str, list] = {}
    for freq in feed.frequencies:
        by_template.setdefault(freq.trip_id, []).append(freq)
    result: list[ScheduledTrip] = []
    for trip_id in _active_trip_ids(feed, date):
        template = feed.trips[trip_id]
        programmed_m = feed.shapes[template.shape_id].length_m
        freqs = by_template.get(trip_id)
        if not freqs:
            result.append(_scheduled(template, date, template.stops, programmed_m, from_frequency=False))
            continue
        for freq in freqs:
            if not freq.exact_times:
                continue
            for departure in range(freq.start_s, freq.end_s, freq.headway_s):
                stops = _shifted(template.stops, departure - template.departure_s)
                result.append(_scheduled(template, date, stops, programmed_m, from_frequency=True))
    result.sort(key=lambda t: (t.route_id, t.direction_id, t.departure_s, t.trip_id))
    return tuple(result)


def expected_trips(feed: Feed, date: dt.date) -> tuple[ScheduledTrip, ...]:
    """The departures a headway window (exact_times=0) of `date` expects, as art. 45 and
    D-12 count them: ceil(window / headway), from the window's start every headway, each
    running as long as its template. Not a timetable (the buses keep the headway, not
    these times): what the operations room counts as due."""
    result = []
    for window in frequency_windows(feed, date):
        template = feed.trips[window.trip_id]
        for k in range(window.expected_departures):
            result.append(_scheduled(template, date, _shifted(template.stops, window.start_s + k * window.headway_s
                                                              - template.departure_s),
                                     window.programmed_m, from_frequency=True))
    result.sort(key=lambda t: (t.route_id, t.direction_id, t.departure_s, t.trip_id))
    return tuple(result)


def _shifted(stops, shift: int) -> tuple[ScheduledStop, ...]:
    return tuple(ScheduledStop(s.stop_id, s.stop_sequence, s.arrival_s + shift, s.departure_s + shift, s.timepoint,
                               s.shape_dist_m) for s in stops)


def _scheduled(template, date, stops, programmed_m, *, from_frequency: bool) -> ScheduledTrip:
    return ScheduledTrip(
        trip_id=template.trip_id,
        route_id=template.route_id,
        direction_id=template.direction_id,
        service_date=date,
        shape_id=template.shape_id,
        block_id=template.block_id,
        departure_s=stops[0].departure_s,
        arrival_s=stops[-1].arrival_s,
        stops=stops,
        programmed_m=programmed_m,
        from_frequency=from_frequency,
    )


def frequency_windows(feed: Feed, date: dt.date, *, include_exact: bool = False) -> tuple[FrequencyWindow, ...]:
    """Headway windows of `date` (exact_times=0 only, unless include_exact)."""
    active = set(_active_trip_ids(feed, date))
    windows = []
    for freq in feed.frequencies:
        if freq.trip_id not in active or (freq.exact_times and not include_exact):
            continue
        template = feed.trips[freq.trip_id]
        windows.append(
            FrequencyWindow(
                trip_id=freq.trip_id,
                route_id=template.route_id,
                direction_id=template.direction_id,
                service_date=date,
                shape_id=template.shape_id,
                start_s=freq.start_s,
                end_s=freq.end_s,
                headway_s=freq.headway_s,
                exact_times=freq.exact_times,
                programmed_m=feed.shapes[template.shape_id].length_m,
            )
        )
    windows.sort(key=lambda w: (w.route_id, w.direction_id, w.start_s))
    return tuple(windows)


@dataclass(frozen=True)
class ServiceDay:
    """The schedule of one date, indexed for matching."""

    date: dt.date
    start_epoch: float  # GTFS time 0 of the date
    trips: tuple[ScheduledTrip, ...]
    windows: tuple[FrequencyWindow, ...]

    def departure_epoch(self, trip: ScheduledTrip) -> float:
        return self.start_epoch + trip.departure_s

    def span(self, route_id: str, direction_id: int) -> tuple[float, float] | None:
        """First and last scheduled departure (or window bound) of a route and direction."""
        bounds = self._spans.get((route_id, direction_id))
        if bounds is None:
            return None
        return self.start_epoch + bounds[0], self.start_epoch + bounds[1]

    @cached_property
    def _spans(self) -> dict[tuple[str, int], tuple[float, float]]:
        """`span`'s bounds in GTFS seconds, by (route, direction): worked out once per
        day, as matching asks for them once per realized trip. The day is frozen, so
        the cache (kept outside its fields: not compared, not in its repr) never goes stale."""
        times: dict[tuple[str, int], list[float]] = {}
        for t in self.trips:
            times.setdefault((t.route_id, t.direction_id), []).append(t.departure_s)
        for w in self.windows:
            times.setdefault((w.route_id, w.direction_id), []).extend((w.start_s, w.end_s))
        return {key: (min(seconds), max(seconds)) for key, seconds in times.items()}

    def departures(self, route_id: str, direction_id: int) -> tuple[int, ...]:
        """The distinct timetabled departure times (GTFS seconds, sorted) of a route and
        direction: stop_times' trips and exact_times=1 frequencies, not the headway windows.
        Two trips leaving at once (variants of the line) are one departure time."""
        return self._departures.get((route_id, direction_id), ())

    @cached_property
    def _departures(self) -> dict[tuple[str, int], tuple[int, ...]]:  # once per day, as `_spans`
        times: dict[tuple[str, int], list[int]] = {}
        for t in self.trips:
            times.setdefault((t.route_id, t.direction_id), []).append(t.departure_s)
        return {key: tuple(sorted(set(seconds))) for key, seconds in times.items()}

    def scheduled_span(self) -> tuple[float | None, float | None]:
        """First departure and last arrival of the whole day, as epochs."""
        return self._day_span

    @cached_property
    def _day_span(self) -> tuple[float | None, float | None]:  # once per day, as `_spans`
        starts = [t.departure_s for t in self.trips] + [w.start_s for w in self.windows]
        ends = [t.arrival_s for t in self.trips] + [w.end_s for w in self.windows]
        if not starts:
            return None, None
        return self.start_epoch + min(starts), self.start_epoch + max(ends)

    @cached_property
    def close_epoch(self) -> float:
        """When everything scheduled on the date has had time to happen (once per day, as `_spans`)."""
        last = max([t.arrival_s for t in self.trips] + [w.end_s for w in self.windows] + [86400])
        return self.start_epoch + last


def service_day(feed: Feed, date: dt.date) -> ServiceDay:
    return ServiceDay(
        date=date,
        start_epoch=service_day_start(date, feed.timezone).timestamp(),
        trips=scheduled_trips(feed, date),
        windows=frequency_windows(feed, date),
    )
