"""The adapters' shell: fixes through the core (ingest.fixes.admit) into a sink, the
vehicles' trails kept between snapshots, and a URL polled with backoff."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path

from ingest.fixes import FleetIndex, Repeat, Sent, SourceFix, Trail, admit
from ingest.gtfs_rt import Snapshot, SnapshotError, decode_snapshot
from ingest.sinks import Sink
from telemetry.validation import Rejection

# The longest wait between two tries of a feed that keeps failing.
MAX_BACKOFF_S = 300.0


class Ingest:
    """Fixes admitted one by one; `counts` says what became of each (sent, repeated, rejected)."""

    def __init__(self, fleet: FleetIndex, sink: Sink, already_sent: Iterable[dict] = ()):
        self.fleet, self.sink = fleet, sink
        self.trails: dict[str, Trail] = {}
        self.counts: Counter[str] = Counter()
        for message in already_sent:
            self._remember(message)

    def _remember(self, message: dict) -> None:
        try:
            when = datetime.fromisoformat(message["ts"]).timestamp()
            trail = self.trails.get(message["vehicle_id"], Trail())
            self.trails[message["vehicle_id"]] = trail.with_fix(when, message["lat"], message["lon"])
        except (KeyError, TypeError, ValueError):
            return

    def take(self, item: SourceFix | Rejection, header_ts: datetime | None = None) -> None:
        if isinstance(item, Rejection):
            self.sink.reject(item)
            self.counts[item.reason] += 1
            self.counts["rejected"] += 1
            return
        outcome, trail = admit(item, self.fleet, self.trails, header_ts)
        if trail is not None:
            self.trails[outcome.vehicle_id] = trail
        if isinstance(outcome, Sent):
            self.sink.send(outcome.vehicle_id, outcome.message)
            self.counts["sent"] += 1
        elif isinstance(outcome, Repeat):
            self.counts["repeated"] += 1
        else:
            self.take(outcome)

    def take_snapshot(self, snapshot: Snapshot) -> None:
        for fix in sorted(snapshot.fixes, key=lambda f: f.ts or snapshot.header_ts or datetime.min.replace(tzinfo=timezone.utc)):
            self.take(fix, snapshot.header_ts)
        self.counts["not_vehicle_positions"] += snapshot.skipped
        self.counts["snapshots"] += 1
        self.sink.flush()


def snapshot_files(directory: Path) -> list[Path]:
    """A folder's snapshots in name order (archived feeds are named by their time)."""
    return sorted(p for p in directory.iterdir() if p.is_file() and not p.name.startswith("."))


def fetch(url: str, timeout_s: float) -> bytes:
    request = urllib.request.Request(url, headers={"Accept": "application/x-protobuf, */*",
                                                   "User-Agent": "fiscaliza-ingest"})
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        return response.read()


def failure_reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return f"sem conexão ({exc.reason})"
    if isinstance(exc, SnapshotError):
        return "resposta que não é GTFS-Realtime"
    return f"{type(exc).__name__}: {exc}"


def backoff_s(interval_s: float, failures: int) -> float:
    """After the n-th failure in a row: the interval doubled n times, at most MAX_BACKOFF_S
    (or the interval itself, if longer)."""
    return min(interval_s * 2 ** failures, max(MAX_BACKOFF_S, interval_s))


def poll(url: str, interval_s: float, ingest: Ingest, log: Callable[[str], None],
         max_polls: int | None = None, sleep: Callable[[float], None] = time.sleep,
         get: Callable[[str, float], bytes] = fetch) -> None:
    """Poll `url` every `interval_s` s (`max_polls` times, or until interrupted). A feed
    down or answering garbage costs one log line and a longer wait, never what was sent."""
    polls = failures = 0
    while max_polls is None or polls < max_polls:
        polls += 1
        try:
            snapshot = decode_snapshot(get(url, max(5.0, interval_s)), f"{url}@{datetime.now(timezone.utc):%H:%M:%S}")
        except (OSError, SnapshotError, ValueError) as exc:
            failures += 1
            wait = backoff_s(interval_s, failures)
            log(f"fiscaliza: falha ao ler {url} ({failure_reason(exc)}); {failures}ª seguida, "
                f"nova tentativa em {wait:g} s")
        else:
            if failures:
                log(f"fiscaliza: {url} respondeu de novo após {failures} falha(s)")
            failures, wait = 0, interval_s
            ingest.take_snapshot(snapshot)
        if max_polls is None or polls < max_polls:
            sleep(wait)
