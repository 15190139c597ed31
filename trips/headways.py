"""Who follows whom on a headway-based line (frequencies.txt): the live headway an
operations room watches (bunching, gaps), as TransitClock and Swiftly give it — the
time between a vehicle's departure from the origin terminal and the departure of the
vehicle ahead of it on the same line and direction."""

from __future__ import annotations

import bisect

from gtfs.model import FrequencyWindow
from gtfs.schedule import ServiceDay


def frequency_window(day: ServiceDay, route_id: str, direction_id: int, departed_at: float) -> FrequencyWindow | None:
    """The frequency window a departure falls in, if its line and direction run by headway then."""
    at = departed_at - day.start_epoch
    return next((w for w in day.windows if (w.route_id, w.direction_id) == (route_id, direction_id)
                 and w.start_s <= at < w.end_s), None)


def ahead(departures: list[tuple[float, str]], departed_at: float, vehicle_id: str) -> tuple[float, str] | None:
    """The latest departure (time, vehicle) before `departed_at` by another vehicle;
    `departures` sorted."""
    i = bisect.bisect_left(departures, (departed_at, ""))
    return next((d for d in reversed(departures[:i]) if d[1] != vehicle_id), None)


def behind(departures: list[tuple[float, str]], departed_at: float, vehicle_id: str) -> tuple[float, str] | None:
    """The earliest departure after `departed_at` by another vehicle; `departures` sorted."""
    i = bisect.bisect_right(departures, (departed_at, "\uffff"))
    return next((d for d in departures[i:] if d[1] != vehicle_id), None)
