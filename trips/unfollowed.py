"""Trips the telemetry could not follow (DESIGN.md, "Trips"; issue #12, item 2).

A realized trip needs its departure, its arrival and the shape between them seen. A
vehicle seen running an itinerary whose fixes break off — a silence longer than
`max_coverage_gap_s` before the stretch, inside it or after it — may have run a
scheduled trip that the silence hid: the telemetry can neither confirm nor exclude it.
Such a stretch is an `UnfollowedPass`; the scheduled trips it could be are insufficient
evidence, never a D-22 and never a missing departure for D-12.

A stretch counts only where the telemetry leaves the question open at both ends:
- its start is a departure seen (the origin zone left) or lies right after a silence;
- it reaches the destination zone, or ends in a silence, or after its last silence the
  bus made no headway (the arrival may have been in the silence);
- and a silence lies somewhere in it or around it (else it was followed throughout: a
  bus that left the itinerary or never reached its end, seen doing so, excuses nothing).

Pure functions over a vehicle's fixes, vectorized per itinerary like trips.detection.
"""

from __future__ import annotations

import msgspec
import numpy as np

from geofences.zones import Geofences, Itinerary
from kernel.policy import TripRules
from trips.detection import departure_time, destination_fixes, origin_fixes
from trips.memo import TrackMemo, measured
from trips.model import Fix


class UnfollowedPass(msgspec.Struct, frozen=True):
    """A vehicle on an itinerary whose telemetry broke off: the trip it may have run."""

    vehicle_id: str
    route_id: str
    direction_id: int
    shape_id: str
    first_t: float  # its first and last fix on the itinerary
    last_t: float
    first_msg_id: str
    last_msg_id: str
    from_m: float  # along the shape: at its first fix, and the farthest it was seen
    to_m: float
    # when it may have left the origin: a departure seen, or the silence before its first fix
    earliest_departure: float
    latest_departure: float
    # (from, to) of the silences that hide it; from=None: before the first fix kept, to=None:
    # still silent. Typed so: the workers pass it between stages as JSON and must read None back
    silences: tuple[tuple[float | None, float | None], ...]
    # not a silence but messages dated by a faulty clock (engine.clocks), this far off: the
    # vehicle was unseen in time over the whole stretch and may have departed any number
    # of times in it
    clock_offset_s: float | None = None

    @property
    def key(self) -> tuple[str, str, float]:
        """The same stretch as it grows (seen again once more fixes come) keeps its key."""
        return (self.vehicle_id, self.shape_id, self.first_t)

    def could_be(self, route_id: str, direction_id: int, departure: float, window_s: float) -> bool:
        """The scheduled departure `departure` of that route and direction may be this trip."""
        return (route_id, direction_id) == (self.route_id, self.direction_id) \
            and self.earliest_departure - window_s <= departure <= self.latest_departure + window_s


def unfollowed_passes(vehicle_id: str, fixes: tuple[Fix, ...] | list[Fix], geofences: Geofences,
                      rules: TripRules, silent_after: bool, memo: TrackMemo | None = None
                      ) -> list[UnfollowedPass]:
    """The unfollowed passes ending in `fixes` (time-ordered). `silent_after`: no fix can
    follow the last one within `max_coverage_gap_s` (the watermark has passed it, or the
    input ended), so a stretch ending there ends in a silence; otherwise a stretch still
    running at the last fix is not over and is left for later. `memo`: see trips.memo."""
    if len(fixes) < 2:
        return []
    measures = measured(fixes, geofences, memo)
    t, x, y = measures.t, measures.x, measures.y
    near = measures.corridors()
    followed = _followed_so_far(measures, rules, silent_after)
    found = []
    for itinerary, key in _near_in_feed_order(measures, near, geofences):
        on_corridor, progress = near[key]
        if followed and not on_corridor[0]:
            continue
        found += _passes(vehicle_id, fixes, t, x, y, itinerary, on_corridor, progress, rules, silent_after,
                         measures)
    return sorted(found, key=lambda p: (p.first_t, p.shape_id))


def _near_in_feed_order(measures: TrackMemo, near: dict, geofences: Geofences) -> list[tuple[Itinerary, str]]:
    """The itineraries with a fix near their corridor, in the feed's order (whatever the
    memo's), with their keys. Kept in the memo's `grown`: while the track grows at its
    end its corridors are only ever added to, so the same count is the same ones."""
    kept = measures.grown.get(("unfollowed", "near"))
    if kept is None or kept[0] != len(near):
        kept = measures.grown[("unfollowed", "near")] = (
            len(near), [(itinerary, itinerary.pattern.key) for itinerary in geofences.itineraries_near(near)])
    return kept[1]


def _followed_so_far(measures: TrackMemo, rules: TripRules, silent_after: bool) -> bool:
    """No silence in the track and more fixes to come: no two fixes a stretch can join
    (at most `max_noise_pings` + 1 apart) are further apart than `max_coverage_gap_s`, nor
    a stretch and the fixes around it, and none ends in a silence. Then a stretch can be
    unfollowed only for want of what came before the track's first fix: only an itinerary
    whose corridor holds that fix can have a pass (the common case at each beat, read
    without scanning the others)."""
    if silent_after:
        return False
    return _widest_gap(measures) * (rules.max_noise_pings + 1) <= rules.max_coverage_gap_s


def _widest_gap(measures: TrackMemo) -> float:
    """The longest time between two consecutive fixes of the track (at least two). Kept
    in the memo's `grown` while the track grows at its end: only the new gaps are read."""
    t = measures.t
    done, widest = measures.grown.get(("unfollowed", "widest gap"), (1, -np.inf))
    if done < len(t):
        tail = t[done - 1:].tolist()  # Python floats: the same differences, fewer calls for a fix or two
        widest = max(widest, max(b - a for a, b in zip(tail, tail[1:])))
        measures.grown[("unfollowed", "widest gap")] = (len(t), widest)
    return widest


def _passes(vehicle_id, fixes, t, x, y, itinerary: Itinerary, on_corridor: np.ndarray, progress: np.ndarray,
            rules: TripRules, silent_after: bool, measures: TrackMemo):
    key = ("unfollowed", vehicle_id, itinerary.pattern.key)
    chains = measures.grown.get(key)
    if chains is None or (chains.rules is not rules and chains.rules != rules):
        chains = measures.grown[key] = _Chains(rules)
    chains.extend(t, progress, on_corridor)
    if chains.on_corridor < 2:
        return []
    zones: list[np.ndarray] = []  # the zone flags, read only for a verdict (most beats give none)

    def verdict(run: np.ndarray) -> UnfollowedPass | None:
        if _seen_throughout(run, t, rules):
            return None  # no silence before, in or after it: what _verdict finds, without the zone flags
        if not zones:
            zones.extend((origin_fixes(measures, itinerary, rules), destination_fixes(measures, itinerary, rules)))
        return _verdict(vehicle_id, fixes, t, x, y, itinerary, run, progress, *zones, rules, silent_after)
    # a chain a later one follows is over, and its verdict reads only fixes up to the one
    # after it: the same at every beat while the track grows, so each is judged once
    for run in chains.closed[chains.judged:]:
        if (passage := verdict(run)) is not None:
            chains.found.append(passage)
    chains.judged = len(chains.closed)
    if chains.current[-1] + 1 == len(t):
        if not silent_after:
            return chains.found.copy()  # the chain runs on at the last fix: not over yet (as _verdict finds it)
        last = verdict(np.array(chains.current))
    else:
        # a fix follows the chain's last: its verdict reads only fixes up to that one, the
        # same at every beat until the chain grows
        if chains.current_verdict_len != len(chains.current):
            chains.current_verdict = verdict(np.array(chains.current))
            chains.current_verdict_len = len(chains.current)
        last = chains.current_verdict
    return [*chains.found, last] if last is not None else chains.found.copy()


def _seen_throughout(run: np.ndarray, t: np.ndarray, rules: TripRules) -> bool:
    """The chain has a fix within `max_coverage_gap_s` before its first, after its last
    and between each two of its own: seen all along, it is no unfollowed pass (_verdict
    gives None: it has no silence to hide a departure or an arrival)."""
    gap = rules.max_coverage_gap_s
    first, last = int(run[0]), int(run[-1])
    return 0 < first and last + 1 < len(t) and t[first] - t[first - 1] <= gap and t[last + 1] - t[last] <= gap \
        and (len(run) < 2 or np.diff(t[run]).max() <= gap)


class _Chains:
    """Maximal chains of fixes (indices into the fixes) on the corridor, each forward
    along the shape at a plausible speed, never behind the farthest point reached by more
    than GPS jitter — across a silence of any length up to a trip's: the bus went on from
    where it was. Seen going back (the return trip on the same streets), it is another
    chain. GPS noise (at most `max_noise_pings` fixes off the corridor) breaks no chain.

    Read left to right, a fix at a time, so a track grown at its end gives the same
    chains with the last one extended or new ones after it: they are kept in the
    track's memo (trips.memo, `grown`) and only the new fixes read; a cut at the front
    changes the reach of the chain it cuts, and the memo starts them again."""

    __slots__ = ("rules", "done", "on_corridor", "closed", "judged", "found", "current", "reach", "current_verdict",
                 "current_verdict_len")

    def __init__(self, rules: TripRules) -> None:
        self.rules = rules
        self.done = 0  # the fixes read: indices below
        self.on_corridor = 0  # how many of them are on the corridor
        self.closed: list[np.ndarray] = []
        self.judged = 0  # how many of the closed chains were judged
        self.found: list[UnfollowedPass] = []  # the passes among them, in order
        self.current: list[int] = []
        self.reach = 0.0
        # the current chain's verdict once a fix follows its last, and its length then
        # (0: none yet); a chain only grows at its end, and a new one starts at length 1
        self.current_verdict: UnfollowedPass | None = None
        self.current_verdict_len = 0

    def extend(self, t: np.ndarray, progress: np.ndarray, on_corridor: np.ndarray) -> None:
        """The chains over the fixes not read yet."""
        rules = self.rules
        done, n = self.done, len(t)
        if done + 1 == n:  # a fix a beat (the live pace): read without a slice
            fresh = [done] if on_corridor[done] else []
        else:
            fresh = [done + i for i, on in enumerate(on_corridor[done:].tolist()) if on]
        self.done = n
        if not fresh:
            return
        self.on_corridor += len(fresh)
        if not self.current:
            self.current, self.reach = [fresh[0]], float(progress[fresh[0]])
            fresh = fresh[1:]
            if not fresh:
                return
        jitter = 2 * rules.corridor_m
        top_speed = rules.max_plausible_speed_kmh / 3.6
        current, reach = self.current, self.reach
        read = [current[-1], *fresh]  # the chain's last fix and the new ones: no other is read
        tl, pl = t[read].tolist(), progress[read].tolist()  # Python floats: the same arithmetic, read faster
        for j in range(1, len(read)):
            a, b = read[j - 1], read[j]
            elapsed = tl[j] - tl[j - 1]
            goes_on = b - a <= rules.max_noise_pings + 1 and elapsed <= rules.max_trip_duration_s \
                and pl[j] >= reach - jitter and pl[j] - pl[j - 1] <= top_speed * elapsed + jitter
            if goes_on:
                current.append(b)
                reach = max(reach, pl[j])
            else:
                self.closed.append(np.array(current))
                current, reach = [b], pl[j]
                self.current_verdict, self.current_verdict_len = None, 0
        self.current, self.reach = current, reach


def _verdict(vehicle_id, fixes, t, x, y, itinerary: Itinerary, run: np.ndarray, progress, in_origin, in_destination,
             rules: TripRules, silent_after: bool) -> UnfollowedPass | None:
    """The unfollowed pass a chain is, if it is one."""
    gap = rules.max_coverage_gap_s
    first, last = int(run[0]), int(run[-1])
    after = t[last + 1] - t[last] if last + 1 < len(t) else (np.inf if silent_after else None)
    if after is None:
        return None  # still running: not over yet
    declared = {fixes[i].route_id for i in run.tolist()} - {None}
    if declared and itinerary.pattern.route_id not in declared:
        return None  # the driver's console says another line
    before = t[first] - t[first - 1] if first > 0 else np.inf
    leaving = run[:-1]
    exits = leaving[in_origin[leaving] & ~in_origin[leaving + 1]].tolist()
    arrived = bool(in_destination[run].any())
    if not exits and before <= gap:
        return None  # joined the itinerary mid-way, seen doing so: no departure to hide
    if not arrived and after <= gap and not _arrival_may_be_in_a_silence(run, t, progress, rules):
        return None  # left the itinerary or stopped short of its end, seen doing so
    # what the telemetry did not see: the departure, the way, the arrival
    silences = [(float(t[first - 1]) if first > 0 else None, float(t[first]))] if not exits else []
    silences += [(float(t[a]), float(t[b])) for a, b in zip(run[:-1], run[1:]) if t[b] - t[a] > gap]
    if not arrived and after > gap:
        silences.append((float(t[last]), float(t[last + 1]) if last + 1 < len(t) else None))
    if not silences or progress[run].max() - progress[first] < rules.min_unfollowed_pass_m:
        return None
    if exits:
        departed = departure_time(itinerary, t, x, y, exits[-1])
        earliest = latest = departed
    else:
        earliest = float(t[first - 1]) if first > 0 else float(t[first]) - rules.max_trip_duration_s
        latest = float(t[first])
    pattern = itinerary.pattern
    return UnfollowedPass(
        vehicle_id=vehicle_id, route_id=pattern.route_id, direction_id=pattern.direction_id,
        shape_id=pattern.shape_id, first_t=float(t[first]), last_t=float(t[last]),
        first_msg_id=fixes[first].msg_id, last_msg_id=fixes[last].msg_id,
        from_m=round(float(progress[first]), 1), to_m=round(float(progress[run].max()), 1),
        earliest_departure=earliest, latest_departure=latest, silences=tuple(silences))


def _arrival_may_be_in_a_silence(run: np.ndarray, t, progress, rules: TripRules) -> bool:
    """After the stretch's last silence the bus made no headway along it (seen standing,
    or turning back for the return): it may have reached the end during the silence."""
    silent = np.flatnonzero(np.diff(t[run]) > rules.max_coverage_gap_s)
    if len(silent) == 0:
        return False
    after = run[silent[-1] + 1:]
    return bool(progress[after].max() - progress[after[0]] <= 2 * rules.corridor_m)
