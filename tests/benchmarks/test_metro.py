"""The city-scale benchmark's metropolitan network (benchmarks/metro.py): a valid feed of
the promised shape, so the benchmark measures a network like a real one."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely

from benchmarks import metro
from gtfs import load_feed
from simulator.plan import plan_day


@pytest.fixture(scope="module")
def network(tmp_path_factory):
    out = tmp_path_factory.mktemp("metro")
    summary = metro.write_feed(out / "feed", vehicles=150, seed=3)
    summary["vehicles"] = metro.write_fleet(out / "feed", out / "fleet.csv")
    return out, summary, load_feed(out / "feed")


def test_the_reduced_network_has_ten_routes_of_both_kinds_and_three_operators(network):
    _, summary, feed = network
    # 150 vehicles / 15 per route = 10 routes, every other one headway-based
    assert summary["routes"] == 10 and summary["timetabled"] == 5 and summary["headway_based"] == 5
    assert set(feed.agencies) == {"MTA", "VSU", "LNT"}
    assert len(feed.frequencies) == 10  # one window per direction of each headway-based route


def test_the_fleet_is_what_the_peak_needs(network):
    out, summary, feed = network
    from kernel.fleet import load_fleet

    fleet = load_fleet(out / "fleet.csv", operators=set(feed.agencies))
    duties = plan_day(feed, metro.SERVICE_DATE, fleet)
    assert len(duties) == len(fleet) == sum(summary["vehicles"].values())
    assert 120 <= len(fleet) <= 180  # about 15 per route


def test_shapes_turn_corners_never_come_back_and_share_corridors(network):
    _, _, feed = network
    lines = {sid: shape.line for sid, shape in feed.shapes.items()}
    for sid, line in lines.items():
        assert line.is_simple, sid
        steps = np.hypot(*np.diff(np.asarray(line.coords), axis=0).T)
        assert steps.max() <= metro.MAX_SHAPE_STEP_M + 0.01, sid
        ends = math.dist(line.coords[0], line.coords[-1])
        assert ends >= 4_000, sid  # 6-14 km Manhattan apart: at least 6 km / sqrt(2) straight
        headings = np.degrees(np.arctan2(*np.diff(np.asarray(line.coords), axis=0).T[::-1]))
        turned = np.abs((np.diff(headings) + 180) % 360 - 180)
        assert turned.sum() >= 80, sid  # at least one right-angle corner, spread over its arc
    outbound = [line for sid, line in lines.items() if sid.endswith("-0")]
    # shared corridors: some pairs of routes run along the same street for 400 m or more
    shared = sum(1 for i, a in enumerate(outbound) for b in outbound[i + 1:]
                 if shapely.intersection(a.buffer(5), b).length >= 400)
    assert shared >= 2


def test_terminals_are_apart_so_their_zones_never_overlap(network):
    _, _, feed = network
    terminals = [stop for stop in feed.stops.values() if stop.stop_id.startswith("T")]
    assert len(terminals) == 20
    closest = min(a.point.distance(b.point) for i, a in enumerate(terminals) for b in terminals[i + 1:])
    assert closest >= 300


def test_faults_come_at_a_rate_per_run():
    # 2,000 runs: detour 3 per 1,000 -> 6; late_departure 10 per 1,000 -> 20; shortfall once
    faults = metro.fault_list(2000)
    assert faults.count("detour") == 6 and faults.count("late_departure") == 20
    assert faults.count("frequency_shortfall") == 1
    assert set(metro.fault_list(10)) == set(metro.FAULTS_PER_1000_RUNS)  # at least one of each


def test_frequency_windows_end_where_the_next_departure_would_be(network):
    # an end one second after the last departure put that departure on the window's edge:
    # its terminal exit, seconds later, fell outside and made a D-12 of a trip that ran
    _, _, feed = network
    for window in feed.frequencies:
        assert (window.end_s - window.start_s) % window.headway_s == 0, window
