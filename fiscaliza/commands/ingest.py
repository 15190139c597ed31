"""`ingest gtfs-rt` and `ingest avl`: a city's own telemetry into the tachograph contract."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from fiscaliza.commands.common import BootstrapOption, fail, stream_settings

ingest_app = typer.Typer(help="Convert a city's telemetry (GTFS-Realtime, AVL exports) to the tachograph contract.",
                         no_args_is_help=True)

FleetArg = Annotated[Path, typer.Option(help="fleet.csv: each source vehicle is found by its vehicle_id or plate")]
OutOption = Annotated[Optional[Path], typer.Option(help="tachograph JSON Lines to write (rejected.jsonl beside it)")]
TopicOption = Annotated[Optional[str], typer.Option(help="publish to this Kafka topic instead (rejections: rejected)")]


def _destination(out: Path | None, topic: str | None, bootstrap: str | None, append: bool = False):
    from ingest.sinks import FileSink, KafkaSink, sent_messages

    if (out is None) == (topic is None):
        fail("give either --out T.jsonl or --topic TOPIC")
    if out is not None:
        return FileSink(out, append=append), sent_messages(out) if append else []
    from fiscaliza.commands.kafka import require_broker

    address = bootstrap or stream_settings().bootstrap
    require_broker(address)  # else kafka-python waits half a minute before a traceback
    return KafkaSink(address, topic), []


def _fleet_index(fleet: Path):
    from ingest.fixes import FleetIndex
    from kernel.fleet import load_fleet

    return FleetIndex.of(load_fleet(fleet))


# The adapters' own rejection reasons, for a reader of the summary (beside replay's REASONS_PT).
ADAPTER_REASONS_PT = {"no_vehicle": "sem veículo", "no_position": "sem posição", "no_timestamp": "sem horário",
                      "stale": "antiga demais", "invalid_speed": "velocidade inválida"}


def _summary(counts, where: str) -> None:
    """One line, as replay's summary: the counts under their labels, the reasons in Portuguese."""
    from fiscaliza.reporting import REASONS_PT

    labels = {**REASONS_PT, **ADAPTER_REASONS_PT}
    reasons = {labels.get(k, k): v for k, v in counts.items()
               if k not in ("sent", "repeated", "rejected", "snapshots", "not_vehicle_positions") and v}
    listed = ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items())) or "nenhuma"
    print(f"Mensagens enviadas {where}: {counts['sent']}; repetidas (já enviadas): {counts['repeated']}; "
          f"rejeitadas: {counts['rejected']} ({listed})")
    if not counts["sent"]:
        print("fiscaliza: aviso: nenhuma posição convertida", file=sys.stderr)


@ingest_app.command("gtfs-rt")
def gtfs_rt(
    fleet: FleetArg,
    url: Annotated[Optional[str], typer.Option(help="VehiclePositions feed to poll")] = None,
    interval: Annotated[float, typer.Option(help="seconds between polls of --url")] = 15.0,
    max_polls: Annotated[Optional[int], typer.Option(help="stop after this many polls of --url (default: never)")] = None,
    dir: Annotated[Optional[Path], typer.Option("--dir", help="folder of archived snapshots, read in name order")] = None,
    file: Annotated[Optional[Path], typer.Option("--file", help="one snapshot (.pb)")] = None,
    out: OutOption = None,
    topic: TopicOption = None,
    bootstrap: BootstrapOption = None,
) -> None:
    """GTFS-Realtime VehiclePositions (a URL polled, a folder of snapshots or one file) to tachograph messages."""
    from ingest.gtfs_rt import SnapshotError, decode_snapshot
    from ingest.run import Ingest, poll, snapshot_files

    if sum(x is not None for x in (url, dir, file)) != 1:
        fail("give one source: --url URL, --dir SNAPSHOTS/ or --file F.pb")
    if not interval > 0:
        fail("--interval must be positive")
    if max_polls is not None and max_polls <= 0:
        fail("--max-polls must be positive")
    if url is not None and not url.startswith(("http://", "https://")):
        fail(f"--url must be an http:// or https:// address, got {url!r}")
    if dir is not None and not dir.is_dir():
        fail(f"--dir {dir} is not a folder")
    index = _fleet_index(fleet)
    # a capture polled from a URL continues its --out (what it holds is never sent again)
    sink, already = _destination(out, topic, bootstrap, append=url is not None)
    ingest = Ingest(index, sink, already)
    try:
        if url is not None:
            try:
                poll(url, interval, ingest, lambda line: print(line, file=sys.stderr, flush=True), max_polls)
            except KeyboardInterrupt:
                print("fiscaliza: interrompido; o que foi recebido está gravado", file=sys.stderr)
        else:
            for path in [file] if file is not None else snapshot_files(dir):
                try:
                    snapshot = decode_snapshot(path.read_bytes(), path.name)
                except OSError as exc:
                    fail(f"cannot read {path}: {exc.strerror}")
                except SnapshotError as exc:
                    if file is not None:
                        fail(str(exc))
                    print(f"fiscaliza: aviso: {exc}; ignorado", file=sys.stderr)
                    continue
                ingest.take_snapshot(snapshot)
    finally:
        sink.flush()
        sink.close()
    _summary(ingest.counts, f"para {out}" if out is not None else f"ao tópico {topic}")


@ingest_app.command("avl")
def avl(
    source: Annotated[Path, typer.Argument(help="the AVL export: FILE.csv or FILE.json")],
    mapping: Annotated[Path, typer.Option(help="TOML column mapping, or a shipped one's name (sptrans-avl, "
                                          "sptrans-olho-vivo-posicao)")],
    fleet: FleetArg,
    out: OutOption = None,
    topic: TopicOption = None,
    bootstrap: BootstrapOption = None,
) -> None:
    """An AVL export (CSV or JSON, columns named by a TOML mapping) to tachograph messages, in time order."""
    from ingest.avl import load_mapping, read_records
    from ingest.run import Ingest
    from telemetry.validation import Rejection

    if (out is None) == (topic is None):
        fail("give either --out T.jsonl or --topic TOPIC")
    rules = load_mapping(mapping)
    index = _fleet_index(fleet)
    records = list(read_records(source, rules))
    sink, _ = _destination(out, topic, bootstrap)
    ingest = Ingest(index, sink)
    try:
        for rejection in (r for r in records if isinstance(r, Rejection)):
            ingest.take(rejection)
        # in time order (the file's order among equal times): speeds derive from the fix before
        for fix in sorted((r for r in records if not isinstance(r, Rejection)), key=lambda f: f.ts):
            ingest.take(fix)
    finally:
        sink.flush()
        sink.close()
    _summary(ingest.counts, f"para {out}" if out is not None else f"ao tópico {topic}")


def register(app: typer.Typer) -> None:
    app.add_typer(ingest_app, name="ingest")
