"""The itineraries the detour map draws: the sample feed's patterns in WGS84."""

from __future__ import annotations

import math

import pytest

from gtfs import load_feed
from web.itineraries import itineraries


@pytest.fixture(scope="module")
def feed():
    from samples import joao_neiva

    return load_feed(joao_neiva()[0])


def test_one_entry_per_pattern_named_by_line_and_headsign(feed):
    found = itineraries(feed)
    assert [(i["route_id"], i["direction_id"]) for i in found] == [("101", 0), ("101", 1), ("201", 0), ("201", 1)]
    assert found[2]["name"] == "Linha 201 — Centro – Vila Nova, sentido Vila Nova"


def test_the_line_is_the_shape_in_lat_lon_from_the_first_stop_to_the_last(feed):
    for entry in itineraries(feed):
        pattern = next(p for p in feed.patterns if (p.route_id, p.direction_id) == (entry["route_id"],
                                                                                    entry["direction_id"]))
        shape = feed.shapes[pattern.shape_id]
        assert len(entry["line"]) == len(shape.line.coords)
        origin, destination = feed.stops[pattern.origin_stop_id], feed.stops[pattern.destination_stop_id]
        assert [entry["stops"][0]["name"], entry["stops"][-1]["name"]] == [origin.name, destination.name]
        # [lat, lon] (Leaflet's order): the shape starts and ends within metres of its terminals
        # (1e-4 degree of latitude is 11 m)
        (lat0, lon0), (lat1, lon1) = entry["line"][0], entry["line"][-1]
        assert math.dist((lat0, lon0), (origin.lat, origin.lon)) < 1e-4
        assert math.dist((lat1, lon1), (destination.lat, destination.lon)) < 1e-4
        assert all(-20 < lat < -19.5 and -40.6 < lon < -40.2 for lat, lon in entry["line"])  # João Neiva
