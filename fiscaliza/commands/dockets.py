"""The autos de infração: `verify`, `audit`, `keys`, `dockets` and `users`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Optional

import typer

from fiscaliza.commands.common import (
    AUDIT_KEY_HELP,
    AnchorsOption,
    AuditKeyOption,
    DbOption,
    FeedOption,
    FleetOption,
    GeofencesOption,
    IdleExitOption,
    PolicyOption,
    SigningKeyOption,
    anchors_for,
    audit_key_from,
    current_settings,
    db_url,
    engine_inputs,
    fail,
    open_store,
    open_writer,
    shown_url,
    signing_key_from,
    stream_settings,
)

audit_app = typer.Typer(help="The docket store's audit log.", no_args_is_help=True)


keys_app = typer.Typer(help="The Órgão's signing key and the audit log's key.", no_args_is_help=True)


dockets_app = typer.Typer(help="Autos de infração: the docket store.", no_args_is_help=True)


users_app = typer.Typer(help="Accounts of the web app.", no_args_is_help=True)


def verify(
    ctx: typer.Context,
    bundle: Annotated[Path, typer.Argument(help="evidence bundle (evidencias.zip), or PDF of an auto de infração "
                                                "or of a judgment (the defence's, the recurso's)")],
    public_key: Annotated[Optional[list[Path]], typer.Option(
        help="a public key the Órgão published (repeat for the keys it rotated out)")] = None,
    signature: Annotated[Optional[Path], typer.Option(
        help="a PDF's detached signature (default: the .assinatura.json beside it)")] = None,
    sha256: Annotated[Optional[str], typer.Option(
        "--sha256", help="the bundle's SHA-256 printed on the auto: the bundle must be that very file")] = None,
    auto: Annotated[Optional[Path], typer.Option(
        help="the auto's PDF (its signature beside it, or --signature): authentic, and the bundle the one it "
             "prints the SHA-256 of")] = None,
    without: Annotated[Optional[list[str]], typer.Option(
        "--without", help="readings the defence disputes: the bundle's tachograph line numbers (12,13,15-18), "
                          "catraca:40-45, or message ids; repeatable")] = None,
) -> None:
    """Check an evidence bundle: integrity, authenticity (signed by a published key) and
    the rule re-run on the bundle alone. Exit 0 only if all three hold (and, with
    --sha256 or --auto, it is the bundle the auto names), 1 if not.

    Given an auto's PDF, or a judgment's (the defence's, the recurso's), check that it is
    the one the Órgão signed (exit 0) or not (1).

    With --without LINES and/or --without-span VEHICLE FROM TO (after the bundle; VEHICLE
    may read tachograph:V or catraca:V; ISO times, without an offset in the feed's zone;
    repeatable), re-judge the auto without those readings instead: whether it stands,
    becomes insufficient evidence or disappears, and what changed (exit 0 when it ran)."""
    import hashlib

    from dockets.bundle import BundleAltered, BundleError, verify_bundle
    from dockets.signing import key_id, key_label, load_public_key
    from fiscaliza.replay import rerun
    from kernel.errors import InputError

    spans = _spans_typed(ctx.args)
    printed = _printed_digest(sha256)
    keys = [(path, load_public_key(path)) for path in public_key or []]
    trusted = {key_id(k): k for _, k in keys}
    try:
        data = bundle.read_bytes()
    except OSError as exc:
        fail(f"cannot read {bundle}: {exc.strerror}")
    for path, key in keys:  # which keys vouch is the reader's choice: named by fingerprint, not by owner
        print(f"Chave informada {path.name}: {key_label(key)}")
    if data.startswith(b"%PDF-"):
        if auto is not None:
            fail("--auto names the auto's PDF beside a bundle: give the bundle first")
        _verify_pdf(bundle, data, signature, trusted)
    if auto is not None:
        if printed is not None:
            fail("give either --sha256 or --auto, not both")
        printed, auto_signed = _digest_printed_on(auto, signature, trusted)
    digest = hashlib.sha256(data).hexdigest()
    if printed is not None and printed != digest:
        print(f"Pacote {bundle.name} — SHA-256 {digest}")
        print(f"  • Identidade: o SHA-256 impresso no auto é {printed}: este não é o pacote do auto")
        print("RESULTADO: pacote DIFERENTE do que o auto identifica")
        raise typer.Exit(1)
    if without or spans:
        _rejudge(bundle, data, without or [], spans, trusted)
    try:
        verdict = verify_bundle(data, trusted, rerun=rerun)
    except BundleAltered as exc:  # checked, and found altered: the check's answer (exit 1)
        print(f"Pacote {bundle.name}")
        print(f"  • Integridade: {exc}")
        print("RESULTADO: pacote ADULTERADO: a infração não pode ser reproduzida a partir dele")
        raise typer.Exit(1)
    except (BundleError, InputError) as exc:
        fail(f"{bundle}: {exc}")
    print(f"Pacote {bundle.name} — SHA-256 {verdict.bundle_sha256}")
    print(f"Infração {verdict.code} {verdict.infraction_id}")
    if auto is not None:
        print(f"  • Auto {auto.name}: {auto_signed}")
    if printed is not None:
        print("  • Identidade: o SHA-256 confere com o impresso no auto")
    for finding in verdict.findings:
        print(f"  • {finding}")
    if verdict.differences:
        rows = [("campo", "no pacote", "reexecutado"), *verdict.differences]
        widths = [max(len(row[i]) for row in rows) for i in range(2)]
        for name, recorded, again in rows:
            print(f"    {name:<{widths[0]}} │ {recorded:<{widths[1]}} │ {again}")
    if verdict.upheld and verdict.manual:
        print("RESULTADO: pacote íntegro e autêntico: o relato e os anexos são os do auto (registro manual do "
              "fiscal, sem regra a reexecutar)")
    elif verdict.upheld:
        print("RESULTADO: pacote íntegro, autêntico, e a infração é reproduzida")
    elif verdict.manual:
        print("RESULTADO: registro manual do fiscal, mas a autenticidade NÃO foi comprovada")
    else:
        print("RESULTADO: " + ("infração reproduzida, mas a autenticidade NÃO foi comprovada" if verdict.reproduced
                               else "infração NÃO reproduzida"))
    raise typer.Exit(0 if verdict.upheld else 1)


def _spans_typed(extra: list[str]) -> list[tuple[str, str, str]]:
    """The --without-span triples among the words click did not parse (typer takes no
    repeatable option of three values); anything else there is a bad argument."""
    spans, words = [], list(extra)
    while words:
        word = words.pop(0)
        if word != "--without-span":
            fail(f"unexpected argument {word!r}")
        if len(words) < 3 or any(w.startswith("--") for w in words[:3]):
            fail("--without-span takes three values: VEHICLE FROM TO")
        spans.append(tuple(words[:3]))
        del words[:3]
    return spans


def _rejudge(path: Path, data: bytes, without: list[str], spans: list[tuple[str, str, str]], trusted) -> None:
    """`verify --without`: the auto re-judged without the disputed readings, printed; exit 0."""
    import shlex
    import time

    from rich.console import Console
    from rich.table import Table

    from dockets import ptbr
    from dockets.bundle import BundleError, is_manual, read_bundle, sha256, signature_of
    from dockets.rejudgment import (
        DisputeError,
        bundle_context,
        judge_with,
        lines_argument,
        merged,
        parse_lines,
        parse_span,
        readings_named,
        rejudge,
    )
    from dockets.signing import check
    from fiscaliza.reporting import print_table
    from kernel.errors import InputError

    started = time.process_time()
    try:
        bundle = read_bundle(data)
    except BundleError as exc:
        fail(f"{path}: {exc}")
    if is_manual(bundle.manifest):
        fail(f"{path}: registro manual do fiscal: não há regra da telemetria a reexecutar sem leituras")
    try:
        context = bundle_context(bundle)
        timezone = context.policy.policy.timezone
        disputed = merged([*(parse_lines(text) for text in without),
                           *(parse_span(*span, timezone).as_disputed() for span in spans)])
        result = rejudge(bundle, sha256(data), disputed, judge_with(context), timezone)
    except (DisputeError, InputError) as exc:
        fail(str(exc))
    authentic, why = check(signature_of(bundle), bundle.members["manifest.json"], dict(trusted))
    console = Console(soft_wrap=False)
    console.print(f"Pacote {path.name} — SHA-256 {result.bundle_sha256}", soft_wrap=True)
    console.print(f"Infração {result.code} {result.infraction_id}", soft_wrap=True)
    console.print(f"  • Autenticidade: {why}." if authentic else f"  • Autenticidade NÃO comprovada: {why}.",
                  soft_wrap=True)
    console.print(f"  • Pacote inteiro reexecutado: {'reproduz' if result.reproduced else 'NÃO reproduz'} a "
                  "infração registrada.", soft_wrap=True)
    named = readings_named(result.removed)
    console.print(f"  • Leituras contestadas: {ptbr.number(len(result.removed))} "
                  f"({named if len(named) <= 300 else named[:299] + '…'}); "
                  f"SHA-256 do conjunto {result.disputed_sha256}", soft_wrap=True)
    for said in result.reliance:
        console.print(f"  • {said}", soft_wrap=True)
    if result.changes:
        table = Table(title="O que mudou sem as leituras contestadas")
        for header in ("campo", "no auto", "sem as leituras contestadas"):
            table.add_column(header)
        for change in result.changes:
            table.add_row(change.label, change.before, change.after)
        print_table(console, table)
    if result.insufficient_reason:
        console.print(f"  • Evidência insuficiente: {result.insufficient_reason}", soft_wrap=True)
    fine = f" (multa de {result.record['fine_ufir']} UFIR)" if result.record else ""
    console.print(f"RESULTADO: sem as leituras contestadas, {result.outcome_pt}{fine}. O sistema informa; quem "
                  "julga a defesa é o Órgão Gerencial.", soft_wrap=True)
    typed = [*(f"--without {shlex.quote(text)}" for text in without),
             *(f"--without-span {' '.join(map(shlex.quote, span))}" for span in spans)]
    console.print(f"Reexame de {ptbr.number(result.messages)} mensagens em "
                  f"{ptbr.amount(time.process_time() - started, 1)} s de CPU; para refazê-lo: fiscaliza verify "
                  f"{path.name} {' '.join(typed)}" + (f" (ou --without {lines_argument(result.removed)})"
                                                      if len(result.removed) <= 20 and spans else ""), soft_wrap=True)
    raise typer.Exit(0)


def _digest_printed_on(auto: Path, signature: Path | None, trusted) -> tuple[str, str]:
    """The bundle SHA-256 an auto's PDF prints, and whose signature it bears, once the PDF
    is shown to be a signed one (a forged PDF may print any digest: exit 1)."""
    import hashlib
    import json

    from dockets.printed import PrintedError, printed_bundle_digest
    from dockets.signing import check, signature_path

    try:
        pdf = auto.read_bytes()
    except OSError as exc:
        fail(f"cannot read {auto}: {exc.strerror}")
    signature = signature or signature_path(auto)
    try:
        detached = json.loads(signature.read_bytes())
    except OSError as exc:
        fail(f"cannot read the auto's signature {signature}: {exc.strerror}")
    except (ValueError, RecursionError):
        fail(f"{signature} is not a signature (JSON)")
    authentic, why = check(detached, pdf, trusted)
    if not authentic:
        print(f"Auto {auto.name} — SHA-256 {hashlib.sha256(pdf).hexdigest()}")
        print(f"  • Autenticidade do auto: {why}")
        print("RESULTADO: a autenticidade do PDF do auto NÃO foi comprovada: o SHA-256 nele impresso não identifica "
              "pacote algum")
        raise typer.Exit(1)
    try:
        return printed_bundle_digest(pdf), why
    except PrintedError as exc:
        fail(f"{auto}: {exc}")


def _printed_digest(text: str | None) -> str | None:
    """The SHA-256 as the auto prints it (64 hex digits; spaces and case as typed), or exit 2."""
    import re

    if text is None:
        return None
    digest = re.sub(r"\s+", "", text).lower()
    if not re.fullmatch(r"[0-9a-f]{64}", digest):
        fail(f"--sha256 must be the 64 hexadecimal digits printed on the auto, got {text[:80]!r}")
    return digest


def _verify_pdf(path: Path, data: bytes, signature: Path | None, trusted) -> None:
    import hashlib
    import json

    from dockets.signing import check, signature_path

    signature = signature or signature_path(path)
    try:
        detached = json.loads(signature.read_bytes())
    except OSError as exc:
        fail(f"cannot read the PDF's signature {signature}: {exc.strerror}")
    except (ValueError, RecursionError):  # a hostile file nests [ until the parser's stack ends
        fail(f"{signature} is not a signature (JSON)")
    authentic, why = check(detached, data, trusted)
    # the auto's PDF or a judgment's (the defence's, the recurso's): all are signed the same way
    print(f"PDF {path.name} — SHA-256 {hashlib.sha256(data).hexdigest()}")
    print(f"  • Autenticidade: {why}")
    print("RESULTADO: " + (f"PDF autêntico, assinado pela chave {detached['key_id']}" if authentic
                           else "a autenticidade do PDF NÃO foi comprovada"))
    raise typer.Exit(0 if authentic else 1)


@audit_app.command("verify")
def audit_verify(
    db: DbOption = None,
    audit_key: Annotated[Optional[list[Path]], typer.Option(
        help=AUDIT_KEY_HELP + "; repeat for keys rotated out")] = None,
    anchors: AnchorsOption = None,
) -> None:
    """Check the audit log end to end: its keyed chain, each anchor, each auto and file
    against its last entry. Exit 0 if it holds, 1 naming the first broken entry."""
    from sqlalchemy.exc import SQLAlchemyError

    from dockets.audit import AuditError, verify_record

    keys = [audit_key_from(path) for path in audit_key] if audit_key else [audit_key_from(None)]
    anchor_log = anchors_for(db, anchors)
    sessions = open_store(db)
    try:
        found = anchor_log.read()
        with sessions() as session:
            report = verify_record(session, {k.key_id: k for k in keys}, found)
    except AuditError as exc:
        print(f"REGISTRO ROMPIDO: {exc}")
        raise typer.Exit(1)
    except SQLAlchemyError as exc:  # the store could not be read: not an answer of the check
        fail(f"cannot read the docket store {shown_url(db)}: {str(exc).splitlines()[0]}")
    print(f"registro de auditoria íntegro: {report.entries} registros, {report.dockets} autos conferidos, "
          f"{report.anchors} âncoras em {anchor_log.describe()}"
          + (f" (última: registro {report.last_anchored})" if report.last_anchored else ""))
    if report.head and report.last_anchored != report.head.entry_id:
        print(f"atenção: os registros após {report.last_anchored or 0} ainda não foram ancorados")


@keys_app.command("init")
def keys_init(
    out: Annotated[Path, typer.Option(help="where to write the private key (PEM); its public key goes beside it, .pub")],
) -> None:
    """Create the Ed25519 key that signs every evidence bundle (never overwrites one)."""
    from dockets.signing import create_key, public_path

    key = create_key(out)
    print(f"chave de assinatura {key.key_id} criada em {out} (somente o dono lê)")
    print(f"chave pública, a publicar: {public_path(out)}")


@keys_app.command("audit-init")
def keys_audit_init(
    out: Annotated[Path, typer.Option(help="where to write the audit log's HMAC key (owner-only)")],
) -> None:
    """Create the secret key that chains the audit log (never overwrites one): keep it out
    of the database and its backups, readable only by the web app and the docket sink."""
    from dockets.audit import create_audit_key

    key = create_audit_key(out)
    print(f"chave de auditoria {key.key_id} criada em {out} (somente o dono lê)")


@dockets_app.command("migrate")
def dockets_migrate(db: DbOption = None) -> None:
    """Create or upgrade the database: the docket store and the live tables (alembic; idempotent)."""
    from ops.db import migrate as migrate_live_tables

    sessions = open_store(db)
    migrate_live_tables(sessions.kw["bind"])
    print(f"banco dos autos atualizado: {db_url(db).split('@')[-1]}")


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
    db: DbOption = None,
    signing_key: SigningKeyOption = None,
    audit_key: AuditKeyOption = None,
    anchors: AnchorsOption = None,
) -> None:
    """Make draft autos of a replay's confirmed infractions, with their signed evidence bundles (idempotent)."""
    from dockets.sink import ingest_replay, read_infractions
    from engine.loading import load_context
    from fiscaliza.replay import ReplayInputs
    from kernel.errors import InputError

    signer = signing_key_from(signing_key)
    sessions = open_writer(db, audit_key, anchors)
    inputs = ReplayInputs(feed, fleet, tachograph, catraca, occurrences, policy, geofences)
    try:
        context = load_context(inputs)
        records = read_infractions(infractions)
    except InputError as exc:
        fail(str(exc))
    except (OSError, ValueError, KeyError) as exc:
        fail(f"cannot read {infractions}: {exc}")
    try:
        report = ingest_replay(sessions, inputs.static, inputs.telemetry, context, records, signer=signer)
    except (OSError, KeyError, ValueError) as exc:
        fail(f"cannot ingest {infractions}: {exc}")
    print(f"{len(report.created)} autos em rascunho criados; {report.already} já registrados; "
          f"{report.not_confirmed} infrações não confirmadas ignoradas")


@dockets_app.command("sink")
def dockets_sink(
    feed: FeedOption = None,
    fleet: FleetOption = None,
    policy: PolicyOption = None,
    geofences: GeofencesOption = None,
    db: DbOption = None,
    idle_exit: IdleExitOption = None,
    signing_key: SigningKeyOption = None,
    audit_key: AuditKeyOption = None,
    anchors: AnchorsOption = None,
    metrics_port: Annotated[int, typer.Option(help="port of its Prometheus /metrics: autos by stage, "
                                                   "deadlines (0: off)")] = 0,
) -> None:
    """Consume the infractions topic: draft autos with evidence read back from the input topics (SIGTERM stops).

    It first verifies the audit record (as `fiscaliza audit verify`) and does not start on
    a broken one."""
    import signal

    from dockets.kafka_sink import kafka_bundle_maker, run_sink
    from engine.loading import load_context

    signer = signing_key_from(signing_key)
    inputs = engine_inputs(feed, fleet, policy, geofences)
    context = load_context(inputs)
    settings = stream_settings()
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    sessions = open_writer(db, audit_key, anchors, verify_first="o sink dos autos")
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
    db: DbOption = None,
    signing_key: SigningKeyOption = None,
    audit_key: AuditKeyOption = None,
    anchors: AnchorsOption = None,
) -> None:
    """Lavrar every draft auto today (numbers them, renders and signs their PDFs).

    The date of the act is the machine's clock in the policy's timezone: an act is never
    dated by whoever performs it."""
    from sqlalchemy import select

    from dockets.config import calendar_for, issuer_name
    from dockets.export import lavrar_drafts
    from dockets.service import Actor
    from dockets.store import User
    from dockets.users import normalized_username
    from kernel.policy import load_policy

    loaded = load_policy(policy)
    signer = signing_key_from(signing_key)
    sessions = open_writer(db, audit_key, anchors)
    with sessions() as session:
        user = session.scalar(select(User).where(User.username == normalized_username(fiscal), User.role == "fiscal", User.active))
    if user is None:
        fail(f"no active fiscal named {fiscal!r} (create one with fiscaliza users add)")
    date = dt.datetime.now(loaded.tz).date()
    labels = lavrar_drafts(sessions, Actor.of(user), date, calendar=calendar_for(loaded), issuer_name=issuer_name(loaded),
                           signer=signer)
    print(f"{len(labels)} autos lavrados" + (f": {', '.join(labels)}" if labels else ""))


@dockets_app.command("export")
def dockets_export(
    out: Annotated[Path, typer.Option(help="directory for the PDFs and evidence bundles")],
    db: DbOption = None,
) -> None:
    """Write every lavrado auto's PDF and evidence bundle."""
    from dockets.export import export_files

    try:
        written = export_files(open_store(db), out)
    except OSError as exc:
        fail(f"cannot write to {out}: {exc.strerror}")
    print(f"{len(written)} arquivos escritos em {out}")


@dockets_app.command("transparencia")
def dockets_transparencia(
    out: Annotated[Path, typer.Option(help="directory for multas-mantidas.csv and multas-mantidas.json")],
    feed: FeedOption = None,
    policy: PolicyOption = None,
    db: DbOption = None,
) -> None:
    """Write the public record of what was upheld (the open data of /transparencia) as of today."""
    from sqlalchemy.exc import SQLAlchemyError

    from dockets.config import calendar_for
    from dockets.public_record import record_csv, record_json
    from gtfs import load_feed
    from gtfs.check import require_valid
    from kernel.policy import load_policy
    from ops.db import migrate as migrate_live_tables
    from ops.public_record import read_public_record
    from rules.packs import pack_of

    static = engine_inputs(feed, None, policy, None)
    loaded = load_policy(static.policy)  # a bad policy or feed: one line, exit 2 (fiscaliza.cli.main)
    require_valid(static.feed)
    schedule = load_feed(static.feed)
    sessions = open_store(db)
    # the date that decides what is final is the machine's clock in the policy's timezone
    today = dt.datetime.now(loaded.tz).date()
    try:
        migrate_live_tables(sessions.kw["bind"])  # the live tables, empty where no ops sink fills them
        with sessions() as session:
            record = read_public_record(session, calendar=calendar_for(loaded), today=today, feed=schedule)
    except SQLAlchemyError as exc:
        fail(f"cannot read the docket store {shown_url(db)}: {str(exc).splitlines()[0]}")
    unit = pack_of(loaded).law.fine_unit
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "multas-mantidas.csv").write_text(record_csv(record, unit), encoding="utf-8")
        (out / "multas-mantidas.json").write_bytes(record_json(record, unit))
    except OSError as exc:
        fail(f"cannot write to {out}: {exc.strerror}")
    autos = sum(m.autos for m in record.months)
    print(f"{autos} autos com decisão definitiva em {len(record.months)} mês(es) de operadora, em {today:%d/%m/%Y}: "
          f"{out / 'multas-mantidas.csv'}, {out / 'multas-mantidas.json'}")


@users_app.command("add")
def users_add(
    username: Annotated[str, typer.Option(help="login name")],
    name: Annotated[str, typer.Option(help="full name, as printed on the autos")],
    role: Annotated[str, typer.Option(help="fiscal, gestor, titular or operador")],
    operator: Annotated[Optional[str], typer.Option(help="the operator (agency_id) an operador acts for")] = None,
    registration: Annotated[Optional[str], typer.Option(help="matrícula (printed on the autos a fiscal lavra)")] = None,
    db: DbOption = None,
    audit_key: AuditKeyOption = None,
    anchors: AnchorsOption = None,
) -> None:
    """Create a user; the password is read from FISCALIZA_PASSWORD or asked for."""
    import getpass

    from dockets.service import ensure_operators
    from dockets.users import create_user
    from gtfs import load_feed

    sessions = open_writer(db, audit_key, anchors)
    password = current_settings().dockets.password or getpass.getpass("Senha: ")
    with sessions.begin() as session:
        if operator is not None:
            feed = load_feed(current_settings().static.inputs().feed)
            ensure_operators(session, {a.agency_id: a.name for a in feed.agencies.values()})
        user = create_user(session, username=username, full_name=name, role=role, password=password,
                           operator_id=operator, registration=registration)
    print(f"usuário {user.username} ({role}) criado")


@users_app.command("passwd")
def users_passwd(
    username: Annotated[str, typer.Option(help="login name")],
    db: DbOption = None,
    audit_key: AuditKeyOption = None,
    anchors: AnchorsOption = None,
) -> None:
    """Set a user's password (audited); it is read from FISCALIZA_PASSWORD or asked for."""
    import getpass

    from dockets.users import change_password

    sessions = open_writer(db, audit_key, anchors)
    password = current_settings().dockets.password or getpass.getpass("Nova senha: ")
    with sessions.begin() as session:
        user = change_password(session, username, password)
    print(f"senha do usuário {user.username} alterada")



def register(app: typer.Typer) -> None:
    # --without-span's three values are read from the words click leaves (`_spans_typed`)
    app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(verify)
    app.add_typer(audit_app, name="audit")
    app.add_typer(keys_app, name="keys")
    app.add_typer(dockets_app, name="dockets")
    app.add_typer(users_app, name="users")
