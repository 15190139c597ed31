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
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

import msgspec

from kernel.errors import FiscalizaError

_ENCODER = msgspec.json.Encoder()
T = TypeVar("T")


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

    inputs = ReplayInputs(*network_files(network))
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


def network_files(network: Path) -> tuple[Path, ...]:
    """What a benchmark network holds: its feed, fleet and the two telemetry files."""
    return (network / "feed", network / "fleet.csv", network / "telemetry" / "tachograph.jsonl",
            network / "telemetry" / "catraca.jsonl")


def bad_network(network: Path) -> str | None:
    """Why `network` is no benchmark network (one line), None when it is one."""
    missing = next((path for path in network_files(network) if not path.exists()), None)
    if missing is None:
        return None
    return f"{network}: not a benchmark network ({missing} is missing; `python -m benchmarks` builds one)"


def checked(network: Path, out: Path, run: Callable[[], T]) -> T | None:
    """`run()`, when `network` is a benchmark network and `out`'s directory exists; else,
    or when the run finds an input file bad, the reason on one line of stderr and None
    (the command then exits 2, never with a traceback)."""
    problem = bad_network(network) or (None if out.parent.is_dir() else f"{out}: its directory does not exist")
    if problem is None:
        try:
            return run()
        except (FiscalizaError, OSError) as exc:
            problem = f"{network}: {exc}"
    print(problem, file=sys.stderr)
    return None


def count(text: str) -> int | None:
    """A positive count written in decimal digits, else None."""
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value >= 1 else None


def main(argv: list[str]) -> int:
    """A bad argument or input file is one line on stderr and exit code 2, found before
    the replay's minutes are spent where it can be (the output's directory)."""
    batch = count(argv[1]) if len(argv) == 3 else None
    if batch is None:
        print("usage: python -m benchmarks.equivalence NETWORK BATCH OUT (BATCH: messages per engine call, ≥ 1)",
              file=sys.stderr)
        return 2
    network, out = Path(argv[0]), Path(argv[2])

    def run() -> tuple[bytes, float]:
        data, cpu = replayed(network, batch)
        out.write_bytes(data)
        return data, cpu

    done = checked(network, out, run)
    if done is None:
        return 2
    data, cpu = done
    lines = data.count(b"\n")
    print(f"{out}: {lines} lines; replay CPU {cpu:.1f} s at {batch} messages per call", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
