"""Who follows whom on a line: the live headway an operations room watches (bunching,
gaps), as TransitClock and Swiftly give it — the time between a vehicle's departure from
the origin terminal and the departure of the vehicle ahead of it on the same line and
direction, against the scheduled headway there: a frequency window's headway_secs on a
headway-based line (frequencies.txt), the timetable's gap between consecutive departures
on a timetabled one."""

from __future__ import annotations

import bisect
from typing import Literal

from gtfs.model import FrequencyWindow
from gtfs.schedule import ServiceDay
from kernel.policy import Headway

HeadwayState = Literal["bunched", "regular", "gapped"]


def frequency_window(day: ServiceDay, route_id: str, direction_id: int, departed_at: float) -> FrequencyWindow | None:
    """The frequency window a departure falls in, if its line and direction run by headway then."""
    at = departed_at - day.start_epoch
    return next((w for w in day.windows if (w.route_id, w.direction_id) == (route_id, direction_id)
                 and w.start_s <= at < w.end_s), None)


def scheduled_headway(day: ServiceDay, route_id: str, direction_id: int, departed_at: float,
                      match_window_s: float) -> int | None:
    """The headway scheduled at a departure: its frequency window's headway_secs; else, on a
    timetabled line, the gap between the scheduled departure nearest it (at most
    `match_window_s` away, as trips are matched) and the one before (Swiftly's scheduled
    headway). None: no window, no departure near it, or the day's first departure."""
    window = frequency_window(day, route_id, direction_id, departed_at)
    if window is not None:
        return window.headway_s
    times = day.departures(route_id, direction_id)
    at = departed_at - day.start_epoch
    i = bisect.bisect_left(times, at)
    nearest = min((j for j in (i - 1, i) if 0 <= j < len(times)), key=lambda j: abs(times[j] - at), default=None)
    if nearest is None or nearest == 0 or abs(times[nearest] - at) > match_window_s:
        return None
    return times[nearest] - times[nearest - 1]


def headway_state(headway_s: float, scheduled_headway_s: float, policy: Headway) -> HeadwayState:
    """Bunched at most `bunched_max_ratio` of the scheduled headway, gapped at least
    `gapped_min_ratio` of it (the policy's [headway])."""
    ratio = headway_s / scheduled_headway_s
    if ratio <= policy.bunched_max_ratio:
        return "bunched"
    return "gapped" if ratio >= policy.gapped_min_ratio else "regular"


def ahead(departures: list[tuple[float, str]], departed_at: float, vehicle_id: str) -> tuple[float, str] | None:
    """The latest departure (time, vehicle) before `departed_at` by another vehicle;
    `departures` sorted."""
    i = bisect.bisect_left(departures, (departed_at, ""))
    return next((d for d in reversed(departures[:i]) if d[1] != vehicle_id), None)


def behind(departures: list[tuple[float, str]], departed_at: float, vehicle_id: str) -> tuple[float, str] | None:
    """The earliest departure after `departed_at` by another vehicle; `departures` sorted."""
    i = bisect.bisect_right(departures, (departed_at, "\uffff"))
    return next((d for d in departures[i:] if d[1] != vehicle_id), None)
