"""Passes along an itinerary from a departure seen, in a vehicle's open track.

A pass starts at the last fix in an itinerary's origin zone before the vehicle left it
(trips.detection.origin_fixes: inside it, or the one before the progress along the shape
passed its edge), and runs until the first of: the destination zone reached (that fix not
included; `arrived`), the corridor left (a fix off it that is not GPS noise: more than
`max_noise_pings` in a row), a jump (a fix farther from the one before than the bus can
drive in the time: a GPS teleport is no path), the origin zone left again (a new pass), a moment in
`ends_at` (a realized trip's arrival: the track the engine keeps is cut there, so a pass
never reaches across one, whichever beat reads it), or the fixes so far. Track rules
(`rules.model.Rule`, scope "track") judge each; a pass need not become a realized trip
(a bus that turned back never arrives).

Pure, over the track's measures (trips.memo), like trips.detection and trips.unfollowed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from geofences.zones import Geofences, Itinerary
from kernel.policy import TripRules
from trips.detection import destination_fixes, origin_fixes, without_noise
from trips.memo import TrackMemo, measured
from trips.model import Fix


@dataclass(frozen=True)
class Pass:
    itinerary: Itinerary
    exit: int  # index of the last fix inside the origin zone
    end: int  # index after the pass's last fix
    arrived: bool  # it ends with the destination zone reached


def itinerary_passes(fixes: Sequence[Fix], geofences: Geofences, rules: TripRules, memo: TrackMemo | None = None,
                     ends_at: Iterable[float | None] = ()) -> list[Pass]:
    """The passes in `fixes` (time-ordered), by itinerary in the feed's order, then by exit."""
    if len(fixes) < 2:
        return []
    measures = measured(fixes, geofences, memo)
    t = measures.t
    near = measures.corridors()
    cuts = sorted(a for a in ends_at if a is not None)
    reach = rules.max_plausible_speed_kmh / 3.6 * np.diff(t) + 2 * rules.corridor_m
    jumps = np.flatnonzero(np.hypot(np.diff(measures.x), np.diff(measures.y)) > reach) + 1
    found = []
    for itinerary in geofences.itineraries_near(near):
        key = itinerary.pattern.key
        if key not in near:
            continue
        in_origin = origin_fixes(measures, itinerary, rules)
        exits = np.flatnonzero(in_origin[:-1] & ~in_origin[1:])
        if not len(exits):
            continue
        on_corridor = near[key][0]
        kept = without_noise(on_corridor, rules.max_noise_pings)
        left = kept[~on_corridor[kept]]  # off the corridor, not noise
        arrivals = np.flatnonzero(destination_fixes(measures, itinerary, rules))
        # the first of each kind after an exit, found by bisection (each is sorted): a
        # pass reads what ends it and its own fixes, not the whole track again
        after = [(stops.tolist(), np.searchsorted(stops, exits, side="right").tolist(), arrived)
                 for stops, arrived in ((arrivals, True), (left, False), (jumps, False))]
        for k, e in enumerate(exits.tolist()):
            end = int(exits[k + 1]) + 1 if k + 1 < len(exits) else len(t)
            arrived = False
            for stops, first, ends_arrived in after:
                if first[k] < len(stops) and stops[first[k]] < end:
                    end, arrived = stops[first[k]], ends_arrived
            cut = next((c for c in cuts if c > t[e]), None)
            if cut is not None:
                stop = int(np.searchsorted(t, cut, side="left"))
                if stop < end:
                    end, arrived = stop, False
            if end - e < 2 or not _may_be(itinerary, fixes, e, end):
                continue  # nothing run, or the driver's console says another line
            found.append(Pass(itinerary, e, end, arrived))
    return found


def _may_be(itinerary: Itinerary, fixes: Sequence[Fix], start: int, end: int) -> bool:
    """No fix from `start` to `end` (excluded) declares a line, or one declares the itinerary's."""
    declared = {fixes[i].route_id for i in range(start, end)} - {None}
    return not declared or itinerary.pattern.route_id in declared
