"""The segment index against shapely's own per-shape answers.

`within` and `measure_pairs` must give what `shapely.distance` and `shapely.line_locate_point`
give, to the bit: they repeat GEOS's floating-point operations in GEOS's order, so any
difference is a wrong segment or a wrong formula, not rounding, and is asserted with `==`.
Shapes: the three sample feeds', the real São Paulo shapes of ../shared/realdata (read
from there), and hand-made ones where the nearest segment is ambiguous: a loop that
crosses itself and a shape that doubles back on its own street, where shapely locates a
point on the first pass along the shape.
"""

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely import LineString
from sptrans import write_feed

from geofences.segments import measure_pairs, segment_index, within
from gtfs import load_feed
from samples import canarana, conselheiro_lafaiete, joao_neiva

SAMPLES = {"joao_neiva": joao_neiva, "conselheiro_lafaiete": conselheiro_lafaiete, "canarana": canarana}


@pytest.fixture(scope="module", params=[*SAMPLES, pytest.param("sao_paulo", marks=pytest.mark.realdata)])
def lines(request, tmp_path_factory) -> list[LineString]:
    """A network's shapes: a sample feed's, or São Paulo's (built from ../shared/realdata)."""
    if request.param == "sao_paulo":
        feed = tmp_path_factory.mktemp("sptrans") / "feed"
        write_feed(feed)
    else:
        feed = SAMPLES[request.param]()[0]
    return [s.line for s in load_feed(feed).shapes.values()]


def _expected(lines: list[LineString], x: np.ndarray, y: np.ndarray):
    """Every (position, shape) pair by shapely, one shape at a time: distance and progress."""
    points = shapely.points(x, y)
    distance = np.array([shapely.distance(line, points) for line in lines]).T  # [position, shape]
    progress = np.array([shapely.line_locate_point(line, points) for line in lines]).T
    return distance, progress


def _assert_within_is_shapely(lines, x, y, radius):
    position, shape, distance, progress = within(segment_index(lines), x, y, radius)
    expected_distance, expected_progress = _expected(lines, x, y)
    expected_position, expected_shape = np.nonzero(expected_distance <= radius)  # sorted by position, then shape
    assert position.tolist() == expected_position.tolist()
    assert shape.tolist() == expected_shape.tolist()
    assert distance.tolist() == expected_distance[position, shape].tolist()
    assert progress.tolist() == expected_progress[position, shape].tolist()


# positions around a network: a vertex of some shape, moved by an offset; the vertex itself,
# and the middle of its segment, where the nearest segment is a tie or on the line
NEAR_A_VERTEX = st.tuples(st.floats(0, 1, exclude_max=True), st.floats(-250, 250), st.floats(-250, 250),
                          st.sampled_from(["offset", "vertex", "middle"]))


def _positions(lines: list[LineString], draws) -> tuple[np.ndarray, np.ndarray]:
    coords = shapely.get_coordinates(lines)
    out = []
    for where, dx, dy, kind in draws:
        i = int(where * (len(coords) - 1))
        if kind == "vertex":
            out.append(coords[i])
        elif kind == "middle":
            out.append((coords[i] + coords[i + 1]) / 2)
        else:
            out.append(coords[i] + (dx, dy))
    x, y = np.array(out).T
    return x, y


@settings(max_examples=25, deadline=None)
@given(draws=st.lists(NEAR_A_VERTEX, min_size=1, max_size=60), radius=st.sampled_from([0.0, 25.0, 50.0, 300.0]))
def test_pairs_within_a_radius_are_shapelys_to_the_bit(lines, draws, radius):
    x, y = _positions(lines, draws)
    _assert_within_is_shapely(lines, x, y, radius)


@settings(max_examples=25, deadline=None)
@given(draws=st.lists(NEAR_A_VERTEX, min_size=1, max_size=40), data=st.data())
def test_any_pairs_asked_are_measured_as_shapely_near_or_far(lines, draws, data):
    """Pairs inside the radius come from the index, pairs beyond it from shapely: both exact,
    in the order asked, a pair asked twice measured twice."""
    x, y = _positions(lines, draws)
    pairs = data.draw(st.lists(st.tuples(st.integers(0, len(x) - 1), st.integers(0, len(lines) - 1)), max_size=80))
    position = np.array([p for p, _ in pairs], dtype=int)
    shape = np.array([s for _, s in pairs], dtype=int)
    distance, progress = measure_pairs(segment_index(lines), x, y, position, shape, 50.0)
    expected_distance, expected_progress = _expected(lines, x, y)
    assert distance.tolist() == expected_distance[position, shape].tolist()
    assert progress.tolist() == expected_progress[position, shape].tolist()


def test_a_point_where_a_loop_crosses_itself_is_located_on_the_first_pass():
    # east along y = 0, north, west along y = 50, then south across y = 0 at x = 50:
    # (50, 0) is on the shape at 50 m and again at 100 + 50 + 50 + 50 = 250 m
    loop = LineString([(0, 0), (100, 0), (100, 50), (50, 50), (50, -50)])
    x, y = np.array([50.0, 60.0, 50.0, 55.0]), np.array([0.0, 10.0, 10.0, -5.0])
    position, shape, distance, progress = within(segment_index([loop]), x, y, 20.0)
    assert position.tolist() == [0, 1, 2, 3]
    # the crossing (0 m from both passes): the first; (60, 10): 10 m from both, the first;
    # (50, 10): on the second pass only (10 m from the first); (55, -5): 5 m from both, the first
    assert distance.tolist() == [0.0, 10.0, 0.0, 5.0]
    assert progress.tolist() == pytest.approx([50.0, 60.0, 240.0, 55.0])  # GEOS's own digits below
    _assert_within_is_shapely([loop], x, y, 20.0)


def test_a_shape_that_doubles_back_on_its_street_locates_on_the_way_out():
    # out to (100, 0) and back on the same street, then back 3 m to the side
    same_street = LineString([(0, 0), (100, 0), (0, 0)])
    beside = LineString([(0, 0), (100, 0), (100, 3), (0, 3)])
    x, y = np.array([30.0, 30.0, 100.0, 70.0]), np.array([0.0, 1.5, 1.5, 8.0])
    position, shape, distance, progress = within(segment_index([same_street, beside]), x, y, 10.0)
    by_pair = {(p, s): pytest.approx((d, m)) for p, s, d, m in zip(position.tolist(), shape.tolist(), distance.tolist(),
                                                     progress.tolist())}
    assert by_pair[(0, 0)] == (0.0, 30.0)  # not 170 m, the way back
    assert by_pair[(1, 1)] == (1.5, 30.0)  # 1.5 m from both streets: the way out
    assert by_pair[(2, 1)] == (0.0, 101.5)  # on the turn
    assert by_pair[(3, 1)] == (5.0, 133.0)  # nearer the way back: 100 + 3 + 30
    _assert_within_is_shapely([same_street, beside], x, y, 10.0)


def test_a_repeated_vertex_and_many_shapes_in_one_index():
    repeated = LineString([(0, 0), (10, 0), (10, 0), (10, 10)])  # a segment of no length
    other = LineString([(5, -5), (5, 20)])
    x, y = np.array([10.0, 12.0, 9.0, 5.0, 40.0]), np.array([0.0, -1.0, 5.0, 0.0, 40.0])
    _assert_within_is_shapely([repeated, other], x, y, 15.0)


def test_no_positions_or_no_pairs_asked_give_empty_answers():
    index = segment_index([LineString([(0, 0), (10, 0)])])
    assert [len(a) for a in within(index, np.empty(0), np.empty(0), 10.0)] == [0, 0, 0, 0]
    assert [len(a) for a in within(index, np.array([0.0]), np.array([100.0]), 10.0)] == [0, 0, 0, 0]
    assert [len(a) for a in measure_pairs(index, np.array([0.0]), np.array([1.0]), np.empty(0, dtype=int),
                                          np.empty(0, dtype=int), 10.0)] == [0, 0]
    empty = segment_index([])
    assert [len(a) for a in within(empty, np.array([0.0]), np.array([1.0]), 10.0)] == [0, 0, 0, 0]
