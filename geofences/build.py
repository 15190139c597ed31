"""Building the geofences of a feed, with optional GeoJSON overrides.

Overrides are a GeoJSON FeatureCollection in WGS84. Supported features:
- `{"kind": "speed_zone", "speed_limit_kmh": 40}` with a (Multi)Polygon: the limit there
  (lower or higher than the policy's default; the lowest where zones overlap);
- `{"kind": "terminal_zone", "stop_id": "..."}` with a (Multi)Polygon: replaces the circle
  of `terminal_zone_m` around that terminal stop (e.g. a garage yard or a bus station).
A terminal without a polygon is a circle of the policy's `terminal_zone_m_by_stop` for
that stop (buses lay over away from the feed's stop point), else of `terminal_zone_m`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import shapely
from shapely.geometry import shape as geojson_shape

from geofences.zones import CircleZone, Geofences, Itinerary, PolygonZone, SpeedZone, Zone
from gtfs.model import Feed, pattern_key
from gtfs.projection import Projector
from kernel.errors import FiscalizaError
from kernel.policy import Policy


class GeofenceError(FiscalizaError, ValueError):
    """A geofence override file is unreadable or invalid."""


def build_geofences(feed: Feed, policy: Policy, overrides: Path | None = None) -> Geofences:
    projector = Projector(feed.epsg)
    speed_zones, terminal_overrides = _read_overrides(overrides, projector) if overrides else ((), {})
    radius = policy.trips.terminal_zone_m
    stop_radius = policy.a07.stop_radius_m

    def terminal(stop_id: str) -> Zone:
        if stop_id in terminal_overrides:
            return terminal_overrides[stop_id]
        point = feed.stops[stop_id].point
        return CircleZone(stop_id, point.x, point.y, policy.trips.terminal_zone_m_by_stop.get(stop_id, radius))

    stops_of_pattern: dict[str, tuple[str, ...]] = {}
    for trip in feed.trips.values():
        key = pattern_key(trip.route_id, trip.direction_id, trip.shape_id)
        stops_of_pattern.setdefault(key, tuple(s.stop_id for s in trip.stops))

    itineraries = {}
    for pattern in feed.patterns:
        stop_ids = stops_of_pattern[pattern.key]
        itineraries[pattern.key] = Itinerary(
            pattern=pattern,
            line=feed.shapes[pattern.shape_id].line,
            corridor_m=policy.trips.corridor_m,
            origin=terminal(pattern.origin_stop_id),
            destination=terminal(pattern.destination_stop_id),
            stops=tuple(
                CircleZone(s, feed.stops[s].point.x, feed.stops[s].point.y, stop_radius) for s in stop_ids
            ),
        )
    terminals = {s for i in itineraries.values() for s in (i.pattern.origin_stop_id, i.pattern.destination_stop_id)}
    for stop_id in sorted(set(policy.trips.terminal_zone_m_by_stop) - terminals):
        # a mistyped stop would silently leave its terminal at the default radius
        raise GeofenceError(f"policy trips.terminal_zone_m_by_stop: {stop_id!r} is no terminal stop of the feed")
    return Geofences(
        itineraries=itineraries,
        speed_zones=tuple(speed_zones),
        default_speed_limit_kmh=policy.c01.default_limit_kmh,
        marked_stops=tuple(CircleZone(s.stop_id, s.point.x, s.point.y, stop_radius)
                           for s in sorted(feed.stops.values(), key=lambda s: s.stop_id)),
    )


def _read_overrides(path: Path, projector: Projector):
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GeofenceError(f"cannot read geofence overrides {path}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("type") != "FeatureCollection":
        raise GeofenceError(f"{path}: geofence overrides must be a GeoJSON FeatureCollection")

    def project(coords: np.ndarray) -> np.ndarray:
        return np.column_stack(projector.to_xy(coords[:, 0], coords[:, 1]))

    features = doc.get("features", [])
    if not isinstance(features, list):
        raise GeofenceError(f"{path}: 'features' must be a list")
    speed_zones, terminals = [], {}
    for index, feature in enumerate(features):
        if not isinstance(feature, dict):
            raise GeofenceError(f"{path}: feature {index}: not a GeoJSON Feature object")
        props = feature.get("properties") or {}
        if not isinstance(props, dict):
            raise GeofenceError(f"{path}: feature {index}: 'properties' must be an object")
        try:
            geometry = shapely.transform(geojson_shape(feature["geometry"]), project)
        except Exception as exc:  # shapely raises several types for bad GeoJSON
            raise GeofenceError(f"{path}: feature {index}: invalid geometry: {exc}") from None
        if geometry.geom_type not in ("Polygon", "MultiPolygon") or not geometry.is_valid:
            raise GeofenceError(f"{path}: feature {index}: zones must be valid (Multi)Polygons")
        kind = props.get("kind")
        if kind == "speed_zone":
            limit = props.get("speed_limit_kmh")
            if not isinstance(limit, (int, float)) or isinstance(limit, bool) or limit <= 0:
                raise GeofenceError(f"{path}: feature {index}: speed_zone needs a positive speed_limit_kmh")
            name = str(props.get("name", f"speed_zone_{index}"))
            speed_zones.append(SpeedZone(PolygonZone(name, geometry), float(limit)))
        elif kind == "terminal_zone":
            stop_id = props.get("stop_id")
            if not isinstance(stop_id, str):
                raise GeofenceError(f"{path}: feature {index}: terminal_zone needs a stop_id")
            terminals[stop_id] = PolygonZone(stop_id, geometry)
        else:
            raise GeofenceError(f"{path}: feature {index}: unknown kind {kind!r}")
    shapely.prepare([z.zone.polygon for z in speed_zones])
    return speed_zones, terminals
