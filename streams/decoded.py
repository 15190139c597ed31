"""The vehicle states this worker packed into its table, kept decoded until next loaded.

Every batch rewrites the state of each vehicle it touched (`Shell.write_state`, a pack)
and the next batch that touches the vehicle reads it back (`Shell._load`, an unpack:
~170 µs a state, about as much CPU as the pack). Most of the time the bytes read back
are the very bytes this worker wrote, and the object it packed them from is still at
hand: `DecodedStates` keeps (bytes, object) per key, and hands the object out instead
of unpacking, under three conditions that make it the object `unpack(bytes)` gives:

- **The table still holds exactly those bytes** (`==`). A changelog recovered after a
  rebalance or a restart, another writer, anything at all that put other bytes there:
  the entry is dropped and the table's bytes are unpacked, as without the cache. The
  table's bytes are the truth; the cache only saves decoding them again.
- **Handed out once.** The entry goes when its object is handed out: the stage changes
  what it loads in place, and holds it (`Shell._hold_vehicle`) to have it written. A
  state loaded, changed and never held (a release that found nothing to cut still reads
  a state) would otherwise come back from the cache unlike its table's bytes. Held, it
  is packed again at the batch's end and kept again with its new bytes.
- **Nothing else references a kept object.** It was packed after the batch that held it
  ended, and the vehicle stage keeps no `VehicleState` nor any mutable part of one from
  one batch to the next: its per-vehicle caches hold values derived from the state or
  frozen parts of it (`_track_memos`: an open track's immutable tuple of frozen fixes and
  the geometry measured from them; `engine.running`'s matches: frozen trips and a match; `_due`:
  times), and the replay's `Engine`, which never packs, keeps its states as live objects
  through the same stage. So a kept object is unchanged since its bytes were made, and
  equals `unpack(bytes)`: msgpack of a `VehicleState` holds every field, and decoding
  gives the values it encoded (tests/streams/test_decoded.py compares them at every load
  served over a morning of the sample day through the shell, and what the shell sends
  with the cache and without). Equal, not identical in every respect: msgpack keeps no
  offset, so an aware datetime comes back in UTC where the kept object has the feed's
  (or the one it was sent with); equal instants, written otherwise. So the stage never
  writes an instant it read from a state without putting it in the feed's timezone
  (`rules.model.localized`, `message_id(…, tz)`): what the worker sends must not depend on
  whether a state was served from here or unpacked (the review found one path that did).

A state handed out from here is the object the stage worked on before, so its open
track's fixes are the very objects its track memo measured (trips.memo: known by
identity): the memo reads only the new fixes, as in the replay, instead of comparing the
whole track's coordinates again.

At most `capacity_bytes` of packed states are kept (`DECODED_BYTES_KEPT`), counted by
their packed bytes, not by how many: a decoded state weighs about 10.7 times its packed
bytes on the 150-vehicle benchmark day (9.5 with zlib, before session 25; ~100 KB
decoded, BENCHMARKS.md), and a vehicle
whose input lags holds hours of pending fixes, so a bound by count promised nothing
about memory. A cache of every vehicle the worker owns is what the replay holds anyway,
and the bound only matters for a worker whose states weigh more than it. Then a state
written while the cache is full is not kept (it is unpacked when next loaded, as
without the cache); evicting the oldest instead would serve nothing, since the vehicles
are loaded again in about the order they were written, the oldest next. The revocation
and the assignment of partitions drop entries (`Shell.on_revoked`, `Shell.on_assigned`).
Each entry is put or taken by one dict operation (atomic under the GIL): the worker's
event loop writes and drops while its core thread loads. The count of bytes kept beside
it only bounds memory; an answer never reads it.

**Operator states** (`Shell._load_operator`) are kept the same way, on the same first and
third conditions, but read with `read`, which leaves the entry: the operator stage never
changes a state it loads (engine.operator: a message works on a shallow copy whose fields
it replaces, never changes in place, since the loaded state is its undo if the message
fails), so the kept object stays equal to its bytes unpacked however often it is handed
out; each message loads its operator's state twice (`OperatorStage.handle`'s undo, then
the copy it works on), and heartbeats come for every operator at every take. The stage
keeps no `OperatorState` nor a mutable part of one across messages: its caches hold
service days, due times and live matches of frozen trips (`_days`, `_operator_days`,
`_dues`, `_live_memo`). Only the core thread loads operator states (the vehicle step
never does, and the operator agent's steps run there one at a time), and
`write_state("operators")` runs on the event loop between the operator agent's own steps.
"""

from __future__ import annotations

from collections.abc import Callable

# 20 MiB of packed states: ~225 MB decoded at the benchmark day's ~10.7 times (zstd;
# ~190 MB with zlib's 9.5): the 150-vehicle network's states are ~1.4 MB packed, a
# 1,500-vehicle city's ~14 MB, all kept
DECODED_BYTES_KEPT = 20 * 2**20


class DecodedStates:
    """Per table key, the bytes this worker last wrote there and the object packed into them."""

    def __init__(self, capacity_bytes: int = DECODED_BYTES_KEPT) -> None:
        self.capacity_bytes = capacity_bytes
        self._kept: dict[str, tuple[bytes, object]] = {}
        self.kept_bytes = 0  # the packed bytes of the states kept

    def __len__(self) -> int:
        return len(self._kept)

    def keep(self, key: str, raw: bytes, state: object) -> None:
        """`state` was packed into `raw`, which the table now holds at `key`: kept, unless
        it does not fit in what is left of the capacity (what `key` held before is gone
        either way: the table holds other bytes now)."""
        self._forget(key)
        if self.kept_bytes + len(raw) <= self.capacity_bytes:
            self._kept[key] = (raw, state)
            self.kept_bytes += len(raw)

    def take(self, key: str, raw: bytes) -> object | None:
        """The object packed into `raw` if this worker wrote exactly those bytes at `key`
        (and it was not handed out since); None: unpack `raw`. The entry goes either way."""
        entry = self._forget(key)
        if entry is None or not (entry[0] is raw or entry[0] == raw):
            return None
        return entry[1]

    def read(self, key: str, raw: bytes) -> object | None:
        """As `take`, but the entry stays while the table holds `raw` (other bytes drop
        it): for a stage that never changes the states it loads."""
        entry = self._kept.get(key)
        if entry is None:
            return None
        if not (entry[0] is raw or entry[0] == raw):
            self._forget(key)
            return None
        return entry[1]

    def _forget(self, key: str) -> tuple[bytes, object] | None:
        entry = self._kept.pop(key, None)
        if entry is not None:
            self.kept_bytes -= len(entry[0])
        return entry

    def drop(self, keeps: Callable[[str], bool] | None = None) -> None:
        """Forget every entry, or those whose key `keeps` refuses."""
        if keeps is None:
            self._kept.clear()
            self.kept_bytes = 0
            return
        for key in [k for k in list(self._kept) if not keeps(k)]:
            self._forget(key)
