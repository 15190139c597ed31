"""Running the web app (`fiscaliza serve`)."""

from __future__ import annotations

from dockets.anchors import AnchorLog
from dockets.audit import AuditKey
from dockets.config import calendar_for
from dockets.db import open_store
from dockets.signing import SigningKey
from gtfs import load_feed
from gtfs.check import require_valid
from kernel.fleet import load_fleet
from kernel.inputs import StaticInputs
from kernel.policy import load_policy
from ops.db import migrate as migrate_live_tables
from ops.gtfs_rt import MAX_AGE_S as GTFS_RT_MAX_AGE_S
from web.app import WebConfig, create_app


def build_config(db_url: str, static: StaticInputs, *, secure_cookies: bool = True, audit_key: AuditKey,
                 anchors: AnchorLog, signer: SigningKey | None, gtfs_rt_max_age_s: float = GTFS_RT_MAX_AGE_S,
                 trusted_proxies: tuple[str, ...] = ()) -> WebConfig:
    """The configuration from the store's URL and the static inputs. The policy's
    municipal and state holidays make the business-day calendar, its names head the pages and the autos, its UFIR value prices
    manual infractions; the fleet names each vehicle's operator, so a manual infraction is
    checked against it; the feed is what the public GTFS-Realtime feed is consistent
    with. Every act is chained with `audit_key` and anchored in `anchors`; PDFs are
    signed by `signer`. The GTFS-Realtime feed publishes positions at most
    `gtfs_rt_max_age_s` old. Only `trusted_proxies` may name the client in X-Forwarded-For."""
    loaded = load_policy(static.policy)
    fleet = load_fleet(static.fleet)
    require_valid(static.feed)
    feed = load_feed(static.feed)
    sessions = open_store(db_url, audit_key=audit_key, anchors=anchors)
    migrate_live_tables(sessions.kw["bind"])  # at head already in production (dockets migrate): a check
    return WebConfig(sessions=sessions, calendar=calendar_for(loaded), policy=loaded, secure_cookies=secure_cookies,
                     fleet=fleet, signer=signer, audit_keys={audit_key.key_id: audit_key}, anchors=anchors, feed=feed,
                     gtfs_rt_max_age_s=gtfs_rt_max_age_s, trusted_proxies=trusted_proxies)


def serve(db_url: str, host: str, port: int, static: StaticInputs, *, secure_cookies: bool = True,
          audit_key: AuditKey, anchors: AnchorLog, signer: SigningKey | None,
          gtfs_rt_max_age_s: float = GTFS_RT_MAX_AGE_S, trusted_proxies: tuple[str, ...] = ()) -> None:
    """Serve the app with uvicorn. Behind a TLS-terminating proxy keep `secure_cookies`;
    turn it off only for plain-HTTP local use (the browser would drop the cookies)."""
    import uvicorn

    app = create_app(build_config(db_url, static, secure_cookies=secure_cookies, audit_key=audit_key, anchors=anchors,
                                  signer=signer, gtfs_rt_max_age_s=gtfs_rt_max_age_s, trusted_proxies=trusted_proxies))
    uvicorn.Server(uvicorn_config(app, host, port)).run()


def uvicorn_config(app, host: str, port: int):
    """How uvicorn serves the app. The app reads forwarded headers itself, from its trusted
    proxies only: uvicorn's own would believe any sent from 127.0.0.1 (its default
    FORWARDED_ALLOW_IPS)."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, proxy_headers=False, server_header=False, log_level="info")
