"""The values of trip detection: the fixes' fields as arrays, the one way every module
reads them; a departure, and the trip it is as far as known."""

import numpy as np

from gtfs.model import Pattern
from trips.model import Departure, DetectedTrip, Fix, columns


def test_columns_are_the_named_fields_in_order():
    fixes = [Fix(t=10.0 * i, x=100.0 + i, y=200.0 - i, speed_kmh=30.0 + i, route_id=None, msg_id=f"m{i}")
             for i in range(4)]
    t, speed, y = columns(fixes, "t", "speed_kmh", "y")
    assert t.tolist() == [0.0, 10.0, 20.0, 30.0]
    assert speed.tolist() == [30.0, 31.0, 32.0, 33.0]
    assert y.tolist() == [200.0, 199.0, 198.0, 197.0]
    assert t.dtype == np.float64
    (empty,) = columns([], "x")
    assert empty.shape == (0,)


def test_a_departure_is_of_its_patterns_line_direction_and_shape():
    departure = Departure.of("V1", Pattern("T", 1, "R", "B", "A"), 1.8e9)
    assert (departure.vehicle_id, departure.route_id, departure.direction_id, departure.shape_id,
            departure.departed_at) == ("V1", "T", 1, "R", 1.8e9)
    assert (departure.departure_gap_s, departure.exit_msg_ids, departure.left_at) == (0.0, (), None)


def test_a_departures_trip_has_not_arrived_and_keeps_the_exits_evidence():
    departure = Departure.of("V1", Pattern("T", 1, "R", "B", "A"), 1.8e9 + 7.5, departure_gap_s=15.0,
                             exit_msg_ids=("m1", "m2"), left_at=1.8e9 + 10.0)
    assert departure.trip() == DetectedTrip("V1", "T", 1, "R", 1.8e9 + 7.5, 1.8e9 + 7.5, 0.0, "", "",
                                            departure_gap_s=15.0, exit_msg_ids=("m1", "m2"), left_at=1.8e9 + 10.0)


def test_a_departures_trip_arrived_later_measured_nothing():
    # 25 min after the departure: no coverage, no pings of its own (a trip recalled from its log)
    trip = Departure("V1", "T", 0, "L", 1.8e9).trip(arrived_at=1.8e9 + 1500)
    assert (trip.departed_at, trip.arrived_at) == (1.8e9, 1.8e9 + 1500)
    assert (trip.coverage, trip.first_msg_id, trip.last_msg_id, trip.exit_msg_ids) == (0.0, "", "", ())
