"""Linear referencing: where along a shape a batch of positions lies, and how far off."""

from __future__ import annotations

import numpy as np
import shapely
from shapely import LineString


def locate_along(line: LineString, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Progress in metres along `line` of the nearest point to each position."""
    if len(x) == 0:
        return np.empty(0)
    return np.asarray(shapely.line_locate_point(line, shapely.points(x, y)), dtype=float)


def distance_to_line(line: LineString, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Distance in metres from each position to `line`."""
    if len(x) == 0:
        return np.empty(0)
    return np.asarray(shapely.distance(line, shapely.points(x, y)), dtype=float)
