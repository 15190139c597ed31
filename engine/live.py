"""A vehicle's live view: what the operations room and riders see, updated at each ping's
arrival (DESIGN.md, Timing: "The live view does not wait for the watermark").

The watermark gates legal records only. Each admitted ping moves its vehicle's live view
at once, in arrival order, and the `vehicle-status` record leaves in the same engine
call, stamped with the ping's own time. An admitted catraca reading newer than the view's
moves only what it shows of the catraca (`catraca_at`): when that changes the status (a
catraca topic behind the tachograph's showed the bus "catraca muda" until its next ping),
the status leaves again in the same call, at the position shown and its time
(engine.liveviews, `LiveViews.statuses`). The view is information, never evidence: no
record is derived from it, and nothing here reads the open track.

It reads the ping as `engine.status.open_trip` reads the open track, incrementally: per
itinerary whose origin terminal the vehicle was in (a `Leg`), whether it is inside that
zone now, when it last left it, how many fixes since were in the corridor (the tie
break between itineraries leaving one terminal), how far along and how far off the
shape it is, and since when it is farther than D-11's distance. Each ping is measured
against those few itineraries only, so the work per ping does not grow with the track.
The tracker's arrival (which cuts the open track) is followed here as the entry into
the running itinerary's destination zone after enough of its shape: the view is not
the detected trip, which still comes at release.

A departure the view sees is told to the operator stage at once (engine.messages.
LiveDeparture, `told`), which answers the bus ahead for the status: live information too,
kept apart from the legal departure told at release.

Pure: functions over frozen Structs; the vehicle stage's live views (engine.liveviews)
measure the pings of a call in one batch (`measure`) and fold them in (`advance`).
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import msgspec
import numpy as np

from geofences.zones import Geofences, Itinerary
from kernel.policy import Policy
from trips.detection import arrival_time, departure_time
from trips.memo import TakeGeometry
from trips.model import Fix
from trips.position import PositionScreen

log = logging.getLogger(__name__)


class Leg(msgspec.Struct, frozen=True, array_like=True):
    """One itinerary the vehicle was in the origin terminal zone of, as the live view follows it."""

    key: str  # Pattern.key
    inside: bool = False  # the newest fix is in the origin zone
    last_in: tuple[float, float, float, float] | None = None  # t, x, y, distance of the newest fix inside
    exit_t: float | None = None  # the last fix inside before it left (open_trip's exit); None: not left
    departed: float | None = None  # the crossing of the zone's edge (the tracker's departure)
    on: int = 0  # fixes in the corridor since the exit fix (inclusive)
    off_since: float | None = None  # first fix of the run beyond D-11's distance that goes on now
    reached_m: float = 0.0  # the farthest along the shape in the corridor since the exit
    distance_m: float = 0.0  # from the shape, at the newest fix
    progress_m: float = 0.0  # along the shape, at the newest fix


class Arrival(msgspec.Struct, frozen=True, array_like=True):
    """A trip the live view saw arrive (the released track detects it ~10 min later)."""

    key: str
    departed: float
    arrived: float
    standing: bool = True  # every fix since in the destination zone


class Position(msgspec.Struct, frozen=True, array_like=True):
    t: float
    x: float
    y: float
    lat: float
    lon: float
    speed_kmh: float
    route_id: str | None  # the console's line on this ping


class LiveMatch(msgspec.Struct, frozen=True, array_like=True):
    """The running trip's live match, computed once per departure (it only changes with it)."""

    key: str
    exit_t: float
    arrivals: int  # how many live arrivals it was computed with
    trip_id: str | None
    scheduled: float | None


class LiveView(msgspec.Struct, frozen=True, array_like=True):
    newest: float | None = None  # the newest ping looked at (a position fault included)
    position: Position | None = None  # the newest position taken
    screen: PositionScreen = PositionScreen()  # the position screen's own state (trips.position)
    legs: tuple[Leg, ...] = ()  # in the feed's itinerary order (open_trip's tie break)
    running: str | None = None  # the leg it runs, at the newest position
    arrivals: tuple[Arrival, ...] = ()  # recent live arrivals, oldest first
    match: LiveMatch | None = None
    catraca_at: float | None = None  # the newest catraca reading admitted (an older one moves nothing)
    # the running departure last told to the operator stage (LiveDeparture), for the bus
    # ahead: (itinerary key, departed)
    told: tuple[str, float] | None = None


@dataclass(frozen=True)
class LiveMap:
    """The feed's itineraries as the live view looks them up (built once per stage)."""

    geofences: Geofences

    @functools.cached_property
    def order(self) -> dict[str, int]:
        return {key: i for i, key in enumerate(self.geofences.itineraries)}

    @functools.cached_property
    def by_origin(self) -> dict[int, tuple[str, ...]]:
        found: dict[int, list[str]] = {}
        for key, itinerary in self.geofences.itineraries.items():
            found.setdefault(id(itinerary.origin), []).append(key)
        return {zone: tuple(keys) for zone, keys in found.items()}

    def itinerary(self, key: str) -> Itinerary:
        return self.geofences.itineraries[key]


class Measured(msgspec.Struct, frozen=True):
    """One fix measured: the terminal zones it is in, and per itinerary asked (distance, progress)."""

    zones: frozenset[int]
    shapes: dict[str, tuple[float, float]]


def measure(live_map: LiveMap, fixes: Sequence[Fix], vehicles: Sequence[int],
            following: Sequence[frozenset[str]], take: TakeGeometry | None = None) -> list[Measured]:
    """The terminal zones of every fix (one index query) and each fix's distance and
    progress on the itineraries its vehicle may follow in this call: those it follows
    (`following`, per vehicle) and those whose origin zone holds one of its fixes. Every
    (fix, itinerary) pair of every vehicle in one segment-index query
    (`Geofences.measure_pairs`), not two shapely calls per itinerary.
    `vehicles`: per fix, its vehicle's index in `following`. `take`: the engine call's
    fixes measured together (trips.memo.TakeGeometry), holding these: its queries answer
    (the same values, per fix), and only the pairs beyond the widest corridor are
    measured here."""
    if not fixes:
        return []
    x = np.fromiter((f.x for f in fixes), float, len(fixes))
    y = np.fromiter((f.y for f in fixes), float, len(fixes))
    rows = taken_rows(take, live_map.geofences, fixes)
    zones: list[set[int]] = [set() for _ in fixes]
    found = shared(lambda: take.zones_of(rows), "the terminal zones") if rows is not None else None
    if found is not None:
        for mine, inside in zip(zones, found):
            mine.update(inside)  # (in the order the masks below add them)
    else:
        for zone, mask in live_map.geofences.in_terminal_zones(x, y):
            for i in np.flatnonzero(mask).tolist():
                zones[i].add(zone)
    asked = [set(keys) for keys in following]
    for i, v in enumerate(vehicles):
        for zone in zones[i]:
            asked[v].update(live_map.by_origin.get(zone, ()))
    pairs = [(i, key) for i, v in enumerate(vehicles) for key in asked[v]]
    position = np.fromiter((i for i, _ in pairs), np.intp, len(pairs))
    which = np.fromiter((live_map.order[key] for _, key in pairs), np.intp, len(pairs))
    near = shared(lambda: take.shapes_near(rows, position.tolist(), which.tolist()), "the itineraries") \
        if rows is not None else None
    if near is not None:
        distance, progress = live_map.geofences.measured_beyond(x, y, position, which, *near)
    else:
        distance, progress = live_map.geofences.measure_pairs(x, y, position, which)
    shapes: list[dict[str, tuple[float, float]]] = [{} for _ in fixes]
    for (i, key), d, p in zip(pairs, distance.tolist(), progress.tolist()):
        shapes[i][key] = (d, p)
    return [Measured(frozenset(z), s) for z, s in zip(zones, shapes)]


def taken_rows(take: TakeGeometry | None, geofences: Geofences, fixes: Sequence[Fix]) -> list[int] | None:
    """The rows of `fixes` in the engine call's shared geometry, when it measured them all
    against these geofences; None: the live view measures them itself."""
    if take is None or take.geofences is not geofences or not fixes:
        return None
    rows = take.rows(fixes)
    return None if rows is None else rows.tolist()


def shared(read: Callable[[], object], what: str):
    """What `read` takes from the engine call's shared geometry (trips.memo.TakeGeometry), or
    None when one of its queries fails (a fault among the release's fixes, which must not
    cost the live view its statuses: it measures its own pings then, as it did before the
    two shared their queries). Only the take's reading is guarded: a fault of the live
    view's own still fails it (engine.liveviews `_live`)."""
    try:
        return read()
    except Exception:  # noqa: BLE001 - logged; the live view's own query follows
        log.warning("the call's shared geometry failed on %s; the live view measures its own pings", what,
                    exc_info=True)
        return None


def _horizon(policy: Policy) -> float:
    """How far back an exit can be and still start the trip running: the tracker keeps no
    fix older than the longest trip (trips.tracker.advance_track)."""
    return policy.trips.max_trip_duration_s + policy.trips.max_coverage_gap_s


def running_leg(legs: Sequence[Leg], declared: str | None, live_map: LiveMap, now: float,
                policy: Policy) -> Leg | None:
    """`open_trip`'s choice: the latest exit from an origin zone (the console's line
    first when the ping names one), then the most fixes in the corridor since it, then
    the feed's order."""
    best = None
    oldest = now - _horizon(policy)
    for leg in legs:
        if leg.inside or leg.exit_t is None or leg.exit_t < oldest:
            continue
        if declared is not None and live_map.itinerary(leg.key).pattern.route_id != declared:
            continue
        if best is None or (leg.exit_t, leg.on) > (best.exit_t, best.on):
            best = leg
    return best


def _step(leg: Leg, itinerary: Itinerary, fix: Fix, inside: bool, distance: float, progress: float,
          off_m: float) -> Leg:
    """One itinerary's leg after a fix."""
    on = distance <= itinerary.corridor_m
    off = distance > off_m
    if inside:
        return msgspec.structs.replace(leg, inside=True, last_in=(fix.t, fix.x, fix.y, distance),
                                       distance_m=distance, progress_m=progress)
    if leg.inside and leg.last_in is not None:  # it leaves: the last fix inside is the exit
        t0, x0, y0, d0 = leg.last_in
        departed = departure_time(itinerary, np.array([t0, fix.t]), np.array([x0, fix.x]),
                                  np.array([y0, fix.y]), 0)
        since = (t0 if d0 > off_m else fix.t) if off else None
        return Leg(leg.key, False, None, t0, departed, int(d0 <= itinerary.corridor_m) + int(on), since,
                   progress if on else 0.0, distance, progress)
    if leg.exit_t is None:
        return msgspec.structs.replace(leg, inside=False, distance_m=distance, progress_m=progress)
    return msgspec.structs.replace(
        leg, inside=False, on=leg.on + int(on),
        off_since=(leg.off_since if leg.off_since is not None else fix.t) if off else None,
        reached_m=max(leg.reached_m, progress) if on else leg.reached_m, distance_m=distance, progress_m=progress)


def advance(view: LiveView, fix: Fix, measured: Measured, live_map: LiveMap, policy: Policy) -> LiveView:
    """The view after a position taken (newer than the view's, past the position screen)."""
    known = {leg.key: leg for leg in view.legs}
    for zone in measured.zones:
        for key in live_map.by_origin.get(zone, ()):
            known.setdefault(key, Leg(key))
    legs = []
    for key in sorted(known, key=live_map.order.__getitem__):
        itinerary = live_map.itinerary(key)
        distance, progress = measured.shapes[key]
        leg = _step(known[key], itinerary, fix, id(itinerary.origin) in measured.zones, distance, progress,
                    policy.d11.max_distance_m)
        if leg.inside or (leg.exit_t is not None and leg.exit_t >= fix.t - _horizon(policy)):
            legs.append(leg)  # else it starts nothing any more: forgotten (the state stays bounded)
    arrivals = list(view.arrivals)
    if arrivals and arrivals[-1].standing and \
            id(live_map.itinerary(arrivals[-1].key).destination) not in measured.zones:
        arrivals[-1] = msgspec.structs.replace(arrivals[-1], standing=False)
    before = known.get(view.running) if view.running is not None else None
    if before is not None and view.position is not None and before.departed is not None:
        itinerary = live_map.itinerary(before.key)
        if id(itinerary.destination) in measured.zones and \
                before.reached_m >= policy.trips.min_coverage * itinerary.length_m:
            # arrived: as the tracker cuts the open track at an arrival, no exit before the
            # fix ahead of the arrival starts a trip any more
            p = view.position
            arrived = arrival_time(itinerary, np.array([p.t, fix.t]), np.array([p.x, fix.x]),
                                   np.array([p.y, fix.y]), 1)
            arrivals.append(Arrival(before.key, before.departed, arrived))
            legs = [leg if leg.inside or (leg.exit_t is not None and leg.exit_t >= p.t)
                    else msgspec.structs.replace(leg, exit_t=None, departed=None) for leg in legs]
            legs = [leg for leg in legs if leg.inside or leg.exit_t is not None]
    # the arrivals a live match may still need (the released ones are in the trip logs by
    # then) and the one the vehicle may be standing after
    keep = max(2 * policy.stream.allowed_lateness_s, policy.trips.in_service_terminal_s)
    arrivals = [a for a in arrivals if a.arrived >= fix.t - keep]
    position = Position(fix.t, fix.x, fix.y, fix.lat, fix.lon, fix.speed_kmh, fix.route_id)
    running = running_leg(legs, fix.route_id, live_map, fix.t, policy)
    return msgspec.structs.replace(view, position=position, legs=tuple(legs),
                                   running=running.key if running is not None else None, arrivals=tuple(arrivals))


def iso(epoch: float | None, tz) -> str | None:
    """The instant to the second, ISO-8601 in `tz`: `datetime.fromtimestamp(round(epoch),
    tz).isoformat()`, from its minute's text (`_minute_iso`) where that is known: a status
    formats its ping's time at every ping."""
    if epoch is None:
        return None
    whole = round(epoch)
    minute, second = divmod(whole, 60)
    head, offset = _minute_iso(minute, tz)
    if head is None:
        return dt.datetime.fromtimestamp(whole, tz).isoformat()
    return f"{head}{second:02d}{offset}"


@functools.lru_cache(maxsize=4096)
def _minute_iso(minute: int, tz) -> tuple[str | None, str | None]:
    """The text of a UTC minute's instants in `tz` around their seconds: ('YYYY-MM-DDTHH:MM:',
    '-03:00'), when the offset is whole minutes and the same at its first and last second
    (no zone changes its offset twice within a minute), else (None, None)."""
    if tz is None:
        return None, None
    first = dt.datetime.fromtimestamp(minute * 60, tz)
    last = dt.datetime.fromtimestamp(minute * 60 + 59, tz)
    if first.second != 0 or first.utcoffset() != last.utcoffset():
        return None, None
    text = first.isoformat()
    return text[:17], text[19:]
