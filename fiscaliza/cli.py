"""The `fiscaliza` command line (typer). Entry points only parse and delegate."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

app = typer.Typer(
    name="fiscaliza",
    help="Enforces the bus disciplinary code of João Neiva (Lei 867/1998) from telemetry.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_BAD_INPUT = 2


def fail(message: str) -> None:
    """A bad argument or input: one line on stderr, exit code 2, no traceback."""
    print(f"fiscaliza: error: {message}", file=sys.stderr)
    raise typer.Exit(EXIT_BAD_INPUT)


@app.command()
def replay(
    feed: Annotated[Path, typer.Option(help="GTFS feed: a directory or a .zip")],
    fleet: Annotated[Path, typer.Option(help="fleet.csv: vehicle_id,plate,operator_id[,capacity]")],
    tachograph: Annotated[Path, typer.Option(help="tachograph JSON Lines")],
    out: Annotated[Path, typer.Option(help="output directory (created if needed)")],
    catraca: Annotated[Optional[Path], typer.Option(help="catraca JSON Lines")] = None,
    occurrences: Annotated[Optional[Path], typer.Option(help="occurrences JSON Lines")] = None,
    policy: Annotated[Optional[Path], typer.Option(help="policy TOML (default: João Neiva)")] = None,
    geofences: Annotated[Optional[Path], typer.Option(help="GeoJSON geofence overrides")] = None,
) -> None:
    """Replay telemetry files through the engine; write trips, infractions and rejections."""
    from fiscaliza.replay import InputError, ReplayInputs
    from fiscaliza.replay import replay as run_replay
    from fiscaliza.replay import write_outputs
    from fiscaliza.reporting import Progress, no_data, print_replay_summary

    inputs = ReplayInputs(feed, fleet, tachograph, catraca, occurrences, policy, geofences)
    try:
        with Progress("Replaying") as progress:
            result = run_replay(inputs, progress=progress.update)
        write_outputs(result, out)
    except InputError as exc:
        fail(str(exc))
    if no_data(result):
        print(f"fiscaliza: aviso: sem dados: {result.messages} mensagens lidas, nenhuma aceita", file=sys.stderr)
    print_replay_summary(result, out)


@app.command()
def simulate(
    out: Annotated[Path, typer.Option(help="output directory")],
    start: Annotated[str, typer.Option(help="first service date, YYYY-MM-DD")],
    end: Annotated[Optional[str], typer.Option(help="last service date (default: start)")] = None,
    feed: Annotated[Optional[Path], typer.Option(help="GTFS feed (default: the João Neiva sample)")] = None,
    fleet: Annotated[Optional[Path], typer.Option(help="fleet.csv (default: the sample's)")] = None,
    seed: Annotated[int, typer.Option(help="random seed: the same seed gives the same files")] = 1,
    fault: Annotated[Optional[list[str]], typer.Option(help="inject a detector fault (repeatable)")] = None,
    input_fault: Annotated[Optional[list[str]], typer.Option(help="inject an input fault (repeatable)")] = None,
    ping_interval: Annotated[int, typer.Option(help="seconds between tachograph pings")] = 10,
    gps_noise: Annotated[float, typer.Option(help="GPS noise, metres (standard deviation)")] = 3.0,
) -> None:
    """Write simulated tachograph and catraca JSON Lines for a feed and date range."""
    from fiscaliza.demo import simulate_files
    from fiscaliza.reporting import Progress
    from simulator import FAULTS, INPUT_FAULTS

    first = _date(start, "--start")
    last = _date(end, "--end") if end else first
    if last < first:
        fail(f"--end {last} is before --start {first}")
    if ping_interval <= 0 or gps_noise < 0:
        fail("--ping-interval must be positive and --gps-noise not negative")
    for name in fault or []:
        if name not in FAULTS:
            fail(f"unknown --fault {name!r}; choose from {', '.join(FAULTS)}")
    for name in input_fault or []:
        if name not in INPUT_FAULTS:
            fail(f"unknown --input-fault {name!r}; choose from {', '.join(INPUT_FAULTS)}")
    from simulator import SimulationSettings

    from fiscaliza.fleet import FleetError
    from gtfs import FeedError
    from simulator import SimulationError

    settings = SimulationSettings(first, last, seed, tuple(fault or ()), tuple(input_fault or ()),
                                  ping_interval, gps_noise)
    try:
        with Progress("Simulating") as progress:
            result = simulate_files(feed, fleet, settings, out, progress=progress.update)
    except (SimulationError, FeedError, FleetError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write to {out}: {exc.strerror}")
    print(f"{result.pings} tachograph pings, {result.catraca_readings} catraca readings, "
          f"{result.runs} runs over {len(result.dates)} service day(s)")
    print(f"wrote {result.tachograph}, {result.catraca} and {result.manifest}")


topics_app = typer.Typer(help="Kafka topics of fiscaliza.", no_args_is_help=True)
app.add_typer(topics_app, name="topics")


@topics_app.command("create")
def topics_create(
    bootstrap: Annotated[Optional[str], typer.Option(help="Kafka bootstrap servers (env FISCALIZA_KAFKA_BOOTSTRAP)")] = None,
    partitions: Annotated[Optional[int], typer.Option(help="partitions per topic (env FISCALIZA_PARTITIONS)")] = None,
    replication: Annotated[Optional[int], typer.Option(help="replication factor (env FISCALIZA_REPLICATION)")] = None,
) -> None:
    """Create the topics (inputs, trips, the compacted infractions change log, dead letters)."""
    from streams.admin import StreamError, create_topics

    settings = _stream_settings()
    count = partitions or settings.partitions
    factor = replication or settings.replication
    if count <= 0 or factor <= 0:
        fail("--partitions and --replication must be positive")
    try:
        outcome = create_topics(bootstrap or settings.bootstrap, count, factor)
    except StreamError as exc:
        fail(str(exc))
    for name, what in outcome.items():
        print(f"{name}: {what}")


@app.command()
def publish(
    file: Annotated[Optional[Path], typer.Argument(help="JSON Lines file")] = None,
    topic: Annotated[Optional[str], typer.Option(help="tachograph, catraca or occurrences")] = None,
    speed: Annotated[Optional[float], typer.Option(help="replay at the recorded pace, N times faster")] = None,
    end_of_input: Annotated[bool, typer.Option("--end-of-input", help="mark the end of a finite input "
                                               "(the workers then close every period it covered)")] = False,
    bootstrap: Annotated[Optional[str], typer.Option(help="Kafka bootstrap servers (env FISCALIZA_KAFKA_BOOTSTRAP)")] = None,
) -> None:
    """Load a JSON Lines file onto a topic, as fast as possible or at the recorded pace."""
    from fiscaliza.reporting import Progress
    from streams.admin import StreamError, publish_end_of_input
    from streams.admin import publish as send

    if end_of_input:
        try:
            count = publish_end_of_input(bootstrap or _stream_settings().bootstrap)
        except StreamError as exc:
            fail(str(exc))
        print(f"end of input marked on {count} partitions")
        return
    if file is None or topic is None:
        fail("publish needs a FILE and --topic (or --end-of-input)")
    if speed is not None and speed <= 0:
        fail("--speed must be positive")
    try:
        with Progress(f"Publicando em {topic}") as progress:
            result = send(bootstrap or _stream_settings().bootstrap, topic, file, speed, progress.update)
    except StreamError as exc:
        fail(str(exc))
    print(f"{result.sent} messages sent to {topic}"
          + (f" ({result.unkeyed} without a key: malformed, the workers dead-letter them)" if result.unkeyed else ""))


@app.command()
def worker(
    feed: Annotated[Optional[Path], typer.Option(help="GTFS feed (env FISCALIZA_FEED; default: the sample)")] = None,
    fleet: Annotated[Optional[Path], typer.Option(help="fleet.csv (env FISCALIZA_FLEET; default: the sample's)")] = None,
    policy: Annotated[Optional[Path], typer.Option(help="policy TOML (env FISCALIZA_POLICY; default: João Neiva)")] = None,
    geofences: Annotated[Optional[Path], typer.Option(help="GeoJSON geofence overrides (env FISCALIZA_GEOFENCES)")] = None,
    loglevel: Annotated[str, typer.Option(help="debug, info, warning or error")] = "info",
) -> None:
    """Run a Faust worker: the engine on the Kafka topics (stop with SIGTERM)."""
    from fiscaliza.replay import InputError, load_context
    from streams.worker import run_worker

    inputs = _engine_inputs(feed, fleet, policy, geofences)
    if loglevel not in ("debug", "info", "warning", "error"):
        fail("--loglevel must be debug, info, warning or error")
    try:
        context = load_context(inputs)
    except InputError as exc:
        fail(str(exc))
    run_worker(context, _stream_settings(), loglevel)


def _engine_inputs(feed, fleet, policy, geofences):
    """The engine's static inputs from options, else the environment, else the sample."""
    import os

    from fiscaliza.replay import ReplayInputs
    from fiscaliza.samples import joao_neiva

    def pick(option, name, default=None):
        value = option or os.environ.get(name)
        return Path(value) if value else default

    sample_feed, sample_fleet = joao_neiva()
    return ReplayInputs(pick(feed, "FISCALIZA_FEED", sample_feed), pick(fleet, "FISCALIZA_FLEET", sample_fleet),
                        Path(os.devnull), policy=pick(policy, "FISCALIZA_POLICY"),
                        geofences=pick(geofences, "FISCALIZA_GEOFENCES"))


def _stream_settings():
    from streams.settings import Settings

    try:
        return Settings.from_env()
    except ValueError as exc:
        fail(str(exc))


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="where to write the demo's files")] = Path("fiscaliza-demo"),
    date: Annotated[Optional[str], typer.Option(
        help="service date to simulate (default: the last service day before today)")] = None,
    seed: Annotated[int, typer.Option(help="random seed")] = 7,
) -> None:
    """Simulate a day of the João Neiva sample with faults, replay it, summarize."""
    from fiscaliza.demo import DemoError, default_demo_day, run_demo
    from simulator import SimulationError

    try:
        day = _date(date, "--date") if date else default_demo_day()
    except DemoError as exc:
        fail(str(exc))
    try:
        run_demo(out, day, seed)
    except SimulationError as exc:
        fail(f"--date {day}: {exc}")


DB_HELP = "docket store URL (env FISCALIZA_DB; default: sqlite:///fiscaliza-dockets.sqlite3)"
KEY_HELP = "the Órgão's Ed25519 signing key (env FISCALIZA_SIGNING_KEY; create it with fiscaliza keys init)"


def _required_key(path: Path | None, what: str, option: str, variable: str, create: str, load, errors):
    """A key every writer needs, never stored in the database: the option, else the
    environment variable; missing or unreadable, one line and exit 2."""
    import os

    path = path or (Path(os.environ[variable]) if os.environ.get(variable) else None)
    if path is None:
        fail(f"no {what}: pass {option} or set {variable} (create one with fiscaliza {create})")
    try:
        return load(path)
    except errors as exc:
        fail(str(exc))


def _signing_key(path: Path | None):
    """The key that signs every bundle and issued PDF."""
    from dockets.signing import SigningError, load_key

    return _required_key(path, "signing key", "--signing-key", "FISCALIZA_SIGNING_KEY", "keys init", load_key,
                         SigningError)


def _db_url(db: str | None) -> str:
    import os

    from dockets.db import DEFAULT_URL

    return db or os.environ.get("FISCALIZA_DB") or DEFAULT_URL


AUDIT_KEY_HELP = "the audit log's HMAC key (env FISCALIZA_AUDIT_KEY; create it with fiscaliza keys audit-init)"
ANCHORS_HELP = ("where the audit chain's heads are anchored: kafka://HOST:PORT or a file (env FISCALIZA_AUDIT_ANCHORS; "
                "default: Kafka's audit-anchors if FISCALIZA_KAFKA_BOOTSTRAP is set, else a file beside a SQLite store)")


def _audit_key(path: Path | None):
    """The key that chains the audit log."""
    from dockets.audit import AuditError, load_audit_key

    return _required_key(path, "audit key", "--audit-key", "FISCALIZA_AUDIT_KEY", "keys audit-init", load_audit_key,
                         AuditError)


def _anchor_log(db: str | None, anchors: str | None):
    import os

    from dockets.anchors import default_destination, open_anchor_log
    from dockets.audit import AuditError

    try:
        return open_anchor_log(default_destination(
            _db_url(db), anchors=anchors or os.environ.get("FISCALIZA_AUDIT_ANCHORS"),
            kafka_bootstrap=os.environ.get("FISCALIZA_KAFKA_BOOTSTRAP")))
    except AuditError as exc:
        fail(str(exc))


def _open_store(db: str | None, *, key=None, anchor_log=None):
    from sqlalchemy.exc import SQLAlchemyError

    from dockets.db import open_store

    try:
        return open_store(_db_url(db), audit_key=key, anchors=anchor_log)
    except (SQLAlchemyError, OSError) as exc:
        fail(f"cannot open the docket store {_db_url(db)}: {str(exc).splitlines()[0]}")


def _open_writer(db: str | None, audit_key: Path | None, anchors: str | None, *, verify_first: str | None = None):
    """Sessions that may change the store: they chain the audit log with its key and
    anchor each commit. With `verify_first` (a long-running writer's name), the record is
    verified first, and a broken one is reported (exit 1), never extended."""
    from dockets.audit import AuditError, verify_record

    key = _audit_key(audit_key)
    anchor_log = _anchor_log(db, anchors)
    sessions = _open_store(db, key=key, anchor_log=anchor_log)
    if verify_first:
        try:
            with sessions() as session:
                verify_record(session, {key.key_id: key}, anchor_log.read())
        except AuditError as exc:
            print(f"fiscaliza: REGISTRO DE AUDITORIA ROMPIDO: {exc}; {verify_first} não começa", file=sys.stderr)
            raise typer.Exit(1)
    return sessions


@app.command()
def verify(
    bundle: Annotated[Path, typer.Argument(help="evidence bundle (evidencias.zip) or PDF of an auto de infração")],
    public_key: Annotated[Optional[list[Path]], typer.Option(
        help="a public key the Órgão published (repeat for the keys it rotated out)")] = None,
    signature: Annotated[Optional[Path], typer.Option(
        help="a PDF's detached signature (default: the .assinatura.json beside it)")] = None,
) -> None:
    """Check an evidence bundle: integrity, authenticity (signed by a published key) and
    the rule re-run on the bundle alone. Exit 0 only if all three hold, 1 if not.

    Given an auto's PDF, check that it is the one the Órgão signed (exit 0) or not (1)."""
    from dockets.bundle import BundleAltered, BundleError, verify_bundle
    from dockets.signing import SigningError, key_id, load_public_key
    from fiscaliza.replay import InputError

    try:
        trusted = {key_id(k): k for k in (load_public_key(p) for p in public_key or [])}
    except SigningError as exc:
        fail(str(exc))
    try:
        data = bundle.read_bytes()
    except OSError as exc:
        fail(f"cannot read {bundle}: {exc.strerror}")
    if data.startswith(b"%PDF-"):
        _verify_pdf(bundle, data, signature, trusted)
    try:
        verdict = verify_bundle(data, trusted)
    except BundleAltered as exc:  # checked, and found altered: the check's answer (exit 1)
        print(f"Pacote {bundle.name}")
        print(f"  • Integridade: {exc}")
        print("RESULTADO: pacote ADULTERADO: a infração não pode ser reproduzida a partir dele")
        raise typer.Exit(1)
    except (BundleError, InputError) as exc:
        fail(f"{bundle}: {exc}")
    print(f"Pacote {bundle.name} — SHA-256 {verdict.bundle_sha256}")
    print(f"Infração {verdict.code} {verdict.infraction_id}")
    for finding in verdict.findings:
        print(f"  • {finding}")
    if verdict.differences:
        rows = [("campo", "no pacote", "reexecutado"), *verdict.differences]
        widths = [max(len(row[i]) for row in rows) for i in range(2)]
        for name, recorded, rerun in rows:
            print(f"    {name:<{widths[0]}} │ {recorded:<{widths[1]}} │ {rerun}")
    if verdict.upheld:
        print("RESULTADO: pacote íntegro, autêntico, e a infração é reproduzida")
    else:
        print("RESULTADO: " + ("infração reproduzida, mas a autenticidade NÃO foi comprovada" if verdict.reproduced
                               else "infração NÃO reproduzida"))
    raise typer.Exit(0 if verdict.upheld else 1)


def _verify_pdf(path: Path, data: bytes, signature: Path | None, trusted) -> None:
    import hashlib
    import json

    from dockets.signing import check, signature_path

    signature = signature or signature_path(path)
    try:
        detached = json.loads(signature.read_bytes())
    except OSError as exc:
        fail(f"cannot read the PDF's signature {signature}: {exc.strerror}")
    except ValueError:
        fail(f"{signature} is not a signature (JSON)")
    authentic, why = check(detached, data, trusted)
    print(f"Auto {path.name} — SHA-256 {hashlib.sha256(data).hexdigest()}")
    print(f"  • Autenticidade: {why}")
    print("RESULTADO: " + ("PDF autêntico, emitido pelo Órgão Gerencial" if authentic
                           else "a autenticidade do PDF NÃO foi comprovada"))
    raise typer.Exit(0 if authentic else 1)


audit_app = typer.Typer(help="The docket store's audit log.", no_args_is_help=True)
app.add_typer(audit_app, name="audit")


@audit_app.command("verify")
def audit_verify(
    db: Annotated[Optional[str], typer.Option(help=DB_HELP)] = None,
    audit_key: Annotated[Optional[list[Path]], typer.Option(
        help=AUDIT_KEY_HELP + "; repeat for keys rotated out")] = None,
    anchors: Annotated[Optional[str], typer.Option(help=ANCHORS_HELP)] = None,
) -> None:
    """Check the audit log end to end: its keyed chain, each anchor, each auto and file
    against its last entry. Exit 0 if it holds, 1 naming the first broken entry."""
    from dockets.audit import AuditError, verify_record

    keys = [_audit_key(path) for path in audit_key] if audit_key else [_audit_key(None)]
    anchor_log = _anchor_log(db, anchors)
    sessions = _open_store(db)
    try:
        found = anchor_log.read()
        with sessions() as session:
            report = verify_record(session, {k.key_id: k for k in keys}, found)
    except AuditError as exc:
        print(f"REGISTRO ROMPIDO: {exc}")
        raise typer.Exit(1)
    print(f"registro de auditoria íntegro: {report.entries} registros, {report.dockets} autos conferidos, "
          f"{report.anchors} âncoras em {anchor_log.describe()}"
          + (f" (última: registro {report.last_anchored})" if report.last_anchored else ""))
    if report.head and report.last_anchored != report.head.entry_id:
        print(f"atenção: os registros após {report.last_anchored or 0} ainda não foram ancorados")


keys_app = typer.Typer(help="The Órgão's signing key and the audit log's key.", no_args_is_help=True)
app.add_typer(keys_app, name="keys")


@keys_app.command("init")
def keys_init(
    out: Annotated[Path, typer.Option(help="where to write the private key (PEM); its public key goes beside it, .pub")],
) -> None:
    """Create the Ed25519 key that signs every evidence bundle (never overwrites one)."""
    from dockets.signing import SigningError, create_key, public_path

    try:
        key = create_key(out)
    except SigningError as exc:
        fail(str(exc))
    print(f"chave de assinatura {key.key_id} criada em {out} (somente o dono lê)")
    print(f"chave pública, a publicar: {public_path(out)}")


@keys_app.command("audit-init")
def keys_audit_init(
    out: Annotated[Path, typer.Option(help="where to write the audit log's HMAC key (owner-only)")],
) -> None:
    """Create the secret key that chains the audit log (never overwrites one): keep it out
    of the database and its backups, readable only by the web app and the docket sink."""
    from dockets.audit import AuditError, create_audit_key

    try:
        key = create_audit_key(out)
    except AuditError as exc:
        fail(str(exc))
    print(f"chave de auditoria {key.key_id} criada em {out} (somente o dono lê)")


dockets_app = typer.Typer(help="Autos de infração: the docket store.", no_args_is_help=True)
app.add_typer(dockets_app, name="dockets")


@dockets_app.command("migrate")
def dockets_migrate(db: Annotated[Optional[str], typer.Option(help=DB_HELP)] = None) -> None:
    """Create or upgrade the database: the docket store and the live tables (alembic; idempotent)."""
    from ops.db import migrate as migrate_live_tables

    sessions = _open_store(db)
    migrate_live_tables(sessions.kw["bind"])
    print(f"banco dos autos atualizado: {_db_url(db).split('@')[-1]}")


ops_app = typer.Typer(help="The operations room's live tables.", no_args_is_help=True)
app.add_typer(ops_app, name="ops")


@ops_app.command("sink")
def ops_sink(
    feed: Annotated[Optional[Path], typer.Option(help="GTFS feed (env FISCALIZA_FEED; default: the sample)")] = None,
    db: Annotated[Optional[str], typer.Option(help=DB_HELP)] = None,
    metrics_port: Annotated[int, typer.Option(help="port of its Prometheus /metrics (0: off)")] = 6067,
    idle_exit: Annotated[Optional[float], typer.Option(help="stop after this many seconds without records")] = None,
) -> None:
    """Consume vehicle-status, trips and infractions into the live tables Grafana reads,
    and measure the workers' consumer lag from Kafka's offsets (SIGTERM stops)."""
    import signal

    from prometheus_client import CollectorRegistry, start_http_server
    from sqlalchemy.exc import SQLAlchemyError

    from dockets.db import make_engine
    from gtfs import load_feed
    from gtfs.errors import FeedError
    from ops.db import migrate
    from ops.sink import run_ops_sink

    import os

    from fiscaliza.samples import joao_neiva

    feed = feed or (Path(os.environ["FISCALIZA_FEED"]) if os.environ.get("FISCALIZA_FEED") else joao_neiva()[0])
    try:
        loaded = load_feed(feed)
    except FeedError as exc:
        fail(str(exc))
    settings = _stream_settings()
    try:
        engine = make_engine(_db_url(db))
        migrate(engine)
    except (SQLAlchemyError, OSError) as exc:
        fail(f"cannot open the live tables in {_db_url(db)}: {str(exc).splitlines()[0]}")
    registry = CollectorRegistry()
    if metrics_port > 0:
        start_http_server(metrics_port, registry=registry)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    report = run_ops_sink(engine, settings.bootstrap, {r.route_id: r.agency_id for r in loaded.routes.values()},
                          workers_group=settings.app_id, registry=registry, idle_exit_s=idle_exit,
                          should_stop=lambda: bool(stopping))
    print("linhas gravadas: " + ", ".join(f"{topic} {count}" for topic, count in report.rows.items())
          + f"; {report.rejected} rejeitadas")


@dockets_app.command("ingest")
def dockets_ingest(
    infractions: Annotated[Path, typer.Option(help="a replay's infractions.jsonl")],
    feed: Annotated[Path, typer.Option(help="the replay's GTFS feed")],
    fleet: Annotated[Path, typer.Option(help="the replay's fleet.csv")],
    tachograph: Annotated[Path, typer.Option(help="the replay's tachograph JSON Lines")],
    catraca: Annotated[Optional[Path], typer.Option(help="the replay's catraca JSON Lines")] = None,
    occurrences: Annotated[Optional[Path], typer.Option(help="the replay's occurrences JSON Lines")] = None,
    policy: Annotated[Optional[Path], typer.Option(help="the replay's policy TOML")] = None,
    geofences: Annotated[Optional[Path], typer.Option(help="the replay's geofence overrides")] = None,
    db: Annotated[Optional[str], typer.Option(help=DB_HELP)] = None,
    signing_key: Annotated[Optional[Path], typer.Option(help=KEY_HELP)] = None,
    audit_key: Annotated[Optional[Path], typer.Option(help=AUDIT_KEY_HELP)] = None,
    anchors: Annotated[Optional[str], typer.Option(help=ANCHORS_HELP)] = None,
) -> None:
    """Make draft autos of a replay's confirmed infractions, with their signed evidence bundles (idempotent)."""
    from dockets.sink import ingest_replay, read_infractions
    from fiscaliza.replay import InputError, ReplayInputs, load_context

    signer = _signing_key(signing_key)
    sessions = _open_writer(db, audit_key, anchors)
    inputs = ReplayInputs(feed, fleet, tachograph, catraca, occurrences, policy, geofences)
    try:
        context = load_context(inputs)
        records = read_infractions(infractions)
    except InputError as exc:
        fail(str(exc))
    except (OSError, ValueError, KeyError) as exc:
        fail(f"cannot read {infractions}: {exc}")
    try:
        report = ingest_replay(sessions, inputs, context, records, signer=signer)
    except (OSError, KeyError, ValueError) as exc:
        fail(f"cannot ingest {infractions}: {exc}")
    print(f"{len(report.created)} autos em rascunho criados; {report.already} já registrados; "
          f"{report.not_confirmed} infrações não confirmadas ignoradas")


@dockets_app.command("sink")
def dockets_sink(
    feed: Annotated[Optional[Path], typer.Option(help="GTFS feed (env FISCALIZA_FEED; default: the sample)")] = None,
    fleet: Annotated[Optional[Path], typer.Option(help="fleet.csv (env FISCALIZA_FLEET; default: the sample's)")] = None,
    policy: Annotated[Optional[Path], typer.Option(help="policy TOML (env FISCALIZA_POLICY; default: João Neiva)")] = None,
    geofences: Annotated[Optional[Path], typer.Option(help="GeoJSON geofence overrides (env FISCALIZA_GEOFENCES)")] = None,
    db: Annotated[Optional[str], typer.Option(help=DB_HELP)] = None,
    idle_exit: Annotated[Optional[float], typer.Option(help="stop after this many seconds without records")] = None,
    signing_key: Annotated[Optional[Path], typer.Option(help=KEY_HELP)] = None,
    audit_key: Annotated[Optional[Path], typer.Option(help=AUDIT_KEY_HELP)] = None,
    anchors: Annotated[Optional[str], typer.Option(help=ANCHORS_HELP)] = None,
    metrics_port: Annotated[int, typer.Option(help="port of its Prometheus /metrics: autos by stage, "
                                                   "deadlines (0: off)")] = 0,
) -> None:
    """Consume the infractions topic: draft autos with evidence read back from the input topics (SIGTERM stops).

    It first verifies the audit record (as `fiscaliza audit verify`) and does not start on
    a broken one."""
    import signal

    from dockets.kafka_sink import kafka_bundle_maker, run_sink
    from fiscaliza.replay import InputError, load_context

    signer = _signing_key(signing_key)
    inputs = _engine_inputs(feed, fleet, policy, geofences)
    try:
        context = load_context(inputs)
    except InputError as exc:
        fail(str(exc))
    settings = _stream_settings()
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    sessions = _open_writer(db, audit_key, anchors, verify_first="o sink dos autos")
    if metrics_port > 0:
        from prometheus_client import start_http_server

        from dockets.config import calendar_for
        from dockets.metrics import docket_registry

        tz = context.policy.tz
        start_http_server(metrics_port, registry=docket_registry(
            sessions, calendar_for(context.policy), lambda: dt.datetime.now(tz).date()))
    maker = kafka_bundle_maker(context, inputs, settings.bootstrap, settings.inputs, signer=signer)
    report = run_sink(sessions, context, maker, settings.bootstrap, idle_exit_s=idle_exit,
                      should_stop=lambda: bool(stopping))
    print(f"{len(report.created)} autos em rascunho criados; {report.already} já registrados; "
          f"{report.not_confirmed} infrações não confirmadas ignoradas")


@dockets_app.command("lavrar")
def dockets_lavrar(
    fiscal: Annotated[str, typer.Option(help="username of the fiscal who lavra the autos")],
    policy: Annotated[Optional[Path], typer.Option(help="policy TOML (default: João Neiva)")] = None,
    db: Annotated[Optional[str], typer.Option(help=DB_HELP)] = None,
    signing_key: Annotated[Optional[Path], typer.Option(help=KEY_HELP)] = None,
    audit_key: Annotated[Optional[Path], typer.Option(help=AUDIT_KEY_HELP)] = None,
    anchors: Annotated[Optional[str], typer.Option(help=ANCHORS_HELP)] = None,
) -> None:
    """Lavrar every draft auto today (numbers them, renders and signs their PDFs).

    The date of the act is the machine's clock in the policy's timezone: an act is never
    dated by whoever performs it."""
    from sqlalchemy import select

    from dockets.config import calendar_for, issuer_name
    from dockets.export import lavrar_drafts
    from dockets.service import Actor
    from dockets.store import User
    from fiscaliza.policy import PolicyError, load_policy

    try:
        loaded = load_policy(policy)
    except PolicyError as exc:
        fail(str(exc))
    signer = _signing_key(signing_key)
    sessions = _open_writer(db, audit_key, anchors)
    with sessions() as session:
        user = session.scalar(select(User).where(User.username == fiscal, User.role == "fiscal", User.active))
    if user is None:
        fail(f"no active fiscal named {fiscal!r} (create one with fiscaliza users add)")
    date = dt.datetime.now(loaded.tz).date()
    labels = lavrar_drafts(sessions, Actor.of(user), date, calendar=calendar_for(loaded), issuer_name=issuer_name(loaded),
                           signer=signer)
    print(f"{len(labels)} autos lavrados" + (f": {', '.join(labels)}" if labels else ""))


@dockets_app.command("export")
def dockets_export(
    out: Annotated[Path, typer.Option(help="directory for the PDFs and evidence bundles")],
    db: Annotated[Optional[str], typer.Option(help=DB_HELP)] = None,
) -> None:
    """Write every lavrado auto's PDF and evidence bundle."""
    from dockets.export import export_files

    try:
        written = export_files(_open_store(db), out)
    except OSError as exc:
        fail(f"cannot write to {out}: {exc.strerror}")
    print(f"{len(written)} arquivos escritos em {out}")


users_app = typer.Typer(help="Accounts of the web app.", no_args_is_help=True)
app.add_typer(users_app, name="users")


@users_app.command("add")
def users_add(
    username: Annotated[str, typer.Option(help="login name")],
    name: Annotated[str, typer.Option(help="full name, as printed on the autos")],
    role: Annotated[str, typer.Option(help="fiscal, gestor or operador")],
    operator: Annotated[Optional[str], typer.Option(help="the operator (agency_id) an operador acts for")] = None,
    registration: Annotated[Optional[str], typer.Option(help="matrícula (printed on the autos a fiscal lavra)")] = None,
    db: Annotated[Optional[str], typer.Option(help=DB_HELP)] = None,
    audit_key: Annotated[Optional[Path], typer.Option(help=AUDIT_KEY_HELP)] = None,
    anchors: Annotated[Optional[str], typer.Option(help=ANCHORS_HELP)] = None,
) -> None:
    """Create a user; the password is read from FISCALIZA_PASSWORD or asked for."""
    import getpass
    import os

    from dockets.service import DocketError, ensure_operators
    from dockets.users import create_user
    from fiscaliza.samples import joao_neiva
    from gtfs import load_feed

    sessions = _open_writer(db, audit_key, anchors)
    password = os.environ.get("FISCALIZA_PASSWORD") or getpass.getpass("Senha: ")
    try:
        with sessions.begin() as session:
            if operator is not None:
                feed = load_feed(Path(os.environ["FISCALIZA_FEED"]) if os.environ.get("FISCALIZA_FEED") else joao_neiva()[0])
                ensure_operators(session, {a.agency_id: a.name for a in feed.agencies.values()})
            create_user(session, username=username, full_name=name, role=role, password=password,
                        operator_id=operator, registration=registration)
    except DocketError as exc:
        fail(str(exc))
    print(f"usuário {username} ({role}) criado")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port")] = 8000,
    policy: Annotated[Optional[Path], typer.Option(help="policy TOML: calendar, municipality (env FISCALIZA_POLICY)")] = None,
    fleet: Annotated[Optional[Path], typer.Option(help="fleet.csv (env FISCALIZA_FLEET; default: the sample's)")] = None,
    feed: Annotated[Optional[Path], typer.Option(help="GTFS feed of the public GTFS-Realtime feed "
                                                      "(env FISCALIZA_FEED; default: the sample)")] = None,
    db: Annotated[Optional[str], typer.Option(help=DB_HELP)] = None,
    secure_cookies: Annotated[bool, typer.Option(
        help="mark cookies Secure (HTTPS only): keep on behind the city's TLS proxy; "
             "--no-secure-cookies only for plain-HTTP local use")] = True,
    signing_key: Annotated[Optional[Path], typer.Option(help=KEY_HELP + "; signs the PDFs issued")] = None,
    audit_key: Annotated[Optional[Path], typer.Option(help=AUDIT_KEY_HELP)] = None,
    anchors: Annotated[Optional[str], typer.Option(help=ANCHORS_HELP)] = None,
) -> None:
    """Run the web app of the autos de infração (Órgão Gerencial and operators)."""
    import os

    from web.server import serve as run_server

    policy = policy or (Path(os.environ["FISCALIZA_POLICY"]) if os.environ.get("FISCALIZA_POLICY") else None)
    fleet = fleet or (Path(os.environ["FISCALIZA_FLEET"]) if os.environ.get("FISCALIZA_FLEET") else None)
    feed = feed or (Path(os.environ["FISCALIZA_FEED"]) if os.environ.get("FISCALIZA_FEED") else None)
    from sqlalchemy.exc import SQLAlchemyError

    from fiscaliza.fleet import FleetError
    from fiscaliza.policy import PolicyError
    from gtfs import FeedError

    try:
        run_server(_db_url(db), host, port, policy, fleet_path=fleet, feed_path=feed, secure_cookies=secure_cookies,
                   audit_key=_audit_key(audit_key), anchors=_anchor_log(db, anchors), signer=_signing_key(signing_key))
    except (PolicyError, FleetError, FeedError) as exc:
        fail(str(exc))
    except (SQLAlchemyError, OSError) as exc:
        fail(f"cannot open the docket store {_db_url(db)}: {str(exc).splitlines()[0]}")


def _date(text: str, option: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        fail(f"{option} must be a date as YYYY-MM-DD, got {text!r}")
        raise  # unreachable: fail exits


def main() -> None:
    """Console entry point: usage errors become one line and exit code 2."""
    try:
        code = app(standalone_mode=False)
    except (KeyboardInterrupt, typer.Abort):
        print("fiscaliza: interrupted", file=sys.stderr)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:
        # Usage errors (typer vendors its own click, so match by shape, not class).
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            reason = exc.format_message() or "no command given (see fiscaliza --help)"
            print(f"fiscaliza: error: {reason}", file=sys.stderr)
            sys.exit(EXIT_BAD_INPUT)
        raise
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
