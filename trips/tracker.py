"""A vehicle's track between batches: the per-vehicle state of the streaming core.

`advance_track` is pure: the old track and a batch of new pings (in event-time
order) give the new track and the trips completed by the batch. Completed trips do
not depend on how the pings were split into batches.
"""

from __future__ import annotations

from fiscaliza.policy import TripRules
from geofences.zones import Geofences
from trips.detection import detect_trips
from trips.model import DetectedTrip, Fix, Track


def new_track(vehicle_id: str) -> Track:
    return Track(vehicle_id=vehicle_id)


def advance_track(
    track: Track, batch: list[Fix] | tuple[Fix, ...], geofences: Geofences, rules: TripRules
) -> tuple[Track, list[DetectedTrip]]:
    fixes = track.fixes + tuple(batch)
    trips = detect_trips(track.vehicle_id, fixes, geofences, rules, not_before=track.last_arrival)
    last_arrival = trips[-1].arrived_at if trips else track.last_arrival
    # Keep what a future trip may still need: pings after the last arrival, and no
    # older than the longest possible trip before the newest ping.
    horizon = fixes[-1].t - rules.max_trip_duration_s - rules.max_coverage_gap_s if fixes else 0.0
    keep_from = max(horizon, last_arrival if last_arrival is not None else horizon)
    kept = tuple(f for f in fixes if f.t >= keep_from)
    # The ping just before keep_from bounds the zone crossing; keep it too.
    dropped = len(fixes) - len(kept)
    if dropped > 0 and last_arrival is not None and keep_from == last_arrival:
        kept = fixes[dropped - 1 :]
    return Track(track.vehicle_id, kept, last_arrival), trips
