"""Running the web app (`fiscaliza serve`)."""

from __future__ import annotations

from pathlib import Path

from dockets.anchors import AnchorLog
from dockets.audit import AuditKey
from dockets.config import calendar_for, issuer_name
from dockets.db import open_store
from dockets.signing import SigningKey
from fiscaliza.policy import load_policy
from gtfs import load_feed
from ops.db import migrate as migrate_live_tables
from web.app import WebConfig, create_app


def build_config(db_url: str, policy_path: Path | None = None, *, fleet_path: Path | None = None,
                 feed_path: Path | None = None, secure_cookies: bool = True, audit_key: AuditKey,
                 anchors: AnchorLog, signer: SigningKey | None) -> WebConfig:
    """The configuration from the store's URL and the policy: its municipal holidays make
    the business-day calendar (state ES), its UFIR value prices manual infractions. Every
    act is chained with `audit_key` and anchored in `anchors`; PDFs are signed by `signer`."""
    loaded = load_policy(policy_path)
    policy = loaded.policy
    from fiscaliza.fleet import load_fleet
    from fiscaliza.samples import joao_neiva

    # the fleet names each vehicle's operator: a manual infraction is checked against it
    # (without it, any company's vehicle was accepted); the sample's by default, as --help says
    fleet = load_fleet(fleet_path if fleet_path is not None else joao_neiva()[1])
    # the static feed the public GTFS-Realtime feed is consistent with
    feed = load_feed(feed_path if feed_path is not None else joao_neiva()[0])
    sessions = open_store(db_url, audit_key=audit_key, anchors=anchors)
    migrate_live_tables(sessions.kw["bind"])  # at head already in production (dockets migrate): a check
    return WebConfig(sessions=sessions, calendar=calendar_for(loaded),
                     issuer_name=issuer_name(loaded), secure_cookies=secure_cookies, timezone=policy.timezone,
                     ufir_brl=policy.ufir_brl, fleet=fleet, signer=signer, audit_keys={audit_key.key_id: audit_key},
                     anchors=anchors, feed=feed)


def serve(db_url: str, host: str, port: int, policy_path: Path | None = None, *, fleet_path: Path | None = None,
          feed_path: Path | None = None, secure_cookies: bool = True, audit_key: AuditKey, anchors: AnchorLog,
          signer: SigningKey | None) -> None:
    """Serve the app with uvicorn. Behind a TLS-terminating proxy keep `secure_cookies`;
    turn it off only for plain-HTTP local use (the browser would drop the cookies)."""
    import uvicorn

    app = create_app(build_config(db_url, policy_path, fleet_path=fleet_path, feed_path=feed_path,
                                  secure_cookies=secure_cookies, audit_key=audit_key, anchors=anchors, signer=signer))
    uvicorn.run(app, host=host, port=port, proxy_headers=True, server_header=False, log_level="info")
