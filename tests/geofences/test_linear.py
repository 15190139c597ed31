"""Linear referencing on a hand-made metric LineString.

LINE runs (0, 0) -> 100 m east -> (100, 0) -> 50 m north -> (100, 50): 150 m long.
"""

import numpy as np
import pytest
from shapely import LineString

from geofences import distance_to_line, locate_along

LINE = LineString([(0, 0), (100, 0), (100, 50)])

# (x, y, progress along LINE, distance to LINE), each computed by hand
CASES = [
    pytest.param(30, 0, 30, 0, id="on_first_segment"),  # 30 m along, on the line
    pytest.param(30, 10, 30, 10, id="beside_first_segment"),  # 30 m along, 10 m north of it
    pytest.param(100, 25, 125, 0, id="on_second_segment"),  # 100 m + 25 m north
    pytest.param(110, 25, 125, 10, id="beside_second_segment"),  # 100 m + 25 m, 10 m east
    pytest.param(120, -15, 100, 25, id="beyond_the_corner"),  # nearest is the corner: hypot(20, 15) = 25
    pytest.param(-30, -40, 0, 50, id="before_the_start"),  # clamped to 0; hypot(30, 40) = 50
    pytest.param(100, 80, 150, 30, id="straight_past_the_end"),  # clamped to 150; 80 − 50 = 30
    pytest.param(130, 90, 150, 50, id="diagonally_past_the_end"),  # clamped to 150; hypot(30, 40) = 50
]


@pytest.mark.parametrize(("x", "y", "progress", "distance"), CASES)
def test_single_position_gives_hand_computed_progress_and_distance(x, y, progress, distance):
    xs, ys = np.array([x], dtype=float), np.array([y], dtype=float)
    assert locate_along(LINE, xs, ys) == pytest.approx([progress], abs=1e-9)
    assert distance_to_line(LINE, xs, ys) == pytest.approx([distance], abs=1e-9)


def test_batch_of_positions_keeps_their_order():
    xs = np.array([c.values[0] for c in CASES], dtype=float)
    ys = np.array([c.values[1] for c in CASES], dtype=float)
    progress = locate_along(LINE, xs, ys)
    distance = distance_to_line(LINE, xs, ys)
    assert progress == pytest.approx([30, 30, 125, 125, 100, 0, 150, 150], abs=1e-9)
    assert distance == pytest.approx([0, 10, 0, 10, 25, 50, 30, 50], abs=1e-9)


def test_progress_is_clamped_between_zero_and_the_length():
    xs = np.array([-1e6, 1e6, 100.0])
    ys = np.array([0.0, 0.0, 1e6])
    progress = locate_along(LINE, xs, ys)
    # far west -> start (0 m); far east -> corner (100 m); far north -> end (100 + 50 = 150 m)
    assert progress == pytest.approx([0, 100, 150], abs=1e-9)
    assert progress.min() >= 0 and progress.max() <= LINE.length == 150


def test_empty_arrays_give_empty_float_arrays():
    empty = np.array([], dtype=float)
    for result in (locate_along(LINE, empty, empty), distance_to_line(LINE, empty, empty)):
        assert isinstance(result, np.ndarray)
        assert result.shape == (0,)
        assert result.dtype == float


def test_results_are_float_arrays_for_integer_input():
    progress = locate_along(LINE, np.array([30]), np.array([10]))
    distance = distance_to_line(LINE, np.array([30]), np.array([10]))
    assert progress.dtype == float and distance.dtype == float
    assert (progress[0], distance[0]) == (30.0, 10.0)  # 30 m along, 10 m off
