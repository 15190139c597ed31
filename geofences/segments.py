"""Every shape cut into its segments, one spatial index over all of them: the (position,
shape) pairs within a radius, with each pair's distance to the shape and progress along
it, for a whole batch of positions in one index query and a few numpy operations.

The per-shape calls (`shapely.distance`, `shapely.line_locate_point`) walk every segment
of a shape for every position; here only the segments near a position are read. The
numbers are GEOS's own, to the last bit: a segment's distance is computed as GEOS's
`Distance::pointToSegment` computes it (the same floating-point operations in the same
order), a shape's distance is its nearest segment's, and a position's progress is GEOS's
`LengthIndexOfPoint`: the first segment along the shape at the least distance (a point
as near to a later pass of a looping shape is located on the first), the running sum of
the segments' lengths before it, plus its projection on it clamped to the segment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import shapely
from shapely import LineString


@dataclass(frozen=True, eq=False)
class SegmentIndex:
    """The segments of a sequence of shapes (metric coordinates), in shape order and, within
    a shape, in order along it, as parallel arrays; the index is over their bounds."""

    ax: np.ndarray  # segment start
    ay: np.ndarray
    bx: np.ndarray  # segment end
    by: np.ndarray
    start_m: np.ndarray  # progress along its shape at the segment's start
    shape: np.ndarray  # index of its shape in `lines`
    lines: np.ndarray  # the shapes, in the order given
    tree: shapely.STRtree


def segment_index(lines: Sequence[LineString]) -> SegmentIndex:
    """The index of `lines`' segments (built once per feed: the shapes never change)."""
    shapes = np.empty(len(lines), dtype=object)
    shapes[:] = list(lines)
    coords, owner = shapely.get_coordinates(shapes, return_index=True)
    one_shape = owner[:-1] == owner[1:]  # consecutive vertices of one shape make a segment
    a, b, shape = coords[:-1][one_shape], coords[1:][one_shape], owner[:-1][one_shape].astype(np.intp)
    length = _length(a[:, 0], a[:, 1], b[:, 0], b[:, 1])
    # progress at each segment's start: the lengths before it on its shape, summed one by
    # one from the shape's start as GEOS sums them (np.cumsum adds in order)
    start_m = np.concatenate([np.concatenate(([0.0], np.cumsum(part)[:-1]))
                              for part in np.split(length, np.flatnonzero(np.diff(shape)) + 1) if len(part)] or
                             [np.empty(0)])
    ax, ay, bx, by = (np.ascontiguousarray(column) for column in (a[:, 0], a[:, 1], b[:, 0], b[:, 1]))
    return SegmentIndex(ax, ay, bx, by, start_m, shape, shapes,
                        shapely.STRtree(shapely.linestrings(np.stack((a, b), axis=1))))


def within(index: SegmentIndex, x: np.ndarray, y: np.ndarray, radius: float
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every (position, shape) pair at most `radius` metres apart, from one index query:
    per pair the position's index, the shape's, the distance to the shape and the
    progress along it (exactly `shapely.distance` and `shapely.line_locate_point`),
    sorted by position, then shape."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    none = np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp), np.empty(0), np.empty(0)
    if len(x) == 0 or len(index.ax) == 0:
        return none
    # the candidates: segments whose bounds meet the square of the radius around a position
    # (a segment within the radius has its nearest point in both; a millimetre wider, so that
    # a bound rounded inwards leaves none out); the exact test follows
    pad = radius + 1e-3
    position, segment = index.tree.query(shapely.box(x - pad, y - pad, x + pad, y + pad))
    distance, factor = _to_segments(x[position], y[position], index.ax[segment], index.ay[segment],
                                    index.bx[segment], index.by[segment])
    near = distance <= radius
    if not near.any():
        return none
    position, segment, distance, factor = position[near], segment[near], distance[near], factor[near]
    # sorted by position, then segment: a (position, shape) pair's candidates are a run (a
    # shape's segments are numbered in a row, in order along it)
    order = np.argsort(position * len(index.ax) + segment)
    position, segment, distance, factor = position[order], segment[order], distance[order], factor[order]
    shape = index.shape[segment]
    starts = np.flatnonzero(np.concatenate(([True], (position[1:] != position[:-1]) | (shape[1:] != shape[:-1]))))
    pair = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(position))))
    # per pair, its nearest segment, the first along the shape among equals (GEOS keeps a
    # segment only when strictly nearer than those before it)
    nearest = np.flatnonzero(distance == np.minimum.reduceat(distance, starts)[pair])
    chosen = nearest[np.concatenate(([True], pair[nearest][1:] != pair[nearest][:-1]))]
    segment = segment[chosen]
    length = _length(index.ax[segment], index.ay[segment], index.bx[segment], index.by[segment])
    progress = index.start_m[segment] + _clamped(factor[chosen]) * length
    return position[chosen], shape[chosen], distance[chosen], progress


def measure_pairs(index: SegmentIndex, x: np.ndarray, y: np.ndarray, position: np.ndarray,
                  shape: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Per (position, shape) pair asked, at any distance: the distance to the shape and the
    progress along it (exactly `shapely.distance` and `shapely.line_locate_point`). The
    pairs within `radius` come from one index query (`within`); the others (no segment of
    their shape that near) from shapely pair by pair, one call for all of them."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    position, shape = np.asarray(position, dtype=np.intp), np.asarray(shape, dtype=np.intp)
    distance, progress = np.full(len(position), np.nan), np.full(len(position), np.nan)
    if len(position) == 0:
        return distance, progress
    asked = np.unique(position)
    found_position, found_shape, found_distance, found_progress = within(index, x[asked], y[asked], radius)
    # both sides keyed by (position, shape) in one integer; `within` returns them sorted
    found = asked[found_position] * len(index.lines) + found_shape
    key = position * len(index.lines) + shape
    at = np.minimum(np.searchsorted(found, key), max(len(found) - 1, 0))
    hit = (found[at] == key) if len(found) else np.zeros(len(key), dtype=bool)
    distance[hit], progress[hit] = found_distance[at[hit]], found_progress[at[hit]]
    return located_beyond(index, x, y, position, shape, distance, progress, hit)


def located_beyond(index: SegmentIndex, x: np.ndarray, y: np.ndarray, position: np.ndarray, shape: np.ndarray,
                   distance: np.ndarray, progress: np.ndarray, hit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`measure_pairs`' pairs not found near (`hit` False) measured by shapely pair by pair,
    one call for all of them, into `distance` and `progress` (in place, and returned)."""
    if not hit.all():
        points = shapely.points(x[position[~hit]], y[position[~hit]])
        distance[~hit] = shapely.distance(index.lines[shape[~hit]], points)
        progress[~hit] = shapely.line_locate_point(index.lines[shape[~hit]], points)
    return distance, progress


def _length(ax, ay, bx, by) -> np.ndarray:
    dx, dy = ax - bx, ay - by
    return np.sqrt(dx * dx + dy * dy)


def _clamped(factor: np.ndarray) -> np.ndarray:
    """GEOS's segmentNearestMeasure: a factor at or below 0 is the start, above 1 the end
    (NaN, a segment of no length, is neither: the end, which is its start)."""
    return np.where(factor <= 0.0, 0.0, np.where(factor <= 1.0, factor, 1.0))


def _to_segments(px, py, ax, ay, bx, by) -> tuple[np.ndarray, np.ndarray]:
    """Per (position, segment): GEOS's Distance::pointToSegment and LineSegment::projectionFactor,
    operation for operation (so that the results are equal to the bit)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ex, ey = bx - ax, by - ay
        len2 = ex * ex + ey * ey
        factor = ((px - ax) * ex + (py - ay) * ey) / len2
        at_a, at_b = (px == ax) & (py == ay), (px == bx) & (py == by)
        projection = np.where(at_a, 0.0, np.where(at_b, 1.0, factor))
        to_a = _length(px, py, ax, ay)
        to_b = _length(px, py, bx, by)
        s = ((ay - py) * ex - (ax - px) * ey) / len2
        across = np.abs(s) * np.sqrt(len2)
        degenerate = (ax == bx) & (ay == by)
        distance = np.where(degenerate | (factor <= 0.0), to_a, np.where(factor >= 1.0, to_b, across))
    return distance, projection
