"""Faults real on-board units make in the telemetry they deliver (issue 33): fixes thrown
kilometres off, a modem or a whole unit silent, clocks stamped with the wrong offset, two
versions of one message, a backlog uploaded after a coverage loss.

The bus drove as planned; its unit misreported it. So these act on the delivered rows
(event time, vehicle, JSON line) that `run.simulate` has made, in event-time order, before
`faults.corrupt_lines`. Each picks its target from the seeded generator, on a vehicle no
other fault touched, and lists in the manifest exactly what it changed (vehicle, times,
counts, the lines' `ts` and `seq`), so that a test can hold the engine's verdict against it.
"""

from __future__ import annotations

import bisect
import datetime as dt

import msgspec
import numpy as np

from gtfs.schedule import service_day_start
from simulator.faults import INPUT_FAULTS, _describe, _iso, _pick, _runs
from simulator.plan import Duty

Row = tuple[float, str, bytes]  # event time, vehicle, the JSON line as delivered

# kind: (consecutive fixes, how far off, metres in the feed's projection)
TELEPORTS = {
    "gps_teleport": (6, 3_000.0),  # multipath, a cell-tower fallback
    "gps_teleport_far": (6, 50_000.0),  # a cold start's first fixes
    "gps_teleport_long": (30, 50_000.0),
}
OUTAGE_S = 5400  # 90 min
# an outage or a stale hour is mid-day: at least this much of the vehicle's service on either side
MIDDAY_MARGIN_S = 3600
STALE_OFFSET = dt.timezone(dt.timedelta(hours=-2))  # Brazil's summer time, abolished in 2019
STALE_HOUR_S = 3600
COVERAGE_LOST_S = 1800  # late_upload: the longest coverage loss of the broker check
# The shipped policies' stream.allowed_lateness_s: late_upload and shuffled_late go beyond it.
ALLOWED_LATENESS_S = 600
SHUFFLED_FRACTION = 0.03
SHUFFLED_DELAY_S = (ALLOWED_LATENESS_S + 60, 3 * ALLOWED_LATENESS_S)
CONFLICT_SPEED_KMH = 50.0  # the other version's speed: below any C-01 threshold
SPEEDING_ABOVE_KMH = 60 + 7  # the default zone limit plus tolerance: the speeding fault's pings
STRAY_MINUTES = 5
# the kinds `apply` puts on the first day's rows (stray_minutes makes rows of its own)
UNIT_FAULTS = (*TELEPORTS, "avl_outage", "total_outage", "stale_timezone", "stale_timezone_day", "local_as_utc",
               "conflicting_duplicate_first", "conflicting_duplicate_after", "late_upload", "shuffled_late")

_encoder = msgspec.json.Encoder()
_decode = msgspec.json.Decoder(dict).decode


def apply(kinds: set[str], pings: list[Row], readings: list[Row], duties: list[Duty], manifest: list[dict],
          rng: np.random.Generator, projector, tz) -> tuple[list[Row], list[Row], list[dict]]:
    """The rows with the faults of `kinds` applied (in the order of INPUT_FAULTS, whatever
    the order asked), and their manifest entries. `duties` are the first service day's, as
    the detector faults changed them; `manifest` what was injected so far (its vehicles are
    left alone, except the speeding pings that a conflicting duplicate prefers)."""
    pings, readings, entries = list(pings), list(readings), []
    touched = {f["vehicle_id"] for f in manifest if f.get("vehicle_id")}
    for kind in (k for k in INPUT_FAULTS if k in kinds):
        free = [d for d, duty in enumerate(duties) if duty.vehicle_id not in touched]
        entry = None
        if kind in TELEPORTS:
            entry = _teleport(kind, pings, duties, free, rng, projector)
        elif kind in ("avl_outage", "total_outage"):
            pings, readings, entry = _outage(kind, pings, readings, duties, free, rng, tz)
        elif kind in ("stale_timezone", "stale_timezone_day", "local_as_utc"):
            entry = _restamp(kind, pings, duties, free, rng, tz)
        elif kind in ("conflicting_duplicate_first", "conflicting_duplicate_after"):
            pings, entry = _conflicting_duplicate(kind, pings, duties, free, manifest + entries, rng)
        elif kind == "late_upload":
            pings, entry = _late_upload(pings, duties, free, rng)
        elif kind == "shuffled_late":
            pings, entry = _shuffled_late(pings, rng)
        if entry is not None:
            entries.append(entry)
            if entry.get("vehicle_id"):
                touched.add(entry["vehicle_id"])
    return pings, readings, entries


class _Positions:
    """Where each vehicle's rows are in the file, to find a time window's rows fast (a
    fault looks at many candidate runs)."""

    def __init__(self, rows: list[Row]):
        found: dict[str, list[int]] = {}
        for i, (_, vehicle, _) in enumerate(rows):
            found.setdefault(vehicle, []).append(i)
        self._index = {v: np.array(ix) for v, ix in found.items()}
        self._times = {v: np.array([rows[i][0] for i in ix], dtype=float) for v, ix in found.items()}

    def __call__(self, vehicle: str, start: float, end: float) -> list[int]:
        """Indices of the vehicle's rows with start <= event time < end, in file order."""
        if vehicle not in self._times:
            return []
        times = self._times[vehicle]
        return self._index[vehicle][(times >= start) & (times < end)].tolist()


def _free_runs(duties: list[Duty], free: list[int]) -> list[tuple[int, int]]:
    free = set(free)
    return [(d, r) for d, r in _runs(duties, middle=True) if d in free and not duties[d].runs[r].idle]


def _service_span(duty: Duty) -> tuple[float, float] | None:
    runs = [run for run in duty.runs if not run.deadhead and not run.idle]
    return (runs[0].departure, runs[-1].arrival) if runs else None


def _midday(duty: Duty, seconds: float) -> tuple[float, float] | None:
    """`seconds` in the middle of the vehicle's service, with MIDDAY_MARGIN_S of it on
    either side; none for a shorter duty."""
    span = _service_span(duty)
    if span is None or span[1] - span[0] < seconds + 2 * MIDDAY_MARGIN_S:
        return None
    start = float(round((span[0] + span[1] - seconds) / 2))
    return start, start + seconds


def _pick_window(duties: list[Duty], free: list[int], window, rng) -> tuple[Duty, float, float] | None:
    """A free vehicle and its time window (`window(duty)`: (start, end) or none), drawn."""
    windows = {d: w for d in free if (w := window(duties[d])) is not None}
    d = _pick(rng, sorted(windows))
    return None if d is None else (duties[d], *windows[d])


def _window_entry(kind: str, duty: Duty, start: float, end: float, tz, stream: str) -> dict:
    return {"fault": kind, "vehicle_id": duty.vehicle_id, "service_date": duty.runs[0].service_date.isoformat(),
            "stream": stream, "from_epoch": start, "to_epoch": end, "from": _iso(start, tz), "to": _iso(end, tz)}


def _edited(rows: list[Row], i: int, record: dict) -> None:
    t, vehicle, _ = rows[i]
    rows[i] = (t, vehicle, _encoder.encode(record))


def _arrival_clock(rows: list[Row]) -> np.ndarray:
    """Per row, the newest event time delivered up to it: how late the row arrives is this
    less its own event time (a worker would measure it against its frontier the same way)."""
    return np.maximum.accumulate(np.array([t for t, _, _ in rows], dtype=float))


def _teleport(kind: str, pings: list[Row], duties, free, rng, projector) -> dict | None:
    count, offset_m = TELEPORTS[kind]
    positions = _Positions(pings)
    spans = {}
    for d, r in _free_runs(duties, free):
        run = duties[d].runs[r]
        day = positions(duties[d].vehicle_id, -np.inf, np.inf)
        inside = positions(duties[d].vehicle_id, run.departure, run.arrival)
        if not inside:
            continue
        # centred on the run's middle, between its stops, far from its terminals; a run
        # shorter than the fixes (30 at a fix a minute) lends them its layover and next run
        first = bisect.bisect_left(day, inside[len(inside) // 2]) - count // 2
        if first >= 1 and first + count < len(day):  # a true fix on either side
            spans[(d, r)] = day[first:first + count]
    choice = _pick(rng, sorted(spans))
    if choice is None:
        return None
    d, r = choice
    thrown = spans[choice]
    bearing = float(rng.uniform(0.0, 360.0))
    dx, dy = offset_m * np.sin(np.radians(bearing)), offset_m * np.cos(np.radians(bearing))
    moved = []
    for i in thrown:
        record = _decode(pings[i][2])
        x, y = projector.to_xy([record["lon"]], [record["lat"]])
        lon, lat = projector.to_lonlat(x + dx, y + dy)
        # speed and odometer stay the vehicle's own: only the position is wrong
        changed = {**record, "lat": round(float(lat[0]), 7), "lon": round(float(lon[0]), 7)}
        _edited(pings, i, changed)
        moved.append({"ts": record["ts"], "seq": record["seq"], "lat": changed["lat"], "lon": changed["lon"],
                      "true_lat": record["lat"], "true_lon": record["lon"]})
    return _describe(kind, duties[d], duties[d].runs[r], stream="tachograph", fixes=count, offset_m=offset_m,
                     bearing_deg=round(bearing, 1), from_epoch=pings[thrown[0]][0], to_epoch=pings[thrown[-1]][0],
                     moved=moved)


def _outage(kind: str, pings: list[Row], readings: list[Row], duties, free, rng, tz):
    chosen = _pick_window(duties, free, lambda duty: _midday(duty, OUTAGE_S), rng)
    if chosen is None:
        return pings, readings, None
    duty, start, end = chosen
    vehicle = duty.vehicle_id
    silent_pings = set(_Positions(pings)(vehicle, start, end))
    catraca = _Positions(readings)
    in_window, before = catraca(vehicle, start, end), catraca(vehicle, -np.inf, start)
    counters = [_decode(readings[i][2])["counter"] for i in ([before[-1]] if before else []) + in_window]
    entry = {
        **_window_entry(kind, duty, start, end, tz,
                        "tachograph" if kind == "avl_outage" else "tachograph and catraca"),
        "seconds": OUTAGE_S, "pings_dropped": len(silent_pings),
        # the scheduled trips the vehicle ran (or stood for) inside the silence
        "trips": [{"trip_id": run.trip_id, "route_id": run.route_id, "scheduled_departure": run.departure}
                  for run in duty.runs if start <= run.departure < end and not run.deadhead and not run.idle],
    }
    if kind == "avl_outage":  # the catraca keeps counting: service seen by another sensor
        entry.update(catraca_readings=len(in_window), boardings=counters[-1] - counters[0] if counters else 0)
    else:
        entry.update(catraca_dropped=len(in_window))
        drop = set(in_window)
        readings = [row for i, row in enumerate(readings) if i not in drop]
    pings = [row for i, row in enumerate(pings) if i not in silent_pings]
    return pings, readings, entry


def _restamp(kind: str, pings: list[Row], duties, free, rng, tz) -> dict | None:
    """Tachograph lines of one vehicle stamped by a wrong clock table; each stays where the
    unit delivered it (live, in real time), only its `ts` lies."""
    def window(duty):
        if kind == "stale_timezone":
            return _midday(duty, STALE_HOUR_S)
        span = _service_span(duty)  # its whole day: the next day's starts hours after its last run
        return None if span is None else (span[0] - 3600, span[1] + 3600)

    chosen = _pick_window(duties, free, window, rng)
    if chosen is None:
        return None
    duty, start, end = chosen
    found = _Positions(pings)(duty.vehicle_id, start, end)
    for i in found:
        record = _decode(pings[i][2])
        local = dt.datetime.fromisoformat(record["ts"]).astimezone(tz)
        if kind == "local_as_utc":
            ts = local.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"
        else:  # the same wall-clock digits, another offset: the instant moves
            ts = local.replace(tzinfo=STALE_OFFSET).isoformat(timespec="seconds")
        _edited(pings, i, {**record, "ts": ts})
    first, last = (_decode(pings[found[k]][2])["ts"] for k in (0, -1)) if found else (None, None)
    return {
        **_window_entry(kind, duty, start, end, tz, "tachograph"),
        "restamped": len(found), "first_ts": first, "last_ts": last,
        "offset": "Z" if kind == "local_as_utc" else "-02:00",
        # each restamped line's instant = its true instant + shift_s
        "shift_s": _shift_s(kind, start, tz),
    }


def _shift_s(kind: str, t: float, tz) -> int:
    local = dt.datetime.fromtimestamp(t, tz)
    wrong = dt.timezone.utc if kind == "local_as_utc" else STALE_OFFSET
    return round((local.replace(tzinfo=wrong) - local).total_seconds())


def _conflicting_duplicate(kind: str, pings: list[Row], duties, free, injected: list[dict], rng):
    """A second version (same vehicle, ts and seq; another speed) of consecutive pings,
    placed right before or right after each original line."""
    positions = _Positions(pings)
    speeding = next((f for f in injected if f["fault"] == "speeding"), None)
    taken = {(p["ts"], p["seq"]) for f in injected if f["fault"].startswith("conflicting_duplicate")
             for p in f["pings"]}
    target, of_fault = None, None
    if speeding is not None:
        d, r = next(((d, r) for d, duty in enumerate(duties) for r, run in enumerate(duty.runs)
                     if duty.vehicle_id == speeding["vehicle_id"] and run.trip_id == speeding["trip_id"]
                     and run.departure == speeding["scheduled_departure"]), (None, None))
        run = None if d is None else duties[d].runs[r]
        fast = [] if run is None else [i for i in positions(duties[d].vehicle_id, run.departure, run.arrival)
                                       if _decode(pings[i][2])["speed_kmh"] > SPEEDING_ABOVE_KMH]
        if len(fast) >= 2 and not taken & {(_decode(pings[i][2])["ts"], _decode(pings[i][2])["seq"]) for i in fast}:
            target, of_fault = (d, r, fast), "speeding"
    if target is None:
        spans = {}
        for d, r in _free_runs(duties, free):
            run = duties[d].runs[r]
            moving = [i for i in positions(duties[d].vehicle_id, run.departure, run.arrival)
                      if _decode(pings[i][2])["speed_kmh"] > 0]
            if len(moving) >= 2:
                middle = len(moving) // 2
                spans[(d, r)] = moving[middle - 1:middle + 1]
        choice = _pick(rng, sorted(spans))
        if choice is None:
            return pings, None
        target = (*choice, spans[choice])
    d, r, originals = target
    before = kind == "conflicting_duplicate_first"
    described, versions = [], {}
    for i in originals:
        record = _decode(pings[i][2])
        other = CONFLICT_SPEED_KMH if record["speed_kmh"] != CONFLICT_SPEED_KMH else CONFLICT_SPEED_KMH - 10
        versions[i] = (pings[i][0], pings[i][1], _encoder.encode({**record, "speed_kmh": other}))
        described.append({"ts": record["ts"], "seq": record["seq"], "speed_kmh": record["speed_kmh"],
                          "other_speed_kmh": other})
    out = []
    for i, row in enumerate(pings):
        if i in versions and before:
            out.append(versions[i])
        out.append(row)
        if i in versions and not before:
            out.append(versions[i])
    return out, _describe(kind, duties[d], duties[d].runs[r], stream="tachograph", of_fault=of_fault,
                          placed="before the original" if before else "after the original", pings=described)


def _late_upload(pings: list[Row], duties, free, rng):
    """Coverage lost for COVERAGE_LOST_S during a run: the backlog of that time arrives
    after the unit's first live message once back (store and forward)."""
    candidates = []
    for d, r in _free_runs(duties, free):
        run = duties[d].runs[r]
        start = float(round(run.departure + 0.25 * (run.arrival - run.departure)))
        span = _service_span(duties[d])
        if span and span[1] >= start + COVERAGE_LOST_S + 600:  # live again while still in service
            candidates.append((d, r, start))
    choice = _pick(rng, candidates)
    if choice is None:
        return pings, None
    d, r, start = choice
    end = start + COVERAGE_LOST_S
    vehicle = duties[d].vehicle_id
    positions = _Positions(pings)
    backlog = positions(vehicle, start, end)
    live = positions(vehicle, end, np.inf)[0]
    moved = set(backlog)
    out = []
    for i, row in enumerate(pings):
        if i not in moved:
            out.append(row)
        if i == live:
            out.extend(pings[k] for k in backlog)
    first_backlog = out.index(pings[backlog[0]])
    lateness = _arrival_clock(out)[first_backlog] - pings[backlog[0]][0]
    live_record = _decode(pings[live][2])
    return out, _describe(
        "late_upload", duties[d], duties[d].runs[r], stream="tachograph", from_epoch=start, to_epoch=end,
        seconds=COVERAGE_LOST_S, backlog=len(backlog),
        uploaded_after={"ts": live_record["ts"], "seq": live_record["seq"]},
        first_backlog_ts=_decode(pings[backlog[0]][2])["ts"], lateness_s=round(float(lateness)),
        allowed_lateness_s=ALLOWED_LATENESS_S)


def _shuffled_late(pings: list[Row], rng):
    """SHUFFLED_FRACTION of the lines each delayed by its own time beyond the lateness."""
    clock = _arrival_clock(pings)
    # lines with a full delay's traffic after them, so each really lands that late
    candidates = np.flatnonzero(clock + SHUFFLED_DELAY_S[1] <= clock[-1]) if len(pings) else np.array([], int)
    count = min(len(candidates), max(1, round(len(pings) * SHUFFLED_FRACTION)))
    if count == 0:
        return pings, None
    picked = np.sort(rng.choice(candidates, size=count, replace=False))
    delays = rng.integers(SHUFFLED_DELAY_S[0], SHUFFLED_DELAY_S[1] + 1, size=count)
    arrival = clock.copy()
    arrival[picked] += delays
    late = np.zeros(len(pings), bool)
    late[picked] = True
    # a delayed line comes after the lines of its arrival time; the others keep their order
    order = sorted(range(len(pings)), key=lambda i: (arrival[i], late[i], i))
    out = [pings[i] for i in order]
    where = {i: k for k, i in enumerate(order)}
    new_clock = _arrival_clock(out)
    lateness = np.array([new_clock[where[i]] - pings[i][0] for i in picked])
    return out, {"fault": "shuffled_late", "stream": "tachograph", "count": int(count),
                 "fraction": SHUFFLED_FRACTION, "delay_s": [int(delays.min()), int(delays.max())],
                 "lateness_s": [round(float(lateness.min())), round(float(lateness.max()))],
                 "allowed_lateness_s": ALLOWED_LATENESS_S}


def stray_minutes(feed, fleet, date: dt.date, rng: np.random.Generator, projector, *, minutes: int = STRAY_MINUTES,
                  interval_s: int = 10, noise_m: float = 3.0) -> tuple[list[Row], dict]:
    """A few minutes of one bus parked at a terminal of its operator, powered on and
    reporting, on `date`: the rows and their manifest entry. Meant for a date the rest of
    the telemetry does not cover (`simulate --input-fault stray_minutes` takes the first
    service date after its range): a test appends the rows to a simulated day's file and
    replays both, a day of telemetry that says next to nothing about its service."""
    terminals = {}
    for trip in sorted(feed.trips.values(), key=lambda trip: trip.trip_id):
        terminals.setdefault(feed.operator_of(trip.route_id), trip.stops[0].stop_id)
    vehicles = sorted(v for v, vehicle in fleet.items() if vehicle.operator_id in terminals)
    vehicle = vehicles[int(rng.integers(len(vehicles)))]
    stop = feed.stops[terminals[fleet[vehicle].operator_id]]
    # mid-morning to mid-afternoon, local time: scheduled trips on either side
    start = service_day_start(date, feed.timezone).timestamp() + 9 * 3600 + int(rng.integers(6 * 3600))
    t = start + np.arange(0, minutes * 60, interval_s, dtype=float)
    x = stop.point.x + rng.normal(0, noise_m, len(t))
    y = stop.point.y + rng.normal(0, noise_m, len(t))
    lon, lat = projector.to_lonlat(x, y)
    rows = [(float(t[k]), vehicle, _encoder.encode({
        "vehicle_id": vehicle, "ts": _iso(t[k], feed.timezone), "lat": round(float(lat[k]), 7),
        "lon": round(float(lon[k]), 7), "speed_kmh": 0.0, "odometer_km": 10_000.0, "route_id": None,
        "seq": k})) for k in range(len(t))]
    return rows, {"fault": "stray_minutes", "vehicle_id": vehicle, "service_date": date.isoformat(),
                  "stream": "tachograph", "stop_id": stop.stop_id, "from_epoch": float(t[0]),
                  "to_epoch": float(t[-1]), "from": _iso(t[0], feed.timezone),
                  "to": _iso(t[-1], feed.timezone), "pings": len(rows)}
