"""Telemetry that arrives late as real units send it (issue #33 item 5): for the tests of
the re-judgment of late data, in replay's arrival-order run and on the real broker."""

from __future__ import annotations

import collections
import datetime as dt
import json
from pathlib import Path


def lose_coverage(tachograph: Path) -> tuple[int, int]:
    """Each bus silent 20, 25 or 30 min from 40 % into its day, its backlog sent after its
    first live message after the silence; the number of lines moved and of buses."""
    lines = tachograph.read_text().splitlines()
    by_vehicle = collections.defaultdict(list)
    for k, line in enumerate(lines):
        record = json.loads(line)
        by_vehicle[record["vehicle_id"]].append((dt.datetime.fromisoformat(record["ts"]).timestamp(), k))
    moved, after = set(), {}
    for n, (vehicle, rows) in enumerate(sorted(by_vehicle.items())):
        start = rows[int(0.4 * len(rows))][0]
        end = start + (20 + 5 * (n % 3)) * 60
        backlog = [k for t, k in rows if start <= t < end]
        live = next((k for t, k in rows if t >= end), None)
        if live is None or not backlog:
            continue
        moved.update(backlog)
        after[live] = backlog
    out = []
    for k, line in enumerate(lines):
        if k not in moved:
            out.append(line)
        out += [lines[b] for b in after.get(k, ())]
    tachograph.write_text("\n".join(out) + "\n")
    return len(moved), len(after)
