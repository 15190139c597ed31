"""What every command shares: the one-line failure, the settings, the static inputs, the
docket store and its keys, and the option types more than one command takes."""

from __future__ import annotations

import datetime as dt
import functools
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

EXIT_BAD_INPUT = 2


def fail(message: str) -> None:
    """A bad argument or input: one line on stderr, exit code 2, no traceback."""
    print(f"fiscaliza: error: {message}", file=sys.stderr)
    raise typer.Exit(EXIT_BAD_INPUT)


DB_HELP = "docket store URL (env FISCALIZA_DB; default: sqlite:///fiscaliza-dockets.sqlite3)"
KEY_HELP = "the Órgão's Ed25519 signing key (env FISCALIZA_SIGNING_KEY; create it with fiscaliza keys init)"
AUDIT_KEY_HELP = "the audit log's HMAC key (env FISCALIZA_AUDIT_KEY; create it with fiscaliza keys audit-init)"
ANCHORS_HELP = ("where the audit chain's heads are anchored: kafka://HOST:PORT or a file (env FISCALIZA_AUDIT_ANCHORS; "
                "default: Kafka's audit-anchors if FISCALIZA_KAFKA_BOOTSTRAP is set, else a file beside a SQLite store)")


# Options more than one command takes (typer reads the parameter's name for the flag).
DbOption = Annotated[Optional[str], typer.Option(help=DB_HELP)]
AnchorsOption = Annotated[Optional[str], typer.Option(help=ANCHORS_HELP)]
AuditKeyOption = Annotated[Optional[Path], typer.Option(help=AUDIT_KEY_HELP)]
SigningKeyOption = Annotated[Optional[Path], typer.Option(help=KEY_HELP)]
IdleExitOption = Annotated[Optional[float], typer.Option(help="stop after this many seconds without records")]
FeedOption = Annotated[Optional[Path], typer.Option(help="GTFS feed (env FISCALIZA_FEED; default: the sample)")]
FleetOption = Annotated[Optional[Path], typer.Option(help="fleet.csv (env FISCALIZA_FLEET; default: the sample's)")]
PolicyOption = Annotated[Optional[Path], typer.Option(help="policy TOML (env FISCALIZA_POLICY; default: João Neiva)")]
GeofencesOption = Annotated[Optional[Path], typer.Option(help="GeoJSON geofence overrides (env FISCALIZA_GEOFENCES)")]
BootstrapOption = Annotated[Optional[str], typer.Option(help="Kafka bootstrap servers (env FISCALIZA_KAFKA_BOOTSTRAP)")]



@functools.cache
def current_settings():
    """Every FISCALIZA_* variable, read once (an unusable one: one line, exit 2, in main)."""
    from kernel.settings import Settings

    return Settings.from_env()


def engine_inputs(feed, fleet, policy, geofences):
    """The engine's static inputs from options, else the environment, else the sample."""
    return current_settings().static.inputs(feed, fleet, policy, geofences)


def stream_settings():
    return current_settings().stream


def required_key(path: Path | None, field: str, what: str, option: str, create: str, load):
    """A key every writer needs, never stored in the database: the option, else the
    environment variable of the settings' `field`; missing or unreadable, one line and
    exit 2."""
    from kernel.settings import variable_of

    path = path or current_settings().value(field)
    variable = variable_of(field)
    if path is None:
        fail(f"no {what}: pass {option} or set {variable} (create one with fiscaliza {create})")
    return load(path)


def signing_key_from(path: Path | None):
    """The key that signs every bundle and issued PDF."""
    from dockets.signing import load_key

    return required_key(path, "dockets.signing_key", "signing key", "--signing-key", "keys init", load_key)


def db_url(db: str | None) -> str:
    return db or current_settings().dockets.db


def shown_url(db: str | None) -> str:
    """The store's URL as messages show it: its password masked (messages end up in logs)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(db_url(db)).render_as_string(hide_password=True)
    except ArgumentError:
        return db_url(db)


def audit_key_from(path: Path | None):
    """The key that chains the audit log."""
    from dockets.audit import load_audit_key

    return required_key(path, "dockets.audit_key", "audit key", "--audit-key", "keys audit-init", load_audit_key)


def anchors_for(db: str | None, anchors: str | None, *, long_running: bool = False):
    """The store's anchor log; a long-running writer (serve, the sink) warns on stderr when
    a server store is anchored in a file, which rolls back with it."""
    from dockets.anchors import default_destination, open_anchor_log, rollback_warning

    settings = current_settings()
    anchor_log = open_anchor_log(default_destination(
        db_url(db), anchors=anchors or settings.dockets.audit_anchors,
        kafka_bootstrap=settings.stream.bootstrap if settings.kafka_given else None))
    warning = rollback_warning(db_url(db), anchor_log) if long_running else None
    if warning:
        print(f"fiscaliza: {warning}", file=sys.stderr)
    return anchor_log


def open_store(db: str | None, *, key=None, anchor_log=None):
    from sqlalchemy.exc import SQLAlchemyError

    from dockets.db import open_store

    try:
        return open_store(db_url(db), audit_key=key, anchors=anchor_log)
    except (SQLAlchemyError, OSError) as exc:
        fail(f"cannot open the docket store {shown_url(db)}: {str(exc).splitlines()[0]}")


def open_writer(db: str | None, audit_key: Path | None, anchors: str | None, *, verify_first: str | None = None):
    """Sessions that may change the store: they chain the audit log with its key and
    anchor each commit. With `verify_first` (a long-running writer's name), the record is
    verified first, and a broken one is reported (exit 1), never extended."""
    from dockets.audit import AuditError, verify_record

    key = audit_key_from(audit_key)
    anchor_log = anchors_for(db, anchors, long_running=verify_first is not None)
    sessions = open_store(db, key=key, anchor_log=anchor_log)
    if verify_first:
        try:
            with sessions() as session:
                verify_record(session, {key.key_id: key}, anchor_log.read())
        except AuditError as exc:
            print(f"fiscaliza: REGISTRO DE AUDITORIA ROMPIDO: {exc}; {verify_first} não começa", file=sys.stderr)
            raise typer.Exit(1)
    return sessions


def parse_date(text: str, option: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        fail(f"{option} must be a date as YYYY-MM-DD, got {text!r}")
        raise  # unreachable: fail exits
