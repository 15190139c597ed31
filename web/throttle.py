"""Login throttling: a bound on password guessing beyond argon2's own cost.

After `max_failures` failed logins for one username within `window`, that username is
refused for `lockout` without its password being checked; likewise after
`max_failures_per_ip` failures from one client address (so that one client cannot spray
a few guesses over many usernames). A successful login clears the username's failures,
not the address's: one valid account must not reset a client's count of guesses at others.

The usernames are whatever the form says: unknown ones are counted and refused exactly
like existing ones, and nothing here looks at the store, so the throttle does not reveal
which usernames exist.

The counts live in memory, per app instance. With several web processes each keeps its
own count, so a guesser gets up to (processes x max_failures) tries per window; that is
acceptable, as argon2 already costs ~50 ms per try. The memory is bounded: entries whose
failures left the window and whose lockout ended are pruned, and at most `max_entries`
usernames (and as many addresses) are tracked, the least recently failed dropped first.

The address is the request's client address: behind a reverse proxy the server must
take it from the proxy's forwarded header (uvicorn's `proxy_headers` with the proxy among
`forwarded_allow_ips`), or every client would share the proxy's address and its limit.

Attempts still checking their password count against the limits too (`begin`/`end`),
so a burst of simultaneous requests cannot slip past them before the failures are counted.

Pure: every call takes its `now` (the app's injectable clock), nothing sleeps.
"""

from __future__ import annotations

import datetime as dt
import math
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, field

from dockets.users import normalized_username

# What a client waits when only attempts still being checked fill its quota.
IN_FLIGHT_WAIT = 1
# How often (on the caller's clock) a failure also sweeps every entry for expired ones.
SWEEP_EVERY = dt.timedelta(minutes=1)


@dataclass
class _Entry:
    failures: deque[dt.datetime] = field(default_factory=deque)  # within the window, oldest first
    locked_until: dt.datetime | None = None
    in_flight: int = 0
    last: dt.datetime | None = None  # the last failure (or lock), for pruning


class _Bucket:
    """Failures counted per key (a username or an address) in a sliding window."""

    def __init__(self, limit: int, window: dt.timedelta, lockout: dt.timedelta, max_entries: int) -> None:
        self.limit = limit
        self.window = window
        self.lockout = lockout
        self.max_entries = max_entries
        # Ordered by the last failure: mostly the expired entries are at the front (not
        # always: a lockout may outlast the window, hence the periodic full sweep).
        self.entries: OrderedDict[str, _Entry] = OrderedDict()
        self._next_sweep: dt.datetime | None = None

    def wait(self, key: str, now: dt.datetime) -> int | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        if entry.locked_until is not None and entry.locked_until > now:
            return max(1, math.ceil((entry.locked_until - now).total_seconds()))
        recent = sum(1 for t in entry.failures if t > now - self.window)
        if recent + entry.in_flight >= self.limit:
            return IN_FLIGHT_WAIT
        return None

    def begin(self, key: str) -> None:
        self.entries.setdefault(key, _Entry()).in_flight += 1

    def end(self, key: str) -> None:
        entry = self.entries.get(key)
        if entry is not None and entry.in_flight > 0:
            entry.in_flight -= 1
            if entry.in_flight == 0 and entry.last is None:
                del self.entries[key]  # only ever in flight: nothing to remember

    def failed(self, key: str, now: dt.datetime) -> None:
        entry = self.entries.setdefault(key, _Entry())
        self.entries.move_to_end(key)
        while entry.failures and entry.failures[0] <= now - self.window:
            entry.failures.popleft()
        entry.failures.append(now)
        entry.last = now
        if len(entry.failures) >= self.limit:
            entry.locked_until = now + self.lockout
            entry.failures.clear()  # after the lockout, a fresh quota
        self.prune(now, full=self._next_sweep is None or now >= self._next_sweep)

    def clear(self, key: str) -> None:
        entry = self.entries.get(key)
        if entry is None:
            return
        if entry.in_flight:
            entry.failures.clear()
            entry.locked_until = None
            entry.last = None
        else:
            del self.entries[key]

    def _expired(self, entry: _Entry, now: dt.datetime) -> bool:
        if entry.in_flight:
            return False
        if entry.locked_until is not None and entry.locked_until > now:
            return False
        return not entry.failures or entry.failures[-1] <= now - self.window

    def prune(self, now: dt.datetime, *, full: bool = True) -> None:
        """Forgets the expired entries: all of them (`full`), or those at the front (the least
        recently failed) up to the first one still live; then the oldest beyond `max_entries`."""
        if full:
            for key in [k for k, e in self.entries.items() if self._expired(e, now)]:
                del self.entries[key]
            self._next_sweep = now + SWEEP_EVERY
        while self.entries and not full:
            key, entry = next(iter(self.entries.items()))
            if not self._expired(entry, now):
                break
            del self.entries[key]
        while len(self.entries) > self.max_entries:
            key = next((k for k, e in self.entries.items() if not e.in_flight), None)
            if key is None:
                break
            del self.entries[key]


class LoginThrottle:
    """Per-username and per-address limits on failed logins (see the module's docstring).

    `allowed` -> None, or the seconds to wait; `failed` and `succeeded` report the outcome
    of a password check. The app brackets each check with `begin` (which is `allowed` that
    also counts the attempt as in flight) and `end`."""

    def __init__(self, *, max_failures: int = 5, max_failures_per_ip: int = 20,
                 window: dt.timedelta = dt.timedelta(minutes=15), lockout: dt.timedelta = dt.timedelta(minutes=15),
                 max_entries: int = 10_000) -> None:
        if max_failures < 1 or max_failures_per_ip < 1:
            raise ValueError("the limits must be at least 1")
        self._users = _Bucket(max_failures, window, lockout, max_entries)
        self._ips = _Bucket(max_failures_per_ip, window, lockout, max_entries)
        self._lock = threading.Lock()

    @staticmethod
    def username_key(username: str) -> str:
        """The username as counted: as the store normalizes it, so "Fiscal" and "fiscal "
        count as one, and as the one account they log in to."""
        return normalized_username(username)

    def allowed(self, username: str, ip: str, now: dt.datetime) -> int | None:
        with self._lock:
            return self._wait(username, ip, now)

    def _wait(self, username: str, ip: str, now: dt.datetime) -> int | None:
        waits = [w for w in (self._users.wait(self.username_key(username), now), self._ips.wait(ip, now))
                 if w is not None]
        return max(waits) if waits else None

    def begin(self, username: str, ip: str, now: dt.datetime) -> int | None:
        """Like `allowed`; when allowed, the attempt counts as in flight until `end`."""
        with self._lock:
            wait = self._wait(username, ip, now)
            if wait is None:
                self._users.begin(self.username_key(username))
                self._ips.begin(ip)
            return wait

    def end(self, username: str, ip: str) -> None:
        with self._lock:
            self._users.end(self.username_key(username))
            self._ips.end(ip)

    def failed(self, username: str, ip: str, now: dt.datetime) -> None:
        with self._lock:
            self._users.failed(self.username_key(username), now)
            self._ips.failed(ip, now)

    def succeeded(self, username: str, ip: str, now: dt.datetime) -> None:
        with self._lock:
            self._users.clear(self.username_key(username))

    def prune(self, now: dt.datetime) -> None:
        """Forgets every entry whose failures left the window and whose lockout ended (the
        failures prune as they go; this is for a caller that wants it all at once)."""
        with self._lock:
            self._users.prune(now)
            self._ips.prune(now)

    def tracked(self) -> tuple[int, int]:
        """(usernames, addresses) currently remembered."""
        with self._lock:
            return len(self._users.entries), len(self._ips.entries)
