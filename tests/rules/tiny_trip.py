"""One trip of the tiny fixture feed, for the trip rule tests (A-07, B-04, D-11).

Shape L runs 3000 m east from stop A (UTM 356000, 7815000) to the corner B, then
4000 m north to C. Trip T-0600 (route T, direction 0) is scheduled to leave A at
06:00:00 on Tuesday 2026-12-01 (America/Sao_Paulo, UTC-3). Tracks are drawn along L
and go through the real trip detection and matching; ping ids are
"v1@<seconds after 06:00>".
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

import numpy as np
import shapely

from geofences import build_geofences
from gtfs import load_feed
from gtfs.projection import Projector
from gtfs.schedule import service_day
from kernel.policy import load_policy
from rules.facts import TripFacts
from trips import Fix, detect_trips
from trips.matching import match_service_day_full
from trips.memo import TrackMemo, measured

FEED = load_feed(Path(__file__).resolve().parents[1] / "gtfs" / "fixtures" / "tiny")
POLICY = load_policy()
GEOFENCES = build_geofences(FEED, POLICY)
LINE_L = FEED.shapes["L"].line
DATE = dt.date(2026, 12, 1)
DAY = service_day(FEED, DATE)
TZ = FEED.timezone
S = DAY.start_epoch + 6 * 3600  # 06:00:00 local, T-0600's scheduled departure
PROJECTOR = Projector(FEED.epsg)
ITINERARY = GEOFENCES.itineraries["T:0:L"]


def at(seconds: float) -> dt.datetime:
    """Local time `seconds` after 06:00:00 of the service date."""
    return dt.datetime(2026, 12, 1, 6, 0, tzinfo=TZ) + dt.timedelta(seconds=seconds)


def track(knots, *, off=(), drop=(), every=10.0) -> list[Fix]:
    """Pings every `every` s and at every knot, from the first knot to the last.

    knots: (seconds after 06:00, metres along shape L), progress interpolated between them.
    off: (t0, t1, metres): pings with t0 <= t <= t1 sit `metres` south of the east leg.
    drop: (t0, t1): pings with t0 < t < t1 are lost."""
    kt, kp = (np.array(v, dtype=float) for v in zip(*knots))
    assert (np.diff(kt) > 0).all() and (np.diff(kp) >= 0).all()
    t = np.union1d(np.arange(kt[0], kt[-1] + 1e-9, every), kt)
    for a, b in drop:
        t = t[(t <= a) | (t >= b)]
    p = np.interp(t, kt, kp)
    pts = shapely.line_interpolate_point(LINE_L, p)
    x, y = shapely.get_x(pts), shapely.get_y(pts)
    for a, b, metres in off:
        inside = (t >= a) & (t <= b)
        assert (p[inside] < 3000 - metres).all(), "off-route stretches are drawn on the east leg"
        x = np.where(inside, 356000.0 + p, x)
        y = np.where(inside, 7815000.0 - metres, y)
    lon, lat = PROJECTOR.to_lonlat(x, y)
    return [Fix(S + ti, xi, yi, 36.0, "T", f"v1@{ti:g}", float(la), float(lo))
            for ti, xi, yi, la, lo in zip(t, x, y, lat, lon)]


def measured_facts_of(fixes) -> TripFacts:
    """`facts_of`, with the fixes' measures as the engine hands them: taken from a track
    memo over the fixes (trips.memo.Along), not measured by the rule."""
    facts = facts_of(fixes)
    return replace(facts, measured=measured(facts.fixes, GEOFENCES, TrackMemo(GEOFENCES)).along(ITINERARY))


def facts_of(fixes) -> TripFacts:
    """The facts the engine would build: the dwell at A, the run and the stay at C."""
    detected = [d for d in detect_trips("v1", fixes, GEOFENCES, POLICY.trips) if d.route_id == "T"]
    assert len(detected) == 1, detected
    (match,) = match_service_day_full(detected, DAY, TZ, POLICY.trips)
    assert match.scheduled is not None and match.scheduled.trip_id == "T-0600"
    return TripFacts(match=match, itinerary=ITINERARY, operator_id=FEED.operator_of("T"), fixes=tuple(fixes),
                     tz=TZ, day_start=DAY.start_epoch)
