"""Every output of one replay of a benchmark network, written in the order the engine
sends it, for comparing two commits byte for byte (issue #31: a refactor of the engine
leaves its outputs unchanged, at the replay's batch size and at the live worker's):

    python -m benchmarks.equivalence NETWORK BATCH OUT   -> OUT, and the CPU time on stderr
    cmp OUT-of-one-commit OUT-of-the-other

NETWORK is a network `python -m benchmarks` builds (`feed/`, `fleet.csv`,
`telemetry/tachograph.jsonl`, `telemetry/catraca.jsonl`); BATCH the messages per engine
call (13 is about one second of the 150-vehicle fleet: the live worker's granularity).
OUT holds one line per record: the infractions' change log in the order it was sent (a
record sent again when it changes), the trips in `fiscaliza replay`'s order, the
insufficient evidence, every rejection (the input's, then the engine's), the month
efficiencies; then the number of `vehicle-status` messages and the SHA-256 of all of them
in order (the live view's whole output, which is large, checked without being written).
"""

from __future__ import annotations

import hashlib
import itertools
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import msgspec

_ENCODER = msgspec.json.Encoder()


def written(infractions: Iterable, trips: Iterable, insufficient: Iterable, rejected: Iterable,
            months: Iterable, statuses: Iterable) -> bytes:
    """The comparison file's bytes: each record on a line after its kind, in the order
    given (the caller gives trips in the replay's order), then the statuses' count and
    digest, which tell two runs apart when one status differs or comes in another order."""
    lines = [kind + b" " + _ENCODER.encode(msgspec.to_builtins(item)) + b"\n"
             for kind, items in ((b"change", infractions), (b"trip", trips), (b"insufficient", insufficient),
                                 (b"rejected", rejected), (b"month", months))
             for item in items]
    digest, count = hashlib.sha256(), 0
    for status in statuses:
        digest.update(_ENCODER.encode(msgspec.to_builtins(status)) + b"\n")
        count += 1
    lines.append(f"statuses {count} {digest.hexdigest()}\n".encode())
    return b"".join(lines)


def replayed(network: Path, batch: int) -> tuple[bytes, float]:
    """The comparison file of `network` replayed `batch` messages per engine call, and
    the replay's CPU seconds (loading the network left out)."""
    from engine.core import Engine
    from engine.loading import load_context
    from engine.sends import Sends
    from fiscaliza.replay import RUN, ReplayInputs, SortedInput, _trip_order

    inputs = ReplayInputs(feed=network / "feed", fleet=network / "fleet.csv",
                          tachograph=network / "telemetry" / "tachograph.jsonl",
                          catraca=network / "telemetry" / "catraca.jsonl")
    context = load_context(inputs)
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    out = Sends()
    cpu = time.process_time()
    with SortedInput(inputs, RUN) as messages:
        stream = iter(messages)
        while chunk := list(itertools.islice(stream, batch)):
            out.merge(engine.ingest(chunk))
        out.merge(engine.close())
        rejected = list(messages.rejected)
    cpu = time.process_time() - cpu
    return written(out.infractions, sorted(out.trips, key=_trip_order), out.insufficient,
                   rejected + list(out.rejected), out.months, out.statuses), cpu


def main(argv: list[str]) -> int:
    if len(argv) != 3 or not argv[1].isdigit() or int(argv[1]) < 1:
        print("usage: python -m benchmarks.equivalence NETWORK BATCH OUT (BATCH: messages per engine call, ≥ 1)",
              file=sys.stderr)
        return 2
    network, batch, out = Path(argv[0]), int(argv[1]), Path(argv[2])
    missing = [p for p in (network / "feed", network / "fleet.csv", network / "telemetry" / "tachograph.jsonl",
                           network / "telemetry" / "catraca.jsonl") if not p.exists()]
    if missing:
        print(f"{network}: not a benchmark network ({missing[0]} is missing; `python -m benchmarks` builds one)",
              file=sys.stderr)
        return 2
    data, cpu = replayed(network, batch)
    out.write_bytes(data)
    lines = data.count(b"\n")
    print(f"{out}: {lines} lines; replay CPU {cpu:.1f} s at {batch} messages per call", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
