"""The feed's itineraries as the detour map draws them: each pattern's shape and stops in
WGS84 (the feed keeps shapes in its metric CRS), small enough to go in the page."""

from __future__ import annotations

import numpy as np

from gtfs import Feed
from gtfs.projection import Projector

DECIMALS = 6  # ~0.1 m: finer than any GPS fix, and a short page


def itineraries(feed: Feed) -> list[dict]:
    """One entry per pattern (route, direction, shape), ordered by route and direction:
    `route_id`, `direction_id`, `name` (pt-BR), `line` as [lat, lon] pairs (Leaflet's order)
    and `stops` ({name, lat, lon}) in the order a trip serves them."""
    projector = Projector(feed.epsg)
    first_trip = {}  # (route, direction, shape) -> its first trip by trip_id: one pass over the trips
    for trip in sorted(feed.trips.values(), key=lambda t: t.trip_id):
        first_trip.setdefault((trip.route_id, trip.direction_id, trip.shape_id), trip)
    found = []
    for pattern in sorted(feed.patterns, key=lambda p: (p.route_id, p.direction_id, p.shape_id)):
        trip = first_trip.get((pattern.route_id, pattern.direction_id, pattern.shape_id))
        if trip is None:
            continue
        coords = np.asarray(feed.shapes[pattern.shape_id].line.coords)
        lon, lat = projector.to_lonlat(coords[:, 0], coords[:, 1])
        route = feed.routes[pattern.route_id]
        stops = [feed.stops[s.stop_id] for s in trip.stops if s.stop_id in feed.stops]
        found.append({
            "route_id": pattern.route_id,
            "direction_id": pattern.direction_id,
            "name": f"Linha {route.short_name} — {route.long_name}, sentido {trip.headsign}".strip(),
            "line": [[round(float(a), DECIMALS), round(float(o), DECIMALS)] for a, o in zip(lat, lon)],
            "stops": [{"name": s.name, "lat": round(s.lat, DECIMALS), "lon": round(s.lon, DECIMALS)} for s in stops],
        })
    return found
