"""The GTFS schedule: loading a feed and answering what was scheduled when.

`load_feed` reads a feed (directory or .zip) through gtfs-kit into the plain frozen
model of `gtfs.model`; `gtfs.schedule` resolves service days, scheduled trips and
frequency windows of a date; `gtfs.projection` picks the feed's metric CRS.
"""

from gtfs.errors import FeedError
from gtfs.feed import load_feed
from gtfs.model import (
    Feed,
    FrequencyWindow,
    Pattern,
    Route,
    ScheduledStop,
    ScheduledTrip,
    Shape,
    Stop,
    TripTemplate,
)
from gtfs.schedule import (
    frequency_windows,
    scheduled_trips,
    service_dates,
    service_day_start,
)

__all__ = [
    "Feed",
    "FeedError",
    "FrequencyWindow",
    "Pattern",
    "Route",
    "ScheduledStop",
    "ScheduledTrip",
    "Shape",
    "Stop",
    "TripTemplate",
    "frequency_windows",
    "load_feed",
    "scheduled_trips",
    "service_dates",
    "service_day_start",
]
