"""Trip detection on real, sparse GPS: SPTrans line 34020 on 2015-10-02 (../shared/realdata).

The feed is built at test time from the three shapes shipped with the traces
(see tests/conftest.py). The traces follow shape 58290 (Lapa → Pirituba, 12.9 km); shapes
58447 and 58450 (line 119L) lie 500+ m away from most of them and act as a
negative control. Pings are every 45 s (median), some gaps last hours, the file is
shuffled and repeats 101 (vehicle, time) pairs.

Plausibility criteria, stated up front:
- every detected trip is on 8002-10 direction 1 (shape 58290), none on 119L;
- no trip faster than 40 km/h on average over the 80 % of the shape it must cover
  (0.8 × 12 926 m / 11.1 m/s = 931 s) and none longer than the 4 h policy limit;
- coverage between the policy's 80 % and 100 %;
- no two trips of a vehicle overlap in time;
- the line runs all day: trips are found for at least 5 of the 8 vehicles;
- the 101 repeated (vehicle, time) rows are rejected as duplicates (4 of them, with
  another position, as conflicting duplicates), nothing else;
- the same trips come out of the file sorted by time and in its shuffled order.
"""

import random
from collections import defaultdict

import pytest

from fiscaliza.replay import ReplayInputs, replay

pytestmark = pytest.mark.realdata

SHAPE_58290_M = 12_926


@pytest.fixture(scope="module")
def realdata(sptrans_files):
    root, rows, inputs = sptrans_files
    return root, rows, inputs, replay(inputs)


def test_real_traces_yield_trips_only_on_the_followed_shape(realdata):
    _, _, _, result = realdata
    assert result.trips, "no trip detected on a line that runs all day"
    assert {(t.route_id, t.direction_id) for t in result.trips} == {("8002-10", 1)}


def test_real_trips_have_plausible_durations_and_coverage(realdata):
    _, _, _, result = realdata
    for trip in result.trips:
        seconds = (trip.arrived_at - trip.departed_at).total_seconds()
        # 0.8 × 12 926 m at 40 km/h (11.1 m/s) = 931 s; the policy caps a trip at 14 400 s
        assert 931 <= seconds <= 14_400, trip
        assert 0.8 <= trip.coverage <= 1.0, trip


def test_real_trips_of_a_vehicle_never_overlap(realdata):
    _, _, _, result = realdata
    by_vehicle = defaultdict(list)
    for trip in result.trips:
        by_vehicle[trip.vehicle_id].append(trip)
    for trips in by_vehicle.values():
        trips.sort(key=lambda t: t.departed_at)
        for before, after in zip(trips, trips[1:]):
            assert before.arrived_at <= after.departed_at


def test_real_trips_come_from_most_vehicles(realdata):
    _, _, _, result = realdata
    assert len({t.vehicle_id for t in result.trips}) >= 5


def test_real_repeated_rows_are_rejected_as_duplicates_only(realdata):
    _, rows, _, result = realdata
    # 3129 rows, 101 of which repeat a (vehicle, dt_avl) pair already present; 4 of those
    # repeat it with another position: two versions of one message
    assert rows == 3129
    assert sorted(r.reason for r in result.rejected) == ["conflicting_duplicate"] * 4 + ["duplicate"] * 97


def test_real_traces_in_another_order_yield_the_same_trips(realdata):
    root, _, inputs, result = realdata
    lines = (root / "tachograph.jsonl").read_text().splitlines()
    random.Random(4).shuffle(lines)
    shuffled = root / "shuffled.jsonl"
    shuffled.write_text("\n".join(lines) + "\n")
    again = replay(ReplayInputs(feed=inputs.feed, fleet=inputs.fleet, tachograph=shuffled))
    assert again.trips == result.trips
