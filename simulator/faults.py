"""Injected faults: one per detector of DESIGN.md, plus faults of the input itself, plus
faults for the shared detectors other laws' packs list (LAW_FAULTS).

Each fault picks its target deterministically from the seeded generator among the
runs where it can happen cleanly (e.g. a late departure only where the layover
absorbs it, so the next trip still leaves on time) and is listed in the manifest.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace

import numpy as np

from simulator.motion import FastStretch, LateralOffset, TurnBack, turn_back
from simulator.plan import Duty, Run

# Detector faults (DESIGN.md table) and what each injects.
FAULTS = {
    "detour": "D-11: a run leaves its itinerary by 150 m for 15 % of the shape",
    "stop_bypass": "A-07: a run passes 60 m away from one of its stops",
    "late_departure": "D-13: a timetabled run leaves its origin 7 min late",
    "en_route_lateness": "B-04: a run leaves on time but waits 7 min at its first intermediate timepoint",
    "suppressed_trip": "D-22: the last run of a block is not run",
    "frequency_shortfall": "D-12: one departure of a headway window is not run",
    "broken_seal": "D-21: a catraca reports its seal broken while in service",
    "silent_catraca": "D-19: a catraca is silent for 15 min while in service",
    "speeding": "C-01: a run drives two stop spacings at 80 km/h",
}
# Faults only the door sensors can tell (SimulationSettings.doors): refused without them.
DOOR_FAULTS = frozenset({"unmarked_stop"})

# Faults of an act only some laws name (a city's demo injects one where its pack lists the
# detector). Apart from FAULTS on purpose: a simulation of "every fault" stays as it was.
LAW_FAULTS = {
    "turn_back": "art. 14 § único (Conselheiro Lafaiete): the last run of a block turns back at 60 % of its "
                 "shape and drives back along it to its origin, the catraca counting",
    "unmarked_stop": "art. 19 § único (Conselheiro Lafaiete): a run stands 60 s with its doors open midway "
                     "between two stops (needs the door sensors: doors on)",
    "other_line": "art. 17 (Conselheiro Lafaiete): a spare vehicle of the run's operator licensed for other "
                  "lines only (fleet.csv lines; a fleet without one: not injected) runs, and boards passengers "
                  "on, the last run of a duty",
    # Canarana's take whole lines (a line that runs nothing for hours or days), which the
    # other faults' runs would share: never all on one day with them.
    "service_gap": "waiting time (Canarana's art. 10 § 5º): one line and direction runs nothing 08:00-11:30, "
                   "its vehicles deadheading",
    "held_at_terminal": "terminal crowding (Canarana's art. 13): a vehicle skips its next round trip, standing "
                        "at the terminal ≥ 1 h",
    "line_interruption": "line interruption (Canarana's art. 6º II): a line runs nothing from the middle of the "
                         "first day to the end of the simulation, its vehicles standing powered on where they are",
}

INPUT_FAULTS = {
    "malformed": "a few unparseable or invalid lines",
    "duplicates": "1 % of the lines sent twice",
    "out_of_order": "2 % of the lines delivered up to 2 min late",
    "gps_gap": "a vehicle's GPS silent for 4 min during a run",
    # Faults real on-board units make (issue 33; simulator.input_faults applies them, in this
    # order): each on a vehicle no other fault touched, listed with the lines it changed.
    "gps_teleport": "6 consecutive fixes of a run 3 km off (multipath, a cell-tower fallback); speed and "
                    "odometer stay true",
    "gps_teleport_far": "6 consecutive fixes of a run 50 km off (a cold start)",
    "gps_teleport_long": "30 consecutive fixes of a run 50 km off",
    "avl_outage": "a vehicle's tachograph silent 90 min mid-day while its catraca keeps counting boardings",
    "total_outage": "a vehicle's tachograph and catraca both silent 90 min mid-day",
    "stale_timezone": "one hour of a vehicle's tachograph stamped -02:00 instead of -03:00 (same wall-clock "
                      "digits: the instant 1 h early, a daylight-saving table Brazil abolished in 2019)",
    "stale_timezone_day": "a vehicle's whole day of tachograph stamped -02:00 instead of -03:00",
    "local_as_utc": "a vehicle's whole day of tachograph with its local time labelled Z (UTC)",
    "conflicting_duplicate_first": "a second version (same vehicle, ts and seq; 50 km/h) of two consecutive "
                                   "pings, the speeding fault's when injected, each placed before its original",
    "conflicting_duplicate_after": "the same, each second version placed after its original",
    "late_upload": "a vehicle loses coverage 30 min during a run; its backlog arrives after its first live "
                   "ping once back (store and forward), beyond the 10 min allowed lateness",
    "shuffled_late": "3 % of the tachograph lines each delayed 11-30 min, beyond the allowed lateness",
    "stray_minutes": "5 minutes of a bus parked at a terminal on the first service date after the range, "
                     "a date with no other telemetry",
}

DELAY_S = 420  # 7 min: beyond D-13's and B-04's 300 s lateness threshold
TURN_BACK_AT = 0.60  # of the shape: well inside the corridor, far from both terminal zones
UNMARKED_STOP_S = 60  # six 10 s pings standing with the doors open
# Where the unmarked stop may stand: this far from every stop of the feed, well beyond
# any policy's min_stop_distance_m (Lafaiete's: 80 m) plus the GPS noise.
UNMARKED_CLEARANCE_M = 150.0
UNMARKED_STOP_ID = "(sem ponto)"  # the stand inserted among the run's stops (motion only)
# service_gap: local time of the service day, mid-morning after the morning rush. A period
# [a, b) of the timetable lying inside the gap has no departure: one stretch h = b - a, a
# mean wait Σh² / (2 Σh) = (b - a) / 2, over a 30-min limit (Canarana's art. 10 § 5º) for
# any period longer than 1 h. Periods across its ends keep departures on the other side.
GAP_FROM_S, GAP_TO_S = 8 * 3600, 11 * 3600 + 1800
# held_at_terminal: at least an hour standing, well past any layover grace (Canarana's
# art. 13 placeholder: 30 min, the layover trips.in_service_terminal_s deems in service).
HOLD_MIN_S = 3600


@dataclass
class Injection:
    """Changes to apply while generating telemetry, and the manifest of what was done."""

    offsets: dict[tuple[str, int], tuple[LateralOffset, ...]] = field(default_factory=dict)
    fast: dict[tuple[str, int], FastStretch] = field(default_factory=dict)
    seal_broken_from: dict[str, float] = field(default_factory=dict)
    catraca_silent: dict[str, tuple[float, float]] = field(default_factory=dict)
    gps_gaps: dict[str, tuple[float, float]] = field(default_factory=dict)
    manifest: list[dict] = field(default_factory=list)
    turn_backs: dict[tuple[str, int], TurnBack] = field(default_factory=dict)  # (vehicle, run index)
    # line_interruption: the line and the departure from which it runs nothing, every day on
    interrupted: tuple[str, float] | None = None


def _describe(kind: str, duty: Duty, run: Run, **details) -> dict:
    return {
        "fault": kind,
        "vehicle_id": duty.vehicle_id,
        "route_id": run.route_id,
        "direction_id": run.direction_id,
        "trip_id": run.trip_id,
        "service_date": run.service_date.isoformat(),
        "scheduled_departure": run.departure,
        **details,
    }


def _pick(rng: np.random.Generator, candidates: list):
    if not candidates:
        return None
    return candidates[int(rng.integers(len(candidates)))]


def _runs(duties: list[Duty], *, timetabled: bool | None = None, middle: bool = False):
    """(duty index, run index) pairs; `middle` avoids first and last runs of a duty."""
    found = []
    for d, duty in enumerate(duties):
        for r, run in enumerate(duty.runs):
            if timetabled is not None and run.headway_based == timetabled:
                continue
            if run.deadhead:
                continue
            if middle and (r == 0 or r == len(duty.runs) - 1):
                continue
            found.append((d, r))
    return found


def _iso(t: float, tz) -> str | None:
    return None if tz is None else dt.datetime.fromtimestamp(t, tz).isoformat(timespec="seconds")


def interrupt(duties: list[Duty], route_id: str, since: float) -> tuple[list[Duty], int]:
    """The line runs nothing from `since`: each vehicle that would have run it stands, powered
    on and reporting, where it was before its first such run, for the rest of its duty (so the
    fleet is seen all along, and no run is missing from telemetry that was not sent).
    Returns the duties and how many runs were parked."""
    out, parked = [], 0
    for duty in duties:
        k = next((i for i, run in enumerate(duty.runs)
                  if run.route_id == route_id and run.departure >= since and not run.deadhead), None)
        if k is None:
            out.append(duty)
            continue
        where = duty.runs[k - 1].stops[-1] if k else duty.runs[k].stops[0]
        out.append(replace(duty, runs=duty.runs[:k] + tuple(run.parked_at(where) for run in duty.runs[k:])))
        parked += len(duty.runs) - k
    return out, parked


def inject(kinds: list[str], duties: list[Duty], rng: np.random.Generator, shapes, feed=None,
           fleet=None, *, day_start: float | None = None, tz=None) -> tuple[list[Duty], Injection]:
    """Apply the detector faults that change the plan or the motion. `feed` (its stops)
    and `fleet` (its licensed lines) are read by unmarked_stop and other_line only;
    `day_start` (GTFS time 0 of the day) by the faults set in local time, `tz` to write
    their times."""
    injection = Injection()
    duties = list(duties)
    used: set[tuple[int, int]] = set()
    # a line with one of the faults below gets no other of them, nor one a run of which is
    # already not run (frequency_shortfall): each fault's count of departures stays its own
    lines_faulted = {run.route_id for duty in duties for run in duty.runs if run.deadhead}

    def choose(candidates):
        choice = _pick(rng, [c for c in candidates if c not in used])
        if choice is not None:
            used.add(choice)
        return choice

    for kind in kinds:
        if kind == "late_departure" or kind == "en_route_lateness":
            choice = choose([
                (d, r) for d, r in _runs(duties, timetabled=True, middle=True)
                if duties[d].runs[r + 1].departure - duties[d].runs[r].arrival >= DELAY_S + 180
            ])
            if choice is None:
                continue
            d, r = choice
            duty, run = duties[d], duties[d].runs[r]
            if kind == "late_departure":
                changed = run.shifted(DELAY_S)
                details = {"delay_s": DELAY_S}
            else:
                timepoints = [i for i, s in enumerate(run.stops[1:-1], start=1) if s.timepoint]
                if not timepoints:
                    continue
                changed = run.shifted(DELAY_S, from_index=timepoints[0])
                details = {"delay_s": DELAY_S, "waits_at_stop_id": run.stops[timepoints[0]].stop_id}
            duties[d] = replace(duty, runs=duty.runs[:r] + (changed,) + duty.runs[r + 1:])
            injection.manifest.append(_describe(kind, duty, run, **details))
        elif kind == "suppressed_trip":
            # The last run of a block, while another vehicle of the line is still on duty
            # (otherwise no telemetry could tell a suppression from an outage).
            choice = choose([
                (d, len(duty.runs) - 1) for d, duty in enumerate(duties)
                if duty.runs and duty.runs[-1].block_id and len(duty.runs) > 1
                and any(o is not duty and o.runs and o.runs[0].route_id == duty.runs[-1].route_id
                        and o.runs[-1].arrival > duty.runs[-1].departure + 3600 for o in duties)
            ])
            if choice is None:
                continue
            d, r = choice
            duty = duties[d]
            injection.manifest.append(_describe(kind, duty, duty.runs[r]))
            duties[d] = replace(duty, runs=duty.runs[:r])
        elif kind == "turn_back":
            # The last run of a block (no later run of the vehicle to keep consistent: the
            # bus stands at its origin afterwards), of a vehicle no other fault touched.
            touched = {d for d, _ in used}
            choice = choose([
                (d, len(duty.runs) - 1) for d, duty in enumerate(duties)
                if d not in touched and duty.runs and duty.runs[-1].block_id and not duty.runs[-1].headway_based
                and not duty.runs[-1].deadhead
            ])
            if choice is None:
                continue
            d, r = choice
            run = duties[d].runs[r]
            turn = turn_back(run.stops, TURN_BACK_AT, shapes[run.shape_id].length_m)
            injection.turn_backs[(duties[d].vehicle_id, r)] = turn
            injection.manifest.append(_describe(kind, duties[d], run, turned_at_m=round(turn.turn_m),
                                                turned_at_epoch=turn.turn_at, back_at_epoch=turn.back_at))
        elif kind == "detour":
            choice = choose(_runs(duties, middle=True))
            if choice is None:
                continue
            d, r = choice
            run = duties[d].runs[r]
            length = shapes[run.shape_id].length_m
            offset = LateralOffset(0.40 * length, 0.55 * length, 150.0, 40.0)
            injection.offsets[(duties[d].vehicle_id, r)] = (offset,)
            injection.manifest.append(_describe(kind, duties[d], run, from_m=round(offset.start_m),
                                                to_m=round(offset.end_m), offset_m=offset.offset_m))
        elif kind == "stop_bypass":
            choice = choose(_runs(duties, middle=True))
            if choice is None:
                continue
            d, r = choice
            run = duties[d].runs[r]
            k = len(run.stops) // 2
            stop = run.stops[k]
            offset = LateralOffset(stop.shape_dist_m - 90.0, stop.shape_dist_m + 90.0, 60.0, 20.0)
            injection.offsets[(duties[d].vehicle_id, r)] = (offset,)
            injection.manifest.append(_describe(kind, duties[d], run, stop_id=stop.stop_id, offset_m=60.0))
        elif kind == "speeding":
            choice = choose(_runs(duties, middle=True))
            if choice is None:
                continue
            d, r = choice
            run = duties[d].runs[r]
            spans = [(run.stops[k + 1].shape_dist_m - run.stops[k - 1].shape_dist_m, k)
                     for k in range(1, len(run.stops) - 1) if not run.stops[k].timepoint]
            if not spans:
                continue
            _, k = max(spans)
            injection.fast[(duties[d].vehicle_id, r)] = FastStretch(k, 80.0)
            injection.manifest.append(_describe(kind, duties[d], run, speed_kmh=80.0,
                                                skips_dwell_at=run.stops[k].stop_id))
        elif kind in ("broken_seal", "silent_catraca", "gps_gap"):
            choice = choose(_runs(duties, middle=True))
            if choice is None:
                continue
            d, r = choice
            run = duties[d].runs[r]
            vehicle = duties[d].vehicle_id
            middle = (run.departure + run.arrival) / 2
            if kind == "broken_seal":
                injection.seal_broken_from[vehicle] = middle
                injection.manifest.append(_describe(kind, duties[d], run, from_epoch=middle))
            elif kind == "silent_catraca":
                injection.catraca_silent[vehicle] = (middle, middle + 900)
                injection.manifest.append(_describe(kind, duties[d], run, from_epoch=middle, seconds=900))
            else:
                start = run.departure + 0.25 * (run.arrival - run.departure)
                injection.gps_gaps[vehicle] = (start, start + 240)
                injection.manifest.append(_describe(kind, duties[d], run, from_epoch=start, seconds=240))
        elif kind == "unmarked_stop":
            # A run with a stop spacing clear of every stop, whose next run's departure
            # absorbs the minute lost (so the day's other runs are as planned).
            legs = {}
            for d, r in _runs(duties, middle=True):
                run = duties[d].runs[r]
                if duties[d].runs[r + 1].departure - run.arrival >= UNMARKED_STOP_S + 180:
                    k = _clear_leg(run, shapes, feed)
                    if k is not None:
                        legs[(d, r)] = k
            choice = choose(list(legs))
            if choice is None:
                continue
            d, r = choice
            duty, run = duties[d], duties[d].runs[r]
            changed = _stand_between(run, legs[choice], UNMARKED_STOP_S)
            duties[d] = replace(duty, runs=duty.runs[:r] + (changed,) + duty.runs[r + 1:])
            stand = changed.stops[legs[choice] + 1]
            injection.manifest.append(_describe(
                kind, duty, run, after_stop_id=run.stops[legs[choice]].stop_id,
                before_stop_id=run.stops[legs[choice] + 1].stop_id, at_m=round(stand.shape_dist_m),
                from_epoch=stand.arrival_s, seconds=UNMARKED_STOP_S))
        elif kind == "other_line":
            # The last run of a duty (its vehicle done for the day after the one before:
            # nothing of the plan moves), driven by a vehicle of the run's operator with no
            # duty that day, licensed for other lines only.
            if feed is None or not fleet:
                continue
            busy = {duty.vehicle_id for duty in duties}
            touched = {d for d, _ in used}  # a duty another fault changed keeps its vehicle
            spares = {}
            for d, duty in enumerate(duties):
                if len(duty.runs) < 2 or duty.runs[-1].deadhead or d in touched:
                    continue
                last = duty.runs[-1]
                operator = feed.operator_of(last.route_id)
                spare = next((v.vehicle_id for v in sorted(fleet.values(), key=lambda v: v.vehicle_id)
                              if v.operator_id == operator and v.vehicle_id not in busy and v.lines
                              and last.route_id not in v.lines), None)
                if spare is not None:
                    spares[(d, len(duty.runs) - 1)] = spare
            choice = choose(list(spares))
            if choice is None:
                continue
            d, r = choice
            duty, run, spare = duties[d], duties[d].runs[r], spares[choice]
            duties[d] = replace(duty, runs=duty.runs[:r])
            duties.append(Duty(spare, (run,)))
            used.add((len(duties) - 1, 0))
            injection.manifest.append({**_describe(kind, duties[-1], run), "instead_of": duty.vehicle_id,
                                       "licensed_lines": list(fleet[spare].lines)})
        elif kind == "service_gap" and day_start is not None:
            start, end = day_start + GAP_FROM_S, day_start + GAP_TO_S
            by_line: dict[tuple[str, int], list[tuple[int, int]]] = {}
            for d, r in _runs(duties):
                run = duties[d].runs[r]
                by_line.setdefault((run.route_id, run.direction_id), []).append((d, r))

            def inside(pairs):
                return [(d, r) for d, r in pairs if start <= duties[d].runs[r].departure < end]
            # a gap in the day's service, not its start or end, on runs no other fault took
            line = _pick(rng, sorted(
                key for key, pairs in by_line.items()
                if key[0] not in lines_faulted and len(inside(pairs)) >= 3 and not used & set(inside(pairs))
                and any(duties[d].runs[r].departure < start for d, r in pairs)
                and any(duties[d].runs[r].departure >= end for d, r in pairs)))
            if line is None:
                continue
            lines_faulted.add(line[0])
            gap = inside(by_line[line])
            used.update(gap)
            for d, r in gap:  # deadheads: the vehicle is still where its next run starts
                duty = duties[d]
                duties[d] = replace(duty, runs=duty.runs[:r] + (replace(duty.runs[r], deadhead=True),)
                                    + duty.runs[r + 1:])
            first = duties[gap[0][0]].runs[gap[0][1]]
            injection.manifest.append({
                "fault": kind, "route_id": line[0], "direction_id": line[1],
                "service_date": first.service_date.isoformat(), "from_epoch": start, "to_epoch": end,
                "from": _iso(start, tz), "to": _iso(end, tz),
                "deadheaded": [{"trip_id": duties[d].runs[r].trip_id, "vehicle_id": duties[d].vehicle_id,
                                "scheduled_departure": duties[d].runs[r].departure} for d, r in sorted(
                                    gap, key=lambda dr: duties[dr[0]].runs[dr[1]].departure)],
                "arithmetic": (f"no departure for {round(end - start)} s: a period [a, b) inside the gap is one "
                               "stretch h = b - a, mean wait Σh² / (2 Σh) = (b - a) / 2, over 30 min for a "
                               "period longer than 1 h"),
            })
        elif kind == "held_at_terminal":
            # run r arrives at a terminal; r + 1 and r + 2 (a round trip from there) are not run;
            # the vehicle stands there until r + 3 leaves from it
            def round_trip(d: int, r: int) -> bool:
                runs = duties[d].runs
                if r + 3 >= len(runs) or runs[r].route_id in lines_faulted:
                    return False
                four = runs[r:r + 4]
                return (all(not x.deadhead and x.route_id == runs[r].route_id for x in four)
                        and all(a.destination == b.origin for a, b in zip(four, four[1:]))
                        and runs[r + 3].departure - runs[r].arrival >= HOLD_MIN_S
                        and not used & {(d, r + k) for k in range(4)})
            choice = choose([(d, r) for d, r in _runs(duties) if round_trip(d, r)])
            if choice is None:
                continue
            d, r = choice
            duty = duties[d]
            arrived, skipped, back = duty.runs[r], duty.runs[r + 1:r + 3], duty.runs[r + 3]
            used.update({(d, r + 1), (d, r + 2), (d, r + 3)})
            lines_faulted.add(arrived.route_id)
            terminal = arrived.stops[-1]
            duties[d] = replace(duty, runs=duty.runs[:r + 1] + tuple(x.parked_at(terminal) for x in skipped)
                                + duty.runs[r + 3:])
            injection.manifest.append(_describe(
                kind, duty, skipped[0], terminal_stop_id=terminal.stop_id, arrives_epoch=arrived.arrival,
                leaves_epoch=back.departure, held_s=round(back.departure - arrived.arrival),
                arrives=_iso(arrived.arrival, tz), leaves=_iso(back.departure, tz),
                skipped=[{"trip_id": x.trip_id, "scheduled_departure": x.departure} for x in skipped]))
        elif kind == "line_interruption":
            # a line whose vehicles run it alone from the middle of the day (they stand still
            # from there: no other line loses a run), none of its runs taken by another fault
            by_route: dict[str, list[tuple[int, int]]] = {}
            for d, r in _runs(duties):
                by_route.setdefault(duties[d].runs[r].route_id, []).append((d, r))

            def since(pairs) -> float:
                departures = sorted(duties[d].runs[r].departure for d, r in pairs)
                return departures[len(departures) // 2]

            def alone(route: str, pairs) -> bool:
                t = since(pairs)
                return (route not in lines_faulted
                        and not any((d, r) in used for d, r in pairs if duties[d].runs[r].departure >= t)
                        and all(run.route_id == route for d in {d for d, _ in pairs} for run in duties[d].runs
                                if run.departure >= t))
            route = _pick(rng, sorted(route for route, pairs in by_route.items() if alone(route, pairs)))
            if route is None:
                continue
            lines_faulted.add(route)
            t = since(by_route[route])
            used.update(pair for d in {d for d, _ in by_route[route]} for pair in
                        ((d, r) for r in range(len(duties[d].runs)) if duties[d].runs[r].departure >= t))
            duties, parked = interrupt(duties, route, t)
            injection.interrupted = (route, t)
            date = duties[by_route[route][0][0]].runs[0].service_date.isoformat()
            injection.manifest.append({
                "fault": kind, "route_id": route, "service_date": date,
                "from_epoch": t, "from": _iso(t, tz), "parked_runs": {date: parked},
                "reading": ("no run of the line from its first departure left unrun to the end of the "
                            "simulation; its vehicles keep reporting where they stand, so its absence is "
                            "seen (telemetry absent is not service absent)"),
            })
    return duties, injection


def _clear_leg(run: Run, shapes, feed) -> int | None:
    """The stop spacing (k to k+1, both intermediate stops) nearest the run's middle whose
    midpoint is at least UNMARKED_CLEARANCE_M from every stop of the feed."""
    import shapely

    if feed is None:
        return None
    stops = shapely.points([(s.point.x, s.point.y) for s in feed.stops.values()])
    line = shapes[run.shape_id].line
    middle = len(run.stops) // 2
    for k in sorted(range(1, len(run.stops) - 2), key=lambda k: (abs(k - middle), k)):
        at = line.interpolate((run.stops[k].shape_dist_m + run.stops[k + 1].shape_dist_m) / 2)
        if shapely.distance(at, stops).min() >= UNMARKED_CLEARANCE_M:
            return k
    return None


def _stand_between(run: Run, k: int, seconds: float) -> Run:
    """The run stands `seconds` midway between its stops k and k+1, where no stop is
    marked; its later stops happen that much later."""
    a, b = run.stops[k], run.stops[k + 1]
    at = (a.departure_s + b.arrival_s) / 2
    stand = replace(a, stop_id=UNMARKED_STOP_ID, arrival_s=at, departure_s=at + seconds, timepoint=False,
                    shape_dist_m=(a.shape_dist_m + b.shape_dist_m) / 2)
    later = tuple(replace(s, arrival_s=s.arrival_s + seconds, departure_s=s.departure_s + seconds)
                  for s in run.stops[k + 1:])
    return replace(run, stops=run.stops[:k + 1] + (stand,) + later)


def corrupt_lines(lines: list[bytes], kinds: set[str], rng: np.random.Generator) -> tuple[list[bytes], list[dict]]:
    """Input faults on the delivered lines (already in event-time order)."""
    manifest = []
    lines = list(lines)
    if "duplicates" in kinds and lines:
        picks = sorted(rng.choice(len(lines), size=max(1, len(lines) // 100), replace=False).tolist(), reverse=True)
        for i in picks:
            lines.insert(i + 1, lines[i])
        manifest.append({"fault": "duplicates", "count": len(picks)})
    if "out_of_order" in kinds and lines:
        # Move 2 % of lines later in the file by up to ~2 min of traffic (24 lines at 10 s pings).
        count = max(1, len(lines) // 50)
        for i in sorted(rng.choice(len(lines) - 1, size=count, replace=False).tolist(), reverse=True):
            j = min(len(lines) - 1, i + int(rng.integers(2, 24)))
            lines.insert(j, lines.pop(i))
        manifest.append({"fault": "out_of_order", "count": count})
    if "malformed" in kinds and lines:
        bad = [
            b'{"vehicle_id": "JN-0000", "ts": "2026-12-01T08:00:00-03:00", "lat": -19.75',  # truncated
            b'{"vehicle_id": "X", "ts": "2026-12-01T08:00:00", "lat": -19.75, "lon": -40.38, "speed_kmh": 10}',
            b'{"vehicle_id": "X", "ts": "2026-12-01T08:00:00-03:00", "lat": -119.75, "lon": -40.38, "speed_kmh": 10}',
            b'{"vehicle_id": "X", "ts": "2026-12-01T08:00:00-03:00", "lon": -40.38, "speed_kmh": 10}',
            b'not json at all',
        ]
        for n, line in enumerate(bad):
            lines.insert(int(rng.integers(len(lines))), line)
        manifest.append({"fault": "malformed", "count": len(bad)})
    return lines, manifest
