"""Finding realized trips in a track (DESIGN.md, "Trips").

A trip is realized when the vehicle departs the origin terminal zone, covers at least
`min_coverage` of the shape in order, and reaches the destination terminal zone.
Leaving and reaching a terminal zone are read from a fix inside it, or from the progress
along the shape passing through a stretch of the shape inside the zone between two fixes
outside it that step along the shape (`origin_fixes`, `destination_fixes`): sparse fixes
that never fall inside the zone do not lose a trip that was run.
Geometry is evaluated once per itinerary over the whole batch of pings (vectorized);
only the few zone transitions are walked in Python.
"""

from __future__ import annotations

import msgspec
import numpy as np
import shapely

from geofences.zones import CircleZone, Geofences, Itinerary, Zone
from kernel.policy import TripRules
from trips.memo import TrackMemo, measured
from trips.model import DetectedTrip, Fix


def detect_trips(
    vehicle_id: str,
    fixes: tuple[Fix, ...] | list[Fix],
    geofences: Geofences,
    rules: TripRules,
    not_before: float | None = None,
    memo: TrackMemo | None = None,
    new_from: int | None = None,
) -> list[DetectedTrip]:
    """All realized trips in `fixes` (sorted by time), non-overlapping, by arrival.

    Trips departing before `not_before` (the end of the previous trip) are ignored.
    `memo`: the geometry of these fixes already measured (trips.memo), else measured now.
    `new_from`: an index such that the fixes before it, but for the last of them, are
    what a call on them (and on fixes before them, since cut off) with `not_before`,
    the same geofences and rules, found nothing more in (trips.tracker passes the index
    of the last fix it had read). A trip ends at an arrival, and an arrival among those
    fixes gives no trip it did not give then: its fixes are the same, or fewer at the
    front, which only lowers a trip's coverage or removes its exit. A fix after them
    changes the flags of the fix before it only (a zone left between the two: an exit
    there can vanish, and the arrival at that fix pair with an earlier exit), which is
    why the last fix read is read again. So unless some itinerary's destination is
    reached at a fix from `new_from` on, there is nothing to find, and the itineraries
    are not read (at most beats, a vehicle is on its way).
    """
    if len(fixes) < 2:
        return []
    measures = measured(fixes, geofences, memo)
    if new_from is not None and not _may_any_arrive_from(measures, new_from):
        return []  # the beat of a bus on its way: no itinerary is read
    t, x, y = measures.t, measures.x, measures.y
    entered = measures.zones_entered
    near = measures.corridors()  # a zone crossed between two fixes is crossed on the corridor
    read = [itinerary for itinerary in geofences.itineraries_near(near, entered)
            if (id(itinerary.origin) in entered or itinerary.pattern.key in near)
            and (id(itinerary.destination) in entered or itinerary.pattern.key in near)]
    if new_from is not None and not any(_arrives_from(measures, itinerary, rules, new_from) for itinerary in read):
        return []
    routes = [f.route_id for f in fixes]
    candidates: list[DetectedTrip] = []
    for itinerary in read:
        candidates.extend(_candidates(vehicle_id, fixes, t, x, y, routes, itinerary, rules, measures))
    # Earliest arrival first; on equal arrivals the better-covered itinerary wins.
    candidates.sort(key=lambda c: (c[0].arrived_at, -c[0].coverage, c[0].route_id, c[0].direction_id,
                                   c[0].shape_id))
    accepted: list[DetectedTrip] = []
    end = not_before if not_before is not None else -np.inf
    for trip, seen_outside in candidates:
        if trip.departed_at >= end:
            if trip.at_origin_since is not None and not (end > -np.inf and seen_outside > end):
                trip = msgspec.structs.replace(trip, at_origin_since=None)  # not seen away since it arrived
            accepted.append(trip)
            end = trip.arrived_at
    return accepted


def _candidates(vehicle_id, fixes, t, x, y, routes, itinerary: Itinerary, rules: TripRules, measures: TrackMemo):
    """The trips of one itinerary, each with the last ping outside the origin zone before
    its departure's run inside it (None: the run starts with the pings)."""
    in_origin = origin_fixes(measures, itinerary, rules)
    in_destination = destination_fixes(measures, itinerary, rules)
    if not in_origin.any() or not in_destination.any():
        return []
    exits = np.flatnonzero(in_origin[:-1] & ~in_origin[1:])  # last ping inside before leaving
    arrivals = np.flatnonzero(in_destination & ~np.concatenate(([False], in_destination[:-1])))
    if len(exits) == 0 or len(arrivals) == 0:
        return []
    distance = measures.distance(itinerary)
    progress = measures.progress(itinerary)
    on_corridor = distance <= itinerary.corridor_m
    route_id = itinerary.pattern.route_id

    found = []
    consumed = -1  # index of the last arrival that closed (or failed) a trip
    for j in arrivals:
        before = exits[(exits < j) & (exits >= consumed)]
        if len(before) == 0:
            continue
        e = int(before[-1])
        consumed = int(j)
        declared = {r for r in routes[e : j + 1] if r is not None}
        if declared and route_id not in declared:
            continue  # the driver's console says another line
        departed = departure_time(itinerary, t, x, y, e)
        arrived = arrival_time(itinerary, t, x, y, j)
        if arrived - departed > rules.max_trip_duration_s:
            continue
        start = _dwell_start(in_origin, e)
        # the tracker holds every ping from the longest possible trip before this arrival's
        back = _back_from_away(t, in_origin, e, t[j] - rules.max_trip_duration_s - rules.max_coverage_gap_s,
                               rules.max_noise_pings)
        # a fix or two off the corridor between fixes on it are GPS noise: they break no step
        read = start + without_noise(on_corridor[start : j + 1], rules.max_noise_pings)
        if _starts_over(t, progress, on_corridor, read[read > e], rules):
            continue  # the departure seen is not this trip's (trips.unfollowed reads them)
        coverage = _coverage(t[read], progress[read], on_corridor[read], rules)
        coverage /= itinerary.length_m
        if coverage + 1e-9 < rules.min_coverage:
            continue
        found.append((
            DetectedTrip(
                vehicle_id=vehicle_id,
                route_id=route_id,
                direction_id=itinerary.pattern.direction_id,
                shape_id=itinerary.pattern.shape_id,
                departed_at=float(departed),
                arrived_at=float(arrived),
                coverage=round(float(min(coverage, 1.0)), 4),
                first_msg_id=fixes[start].msg_id,
                last_msg_id=fixes[j].msg_id,
                departure_gap_s=float(t[e + 1] - t[e]),
                exit_msg_ids=(fixes[e].msg_id, fixes[e + 1].msg_id),
                left_at=float(t[e + 1]),
                # kept only if it was away after its previous arrival (detect_trips): it
                # stood there since it came back (rules.terminal_crowding)
                at_origin_since=float(t[back]) if back is not None else None,
            ),
            float(t[back - 1]) if back is not None else None,
        ))
    return found


def _back_from_away(t, in_origin: np.ndarray, e: int, since: float, noise: int) -> int | None:
    """The first ping of the stay in the origin zone that ends at ping `e`, after the
    vehicle was last away from it: more than `noise` consecutive pings outside the zone
    (fewer are GPS noise at its edge). Only pings from `since` on are read: the tracker
    keeps at least those whatever the batches were, so the answer does not depend on
    them. None: not away in them."""
    w0 = int(np.searchsorted(t[: e + 1], since))
    # GPS noise as along the corridor (without_noise); a run the window cuts counts as one
    # between pings inside, so a short one there is noise too
    inside = np.concatenate(([True], in_origin[w0 : e + 1]))
    read = w0 - 1 + without_noise(inside, noise)[1:]
    away = read[~in_origin[read]]
    return int(away[-1]) + 1 if len(away) else None


def origin_fixes(measures: TrackMemo, itinerary: Itinerary, rules: TripRules) -> np.ndarray:
    """Per fix: in the origin zone as a departure reads it. A fix inside the zone; or a fix
    outside it after which, before the next fix also outside it, the bus passed through
    a stretch of the shape inside the zone (a terminal loop, a stop point the shape passes
    by), the two stepping along the shape (`along_shape`: in the corridor, at most
    `max_coverage_gap_s` apart, forward at a plausible speed). The departure is then the
    moment the progress passed that stretch's end (`departure_time`). A fix beside the
    zone short of the stretch's end is no such pass: the bus is read leaving the zone
    where it left it, not where GPS noise puts it back on the stretch. Kept in the memo:
    a fix's value reads only it and the next (read-only)."""
    return measures.settled(("origin", id(itinerary), id(rules)),
                            lambda done: origin_fixes_from(measures, itinerary, rules, done), lag=1)


def origin_fixes_from(measures: TrackMemo, itinerary: Itinerary, rules: TripRules, done: int) -> np.ndarray:
    """`origin_fixes` of the fixes from index `done` on, measured now and not kept: the
    last one's value is as the fixes known make it (it reads the fix after it)."""
    inside = measures.inside(itinerary.origin)[done:]
    if not may_pass_a_span(measures, itinerary, done):
        return inside
    crossed = _passed_through(measures, itinerary, itinerary.left_spans_m, inside, rules, done)
    if crossed is None:
        return inside
    held = inside.copy()
    held[:-1] |= crossed
    return held


def may_pass_a_span(measures: TrackMemo, itinerary: Itinerary, done: int) -> bool:
    """Whether a pair of the fixes from index `done` on may pass through one of the
    itinerary's left spans (`_passed_through`'s origin reading): only a pair on the corridor
    at both ends whose first fix is not past the last span's start can. Read in Python for
    a beat's fix or two (numpy's calls would cost more than the reading); False only when
    `_passed_through` finds no pair."""
    near = measures.corridors().get(itinerary.pattern.key)
    if near is None:
        return False
    on_corridor = near[0]
    if len(on_corridor) - done > 8:
        return True
    on = on_corridor[done:].tolist()
    pairs = [k for k in range(len(on) - 1) if on[k] and on[k + 1]]
    if not pairs:
        return False
    spans = itinerary.left_spans_m
    if not len(spans):
        return False
    last_start = spans[-1, 0]  # the spans are in order (`_spans_between`)
    along = near[1]
    return any(along[done + k] <= last_start for k in pairs)


def destination_fixes(measures: TrackMemo, itinerary: Itinerary, rules: TripRules) -> np.ndarray:
    """Per fix: in the destination zone as an arrival reads it. A fix inside the zone, or
    the fix outside it after the bus passed through a stretch of the shape inside the
    zone since the fix before (outside too), read as `origin_fixes` reads a departure:
    the arrival is the moment the progress passed that stretch's start (`arrival_time`).
    Kept in the memo: a fix's value reads only it and the one before (read-only)."""
    def measure(done: int) -> np.ndarray:
        start = max(done - 1, 0)  # the pair from the fix before the first one measured
        inside = measures.inside(itinerary.destination)[start:]
        crossed = _passed_through(measures, itinerary, itinerary.entered_spans_m, inside, rules, start)
        if crossed is None:
            return inside[done - start:]
        held = inside.copy()
        held[1:] |= crossed
        return held[done - start:]
    return measures.settled(("destination", id(itinerary), id(rules)), measure, lag=0,
                            first=lambda: bool(measures.inside(itinerary.destination)[0]))


def _arrives_from(measures: TrackMemo, itinerary: Itinerary, rules: TripRules, first: int) -> bool:
    """Whether a fix from index `first` on is an arrival of `itinerary`: the first of a run
    of fixes in its destination zone as `destination_fixes` reads them (the arrivals
    `_candidates` pairs with an exit). The column is read only when the fixes from `first`
    on could hold one (`_may_arrive_from`): the gate costs the new fixes only."""
    if not _may_arrive_from(measures, itinerary, first):
        return False
    held = destination_fixes(measures, itinerary, rules)[max(first - 1, 0):]
    if first == 0:
        return bool(held.any())
    return bool((held[1:] & ~held[:-1]).any())


def _may_any_arrive_from(measures: TrackMemo, first: int) -> bool:
    """False only when `_may_arrive_from` is False for every itinerary detection reads,
    read for all of them at once from the fixes from index `first` on and the one before.
    Each arrival it lets through is a terminal zone entered at one of those fixes (a
    destination is a terminal zone; from 0, any fix inside one), or a pair of them on an
    itinerary's corridor at both ends with one of its `Itinerary.entered_spans_m` between their
    progress (an itinerary detection reads: its key is near). Without the test that the
    pair's first fix is outside the zone: a superset, so still exact. A bus on its way
    between terminals enters no zone and steps short of every entered span: one query of
    the zones' slots, and a look at each corridor's new slots in Python."""
    if measures.terminal_entered_from(first):
        return True
    low = max(first - 1, 0)
    if len(measures.t) - low < 2:
        return False
    spans_of = measures.grown.get(_ENTERED_SPANS)
    if spans_of is None:
        spans_of = measures.grown[_ENTERED_SPANS] = {}  # (made again after a cut: `grown` empties)
    itineraries = measures.geofences.itineraries
    for key, on, progress in measures.corridor_tails(low):
        steps = [k for k in range(1, len(on)) if on[k - 1] and on[k]]
        if not steps:
            continue
        spans = spans_of.get(key)
        if spans is None:
            spans = spans_of[key] = itineraries[key].entered_spans_m.tolist()
        if any(_ends_a_span(spans, progress[k - 1], progress[k]) for k in steps):
            return True
    return False


_ENTERED_SPANS = ("detection", "entered spans")  # memo.grown: itinerary key -> its `entered_spans_m` as a list


def _may_arrive_from(measures: TrackMemo, itinerary: Itinerary, first: int) -> bool:
    """False only when no fix from index `first` on is an arrival by `destination_fixes`,
    read from those fixes and the one before alone. Exact: a fix i is held in the zone
    when it is inside it, or when the pair (i - 1, i) passed through one of
    `Itinerary.entered_spans_m` (`_passed_through`), which needs both fixes on the corridor
    (`along_shape`) and a span between their progress along it (`_spans_between`); the
    track's first fix has no pair and is held only inside. An arrival from `first` > 0 is
    a fix i >= first held after fix i - 1 not held, so fix i - 1 is not inside (inside
    is held). With no such pair from `first - 1` on (a bus on its way between terminals,
    or one standing in its destination zone), and for `first` 0 no fix inside and no
    such crossing, there is none."""
    # a beat brings a fix or two: its pairs are read as Python floats, not by numpy calls
    low = max(first - 1, 0)
    inside = measures.inside(itinerary.destination)[low:].tolist()
    if any(inside) if first == 0 else any(not a and b for a, b in zip(inside, inside[1:])):
        return True
    near = measures.corridors().get(itinerary.pattern.key)
    if near is None:
        return False
    on_corridor, progress = (column[low:].tolist() for column in near)
    spans = None
    for k in range(1, len(on_corridor)):
        if on_corridor[k - 1] and on_corridor[k] and (first == 0 or not inside[k - 1]):
            if spans is None:
                spans = itinerary.entered_spans_m.tolist()
            if _ends_a_span(spans, progress[k - 1], progress[k]):
                return True
    return False


def _ends_a_span(spans: list[list[float]], before: float, after: float) -> bool:
    """Whether a pair at progress `before` then `after` passes through a whole span, read
    as `_spans_between` does (the first span starting at or after the pair's start), in
    Python for a beat's pair or two."""
    for begin, end in spans:
        if begin >= before:
            return end <= after
    return False


def _passed_through(measures: TrackMemo, itinerary: Itinerary, spans: np.ndarray, inside: np.ndarray,
                    rules: TripRules, start: int = 0) -> np.ndarray | None:
    """Per pair of consecutive fixes from index `start` on (`inside`: those fixes' own):
    both outside the zone, stepping along the shape, and one of `spans` lies between their
    progress along it. None: no pair is."""
    near = measures.corridors().get(itinerary.pattern.key)
    if near is None or not len(spans) or len(inside) < 2:
        return None
    on_corridor, progress = (column[start:] for column in near)
    if not (on_corridor[:-1] & on_corridor[1:]).any():
        return None  # a pair steps along the shape only on the corridor at both ends (`along_shape`)
    progress = np.where(on_corridor, progress, 0.0)  # NaN off the corridor; such pairs never step
    crossed = _spans_between(spans, progress[:-1], progress[1:]) & ~inside[:-1] & ~inside[1:]
    if not crossed.any():
        return None
    crossed &= along_shape(measures.t[start:], progress, on_corridor, rules)
    return crossed if crossed.any() else None


def _spans_between(spans: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per (start, end) of progress: a span lies within it (the spans are in order and
    apart, so the first that starts at or after `start` is the one to look at)."""
    first = np.searchsorted(spans[:, 0], start, side="left")
    within = first < len(spans)
    within[within] = spans[first[within], 1] <= end[within]
    return within


def departure_time(itinerary: Itinerary, t, x, y, e: int) -> float:
    """When the vehicle left the origin zone between ping `e` (the last in it, as
    `origin_fixes` reads it) and the next: where the straight line between them crosses
    the zone's edge when ping `e` is inside; else where the shape's progress passed the
    end of the last stretch in the zone between them, linear in progress. A trip's
    departure (the same for a trip running and once it arrived)."""
    origin = itinerary.origin
    if origin.contains(x[e : e + 1], y[e : e + 1])[0]:
        return float(t[e] + (t[e + 1] - t[e]) * _crossing(origin, x, y, e, leaving=True))
    p0, p1 = itinerary.locate(x[e : e + 2], y[e : e + 2])
    spans = itinerary.left_spans_m
    between = spans[(spans[:, 0] >= p0) & (spans[:, 1] <= p1), 1]
    return float(t[e] + (t[e + 1] - t[e]) * _fraction(p0, p1, between[-1] if len(between) else p0))


def arrival_time(itinerary: Itinerary, t, x, y, j: int) -> float:
    """When the vehicle reached the destination zone between ping `j - 1` and ping `j`
    (the first in it, as `destination_fixes` reads it), as `departure_time`: where the
    progress passed the start of the first stretch in the zone between them. A trip's arrival."""
    destination = itinerary.destination
    if destination.contains(x[j : j + 1], y[j : j + 1])[0]:
        return float(t[j - 1] + (t[j] - t[j - 1]) * _crossing(destination, x, y, j - 1, leaving=False))
    p0, p1 = itinerary.locate(x[j - 1 : j + 1], y[j - 1 : j + 1])
    spans = itinerary.entered_spans_m
    between = spans[(spans[:, 0] >= p0) & (spans[:, 1] <= p1), 0]
    return float(t[j - 1] + (t[j] - t[j - 1]) * _fraction(p0, p1, between[0] if len(between) else p1))


def _fraction(p0: float, p1: float, at: float) -> float:
    return float(np.clip((at - p0) / (p1 - p0), 0.0, 1.0)) if p1 > p0 else 0.0


def _dwell_start(in_origin: np.ndarray, e: int) -> int:
    """First ping of the run inside the origin zone that ends at `e`."""
    outside = np.flatnonzero(~in_origin[: e + 1])
    return int(outside[-1]) + 1 if len(outside) else 0


def _starts_over(t, progress, on_corridor, read: np.ndarray, rules: TripRules) -> bool:
    """After a silence longer than `max_coverage_gap_s`, the vehicle is back on the
    itinerary behind where it was (beyond GPS jitter): it went back and started over
    unseen, so the departure before the silence and the arrival after it are not one trip."""
    kept = read[on_corridor[read]]
    if len(kept) < 2:
        return False
    silent = np.diff(t[kept]) > rules.max_coverage_gap_s
    back = np.diff(progress[kept]) < -2 * rules.corridor_m
    return bool((silent & back).any())


def _coverage(t, progress, on_corridor, rules: TripRules) -> float:
    """Metres of the shape covered in order: the union of the forward steps between
    consecutive pings that are both in the corridor, close enough in time and
    physically plausible. Backward jitter and GPS jumps cover nothing."""
    if len(t) < 2:
        return 0.0
    start, end = progress[:-1], progress[1:]
    valid = along_shape(t, progress, on_corridor, rules)
    if not valid.any():
        return 0.0
    order = np.argsort(start[valid], kind="stable")
    s, e = start[valid][order], end[valid][order]
    reach = np.maximum.accumulate(e)
    previous_reach = np.concatenate(([-np.inf], reach[:-1]))
    return float(np.sum(np.clip(e - np.maximum(s, previous_reach), 0, None)))


def without_noise(on_corridor: np.ndarray, longest: int) -> np.ndarray:
    """Indices of the fixes to read along the shape: all but runs of at most `longest`
    consecutive fixes off the corridor between fixes on it (GPS noise: a multipath jump,
    a fix 60 m out next to another, not a path the bus held)."""
    off = ~np.asarray(on_corridor, bool)
    noise = np.zeros(len(off), bool)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], off.astype(np.int8), [0]))))
    for begin, end in zip(edges[::2], edges[1::2]):  # runs off the corridor: [begin, end)
        if begin > 0 and end < len(off) and end - begin <= longest:
            noise[begin:end] = True
    return np.flatnonzero(~noise)


def along_shape(t, progress, on_corridor, rules: TripRules) -> np.ndarray:
    """Per pair of consecutive pings: the bus drove along the shape between them — both
    in the corridor, close enough in time, forward by a physically plausible step. Trip
    coverage counts these steps; A-07 takes a stop they bracket as passed."""
    dt = np.diff(t)
    step = np.diff(progress)
    max_step = rules.max_plausible_speed_kmh / 3.6 * dt + 2 * rules.corridor_m
    return on_corridor[:-1] & on_corridor[1:] & (dt <= rules.max_coverage_gap_s) & (step > 0) & (step <= max_step)


def tachograph_distance(t: np.ndarray, speed_kmh: np.ndarray) -> np.ndarray:
    """The most the tachograph lets the vehicle have driven from the first ping to each:
    every interval at the higher of its two speeds (a sensor of its own, against which
    GPS positions are checked). The higher, not the mean: a bus speeding up from a slow
    point, a U-turn, drove more than the mean of the two says."""
    steps = np.diff(t) * np.maximum(speed_kmh[1:], speed_kmh[:-1]) / 3.6
    return np.concatenate(([0.0], np.cumsum(steps)))


def _crossing(zone: Zone, x, y, i: int, *, leaving: bool) -> float:
    """Fraction of the way from ping i to ping i+1 at which the zone boundary is crossed."""
    if isinstance(zone, CircleZone):
        d0, d1 = zone.distance(x[i : i + 2], y[i : i + 2])
        if d1 == d0:
            return 0.0
        return float(np.clip((zone.radius_m - d0) / (d1 - d0), 0.0, 1.0))
    segment = shapely.linestrings([[x[i], y[i]], [x[i + 1], y[i + 1]]])
    if segment.length == 0:
        return 0.0
    hit = shapely.intersection(segment, zone.polygon.boundary)
    if hit.is_empty:
        return 0.0 if leaving else 1.0
    along = shapely.line_locate_point(segment, shapely.get_point(shapely.get_parts(hit), 0) if hit.geom_type != "Point" else hit)
    return float(np.min(along) / segment.length)
