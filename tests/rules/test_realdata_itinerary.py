"""The itinerary rule (D-11) on real, sparse GPS: SPTrans line 34020, 2015-10-02.

Of the 11 trips detected on shape 58290 (tests/trips/test_realdata.py), one is
accused: vehicle 12003 between 17:52 and 17:58, two runs of 6 and 5 consecutive pings
62–202 m off the shape (1.1 km and 0.45 km of travel) in the last kilometres before
the Pirituba terminal. That is a parallel path held for six minutes, not GPS noise (noise here is a few metres: the median distance of all pings
to the shape is 5.8 m). GPS glitches — a single ping hundreds of metres away, like
12003's at 17:46:37 — and the 45 s median spacing accuse nobody.
"""

import numpy as np
import pytest

from fiscaliza.replay import ReplayInputs, replay

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def result(sptrans_files):
    _, _, inputs = sptrans_files
    return replay(inputs)


def d11(result):
    return [i for i in result.infractions if i.code == "D-11"]


def test_real_traces_yield_one_itinerary_infraction_on_a_sustained_parallel_path(result):
    [record] = d11(result)
    assert record.vehicle_id == "12003"
    first, second = record.evidence["episodes"]
    # 6 pings 17:52:05–17:55:17: 1096.6 m in 192 s; 5 pings 17:56:42–17:58:26: 452.8 m in 104 s;
    # each ≥ 300 m and ≥ 60 s with no gap over 120 s between its pings
    assert (len(first["pings"]), len(second["pings"])) == (6, 5)
    assert first["travel_m"] == pytest.approx(1096.6, abs=0.1) and first["duration_s"] == 192
    assert second["travel_m"] == pytest.approx(452.8, abs=0.1) and second["duration_s"] == 104
    assert first["max_distance_m"] == pytest.approx(202.0, abs=0.1)


def test_single_glitch_ping_yields_nothing(result):
    # 12003 at 17:46:37 jumps 643 m and back: one ping off the shape proves no travel
    [record] = d11(result)
    pings = [p for episode in record.evidence["episodes"] for p in episode["pings"]]
    assert not any("17:46:37" in p for p in pings)


def test_gps_noise_on_a_followed_route_yields_nothing(sptrans_files, tmp_path):
    # 20 m of extra noise (σ) on every ping: a bus on its route is not accused for it
    import json

    root, _, inputs = sptrans_files
    rng = np.random.default_rng(1)
    lines = []
    for line in (root / "tachograph.jsonl").read_text().splitlines():
        record = json.loads(line)
        # about 20 m in degrees at São Paulo's latitude: 1e-5 deg ≈ 1.1 m
        record["lat"] += rng.normal(0, 18e-5)
        record["lon"] += rng.normal(0, 18e-5)
        lines.append(json.dumps(record))
    noisy = tmp_path / "noisy.jsonl"
    noisy.write_text("\n".join(lines) + "\n")
    result = replay(ReplayInputs(inputs.feed, inputs.fleet, noisy))
    accused = {i.vehicle_id for i in result.infractions if i.code == "D-11"}
    assert accused <= {"12003"}


@pytest.fixture(scope="module")
def with_stops(sptrans_files, tmp_path_factory):
    """The same traces with shape 58290 given a stop every ~1.5 km, each at a vertex of
    the shape, and one at its sharpest corner (tests/conftest.py, intermediate_stops)."""
    from sptrans import intermediate_stops, shape_points, write_feed

    root, _, inputs = sptrans_files
    feed = tmp_path_factory.mktemp("stops") / "feed"
    write_feed(feed, stops_every_m={"58290": 1500.0})
    middle = intermediate_stops(shape_points("58290"), 1500.0)
    return middle, replay(ReplayInputs(feed=feed, fleet=inputs.fleet, tachograph=inputs.tachograph))


def test_real_buses_with_stops_every_1_5_km_and_at_a_sharp_corner_yield_no_a07(with_stops):
    # before: 10 confirmed A-07, the stop at the 55° corner "missed" by 108-160 m by almost
    # every bus, its pings 45-60 s apart read as a chord across the corner
    middle, result = with_stops
    assert len(middle) >= 8  # 12.9 km: 8 stops at 1.5 km marks, plus the corner (if not one of them)
    assert [i for i in result.infractions if i.code in ("A-07", "C-01")] == []
    # the one real detour is still the one D-11
    assert [(i.code, i.vehicle_id) for i in result.infractions if i.code == "D-11"] == [("D-11", "12003")]
