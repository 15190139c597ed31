"""The logs a vehicle keeps of its arrived trips (engine.triplog)."""

from engine.triplog import TripLog
from trips.model import DetectedTrip

T0 = 1.8e9


def test_a_logs_trip_departs_and_arrives_as_logged_and_measured_nothing():
    # what a later trip's live match follows (arrived_before) and a record's context reads
    log = TripLog(T0, T0 + 1500, "T", 0, "L", "2026-12-01", T0 + 2100, T0 + 1500)
    assert log.trip("V1") == DetectedTrip("V1", "T", 0, "L", T0, T0 + 1500, 0.0, "", "")
