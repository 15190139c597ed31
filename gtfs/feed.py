"""Reading a GTFS feed (directory or .zip) with gtfs-kit into `gtfs.model`."""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import gtfs_kit as gk
import numpy as np
import pandas as pd
import shapely

from gtfs.contract import first_problem
from gtfs.errors import FeedError
from gtfs.model import (
    Agency,
    Feed,
    Frequency,
    Pattern,
    Route,
    ScheduledStop,
    Shape,
    Stop,
    TripTemplate,
)
from gtfs.projection import Projector, utm_epsg_for

_LISTED = 10  # how many offending ids an error message names


def load_feed(path: str | Path) -> Feed:
    """Load and check a feed; raises FeedError with a one-line reason."""
    path = Path(path)
    if not path.exists():
        raise FeedError(f"cannot read feed {path}: no such file or directory")
    if path.is_file() and not zipfile.is_zipfile(path):
        raise FeedError(f"cannot read feed {path}: neither a directory nor a .zip file")
    try:
        raw = gk.read_feed(path, dist_units="m")
    except Exception as exc:  # gtfs-kit raises assorted errors for broken feeds
        raise FeedError(f"cannot read feed {path}: {_one_line(exc)}") from None
    for table in ("agency", "routes", "trips", "stop_times", "stops"):
        if getattr(raw, table, None) is None or raw.__getattribute__(table).empty:
            raise FeedError(f"feed {path} has no {table}.txt (or it is empty)")
    if raw.shapes is None or raw.shapes.empty:
        raise FeedError(
            f"feed {path} has no shapes.txt: every trip needs its itinerary (shape) to be enforced"
        )
    problem = first_problem(raw)
    if problem is not None:
        raise FeedError(f"feed {path}: {problem.line()}")
    tz = _timezone(raw, path)

    lon0, lat0 = float(raw.shapes["shape_pt_lon"].mean()), float(raw.shapes["shape_pt_lat"].mean())
    epsg = utm_epsg_for(lon0, lat0)
    projector = Projector(epsg)

    shapes = _shapes(raw.shapes, projector)
    stops = _stops(raw.stops, projector)
    trips = _trips(raw, shapes, stops, path)
    frequencies = _frequencies(raw.frequencies)
    service_days = _service_days(raw)
    patterns = tuple(
        sorted(
            {
                Pattern(t.route_id, t.direction_id, t.shape_id, t.stops[0].stop_id, t.stops[-1].stop_id)
                for t in trips.values()
            },
            key=lambda p: p.key,
        )
    )
    agencies = {
        str(r.agency_id): Agency(str(r.agency_id), str(r.agency_name))
        for r in raw.agency.assign(agency_id=raw.agency.get("agency_id", "")).itertuples()
    }
    routes = {
        str(r.route_id): Route(
            route_id=str(r.route_id),
            agency_id=_agency_of(r, agencies),
            short_name=_text(getattr(r, "route_short_name", "")),
            long_name=_text(getattr(r, "route_long_name", "")),
        )
        for r in raw.routes.itertuples()
    }
    return Feed(
        timezone=tz,
        epsg=epsg,
        agencies=agencies,
        routes=routes,
        stops=stops,
        shapes=shapes,
        trips=trips,
        frequencies=frequencies,
        service_days=service_days,
        patterns=patterns,
    )


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def _text(value) -> str:
    # gtfs-kit reads text columns as pandas strings: an empty cell is pd.NA, not NaN
    return "" if value is None or (not isinstance(value, str) and pd.isna(value)) else str(value)


def _agency_of(route, agencies: dict[str, Agency]) -> str:
    agency_id = _text(getattr(route, "agency_id", ""))
    if not agency_id and len(agencies) == 1:
        return next(iter(agencies))  # GTFS allows omitting it when there is one agency
    return agency_id


def _timezone(raw, path: Path) -> ZoneInfo:
    names = raw.agency["agency_timezone"].dropna().unique().tolist()
    if not names:
        raise FeedError(f"feed {path}: agency.txt has no agency_timezone")
    try:
        return ZoneInfo(str(names[0]))
    except (ZoneInfoNotFoundError, ValueError):
        raise FeedError(f"feed {path}: unknown agency_timezone {names[0]!r}") from None


def _shapes(df: pd.DataFrame, projector: Projector) -> dict[str, Shape]:
    df = df.sort_values(["shape_id", "shape_pt_sequence"], kind="stable")
    x, y = projector.to_xy(df["shape_pt_lon"].to_numpy(), df["shape_pt_lat"].to_numpy())
    codes, ids = pd.factorize(df["shape_id"].astype(str), sort=False)
    lines = shapely.linestrings(np.column_stack([x, y]), indices=codes)
    return {str(shape_id): Shape(str(shape_id), line) for shape_id, line in zip(ids, lines)}


def _stops(df: pd.DataFrame, projector: Projector) -> dict[str, Stop]:
    x, y = projector.to_xy(df["stop_lon"].to_numpy(), df["stop_lat"].to_numpy())
    points = shapely.points(x, y)
    names = df["stop_name"] if "stop_name" in df else pd.Series("", index=df.index)
    return {
        str(sid): Stop(str(sid), _text(name), float(lat), float(lon), pt)
        for sid, name, lat, lon, pt in zip(df["stop_id"], names, df["stop_lat"], df["stop_lon"], points)
    }


def _seconds(times: pd.Series) -> np.ndarray:
    """HH:MM:SS (HH may exceed 23) to seconds; NaN where empty."""
    parts = times.astype("string").str.strip().str.split(":", expand=True)
    if parts.shape[1] != 3:
        parts = parts.reindex(columns=range(3))
    numbers = parts.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    return numbers[:, 0] * 3600 + numbers[:, 1] * 60 + numbers[:, 2]


def _trips(raw, shapes: dict[str, Shape], stops: dict[str, Stop], path: Path) -> dict[str, TripTemplate]:
    st = raw.stop_times.sort_values(["trip_id", "stop_sequence"], kind="stable").copy()
    st["trip_id"] = st["trip_id"].astype(str)
    st["stop_id"] = st["stop_id"].astype(str)
    unknown = sorted(set(st["stop_id"]) - set(stops))
    if unknown:
        raise FeedError(f"feed {path}: stop_times.txt names unknown stops: {', '.join(unknown[:_LISTED])}")
    trips = raw.trips.copy()
    trips["trip_id"] = trips["trip_id"].astype(str)
    trips = trips.set_index("trip_id")
    st["shape_id"] = st["trip_id"].map(trips["shape_id"].astype(str))

    # Position of each stop along its trip's shape, one vectorized call per shape.
    st["shape_dist_m"] = np.nan
    for shape_id, rows in st.groupby("shape_id", sort=False).groups.items():
        points = [stops[s].point for s in st.loc[rows, "stop_id"]]
        st.loc[rows, "shape_dist_m"] = shapely.line_locate_point(shapes[shape_id].line, points)

    arrival = _seconds(st["arrival_time"])
    departure = _seconds(st["departure_time"])
    arrival = np.where(np.isnan(arrival), departure, arrival)
    departure = np.where(np.isnan(departure), arrival, departure)
    st["arrival_s"], st["departure_s"] = arrival, departure
    if "timepoint" in st:
        timepoint = pd.to_numeric(st["timepoint"], errors="coerce")
        # An empty timepoint means exact times where times are given (GTFS).
        st["timepoint_flag"] = np.where(timepoint.isna(), ~np.isnan(arrival), timepoint == 1)
    else:
        st["timepoint_flag"] = ~np.isnan(arrival)

    result: dict[str, TripTemplate] = {}
    for trip_id, group in st.groupby("trip_id", sort=False):
        if trip_id not in trips.index:
            continue
        meta = trips.loc[trip_id]
        arr, dep = _interpolate_times(group)
        if np.isnan(arr[0]) or np.isnan(dep[-1]):
            raise FeedError(f"feed {path}: trip {trip_id} lacks times at its first or last stop")
        scheduled = tuple(
            ScheduledStop(
                stop_id=sid,
                stop_sequence=int(seq),
                arrival_s=int(round(a)),
                departure_s=int(round(d)),
                timepoint=bool(tp),
                shape_dist_m=float(dist),
            )
            for sid, seq, a, d, tp, dist in zip(
                group["stop_id"], group["stop_sequence"], arr, dep, group["timepoint_flag"], group["shape_dist_m"]
            )
        )
        direction = meta.get("direction_id")
        block = meta.get("block_id")
        result[trip_id] = TripTemplate(
            trip_id=trip_id,
            route_id=str(meta["route_id"]),
            service_id=str(meta["service_id"]),
            direction_id=0 if pd.isna(direction) else int(direction),
            shape_id=str(meta["shape_id"]),
            block_id=None if block is None or pd.isna(block) or block == "" else str(block),
            headsign=_text(meta.get("trip_headsign", "")),
            stops=scheduled,
        )
    no_stops = sorted(set(trips.index) - set(result))
    if no_stops:
        raise FeedError(f"feed {path}: trips without stop times: {', '.join(no_stops[:_LISTED])}")
    return result


def _interpolate_times(group: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Fill times left empty at non-timepoint stops, linearly along the shape from the
    departure of the last timed stop to the arrival at the next one."""
    arr = group["arrival_s"].to_numpy(dtype=float)
    dep = group["departure_s"].to_numpy(dtype=float)
    known = ~np.isnan(arr)
    if known.all() or known.sum() < 2:
        return arr, dep
    dist = group["shape_dist_m"].to_numpy(dtype=float)
    index = np.arange(len(arr))
    previous = np.maximum.accumulate(np.where(known, index, 0))
    following = np.minimum.accumulate(np.where(known, index, len(arr) - 1)[::-1])[::-1]
    span = dist[following] - dist[previous]
    fraction = np.divide(dist - dist[previous], span, out=np.zeros_like(span), where=span > 0)
    filled = dep[previous] + fraction * (arr[following] - dep[previous])
    return np.where(known, arr, filled), np.where(known, dep, filled)


def _frequencies(df: pd.DataFrame | None) -> tuple[Frequency, ...]:
    if df is None or df.empty:
        return ()
    start, end = _seconds(df["start_time"]), _seconds(df["end_time"])
    exact = df["exact_times"] if "exact_times" in df else pd.Series(0, index=df.index)
    return tuple(
        Frequency(str(t), int(s), int(e), int(h), bool(x == 1))
        for t, s, e, h, x in zip(df["trip_id"], start, end, df["headway_secs"], exact.fillna(0))
    )


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _service_days(raw) -> dict[str, frozenset[dt.date]]:
    """Each service's dates, by the GTFS rules: calendar.txt's weekdays between its start
    and end dates, then calendar_dates.txt's additions (1) and removals (2). Done per
    service over date ranges: gtfs-kit's per-date `get_active_services` takes a second for
    a two-year calendar, and every feed load paid it."""
    days: dict[str, set[dt.date]] = {}
    calendar = raw.calendar if raw.calendar is not None else pd.DataFrame(columns=["service_id"])
    for row in calendar.itertuples(index=False):
        running = {i for i, name in enumerate(_WEEKDAYS) if int(getattr(row, name)) == 1}
        dates = pd.date_range(pd.to_datetime(str(row.start_date), format="%Y%m%d"),
                              pd.to_datetime(str(row.end_date), format="%Y%m%d"))
        days.setdefault(str(row.service_id), set()).update(
            d.date() for d in dates[np.isin(dates.day_of_week, list(running))])
    exceptions = raw.calendar_dates if raw.calendar_dates is not None else pd.DataFrame(columns=["service_id"])
    for row in exceptions.itertuples(index=False):
        date = dt.datetime.strptime(str(row.date), "%Y%m%d").date()
        service = days.setdefault(str(row.service_id), set())
        if int(row.exception_type) == 1:
            service.add(date)
        else:
            service.discard(date)
    return {service_id: frozenset(dates) for service_id, dates in days.items() if dates}
