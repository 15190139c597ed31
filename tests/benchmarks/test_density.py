"""How many itineraries' corridors a network's fixes lie in (benchmarks/density.py)."""

from __future__ import annotations

import json
import shutil

import pytest

from benchmarks.density import near_pairs_per_fix


@pytest.fixture(scope="module")
def network(tmp_path_factory):
    from benchmarks import metro

    network = tmp_path_factory.mktemp("network")
    metro.build(network, 3, 1)
    return network


def test_a_network_whose_buses_run_their_routes_has_fixes_near_at_least_one_itinerary(network):
    density = near_pairs_per_fix(network)
    # each bus runs an itinerary, so nearly every fix lies in one corridor at least (a
    # fix at a terminal, before a trip, may lie in none); and in at most all of them
    assert density["fixes"] > 0 and 0.9 <= density["near_pairs_per_fix"] <= density["itineraries"]


def test_fixes_far_from_every_route_are_near_none(network, tmp_path):
    far = tmp_path / "far"
    shutil.copytree(network, far)
    tachograph = far / "telemetry" / "tachograph.jsonl"
    # the same pings moved 2 degrees of latitude away (over 200 km): no corridor holds one
    # (the network's malformed lines, its input faults, are left as they are)
    def moved(line: str) -> str:
        try:
            ping = json.loads(line)
        except ValueError:
            return line
        return json.dumps({**ping, "lat": ping["lat"] + 2.0}) if isinstance(ping.get("lat"), float) else line
    tachograph.write_text("\n".join(map(moved, tachograph.read_text().splitlines())) + "\n")
    assert near_pairs_per_fix(far)["near_pairs_per_fix"] == 0.0
