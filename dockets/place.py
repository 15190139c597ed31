"""Where an infraction happened, in words (art. 5 III: "local, data e hora")."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from pyproj import Transformer

from gtfs import Feed


def place_finder(feed: Feed) -> Callable[[Mapping], str | None]:
    """A function giving an infraction's place: the nearest stop and the coordinates."""
    stops = list(feed.stops.values())
    to_metric = Transformer.from_crs(4326, feed.epsg, always_xy=True)
    xs = np.array([s.point.x for s in stops])
    ys = np.array([s.point.y for s in stops])

    def place(record: Mapping) -> str | None:
        lat, lon = record.get("lat"), record.get("lon")
        if lat is None or lon is None:
            return None
        where = f"lat. {lat:.6f}, long. {lon:.6f}"
        if not stops:
            return where
        x, y = to_metric.transform(lon, lat)
        distances = np.hypot(xs - x, ys - y)
        nearest = int(np.argmin(distances))
        stop = f"ponto {stops[nearest].name} ({stops[nearest].stop_id})"
        if round(distances[nearest]) == 0:  # "a 0 m do ponto" reads as a misprint
            return f"no {stop}; {where}"
        return f"a {distances[nearest]:.0f} m do {stop}; {where}"

    return place
