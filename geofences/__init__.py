"""Geofences built from the feed: itinerary corridors, stop, terminal and speed zones.

All geometry is in the feed's metric CRS and every test is vectorized over arrays of
positions (shapely 2 / numpy); nothing here loops over points in Python.
"""

from geofences.build import GeofenceError, build_geofences
from geofences.linear import distance_to_line, locate_along
from geofences.zones import CircleZone, Geofences, Itinerary, PolygonZone, SpeedZone

__all__ = [
    "CircleZone",
    "GeofenceError",
    "Geofences",
    "Itinerary",
    "PolygonZone",
    "SpeedZone",
    "build_geofences",
    "distance_to_line",
    "locate_along",
]
