"""`serve`: the web app of the autos de infração."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from fiscaliza.commands.common import (
    KEY_HELP,
    AnchorsOption,
    AuditKeyOption,
    DbOption,
    FleetOption,
    anchors_for,
    audit_key_from,
    current_settings,
    db_url,
    engine_inputs,
    fail,
    shown_url,
    signing_key_from,
)


def serve(
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port")] = 8000,
    policy: Annotated[Optional[Path], typer.Option(help="policy TOML: calendar, municipality (env FISCALIZA_POLICY)")] = None,
    fleet: FleetOption = None,
    feed: Annotated[Optional[Path], typer.Option(help="GTFS feed of the public GTFS-Realtime feed "
                                                      "(env FISCALIZA_FEED; default: the sample)")] = None,
    db: DbOption = None,
    secure_cookies: Annotated[bool, typer.Option(
        help="mark cookies Secure (HTTPS only): keep on behind the city's TLS proxy; "
             "--no-secure-cookies only for plain-HTTP local use")] = True,
    signing_key: Annotated[Optional[Path], typer.Option(help=KEY_HELP + "; signs the PDFs issued")] = None,
    audit_key: AuditKeyOption = None,
    anchors: AnchorsOption = None,
    gtfs_rt_max_age: Annotated[float, typer.Option(
        min=1, help="seconds: the oldest bus position the public GTFS-Realtime feed publishes (the "
                    "operations room's 'not reporting'; GTFS-Realtime Best Practices: at most 90 once "
                    "the workers emit vehicle-status live)")] = 600.0,
    trusted_proxy: Annotated[Optional[list[str]], typer.Option(
        help="the reverse proxy's address or network, whose X-Forwarded-For names the client; repeat for "
             "several (env FISCALIZA_TRUSTED_PROXY, comma-separated; none: no forwarded header is believed)")] = None,
) -> None:
    """Run the web app of the autos de infração (Órgão Gerencial and operators)."""
    from sqlalchemy.exc import SQLAlchemyError

    from kernel.settings import parse_addresses
    from web.server import serve as run_server

    try:
        proxies = parse_addresses(",".join(trusted_proxy)) if trusted_proxy else \
            current_settings().dockets.trusted_proxies
    except ValueError as exc:
        fail(f"--trusted-proxy {exc}")
    try:
        run_server(db_url(db), host, port, engine_inputs(feed, fleet, policy, None), secure_cookies=secure_cookies,
                   audit_key=audit_key_from(audit_key), anchors=anchors_for(db, anchors, long_running=True), signer=signing_key_from(signing_key),
                   gtfs_rt_max_age_s=gtfs_rt_max_age, trusted_proxies=proxies)
    except (SQLAlchemyError, OSError) as exc:
        fail(f"cannot open the docket store {shown_url(db)}: {str(exc).splitlines()[0]}")



def register(app: typer.Typer) -> None:
    app.command()(serve)
