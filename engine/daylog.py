"""A vehicle's operating day as the vehicle-day rules read it, accumulated ping by ping.

The state never holds the day's pings (DESIGN.md, Timing): the raw telemetry, the
evidence, stays on the input topics and files. What the rules need is kept instead,
and it is exactly what they would read in the whole day:
- C-01 reads the fixes above their speed limit and, after each, the next one (so a run
  of consecutive fixes over the limit is the same run in the kept fixes);
- D-19 and D-21 read the catraca as a `CatracaDay` (silences longer than the limit,
  notable readings), and place an event at the fix nearest to it: both fixes around
  each such moment are kept (around departures too, where a silence in service can
  start).

`add_fix`, `add_door`, `add_reading` and `keep` change the log in place (it is the
vehicle state's, which the stage copies to undo a failed release: engine.vehicle
`_log_copy` copies each list field and shares its items, so a writer may reassign a
field or change a list field, never an item in one); `over_episodes` and the log's own
readers only read it. Fed a
time-ordered run of fixes and readings, the log ends the same however the run was
split.
"""

from __future__ import annotations

import bisect

import msgspec
import numpy as np

from rules.c01 import speeding_episodes
from rules.facts import CatracaDay, DoorFix, is_notable
from telemetry import CatracaReading
from trips.model import Fix


class KeptFix(msgspec.Struct, frozen=True, array_like=True):
    fix: Fix
    limit_kmh: float


class DayLog(msgspec.Struct):
    date: str  # the operating day (ISO date)
    kept: list[KeptFix] = msgspec.field(default_factory=list)  # in (t, msg_id) order
    last: KeptFix | None = None  # the newest fix of the day so far
    last_over: bool = False  # the newest fix is above its speed limit: a speeding run may go on
    keep_next: bool = False  # the next fix follows an over-limit fix or a catraca event
    # catraca
    previous_counter: int | None = None  # the counter before the day's first reading
    counter: int | None = None  # the newest reading's counter
    readings: int = 0
    first_reading: float | None = None
    last_reading: float | None = None
    gaps: list[tuple[float, float]] = msgspec.field(default_factory=list)
    notable: list[tuple[CatracaReading, int | None]] = msgspec.field(default_factory=list)
    after: list[tuple[float, int]] = msgspec.field(default_factory=list)  # the reading after each notable one
    # the fixes around the newest reading, kept if it turns out to open a silence
    last_reading_before: KeptFix | None = None
    last_reading_after: KeptFix | None = None
    # doors (a pack with the unmarked-stop rule only): the fixes standing with the doors
    # open away from the marked stops, each with the fix after it (so a run of them is
    # the same run in the kept ones), and whether any ping reported the doors at all
    doors: list[DoorFix] = msgspec.field(default_factory=list)
    doors_next: bool = False
    doors_reported: bool = False
    # the day's catraca as the other versions of its readings in two versions tell it
    # (rules.versions), from the first such reading on; None while there is none
    other: OtherCatraca | None = None

    def catraca(self) -> CatracaDay:
        return CatracaDay(self.readings, self.first_reading, self.last_reading, tuple(self.gaps),
                          tuple(self.notable), tuple(self.after))

    def fixes(self) -> list[KeptFix]:
        """The kept fixes, with those around the day's last reading (a silence may run
        from it to the end of service)."""
        extra = [k for k in (self.last_reading_before, self.last_reading_after) if k is not None]
        return _merged(self.kept, extra)


class OtherCatraca(msgspec.Struct):
    """A day's catraca taking the other version of each reading in two versions: a DayLog
    whose catraca fields only are used, and the time and counter of its newest reading,
    plausible or not (what the implausibility check compares the next one with)."""

    log: DayLog
    last_reading: tuple[float, int] | None = None


def other_catraca(log: DayLog, last_reading: tuple[float, int] | None) -> OtherCatraca:
    """The day's catraca so far (the same in both versions until now), to go on apart."""
    return OtherCatraca(DayLog(log.date, previous_counter=log.previous_counter, counter=log.counter,
                               readings=log.readings, first_reading=log.first_reading, last_reading=log.last_reading,
                               gaps=list(log.gaps), notable=list(log.notable), after=list(log.after)), last_reading)


def _order(k: KeptFix) -> tuple[float, str]:
    return (k.fix.t, k.fix.msg_id)


def _merged(kept: list[KeptFix], more: list[KeptFix]) -> list[KeptFix]:
    out = list(kept)
    for k in more:
        i = bisect.bisect_left(out, _order(k), key=_order)
        if i == len(out) or out[i].fix.msg_id != k.fix.msg_id:
            out.insert(i, k)
    return out


def keep(log: DayLog, fixes: list[KeptFix]) -> None:
    log.kept = _merged(log.kept, fixes)


def add_fix(log: DayLog, k: KeptFix, tolerance_kmh: float) -> None:
    over = k.fix.speed_kmh > k.limit_kmh + tolerance_kmh
    if over or log.keep_next:
        keep(log, [k])
    if log.last_reading is not None and log.last_reading_after is None and k.fix.t >= log.last_reading:
        log.last_reading_after = k
    log.keep_next = log.last_over = over
    log.last = k


def add_door(log: DayLog, door: DoorFix, candidate: bool) -> None:
    """A fix as the door rule reads it (`candidate`: standing with the doors open away
    from every marked stop, rules.unmarked_stop.standing_with_doors_open)."""
    if door.fix.doors_open is not None:
        log.doors_reported = True
    if candidate or log.doors_next:
        log.doors.append(door)
    log.doors_next = candidate


def over_episodes(log: DayLog, policy) -> dict[float, float]:
    """The day's speeding episodes that are over (C-01: episodes less than
    `merge_gap_s` apart merge, so one is over once no later run can join it): the time
    of each one's last fix above the limit -> the moment that became certain."""
    kept = log.kept
    if not kept or log.last is None:
        return {}
    rules = policy.c01
    # an episode is over no sooner than `merge_gap_s` after its last fix over the limit,
    # so none is before `merge_gap_s` after the day's first such fix: most beats of most
    # days end here, without measuring the day's kept fixes (in event-time order)
    first_over = next((k.fix.t for k in kept if k.fix.speed_kmh > k.limit_kmh + rules.tolerance_kmh), None)
    if first_over is None or log.last.fix.t < first_over + rules.merge_gap_s:
        return {}
    t = np.fromiter((k.fix.t for k in kept), float, len(kept))
    speed = np.fromiter((k.fix.speed_kmh for k in kept), float, len(kept))
    limit = np.fromiter((k.limit_kmh for k in kept), float, len(kept))
    over = speed > limit + rules.tolerance_kmh
    joined = over[:-1] & over[1:] & (np.diff(t) <= rules.max_ping_gap_s)
    newest = log.last.fix.t
    done = {}
    for a, b in speeding_episodes(t, speed, limit, policy):
        certain = t[b] + rules.merge_gap_s
        if newest < certain:
            continue
        # a run starting before then that has not ended yet could still qualify and join
        k, open_run = b + 1, False
        while k < len(t) and t[k] < t[b] + rules.merge_gap_s:
            if over[k]:
                m = k
                while m < len(joined) and joined[m]:
                    m += 1
                if m + 1 >= len(t):
                    open_run = log.last_over
                    break
                certain = max(certain, t[m + 1])
                k = m + 1
            else:
                k += 1
        if not open_run and newest >= certain:
            done[float(t[b])] = float(certain)
    return done


def add_reading(log: DayLog, reading: CatracaReading, max_silence_s: float) -> None:
    if log.readings == 0:
        log.first_reading = reading.epoch
    elif reading.epoch - log.last_reading > max_silence_s:
        log.gaps.append((log.last_reading, reading.epoch))
        # a silence opens at the previous reading: the fixes around it place it
        keep(log, [k for k in (log.last_reading_before, log.last_reading_after) if k is not None])
        if log.last_reading_after is None:
            log.keep_next = True
    log.after += [(reading.epoch, reading.counter)] * (len(log.notable) - len(log.after))
    if is_notable(reading, log.counter):
        log.notable.append((reading, log.counter))
        keep(log, [log.last] if log.last is not None else [])
        log.keep_next = True
    log.counter = reading.counter
    log.readings += 1
    log.last_reading = reading.epoch
    log.last_reading_before = log.last
    log.last_reading_after = None
