"""Realized trips: detecting them in a vehicle's track and matching them to the schedule.

`trips.detection` finds trips in a track (pure, vectorized over pings);
`trips.tracker` keeps a vehicle's track between batches of pings (the state a Faust
table holds); `trips.matching` pairs realized and scheduled trips of a service day.
"""

from trips.detection import detect_trips
from trips.matching import match_service_day
from trips.model import DetectedTrip, Fix, RealizedTrip, Track
from trips.tracker import advance_track, new_track

__all__ = [
    "DetectedTrip",
    "Fix",
    "RealizedTrip",
    "Track",
    "advance_track",
    "detect_trips",
    "match_service_day",
    "new_track",
]
