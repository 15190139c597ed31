"""Zone values and their vectorized membership tests."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import shapely
from shapely import LineString, Polygon

from geofences.linear import distance_to_line, locate_along
from geofences.segments import SegmentIndex, located_beyond, measure_pairs, segment_index, within
from gtfs.model import Pattern, pattern_key


@dataclass(frozen=True)
class CircleZone:
    """A zone of `radius_m` around a point: membership is an exact distance test."""

    name: str
    x: float
    y: float
    radius_m: float

    def distance(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.hypot(np.asarray(x) - self.x, np.asarray(y) - self.y)

    def contains(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.distance(x, y) <= self.radius_m

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        return (self.x - self.radius_m, self.y - self.radius_m, self.x + self.radius_m, self.y + self.radius_m)

    def meets_along(self, line: LineString) -> np.ndarray:
        """Progress in metres along `line` of each point where it meets the circle (exact:
        per segment, the roots of |start + s (end - start) - centre| = r for s in [0, 1])."""
        start, delta, along = _segments(line)
        offset = start - (self.x, self.y)
        a = np.einsum("ij,ij->i", delta, delta)
        b = 2 * np.einsum("ij,ij->i", delta, offset)
        c = np.einsum("ij,ij->i", offset, offset) - self.radius_m**2
        disc = b * b - 4 * a * c
        real = (a > 0) & (disc >= 0)
        root = np.sqrt(np.where(real, disc, 0.0))
        a = np.where(real, a, 1.0)
        s = np.concatenate(((-b - root) / (2 * a), (-b + root) / (2 * a)))
        keep = np.tile(real, 2) & (s >= 0) & (s <= 1)
        return (np.tile(along[:-1], 2) + s * np.tile(along[1:] - along[:-1], 2))[keep]


@dataclass(frozen=True)
class PolygonZone:
    """A zone drawn as a polygon (GeoJSON override); prepared for fast tests."""

    name: str
    polygon: Polygon

    def __post_init__(self):
        shapely.prepare(self.polygon)

    def distance(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.asarray(shapely.distance(self.polygon, shapely.points(x, y)), dtype=float)

    def contains(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.asarray(shapely.intersects_xy(self.polygon, np.asarray(x), np.asarray(y)), dtype=bool)

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        return tuple(self.polygon.bounds)

    def meets_along(self, line: LineString) -> np.ndarray:
        """Progress in metres along `line` of each point where it meets the polygon's edge
        (every segment against the edge at once; a stretch along the edge gives its ends)."""
        start, delta, along = _segments(line)
        segments = shapely.linestrings(np.stack((start, start + delta), axis=1))
        points, which = shapely.get_coordinates(shapely.intersection(segments, self.polygon.boundary),
                                                return_index=True)
        return along[which] + np.hypot(*(points - start[which]).T)


def _segments(line: LineString) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A line's segments: their starts, their vectors, and the progress at each vertex."""
    coords = shapely.get_coordinates(line)
    delta = np.diff(coords, axis=0)
    return coords[:-1], delta, np.concatenate(([0.0], np.cumsum(np.hypot(*delta.T))))


def spans_along(line: LineString, zone: CircleZone | PolygonZone) -> np.ndarray:
    """The stretches of `line` inside `zone`: (from, to) progress in metres along it, in
    order, one row each; 0 and the line's length where it starts or ends inside. A point
    where the line only touches the edge is no stretch, nor a gap between two; meeting
    points less than a millimetre apart are one."""
    meets = np.sort(np.clip(zone.meets_along(line), 0.0, line.length))
    meets = meets[np.concatenate(([True], np.diff(meets) >= 1e-3))] if len(meets) else meets
    bounds = np.concatenate(([0.0], meets, [line.length]))
    middles = shapely.line_interpolate_point(line, (bounds[:-1] + bounds[1:]) / 2)
    inside = zone.contains(shapely.get_x(middles), shapely.get_y(middles))  # between consecutive bounds
    edges = np.flatnonzero(np.diff(np.concatenate(([False], inside, [False])).astype(np.int8)))
    return np.column_stack((bounds[edges[::2]], bounds[edges[1::2]]))


Zone = CircleZone | PolygonZone


@dataclass(frozen=True)
class SpeedZone:
    zone: PolygonZone
    limit_kmh: float


@dataclass(frozen=True)
class Itinerary:
    """The geofences of one pattern: its shape, corridor, terminals and stops."""

    pattern: Pattern
    line: LineString
    corridor_m: float
    origin: Zone
    destination: Zone
    stops: tuple[CircleZone, ...]

    @functools.cached_property
    def origin_spans_m(self) -> np.ndarray:
        """The stretches of the shape inside the origin zone, (from, to) along it: a bus
        that passed one between two fixes left the zone (trips.detection.origin_fixes)."""
        return spans_along(self.line, self.origin)

    @functools.cached_property
    def destination_spans_m(self) -> np.ndarray:
        """The stretches of the shape inside the destination zone, as `origin_spans_m`."""
        return spans_along(self.line, self.destination)

    @functools.cached_property
    def left_spans_m(self) -> np.ndarray:
        """The origin spans a bus leaves: not one the shape ends in (a circular line's last
        metres, back at its first stop). Read-only, made once (read at every beat)."""
        spans = self.origin_spans_m
        return _read_only(spans[spans[:, 1] < self.length_m])

    @functools.cached_property
    def entered_spans_m(self) -> np.ndarray:
        """The destination spans a bus enters: not one the shape starts in. Read-only, made once."""
        spans = self.destination_spans_m
        return _read_only(spans[spans[:, 0] > 0])

    @functools.cached_property
    def length_m(self) -> float:
        # read at every ping by the live view: measured once (the shape never changes)
        return float(self.line.length)

    def locate(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return locate_along(self.line, x, y)

    def distance(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return distance_to_line(self.line, x, y)

    def in_corridor(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.distance(x, y) <= self.corridor_m

    @functools.cached_property
    def stops_progress_m(self) -> np.ndarray:
        """Metres along the shape of each of `stops` (the shape never changes: located once)."""
        progress = self.locate(np.array([s.x for s in self.stops]), np.array([s.y for s in self.stops]))
        progress.flags.writeable = False  # shared by every reader
        return progress


@dataclass(frozen=True)
class Geofences:
    itineraries: dict[str, Itinerary]  # by Pattern.key
    speed_zones: tuple[SpeedZone, ...]
    default_speed_limit_kmh: float
    # every stop of the feed (stops.txt), the marked stops, whether or not a trip serves it
    marked_stops: tuple[CircleZone, ...] = ()

    def itinerary(self, route_id: str, direction_id: int, shape_id: str) -> Itinerary:
        """The itinerary a trip, a log or a pass names by its route, direction and shape."""
        return self.itineraries[pattern_key(route_id, direction_id, shape_id)]

    @functools.cached_property
    def _itinerary_order(self) -> tuple[tuple[Itinerary, ...], dict[str, int], dict[int, tuple[int, ...]]]:
        """The itineraries in the feed's order, each key's place in it, and per terminal zone
        (by id) the places of the itineraries that start or end in it."""
        itineraries = tuple(self.itineraries.values())
        by_zone: dict[int, list[int]] = {}
        for place, itinerary in enumerate(itineraries):
            for zone in {id(itinerary.origin), id(itinerary.destination)}:
                by_zone.setdefault(zone, []).append(place)
        return itineraries, {key: place for place, key in enumerate(self.itineraries)}, \
            {zone: tuple(places) for zone, places in by_zone.items()}

    def itineraries_near(self, keys: Iterable[str], zones: Iterable[int] = ()) -> list[Itinerary]:
        """The itineraries named by `keys` (Pattern.key) or starting or ending in one of
        `zones` (by id), in the feed's order: what a vehicle's fixes on those corridors and
        in those zones can concern, found without reading the others (a city has hundreds,
        a vehicle is near a handful)."""
        itineraries, place, by_zone = self._itinerary_order
        found = {place[key] for key in keys}
        for zone in zones:
            found.update(by_zone.get(zone, ()))
        return [itineraries[i] for i in sorted(found)]

    @functools.cached_property
    def origin_zones(self) -> tuple[Zone, ...]:
        """The itineraries' origin zones, one per name."""
        return tuple({i.origin.name: i.origin for i in self.itineraries.values()}.values())

    @functools.cached_property
    def _stop_index(self) -> shapely.STRtree:
        return shapely.STRtree(shapely.points([(s.x, s.y) for s in self.marked_stops]))

    def nearest_stop(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, list[str | None]]:
        """Per position: the distance to the nearest marked stop (inf without any) and its id."""
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if len(x) == 0 or not self.marked_stops:
            return np.full(len(x), np.inf), [None] * len(x)
        position, which = self._stop_index.query_nearest(shapely.points(x, y), all_matches=False)
        nearest = np.zeros(len(x), dtype=int)
        nearest[position] = which
        stops = [self.marked_stops[i] for i in nearest.tolist()]
        distance = np.hypot(x - np.array([s.x for s in stops]), y - np.array([s.y for s in stops]))
        return distance, [s.name for s in stops]

    def in_any_terminal(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Which positions lie in some itinerary's terminal zone."""
        inside = np.zeros(len(np.asarray(x)), dtype=bool)
        for _, mask in self.in_terminal_zones(x, y):
            inside |= mask
        return inside

    def on_any_corridor(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Which positions lie within some itinerary's corridor (on a line's streets)."""
        inside = np.zeros(len(np.asarray(x)), dtype=bool)
        for _, mask in self.on_corridors(x, y):
            inside |= mask
        return inside

    def speed_limit(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Speed limit at each position: the lowest zone containing it, else the default."""
        zoned = np.full(len(x), np.inf)
        for speed_zone in self.speed_zones:
            inside = speed_zone.zone.contains(x, y)
            zoned = np.where(inside, np.minimum(zoned, speed_zone.limit_kmh), zoned)
        return np.where(np.isfinite(zoned), zoned, self.default_speed_limit_kmh)

    @functools.cached_property
    def _corridor_index(self) -> tuple[tuple[Itinerary, ...], shapely.STRtree, float]:
        # built on first use (a frozen value: the index never changes after)
        itineraries = tuple(self.itineraries.values())
        widest = max((i.corridor_m for i in itineraries), default=0.0)
        return itineraries, shapely.STRtree([i.line for i in itineraries]), widest

    @functools.cached_property
    def segments(self) -> SegmentIndex:
        """The itineraries' shapes cut into segments, numbered in the order of `itineraries`
        (built on first use)."""
        return segment_index([i.line for i in self.itineraries.values()])

    def measure_pairs(self, x: np.ndarray, y: np.ndarray, position: np.ndarray,
                      which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per (position, itinerary) pair, the itinerary numbered as `segments` numbers it: the
        distance to its shape and the progress along it, exactly `Itinerary.distance` and
        `Itinerary.locate`, for pairs of many itineraries at once: one segment-index query
        for the pairs within the widest corridor (a bus on its itinerary), shapely pair by
        pair for the others (geofences.segments.measure_pairs)."""
        return measure_pairs(self.segments, x, y, position, which, self._corridor_index[2])

    def near_any_itinerary(self, x: np.ndarray, y: np.ndarray, metres: float) -> np.ndarray:
        """Which positions lie within `metres` of some itinerary's shape: GEOS's `dwithin` on
        the whole shapes (one index query), asked only for the positions outside the area
        `surely_near` gives (a bus on the network is inside it: one point-in-polygon test).
        At the policy's 20 km every shape of a city is within `metres` of a bus, and the
        query read all of them, ~255 vertices each, for every position."""
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        near = np.zeros(len(x), dtype=bool)
        if not len(x) or not self.itineraries:
            return near
        area = self._surely_near.get(metres, _UNBUILT)
        if area is _UNBUILT:
            area = self._surely_near[metres] = surely_near(self.segments.lines, metres)
        if area is not None:
            near[:] = shapely.contains_xy(area, x, y)  # NaN is outside: asked below, where GEOS refuses it
        if not near.all():
            asked = np.flatnonzero(~near)
            itineraries, tree, _ = self._corridor_index
            position, _ = tree.query(shapely.points(x[asked], y[asked]), predicate="dwithin", distance=metres)
            near[asked[position]] = True
        return near

    @functools.cached_property
    def _surely_near(self) -> dict[float, shapely.Geometry | None]:
        """`surely_near` of the shapes by `metres` (a cache: the shapes never change)."""
        return {}

    def on_corridors(self, x: np.ndarray, y: np.ndarray) -> list[tuple[Itinerary, np.ndarray]]:
        """The itineraries with a position inside their corridor, each with the mask of the
        positions that are (as `Itinerary.in_corridor`), in the order of `itineraries`.
        One spatial-index query instead of a distance to every itinerary: in a city of
        hundreds of itineraries a vehicle is near a handful."""
        x = np.asarray(x, dtype=float)
        itineraries, position, which, inside, _ = self.near_corridors(x, y)
        found = []
        for index in np.unique(which):
            mask = np.zeros(len(x), dtype=bool)
            mask[position[(which == index) & inside]] = True
            found.append((itineraries[index], mask))
        return found

    def near_corridors(self, x: np.ndarray, y: np.ndarray
                       ) -> tuple[tuple[Itinerary, ...], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every pair of a position and an itinerary whose shape it lies within the widest
        corridor of, from one segment-index query: the itineraries, and per pair the
        position's index, the itinerary's index, whether the position is inside that
        itinerary's own corridor (a narrower corridor tested by its distance) and its
        progress along the shape (exactly `Itinerary.locate`)."""
        itineraries, position, which, inside, progress, _ = self.near_shapes(x, y)
        return itineraries, position, which, inside, progress

    def near_shapes(self, x: np.ndarray, y: np.ndarray
                    ) -> tuple[tuple[Itinerary, ...], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`near_corridors`, with each pair's distance to the shape too (what the live view
        measures: `measure_pairs` finds its pairs within the widest corridor this way)."""
        itineraries, _, widest = self._corridor_index
        position, which, distance, progress = within(self.segments, x, y, widest)
        inside = distance <= self._corridor_widths[which]
        return itineraries, position, which, inside, progress, distance

    @functools.cached_property
    def _corridor_widths(self) -> np.ndarray:
        """Each itinerary's corridor (metres), in `_corridor_index`'s order."""
        return np.array([i.corridor_m for i in self._corridor_index[0]] or [0.0])

    def measured_beyond(self, x: np.ndarray, y: np.ndarray, position: np.ndarray, which: np.ndarray,
                        distance: np.ndarray, progress: np.ndarray, hit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`measure_pairs` for the pairs not found within the widest corridor (`hit` False),
        the others' values given (geofences.segments.located_beyond)."""
        return located_beyond(self.segments, x, y, position, which, distance, progress, hit)

    @functools.cached_property
    def _terminal_index(self) -> tuple[tuple[Zone, ...], shapely.STRtree]:
        zones = tuple({id(z): z for i in self.itineraries.values() for z in (i.origin, i.destination)}.values())
        # a millimetre around each bound: a position on a zone's edge is never left out by rounding
        return zones, shapely.STRtree([shapely.box(*zone.bounds).buffer(1e-3, join_style="mitre") for zone in zones])

    @functools.cached_property
    def terminal_zone_ids(self) -> frozenset[int]:
        return frozenset(id(zone) for zone in self._terminal_index[0])

    def in_terminal_zones(self, x: np.ndarray, y: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """The itineraries' terminal zones with a position inside, by id, each with the mask
        of the positions that are (exactly `zone.contains`): one spatial-index query on the
        zones' bounds, the exact test only where a bound holds a position."""
        zones, tree = self._terminal_index
        if len(x) == 0 or not zones:
            return []
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        position, which = tree.query(shapely.points(x, y))
        # every circle's candidates tested at once, as CircleZone.contains tests them (the
        # same operations per element, so the same bits); a polygon zone is tested on its own
        circle, centre_x, centre_y, radius = self._terminal_circles
        inside = np.zeros(len(position), dtype=bool)
        round_ = circle[which]
        at, of = position[round_], which[round_]
        inside[round_] = np.hypot(x[at] - centre_x[of], y[at] - centre_y[of]) <= radius[of]
        for index in np.unique(which[~round_]).tolist():
            candidates = np.flatnonzero(which == index)
            inside[candidates] = zones[index].contains(x[position[candidates]], y[position[candidates]])
        position, which = position[inside], which[inside]
        found = []
        for index in np.unique(which).tolist():
            mask = np.zeros(len(x), dtype=bool)
            mask[position[which == index]] = True
            found.append((id(zones[index]), mask))
        return found

    @functools.cached_property
    def _terminal_circles(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per terminal zone (`_terminal_index`'s order): whether it is a circle, and its
        centre and radius (NaN for a polygon)."""
        zones = self._terminal_index[0]
        circle = np.array([isinstance(zone, CircleZone) for zone in zones], dtype=bool)
        centre_x, centre_y, radius = (np.array([getattr(zone, name) if isinstance(zone, CircleZone) else np.nan
                                                for zone in zones], dtype=float) for name in ("x", "y", "radius_m"))
        return circle, centre_x, centre_y, radius

    def for_route(self, route_id: str | None) -> tuple[Itinerary, ...]:
        if route_id is None:
            return tuple(self.itineraries.values())
        return tuple(i for i in self.itineraries.values() if i.pattern.route_id == route_id)


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


_UNBUILT = object()
# Above this radius the metre `surely_near` keeps inside it is under the rounding of the
# discs' vertices and of GEOS's own distance (review A found points the area holds that
# `dwithin` refuses from 1e15 m, and the discs' union failing near 1e308 m); 1e9 m is
# 50,000 times the policy's 20 km.
SURELY_NEAR_MOST_METRES = 1e9


def surely_near(lines: Sequence[LineString], metres: float, most_discs: int = 256) -> shapely.Geometry | None:
    """An area (prepared) whose every point GEOS measures nearer than `metres` to some of
    `lines`, holding most positions within half of `metres` of their vertices (a bus on
    its line): discs of `metres` less a metre around vertices of the lines, one vertex per
    square of `metres` / 4 (a line is never farther from a point than its vertices are; a
    disc's polygon lies inside its circle, and the metre is far more than any rounding).
    None when that takes more than `most_discs` discs (a radius small for the network:
    the area would cost more than the query it saves), when `metres` is not over a metre,
    or when it is over `SURELY_NEAR_MOST_METRES`."""
    if not 1.0 < metres <= SURELY_NEAR_MOST_METRES or not len(lines):
        return None
    coords = shapely.get_coordinates(np.asarray(lines, dtype=object))
    _, first = np.unique(np.floor(coords / (metres / 4)), axis=0, return_index=True)
    if len(first) > most_discs:
        return None
    area = shapely.buffer(shapely.multipoints(coords[np.sort(first)]), metres - 1.0)
    shapely.prepare(area)
    return area
