"""Matching realized trips to scheduled trips of a service day (DESIGN.md, "Trips").

Per route and direction, realized trips are matched one-to-one to scheduled trips,
order-preserving, at most `match_window_s` apart: first as many pairs as possible,
then the least total absolute departure deviation. Once a vehicle's first trip of the
day matches a trip with a block_id, its later trips are matched within that block first.
Headway-based trips (exact_times=0) are not paired: they take the template trip_id of
the frequency window they depart in.
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections import OrderedDict, defaultdict
from zoneinfo import ZoneInfo

import numpy as np

from gtfs.model import FrequencyWindow, ScheduledTrip
from gtfs.schedule import ServiceDay
from kernel.policy import TripRules
from trips.model import Departure, DetectedTrip, Match, RealizedTrip


def service_date_for(trip: DetectedTrip | Departure, days: dict[dt.date, ServiceDay], tz: ZoneInfo,
                     window_s: float) -> dt.date:
    """The service date a realized trip, or a departure, belongs to.

    A departure after midnight may belong to the previous date's service (GTFS times
    past 24:00): the date whose scheduled span of that route and direction, widened by
    the match window, contains the departure wins; otherwise the calendar date.
    """
    local = dt.datetime.fromtimestamp(trip.departed_at, tz).date()
    best: tuple[float, dt.date] | None = None
    for date in (local, local - dt.timedelta(days=1)):
        day = days.get(date)
        span = day.span(trip.route_id, trip.direction_id) if day else None
        if span is None:
            continue
        first, last = span
        if first - window_s <= trip.departed_at <= last + window_s:
            distance = 0.0 if first <= trip.departed_at <= last else min(
                abs(trip.departed_at - first), abs(trip.departed_at - last))
            if best is None or distance < best[0]:
                best = (distance, date)
    return best[1] if best else local


def match_service_day(
    detected: list[DetectedTrip], day: ServiceDay, tz: ZoneInfo, rules: TripRules
) -> list[RealizedTrip]:
    """Match the realized trips of one service date to its schedule."""
    return [m.realized for m in match_service_day_full(detected, day, tz, rules)]


def match_service_day_full(
    detected: list[DetectedTrip], day: ServiceDay, tz: ZoneInfo, rules: TripRules
) -> list[Match]:
    """Match the realized trips of one service date to its schedule, keeping the links."""
    window = rules.match_window_s
    headway_keys = {(w.route_id, w.direction_id) for w in day.windows}
    timetabled = [d for d in detected if (d.route_id, d.direction_id) not in headway_keys]
    pairs: dict[int, ScheduledTrip] = {}  # index in `timetabled` -> scheduled trip

    def align(realized_idx: list[int], candidates: list[ScheduledTrip]) -> None:
        taken = {id(s) for s in pairs.values()}
        free = [s for s in candidates if id(s) not in taken]
        todo = [i for i in realized_idx if i not in pairs]
        for i, j in _align(
            [timetabled[i].departed_at for i in todo], [day.departure_epoch(s) for s in free], window
        ):
            pairs[todo[i]] = free[j]

    by_route_dir = defaultdict(list)
    for s in day.trips:
        by_route_dir[(s.route_id, s.direction_id)].append(s)
    realized_by_route_dir = defaultdict(list)
    for i, d in enumerate(timetabled):
        realized_by_route_dir[(d.route_id, d.direction_id)].append(i)

    # 1. The general matching decides each vehicle's first trip of the day.
    general: dict[int, ScheduledTrip] = {}
    for key, idx in realized_by_route_dir.items():
        free = by_route_dir.get(key, [])
        for i, j in _align([timetabled[i].departed_at for i in idx], [day.departure_epoch(s) for s in free], window):
            general[idx[i]] = free[j]
    first_of_vehicle: dict[str, int] = {}
    for i, d in sorted(enumerate(timetabled), key=lambda p: p[1].departed_at):
        first_of_vehicle.setdefault(d.vehicle_id, i)
    blocks: dict[str, str] = {}
    for vehicle, i in first_of_vehicle.items():
        if i in general:
            pairs[i] = general[i]
            if general[i].block_id:
                blocks[vehicle] = general[i].block_id

    # 2. Later trips of a vehicle that started on a block: within that block first.
    for vehicle, block in sorted(blocks.items()):
        for key, idx in realized_by_route_dir.items():
            mine = [i for i in idx if timetabled[i].vehicle_id == vehicle]
            align(mine, [s for s in by_route_dir.get(key, []) if s.block_id == block])

    # 3. Everything else, by route and direction.
    for key, idx in realized_by_route_dir.items():
        align(idx, by_route_dir.get(key, []))

    result = []
    for i, d in enumerate(timetabled):
        s = pairs.get(i)
        deviation = None if s is None else d.departed_at - day.departure_epoch(s)
        result.append(Match(d, _realized(d, day, tz, s, deviation), s, None))
    for d in detected:
        if (d.route_id, d.direction_id) in headway_keys:
            window = _window_of(d, day)
            result.append(Match(d, _realized(d, day, tz, None, None, window), None, window))
    result.sort(key=lambda m: (m.realized.route_id, m.realized.direction_id, m.realized.departed_at,
                               m.realized.vehicle_id))
    return result


def _window_of(trip: DetectedTrip, day: ServiceDay) -> FrequencyWindow | None:
    seconds = trip.departed_at - day.start_epoch
    for w in day.windows:
        if (w.route_id, w.direction_id) == (trip.route_id, trip.direction_id) and w.start_s <= seconds < w.end_s:
            return w
    return None


class LiveSchedule:
    """A service day's scheduled trips by (route, direction), sorted by departure, so
    that `live_matches` finds those within the match window of a departure by bisection
    instead of scanning the whole day for each trip. An index of a frozen day: it holds
    nothing `live_matches` could not read from the day itself, and `near` answers
    exactly what the scan answered, in the day's order (ties are broken as before)."""

    def __init__(self, day: ServiceDay):
        self.day = day
        groups: dict[tuple[str, int], list[tuple[float, int, ScheduledTrip]]] = defaultdict(list)
        for position, s in enumerate(day.trips):
            groups[(s.route_id, s.direction_id)].append((day.departure_epoch(s), position, s))
        self._epochs: dict[tuple[str, int], list[float]] = {}
        self._entries: dict[tuple[str, int], list[tuple[float, int, ScheduledTrip]]] = {}
        for key, entries in groups.items():
            entries.sort(key=lambda e: (e[0], e[1]))
            self._entries[key] = entries
            self._epochs[key] = [e[0] for e in entries]
        self.headway_keys = {(w.route_id, w.direction_id) for w in day.windows}

    def near(self, route_id: str, direction_id: int, departed_at: float, window_s: float) -> list[ScheduledTrip]:
        """The day's trips of that route and direction scheduled at most `window_s` from
        `departed_at`, in the day's order."""
        epochs = self._epochs.get((route_id, direction_id))
        if not epochs:
            return []
        # bisect a range one second wider than the window, then keep what the scan kept:
        # `departed_at ± window_s` may round differently from `abs(departed_at - epoch)`
        lo = bisect.bisect_left(epochs, departed_at - window_s - 1.0)
        hi = bisect.bisect_right(epochs, departed_at + window_s + 1.0)
        picked = [e for e in self._entries[(route_id, direction_id)][lo:hi] if abs(departed_at - e[0]) <= window_s]
        picked.sort(key=lambda e: e[1])
        return [e[2] for e in picked]


# The LiveSchedule of the days live_matches was last asked about, by the day's identity
# (hashing a day would read all its trips): a cache of frozen days' indexes, which holds
# its day (so an id is not reused while its entry lives) and a few days at most.
# The least recently asked goes first: a worker's stages each build their own days (one
# per partition, one per operator and date), more than a few live at once.
_SCHEDULES: OrderedDict[int, LiveSchedule] = OrderedDict()
_SCHEDULES_KEPT = 64


def live_schedule(day: ServiceDay) -> LiveSchedule:
    """The day's LiveSchedule, built once for as long as the day is among the last days asked."""
    schedule = _SCHEDULES.get(id(day))
    if schedule is None or schedule.day is not day:
        schedule = _SCHEDULES[id(day)] = LiveSchedule(day)
        if len(_SCHEDULES) > _SCHEDULES_KEPT:
            _SCHEDULES.popitem(last=False)
    _SCHEDULES.move_to_end(id(day))
    return schedule


def live_matches(detected: list[DetectedTrip], day: ServiceDay, tz: ZoneInfo, rules: TripRules) -> list[Match]:
    """The day's arrived trips matched while the day runs, as AVL systems assign trips
    live: each vehicle's trips in order, each to the next trip of the block its previous
    trip ran when that block has one of its line and direction within the match window,
    else to the scheduled trip of its line and direction whose departure is nearest.
    Per vehicle, so it never depends on which vehicle's trips arrived first; the day's
    final matching (one-to-one) settles it at day close.

    A vehicle's matches depend on its own trips only (not on any other vehicle's), so
    the matches of `detected` are those of each vehicle's trips alone, concatenated in
    the order of the vehicles' ids: a caller may keep a vehicle's matches while its
    trips stay the same."""
    schedule = live_schedule(day)
    by_vehicle: dict[str, list[DetectedTrip]] = defaultdict(list)
    for d in detected:
        by_vehicle[d.vehicle_id].append(d)
    result = []
    for vehicle in sorted(by_vehicle):
        block, after = None, -np.inf
        for d in sorted(by_vehicle[vehicle], key=lambda d: d.departed_at):
            if (d.route_id, d.direction_id) in schedule.headway_keys:
                result.append(Match(d, unmatched_realization(d, day.date, tz), None, None))
                continue
            mine = schedule.near(d.route_id, d.direction_id, d.departed_at, rules.match_window_s)
            in_block = [s for s in mine if block is not None and s.block_id == block
                        and day.departure_epoch(s) > after]
            pool = in_block[:1] if in_block else mine
            best = min(pool, key=lambda s: abs(d.departed_at - day.departure_epoch(s)), default=None)
            if best is None:
                result.append(Match(d, unmatched_realization(d, day.date, tz), None, None))
                continue
            deviation = d.departed_at - day.departure_epoch(best)
            result.append(Match(d, _realized(d, day, tz, best, deviation), best, None))
            block, after = best.block_id, day.departure_epoch(best)
    return result


def unmatched_realization(d: DetectedTrip, date: dt.date, tz: ZoneInfo) -> RealizedTrip:
    """A detected trip as realized before its service day's matching: no scheduled trip yet."""
    return RealizedTrip(
        vehicle_id=d.vehicle_id, route_id=d.route_id, direction_id=d.direction_id, trip_id=None,
        service_date=date, departed_at=dt.datetime.fromtimestamp(round(d.departed_at, 3), tz),
        arrived_at=dt.datetime.fromtimestamp(round(d.arrived_at, 3), tz), departure_deviation_s=None,
        coverage=d.coverage, shape_id=d.shape_id)


def _realized(d: DetectedTrip, day: ServiceDay, tz: ZoneInfo, scheduled, deviation, window=None) -> RealizedTrip:
    trip_id = scheduled.trip_id if scheduled else (window.trip_id if window else None)
    return RealizedTrip(
        vehicle_id=d.vehicle_id,
        route_id=d.route_id,
        direction_id=d.direction_id,
        trip_id=trip_id,
        service_date=day.date,
        departed_at=dt.datetime.fromtimestamp(round(d.departed_at, 3), tz),
        arrived_at=dt.datetime.fromtimestamp(round(d.arrived_at, 3), tz),
        departure_deviation_s=None if deviation is None else round(deviation, 1),
        coverage=d.coverage,
        shape_id=d.shape_id,
        scheduled_key=scheduled.key if scheduled else None,
    )


def align_departures(departures: list[float], scheduled: list[float], window: float) -> list[tuple[int, int]]:
    """(i, j) pairs of `departures[i]` and `scheduled[j]` (epochs, any order), the way
    realized trips are matched to scheduled ones: order-preserving, one-to-one, at most
    `window` apart, most pairs first, then the least total deviation."""
    return _align(departures, scheduled, window)


def _align(realized: list[float], scheduled: list[float], window: float) -> list[tuple[int, int]]:
    """Order-preserving one-to-one matching of two sorted lists of departures.

    Maximizes the number of pairs at most `window` apart, then minimizes the total
    absolute deviation (dynamic programming, O(n*m)).
    """
    realized_order = sorted(range(len(realized)), key=lambda i: realized[i])
    scheduled_order = sorted(range(len(scheduled)), key=lambda j: scheduled[j])
    r = [realized[i] for i in realized_order]
    s = [scheduled[j] for j in scheduled_order]
    n, m = len(r), len(s)
    if n == 0 or m == 0:
        return []
    # best[i][j]: (pairs, -deviation) using r[:i] and s[:j]
    best = [[(0, 0.0)] * (m + 1) for _ in range(n + 1)]
    move = [[0] * (m + 1) for _ in range(n + 1)]  # 0 skip r, 1 skip s, 2 pair
    for i in range(1, n + 1):
        row, prev = best[i], best[i - 1]
        for j in range(1, m + 1):
            option, how = prev[j], 0
            if row[j - 1] > option:
                option, how = row[j - 1], 1
            gap = abs(r[i - 1] - s[j - 1])
            if gap <= window:
                paired = (prev[j - 1][0] + 1, prev[j - 1][1] - gap)
                if paired > option:
                    option, how = paired, 2
            row[j], move[i][j] = option, how
    pairs = []
    i, j = n, m
    while i > 0 and j > 0:
        how = move[i][j]
        if how == 2:
            pairs.append((realized_order[i - 1], scheduled_order[j - 1]))
            i, j = i - 1, j - 1
        elif how == 1:
            j -= 1
        else:
            i -= 1
    pairs.reverse()
    return pairs
