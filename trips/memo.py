"""Each fix of a vehicle's open track measured against the geofences once, not at every beat.

The engine reads a vehicle's open track at every beat (trip detection, the running trip,
the unfollowed passes), and the track only changes at its ends: new fixes come after the
last, and a closed trip cuts fixes off the front. `TrackMemo` keeps, per vehicle, the
measures of the fixes it has seen (zone membership, distance to and progress along each
itinerary, which corridors a fix is on) and, given the track again, measures only the
fixes it has not seen. It is a cache held by the caller, never in the vehicle's state:
every answer is the one a fresh memo gives (the measures are per fix), and a track that
is not the previous one cut at the front and grown at the end is measured anew.

The corridors come from one segment-index query per beat (geofences.segments), which
locates every (fix, itinerary) pair near a shape; a progress column takes their numbers
and locates by shapely only the fixes off the corridor, each made a shapely point once. The trip rules at an
arrival read the arrived trip's fixes as measured here (`Along`), so what the memo holds
is bounded as the open track is: cut at the trip's end with it.

The fixes a release hands every vehicle of an engine call are measured together first,
with the pings the call's live view moves to (`TakeGeometry`: one query of each kind for
all of them, not one per vehicle nor one per view), and each vehicle's memo takes its
fixes' answers from there, a beat's fix or two from Python values.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import numpy as np
import shapely

from geofences.zones import Geofences, Itinerary, Zone
from trips.model import Fix, columns


@dataclass(frozen=True, eq=False)
class Along:
    """Fixes measured against one itinerary, as parallel arrays: time, position, progress
    along the shape and distance to it (metres). What the trip rules read at an arrival,
    taken from the track's memo, where each fix was measured once when it came; sliced
    as one (`along[i:j]`, `along[mask]`)."""

    t: np.ndarray
    x: np.ndarray
    y: np.ndarray
    progress: np.ndarray
    distance: np.ndarray

    def __getitem__(self, index) -> Along:
        return Along(*(getattr(self, f.name)[index] for f in fields(self)))

    def __len__(self) -> int:
        return len(self.t)


class TakeGeometry:
    """The fixes one engine call measures — the pings that arrived (the live view, engine.
    liveviews) and every vehicle's fixes the watermark released — against the geofences,
    with one query of each kind for all of them (geometry batched across the vehicles: a
    query's cost is mostly its call, and a vehicle brings one fix or two per call at live
    pace). Every answer is per fix, a function of its position alone, so a vehicle's share
    of them is what a query over its own fixes gives, to the bit. A fix is known by
    identity (the engine hands the same objects on to the tracks; one both arrived and
    released is found at its last row, with the same answers); the take holds its fixes,
    so no other object can take one's id while it lives."""

    __slots__ = ("geofences", "fixes", "_row", "x", "y", "_near", "_corridors", "_bounds", "_corridor_lists",
                 "_distance", "_zones", "_limits", "_failed")

    def __init__(self, geofences: Geofences, fixes: Sequence[Fix]) -> None:
        self.geofences = geofences
        self.fixes = fixes
        self._row = {id(fix): i for i, fix in enumerate(fixes)}
        self.x, self.y = columns(fixes, "x", "y")
        self._near: dict[float, np.ndarray] = {}
        self._corridors = self._bounds = self._corridor_lists = self._distance = self._zones = self._limits = None
        self._failed = False

    def rows(self, fixes: Sequence[Fix]) -> np.ndarray | None:
        """The take's rows of `fixes`; None when one of them is not in the take, or once
        one of its queries has failed (each vehicle then queries its own fixes, as alone:
        one vehicle's faulty fix fails that vehicle only)."""
        if self._failed:
            return None
        row = self._row
        found = [row.get(id(fix), -1) for fix in fixes]
        return None if -1 in found else np.array(found, dtype=np.intp)

    def run(self, fixes: Sequence[Fix]) -> int | None:
        """The take's row of the first of `fixes` when they are consecutive rows of it (a
        vehicle's fixes lie together in the take), found in Python for a beat's fix or two;
        None otherwise, or once one of its queries has failed (`rows`)."""
        if self._failed or not fixes:
            return None
        row = self._row
        first = row.get(id(fixes[0]))
        if first is None:
            return None
        for k in range(1, len(fixes)):
            if row.get(id(fixes[k])) != first + k:
                return None
        return first

    def speed_limits(self, rows: np.ndarray) -> np.ndarray:
        """As `Geofences.speed_limit` over those fixes."""
        if self._limits is None:
            self._limits = self._measured(self.geofences.speed_limit, self.x, self.y)
        return self._limits[rows]

    def near_any_itinerary(self, rows: np.ndarray, metres: float) -> np.ndarray:
        """As `Geofences.near_any_itinerary` over those fixes."""
        near = self._near.get(metres)
        if near is None:
            near = self._near[metres] = self._measured(self.geofences.near_any_itinerary, self.x, self.y, metres)
        return near[rows]

    def near_corridors(self, rows: np.ndarray
                       ) -> tuple[tuple[Itinerary, ...], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """As `Geofences.near_corridors` over those fixes (in that order): the pairs, which
        come sorted by position, of each row, with the positions renumbered."""
        itineraries, position, which, inside, located = self._corridors_measured()
        if len(rows) and (len(rows) == 1 or bool((np.diff(rows) == 1).all())):
            # rows in a run (a vehicle's fixes lie together in the take; at live pace one fix):
            # their pairs are one slice, in the same order the general case gives
            first, last = int(rows[0]), int(rows[-1])
            low, high = self._bounds[first], self._bounds[last + 1]
            return itineraries, position[low:high] - first, which[low:high], inside[low:high], located[low:high]
        low, counts = self._bounds[rows], self._bounds[rows + 1] - self._bounds[rows]
        ends = np.cumsum(counts)
        pairs = np.repeat(low - (ends - counts), counts) + np.arange(ends[-1] if len(ends) else 0)
        return itineraries, np.repeat(np.arange(len(rows)), counts), which[pairs], inside[pairs], located[pairs]

    def corridor_pairs(self, first: int, count: int) -> tuple[tuple[Itinerary, ...], list[tuple]]:
        """`near_corridors` of the run of `count` rows from `first` (`run`), as Python values
        for a beat's few pairs: per pair (position from 0, itinerary index, inside its
        corridor, progress), in the same order."""
        itineraries = self._corridors_measured()[0]
        position, which, inside, located, bounds = self._corridor_lists
        low, high = bounds[first], bounds[first + count]
        return itineraries, [(position[k] - first, which[k], inside[k], located[k]) for k in range(low, high)]

    def shapes_near(self, rows: Sequence[int], position: Sequence[int], which: Sequence[int]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per (fix, itinerary) pair asked (`position`: the fix's place in `rows`; `which`:
        the itinerary's in the geofences' order), its distance to the shape and progress
        along it when the pair is within the widest corridor (as `Geofences.measure_pairs`
        finds it), and which pairs were (the others: NaN, for the caller to measure)."""
        self._corridors_measured()
        _, found, _, located, bounds = self._corridor_lists
        distance, progress = np.full(len(position), np.nan), np.full(len(position), np.nan)
        hit = np.zeros(len(position), dtype=bool)
        for k, (i, index) in enumerate(zip(position, which)):
            row = rows[i]
            for j in range(bounds[row], bounds[row + 1]):  # the row's few pairs
                if found[j] == index:
                    distance[k], progress[k], hit[k] = self._distance[j], located[j], True
                    break
        return distance, progress, hit

    def zones_of(self, rows: Sequence[int]) -> list[list[int]]:
        """Per row, the terminal zones (ids) its fix is in, in `Geofences.in_terminal_zones`' order."""
        zones, zone_at, bounds = self._zones_measured()
        return [[zones[k] for k in zone_at[bounds[row]:bounds[row + 1]]] for row in rows]

    def _corridors_measured(self) -> tuple[tuple[Itinerary, ...], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if self._corridors is None:
            *corridors, distance = self._measured(self.geofences.near_shapes, self.x, self.y)
            for column in corridors[1:]:
                column.flags.writeable = False  # a run of rows is given slices of them (shared)
            self._bounds = np.searchsorted(corridors[1], np.arange(len(self.x) + 1))
            # the pairs as Python values too, made once for the take (`corridor_pairs`, `shapes_near`)
            self._corridor_lists = (*(column.tolist() for column in corridors[1:]), self._bounds.tolist())
            self._distance = distance.tolist()
            self._corridors = tuple(corridors)
        return self._corridors

    def terminal_slots(self, first: int, count: int) -> tuple[list[int], list[tuple[int, int]]]:
        """`in_terminal_zones` of the run of `count` rows from `first` (`run`), as Python
        values: the take's zones (ids), and per fix inside one (position from 0, ascending),
        the zone's place in that list, ascending."""
        zones, zone_at, bounds = self._zones_measured()
        return zones, [(i, k) for i in range(count) for k in zone_at[bounds[first + i]:bounds[first + i + 1]]]

    def in_terminal_zones(self, rows: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """As `Geofences.in_terminal_zones` over those fixes (in that order)."""
        zones, zone_at, bounds = self._zones_measured()
        masks: dict[int, np.ndarray] = {}
        for i, row in enumerate(rows.tolist()):
            for k in zone_at[bounds[row]:bounds[row + 1]]:
                mask = masks.get(k)
                if mask is None:
                    mask = masks[k] = np.zeros(len(rows), dtype=bool)
                mask[i] = True
        return [(zones[k], masks[k]) for k in sorted(masks)]

    def _zones_measured(self) -> tuple[list[int], list[int], list[int]]:
        if self._zones is None:
            zones = self._measured(self.geofences.in_terminal_zones, self.x, self.y)
            inside = np.array([mask for _, mask in zones], dtype=bool).reshape(len(zones), len(self.x))
            # per fix, the zones it is in (by their place in the take's list, ascending): a
            # vehicle's share is read from its own fixes' few entries, not from every zone's row
            fix_at, zone_at = np.nonzero(inside.T)
            self._zones = ([zone for zone, _ in zones], zone_at.tolist(),
                           np.searchsorted(fix_at, np.arange(len(self.x) + 1)).tolist())
        return self._zones

    def _measured(self, query, *args):
        """`query(*args)`; one that raises marks the take failed (`rows`)."""
        try:
            return query(*args)
        except Exception:
            self._failed = True
            raise


class TrackMemo:
    __slots__ = ("geofences", "fixes", "t", "x", "y", "_txy", "_points", "_columns", "_lagging", "_corridors",
                 "_corridors_len", "_zones", "_zones_len", "_last_inside", "grown", "take", "detected_under")

    # The corridors and the terminal zones are kept in growable buffers (`_Rows`): a beat
    # writes its new fixes' slots only, and readers get read-only views of the filled part.

    def __init__(self, geofences: Geofences) -> None:
        self.geofences = geofences
        self.fixes: Sequence[Fix] = ()
        self.t = self.x = self.y = np.empty(0)
        # the columns above are views of its first len(t) columns, with room to grow (`_grown_to`); None: not
        self._txy: np.ndarray | None = None
        self._points = np.empty(0, dtype=object)  # the fixes as shapely points, made once each
        self._columns: dict[tuple, np.ndarray] = {}
        # key of a column whose value for a fix depends on the fixes after it -> how many
        # (`settled`): the column holds only the values whose following fixes were measured
        self._lagging: dict[tuple, int] = {}
        # itinerary key -> (on its corridor, progress along it; NaN off the corridor)
        self._corridors = _Rows((False, np.nan))
        self._corridors_len = 0
        # id of a terminal zone with a fix inside -> which fixes are (the others: none is)
        self._zones = _Rows((False,))
        self._zones_len = 0
        # id of a terminal zone with a fix inside -> the index of the last one (`last_inside`)
        self._last_inside: dict[int, int] = {}
        # what readers kept of the track that holds only while it grows at its end with the
        # very same fixes (trips.unfollowed's chains, which a cut at the front changes and
        # which read more than a fix's position): emptied at any other track
        self.grown: dict = {}
        # the engine call's fixes measured together (`TakeGeometry`), while it runs: the
        # fixes of this track found there are not queried again
        self.take: TakeGeometry | None = None
        # the trip rules trip detection (trips.tracker) read this memo's tracks under: the
        # tracks it is given from then on were made by those calls, so their fixes hold
        # nothing more (detect_trips' `new_from`); None until detection reads one here
        self.detected_under: object | None = None

    def over(self, fixes: Sequence[Fix]) -> TrackMemo:
        """The memo positioned on `fixes` (time-ordered): what it kept of them is kept."""
        if fixes is self.fixes and isinstance(fixes, tuple):
            return self  # the very track again (the running trip, then its judgment): a tuple never changes
        n = len(fixes)
        if n and len(self.t) and isinstance(self.fixes, tuple) and fixes[0] is self.fixes[0]:
            # the same first fix (the usual beat): where a search of its time would put it. Only
            # from a tuple: a list the caller changed in place since would pass the identity
            # checks below against itself (the review's finding), where the search does not
            start = 0
        else:
            start = int(np.searchsorted(self.t, fixes[0].t, side="left")) if n and len(self.t) else 0
        shared = min(len(self.t) - start, n)
        same = shared > 0 and all(map(operator.is_, itertools.islice(self.fixes, start, start + shared),
                                      itertools.islice(fixes, shared)))
        if not (same and start == 0 and shared == len(self.t)):
            self.grown = {}
        if same and start == 0 and shared == len(self.t):
            # the track measured, grown at its end or not at all (the engine's usual beat): every
            # measure kept stands as it is, and only the new fixes are read
            return self._grown_to(fixes)
        if same:
            # the very fixes measured before (the engine passes the same objects): only the
            # new ones are read
            t, x, y = (np.concatenate((known[start:start + shared], fresh))
                       for known, fresh in zip((self.t, self.x, self.y), _arrays(fixes[shared:])))
        else:
            t, x, y = _arrays(fixes)
            if shared <= 0 or not (np.array_equal(self.t[start:start + shared], t[:shared])
                                   and np.array_equal(self.x[start:start + shared], x[:shared])
                                   and np.array_equal(self.y[start:start + shared], y[:shared])):
                start, shared = 0, 0
        # a track that ends before the fixes measured (the same fixes, fewer at the end): a
        # lagging column's last values read fixes it no longer has
        shorter = len(self.t) - start > shared
        self._columns = {key: column[start:start + shared - (self._lagging.get(key, 0) if shorter else 0)]
                         for key, column in self._columns.items() if shared and len(column) > start}
        self._points = self._points[start:start + shared] if shared else np.empty(0, dtype=object)
        kept = max(0, min(self._corridors_len - start, shared))
        self._corridors = self._corridors.cut(start, kept, keep=lambda columns: True)
        self._corridors_len = kept
        kept = max(0, min(self._zones_len - start, shared))
        self._zones = self._zones.cut(start, kept, keep=lambda columns: bool(columns[0].any()))
        self._zones_len = kept
        self._last_inside = {key: int(np.flatnonzero(inside)[-1]) for key, inside in self._zones.views(kept).items()}
        self.fixes, self.t, self.x, self.y = fixes, t, x, y
        self._txy = None  # (the columns are not the buffer's: the next growth copies them into a new one)
        return self

    def extended(self, previous: tuple[Fix, ...], fixes: tuple[Fix, ...]) -> TrackMemo:
        """`over(fixes)` for a track its caller made as `previous + more` (tuple concatenation:
        the very fixes of `previous`, then the new ones), `previous` being the track the memo
        is on: its fixes are not compared one by one, which cost a pass over the whole open
        track at every beat (trips.tracker). Anything else is `over`'s to read."""
        if (previous is self.fixes and isinstance(previous, tuple) and isinstance(fixes, tuple) and previous
                and len(previous) == len(self.t) and len(fixes) >= len(previous)
                and fixes[0] is previous[0] and fixes[len(previous) - 1] is previous[-1]):
            return self._grown_to(fixes)
        return self.over(fixes)

    def _grown_to(self, fixes: Sequence[Fix]) -> TrackMemo:
        """On `fixes`, the track measured with new fixes after it (or none): every measure
        kept stands, and the new fixes' times and positions are added. They are written
        into a buffer with room to grow (`_txy`: its columns past the track's are never
        in a view given out), so a beat costs its new fixes, not a copy of the track."""
        shared, n = len(self.t), len(fixes)
        if n > shared:
            buffer = self._txy
            if buffer is None or buffer.shape[1] < n:
                buffer = np.empty((3, max(2 * n, 64)))
                buffer[:, :shared] = (self.t, self.x, self.y)
                self._txy = buffer
            fresh = fixes[shared:]
            if len(fresh) <= _BEAT_FIXES:
                t, x, y = buffer
                for k, fix in enumerate(fresh, shared):
                    t[k], x[k], y[k] = fix.t, fix.x, fix.y
            else:
                buffer[:, shared:n] = _arrays(fresh)
            self.t, self.x, self.y = buffer[0, :n], buffer[1, :n], buffer[2, :n]
            for column in (self.t, self.x, self.y):
                column.flags.writeable = False  # shared with the buffer: no reader may write
        self.fixes = fixes
        return self

    @property
    def zones_entered(self) -> frozenset[int]:
        """Ids of the terminal zones with a fix of the track inside."""
        self.inside_terminals()
        return self._zones.keys_given()

    def _points_from(self, done: int) -> np.ndarray:
        """The fixes from index `done` on as shapely points (each made once, when first read)."""
        made = len(self._points)
        if made < len(self.t):
            self._points = np.concatenate((self._points, shapely.points(self.x[made:], self.y[made:])))
        return self._points[done:]

    def _column(self, key: tuple[str, int], measure: Callable[[int], np.ndarray]) -> np.ndarray:
        """A measure of every fix, kept: `measure(done)` measures the fixes from `done` on."""
        column = self._columns.get(key)
        if column is None or len(column) < len(self.t):
            done = 0 if column is None else len(column)
            fresh = measure(done)
            column = fresh if column is None else np.concatenate((column, fresh))
            column.flags.writeable = False  # shared by every reader of the track
            self._columns[key] = column
        return column

    def settled(self, key: tuple, measure: Callable[[int], np.ndarray], lag: int,
                first: Callable[[], bool] | None = None) -> np.ndarray:
        """A measure of every fix whose value for a fix depends on the `lag` fixes after it
        (a zone left between a fix and the next): `measure(done)` gives the values of the
        fixes from `done` on, the last `lag` of them as the fixes known make them. Only the
        values with their following fixes known are kept; the others are measured again
        at the next call, when the track has grown. `first`: the value of the track's first
        fix when its value depends on the fix before it (a zone entered between the two),
        which a cut at the front takes away: a kept value read that fix, this one does not."""
        column = self._columns.get(key)
        done = 0 if column is None else len(column)
        if done < len(self.t) or column is None:
            fresh = measure(done)
            values = fresh if column is None else np.concatenate((column, fresh))
        else:
            values = column
        if first is not None and len(values) and values[0] != (head := first()):
            values = values.copy()
            values[0] = head
        values.flags.writeable = False  # shared by every reader of the track
        self._lagging[key] = lag
        self._columns[key] = values[:max(len(self.t) - lag, 0)]
        return values

    def inside(self, zone: Zone) -> np.ndarray:
        """Which fixes are inside `zone` (a terminal zone of the geofences' itineraries is
        found by one spatial query for all of them; any other zone is tested on its own)."""
        if id(zone) not in self.geofences.terminal_zone_ids:
            return self._column(("inside", id(zone)), lambda done: zone.contains(self.x[done:], self.y[done:]))
        inside = self.inside_terminals().get(id(zone))
        return inside if inside is not None else np.zeros(len(self.t), dtype=bool)

    def inside_terminals(self) -> dict[int, np.ndarray]:
        """Per terminal zone (by id) with a fix inside: which fixes are (read-only)."""
        done, n = self._zones_len, len(self.t)
        if done < n and (first := self._take_run(done)) is not None:
            # a beat's fix or two found in the take: their few slots written from Python values
            found, slots = self.take.terminal_slots(first, n - done)
            zones = self._zones
            zones.grow(n)
            if slots:
                for k in sorted({k for _, k in slots}):
                    zones.row(found[k])  # in the order the masks' path makes them
                buffer, rows = zones.buffers[0], zones.rows  # after the rows: a new row may make new buffers
                for i, k in slots:  # (by fix, ascending: a zone's last one is its last inside)
                    buffer[rows[found[k]], done + i] = True
                    self._last_inside[found[k]] = done + i
            self._zones_len = n
        elif done < n:
            rows = self._take_rows(done)
            fresh = (self.geofences.in_terminal_zones(self.x[done:], self.y[done:]) if rows is None
                     else self.take.in_terminal_zones(rows))
            zones = self._zones
            zones.grow(n)
            for key, mask in fresh:
                row = zones.row(key)  # before the buffer is read: a new row may make new buffers
                zones.buffers[0][row, done:n] = mask
                inside = np.flatnonzero(mask)
                if len(inside):
                    self._last_inside[key] = done + int(inside[-1])
            self._zones_len = n
        return self._zones.views(n)

    def last_inside(self, zone: Zone) -> int:
        """The index of the last fix inside `zone`, a terminal zone of the geofences'
        itineraries (-1: none is): kept as the fixes are measured, so a reader of the new
        fixes only learns whether one is inside without reading the zone's column."""
        assert id(zone) in self.geofences.terminal_zone_ids
        self.inside_terminals()
        return self._last_inside.get(id(zone), -1)

    def last_inside_any(self) -> int:
        """The index of the last fix inside any terminal zone of the geofences' itineraries
        (-1: none is)."""
        self.inside_terminals()
        return max(self._last_inside.values(), default=-1)

    def terminal_entered_from(self, first: int) -> bool:
        """Whether a fix from index `first` on is inside a terminal zone the fix before it is
        not inside (from 0: whether any fix is inside one): every zone's slots of those
        fixes read at once, not zone by zone (a beat's question for all the itineraries
        near a vehicle, whose destinations are terminal zones)."""
        self.inside_terminals()
        keys, n = len(self._zones.rows), self._zones_len
        if not keys or first >= n:
            return False
        inside = self._zones.buffers[0][:keys, max(first - 1, 0):n]
        if n - first <= _BEAT_FIXES:  # a beat's slots: read as Python values
            rows = inside.tolist()
            if first == 0:
                return any(map(any, rows))
            return any(b and not a for row in rows for a, b in zip(row, row[1:]))
        if first == 0:
            return bool(inside.any())
        return bool((inside[:, 1:] & ~inside[:, :-1]).any())

    def distance(self, itinerary: Itinerary) -> np.ndarray:
        """Metres from each fix to the itinerary's shape (as `Itinerary.distance`)."""
        return self._column(("distance", id(itinerary)), lambda done: np.asarray(
            shapely.distance(itinerary.line, self._points_from(done)), dtype=float))

    def progress(self, itinerary: Itinerary) -> np.ndarray:
        """Metres along the itinerary's shape of each fix (as `Itinerary.locate`): a fix on
        its corridor was located already by `corridors`; only the others are located now."""
        return self._column(("progress", id(itinerary)), lambda done: self._progress_from(itinerary, done))

    def _progress_from(self, itinerary: Itinerary, done: int) -> np.ndarray:
        progress = np.full(len(self.t) - done, np.nan)
        row = self._corridors.rows.get(itinerary.pattern.key)
        if row is not None and self._corridors_len > done:
            on_corridor, along = (buffer[row, done:self._corridors_len] for buffer in self._corridors.buffers)
            progress[:len(on_corridor)][on_corridor] = along[on_corridor]
        missing = np.isnan(progress)
        if missing.any():  # (the shapely points made only then: a beat's fix is mostly on the corridor)
            progress[missing] = shapely.line_locate_point(itinerary.line, self._points_from(done)[missing])
        return progress

    def along(self, itinerary: Itinerary) -> Along:
        """Every fix of the track measured against `itinerary` (only the new ones measured now)."""
        return Along(self.t, self.x, self.y, self.progress(itinerary), self.distance(itinerary))

    def corridors(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per itinerary with a fix near its corridor: which fixes are on it, and their
        progress along it (NaN off the corridor), read-only; one segment-index query for
        the fixes not yet measured locates all their (fix, itinerary) pairs
        (`Geofences.near_corridors`), and only their slots are written."""
        done, n = self._corridors_len, len(self.t)
        if done < n and (first := self._take_run(done)) is not None:
            # a beat's fix or two found in the take: their few pairs written from Python values
            itineraries, pairs = self.take.corridor_pairs(first, n - done)
            corridors = self._corridors
            corridors.grow(n)
            if pairs:
                for index in sorted({index for _, index, _, _ in pairs}):
                    corridors.row(itineraries[index].pattern.key)  # in the order the arrays' path makes them
                (on_corridor, progress), rows = corridors.buffers, corridors.rows  # (after the rows, as below)
                for position, index, inside, located in pairs:
                    if inside:
                        row = rows[itineraries[index].pattern.key]
                        on_corridor[row, done + position] = True
                        progress[row, done + position] = located
            self._corridors_len = n
        elif done < n:
            rows = self._take_rows(done)
            itineraries, position, which, inside, located = \
                self.geofences.near_corridors(self.x[done:], self.y[done:]) if rows is None \
                else self.take.near_corridors(rows)
            corridors = self._corridors
            corridors.grow(n)
            if len(which):
                # a beat brings a few pairs: their itineraries' rows found in Python, not by np.unique
                indices = sorted(set(which.tolist()))
                row_of = np.zeros(indices[-1] + 1, dtype=np.intp)
                row_of[indices] = [corridors.row(itineraries[index].pattern.key) for index in indices]
                on_corridor, progress = corridors.buffers  # after the rows: a new row may make new buffers
                rows_in, slots = row_of[which[inside]], done + position[inside]
                on_corridor[rows_in, slots] = True
                progress[rows_in, slots] = located[inside]
            self._corridors_len = n
        return self._corridors.views(n)

    def corridor_tails(self, low: int) -> list[tuple[str, list[bool], list[float]]]:
        """Per itinerary `corridors` gives, in its order: whether each fix from index `low` on
        is on its corridor, and its progress along it, as Python values (one numpy call for
        every itinerary's, not one each: a beat reads a fix or two of each)."""
        self.corridors()
        keys = list(self._corridors.rows)  # (a key's row is its place among them)
        on, progress = (buffer[:len(keys), low:self._corridors_len].tolist() for buffer in self._corridors.buffers)
        return list(zip(keys, on, progress))

    def _take_run(self, done: int) -> int | None:
        """The take's row of the fix at index `done` when the fixes from there on are a run
        of its rows no longer than a beat brings (`TakeGeometry.run`): read from Python
        values; a longer run (a track read whole) takes the arrays' path."""
        if self.take is None or len(self.fixes) - done > _BEAT_FIXES:
            return None
        return self.take.run(self.fixes[done:])

    def _take_rows(self, done: int) -> np.ndarray | None:
        """The take's rows of the fixes from index `done` on, when it holds them all."""
        if self.take is None:
            return None
        return self.take.rows(self.fixes[done:])


# the most new fixes a track's growth writes from Python values (`TrackMemo._take_run`): at
# live pace a beat brings one or two; numpy's calls cost more than the loop below that
_BEAT_FIXES = 16


class _Rows:
    """Columns of the track's fixes, one row per key in one growable 2-D buffer per kind
    (the values in `fill`'s order): slot i of a row is fix i's value, and the slots past
    the ones written hold `fill` (no fix measured there reads as none on it). Appending
    a beat's fixes writes their slots only (amortised O(new fixes): the capacity doubles
    when full), and readers get read-only views of the first n slots (`views`: a dict
    made once per n, a key's row being its place among the keys). A slot covered by a
    view handed out is never written again: a buffer is only ever written past every view
    given of it, a new key takes a row never given, and a cut at the front (`cut`) or a
    full buffer copies into new buffers, leaving the old ones to their views."""

    __slots__ = ("fill", "buffers", "rows", "_given", "_keys")

    def __init__(self, fill: tuple, capacity: int = 16) -> None:
        self.fill = fill
        self.buffers = tuple(np.full((4, capacity), value) for value in fill)
        self.rows: dict = {}
        self._given: tuple[int, dict] | None = None
        self._keys: frozenset | None = None

    def row(self, key) -> int:
        """The row of `key`, made (slots all `fill`) when it has none."""
        row = self.rows.get(key)
        if row is None:
            row = len(self.rows)
            if row == len(self.buffers[0]):
                self._copied(2 * row, self.buffers[0].shape[1], slice(None))
            self.rows[key] = row
            self._given = self._keys = None
        return row

    def grow(self, n: int) -> None:
        """Room for the slots of n fixes."""
        capacity = self.buffers[0].shape[1]
        if n > capacity:
            self._copied(len(self.buffers[0]), max(2 * capacity, n), slice(None))

    def _copied(self, rows: int, capacity: int, slots: slice) -> None:
        """New buffers of that size holding `slots` of the old ones (at their start)."""
        fresh = []
        for buffer, value in zip(self.buffers, self.fill):
            new = np.full((rows, capacity), value)
            kept = buffer[:, slots]
            new[:len(kept), :kept.shape[1]] = kept
            fresh.append(new)
        self.buffers = tuple(fresh)
        self._given = None

    def views(self, n: int) -> dict:
        """Per key, read-only views of its row's first n slots: the one buffer's, or a tuple
        of each buffer's (made at once for all keys, in C loops: a plain dict's look-ups)."""
        if self._given is not None and self._given[0] == n:
            return self._given[1]
        rows = []
        for buffer in self.buffers:
            view = buffer[:len(self.rows), :n]
            view.flags.writeable = False
            rows.append(list(view))  # the rows in key order: a key's row is its place among them
        given = dict(zip(self.rows, rows[0] if len(rows) == 1 else zip(*rows)))
        self._given = (n, given)
        return given

    def keys_given(self) -> frozenset:
        if self._keys is None:
            self._keys = frozenset(self.rows)
        return self._keys

    def cut(self, start: int, kept: int, keep: Callable[[tuple], bool]) -> _Rows:
        """The rows of slots [start, start + kept) moved to the front, in new buffers, with
        only the keys whose slots there `keep` accepts (none when kept is 0)."""
        fresh = _Rows(self.fill, max(kept, 16))
        if kept:
            window = tuple(buffer[:, start:start + kept] for buffer in self.buffers)
            for key, row in self.rows.items():
                columns = tuple(column[row] for column in window)
                if keep(columns):
                    new = fresh.row(key)
                    for buffer, column in zip(fresh.buffers, columns):
                        buffer[new, :kept] = column
        return fresh


def _arrays(fixes: Sequence[Fix]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return columns(fixes, "t", "x", "y")


def measured(fixes: Sequence[Fix], geofences: Geofences, memo: TrackMemo | None) -> TrackMemo:
    """`memo` positioned on `fixes`, or a fresh one (the same answers, measured now)."""
    if memo is None or memo.geofences is not geofences:
        memo = TrackMemo(geofences)
    return memo.over(fixes)
