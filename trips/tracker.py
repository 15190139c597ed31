"""A vehicle's track between batches: the per-vehicle state of the streaming core.

`advance_track` is pure: the old track and a batch of new pings (in event-time
order) give the new track and the trips completed by the batch. Completed trips do
not depend on how the pings were split into batches.
"""

from __future__ import annotations

import bisect
import operator

import numpy as np

from geofences.zones import Geofences
from kernel.policy import TripRules
from trips.detection import detect_trips
from trips.memo import TrackMemo
from trips.model import DetectedTrip, Fix, Track, columns


def new_track(vehicle_id: str) -> Track:
    return Track(vehicle_id=vehicle_id)


def advance_track(
    track: Track, batch: list[Fix] | tuple[Fix, ...], geofences: Geofences, rules: TripRules,
    memo: TrackMemo | None = None, fixes: tuple[Fix, ...] | None = None,
) -> tuple[Track, list[DetectedTrip]]:
    """`memo`: see trips.memo (the answer is the same without it). `fixes`: the track's
    fixes and the batch's as one tuple (`grown_track`), when the caller made it to read
    them too: the memo is then positioned on the very tuple its other readers are given."""
    if fixes is None:
        fixes = grown_track(track, batch)
    if memo is not None and memo.geofences is geofences:
        memo.extended(track.fixes, fixes)
    # the track's fixes were all read by the call that made it (nothing more in them):
    # only an arrival at its last fix or a new one can end a trip (detect_trips'
    # `new_from`). Known only of a call in this process, with these geofences and rules
    # (this memo's tracks were made here, under them: `detected_under`). A track stored
    # by another (a restart, a new feed or policy) is read whole once, even where another
    # reader (the unfollowed passes of a vehicle fallen silent) measured it here first.
    read_here = memo is not None and memo.geofences is geofences and memo.detected_under is rules
    trips = detect_trips(track.vehicle_id, fixes, geofences, rules, not_before=track.last_arrival, memo=memo,
                         new_from=max(len(track.fixes) - 1, 0) if read_here else None)
    if memo is not None:
        memo.detected_under = rules
    last_arrival = trips[-1].arrived_at if trips else track.last_arrival
    # Keep what a future trip may still need: pings after the last arrival, and no
    # older than the longest possible trip before the newest ping.
    horizon = fixes[-1].t - rules.max_trip_duration_s - rules.max_coverage_gap_s if fixes else 0.0
    keep_from = max(horizon, last_arrival if last_arrival is not None else horizon)
    kept = fixes[bisect.bisect_left(fixes, keep_from, key=operator.attrgetter("t")):]  # (in time order)
    # The ping just before keep_from bounds the zone crossing; keep it too.
    dropped = len(fixes) - len(kept)
    if dropped > 0 and last_arrival is not None and keep_from == last_arrival:
        kept = fixes[dropped - 1 :]
    # the memo was positioned on `fixes` by detection (under these geofences: else detection
    # measured a fresh one): the kept fixes' zones are measured there
    zones = memo.inside_terminals() if memo is not None and memo.geofences is geofences and memo.fixes is fixes \
        else None
    return Track(track.vehicle_id, _trim_standing(kept, geofences, rules, zones, len(fixes) - len(kept)),
                 last_arrival), trips


def grown_track(track: Track, batch: list[Fix] | tuple[Fix, ...]) -> tuple[Fix, ...]:
    """The open track's fixes, then the batch's (in event-time order), as one tuple."""
    return track.fixes + tuple(batch)


def _trim_standing(fixes: tuple[Fix, ...], geofences: Geofences, rules: TripRules,
                   zones: dict[int, np.ndarray] | None = None, offset: int = 0) -> tuple[Fix, ...]:
    """A vehicle standing in a terminal it may depart from (every kept fix inside the
    same origin zone since it arrived) needs only the last of that stay: a departure's evidence reaches
    back `in_service_terminal_s` before it, and the coverage of a trip gains nothing from
    hours of standing at its first stop. Without this a bus parked at a terminal would
    keep up to `max_trip_duration_s` of pings.
    `zones`: the terminal zones with a fix inside, by id, each with the mask of a track
    whose fixes from `offset` on are `fixes` (`TrackMemo.inside_terminals`, exactly
    `zone.contains`); every origin zone is a terminal zone, so a zone not in it holds no
    fix. Without it the fixes are tested here, zone by zone: the same answer, at a cost
    that grew with the track at every beat of a vehicle standing or out long."""
    if len(fixes) < 2:
        return fixes
    horizon = fixes[-1].t - rules.in_service_terminal_s - rules.max_coverage_gap_s
    if fixes[0].t >= horizon:
        return fixes
    # (the first fix may be the one kept outside, before the arrival that began the stay)
    if zones is not None:
        standing = any(id(zone) in zones and zones[id(zone)][offset + 1:].all() for zone in geofences.origin_zones)
    else:
        x, y = columns(fixes, "x", "y")
        standing = any(zone.contains(x[1:], y[1:]).all() for zone in geofences.origin_zones)
    if not standing:
        return fixes
    times = [f.t for f in fixes]
    return fixes[bisect.bisect_left(times, horizon):]
