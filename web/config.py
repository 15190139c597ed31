"""The web app's configuration: everything `create_app` needs, nothing global."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from dockets.anchors import AnchorLog
from dockets.audit import AuditKey
from dockets.calendar import BusinessCalendar
from dockets.config import issuer_name, municipality_name
from dockets.service import utcnow
from dockets.signing import SigningKey
from gtfs import Feed
from kernel.policy import Policy
from ops.gtfs_rt import MAX_AGE_S as GTFS_RT_MAX_AGE_S
from rules.pack import Pack
from rules.packs import pack_of
from web.security import JPEG, PDF, PNG


@dataclass(frozen=True)
class WebConfig:
    sessions: sessionmaker[Session]
    calendar: BusinessCalendar
    policy: Policy  # the municipality's: its names, timezone and UFIR value
    max_upload_bytes: int = 10 * 1024 * 1024
    allowed_upload_types: frozenset[str] = frozenset({PDF, PNG, JPEG})
    session_hours: float = 8
    secure_cookies: bool = True
    fleet: Mapping[str, Any] = field(default_factory=dict)  # vehicle_id -> kernel.fleet.Vehicle
    clock: Callable[[], dt.datetime] = utcnow  # aware UTC "now": sessions and the default date of acts
    chart_cache_size: int = 64
    # Login throttling (web.throttle): after this many failed logins within the window, a
    # username (or a client address) is refused for the lockout without checking passwords.
    login_max_failures: int = 5
    login_max_failures_per_ip: int = 20
    login_window_minutes: float = 15
    login_lockout_minutes: float = 15
    # The reverse proxy (addresses or networks) whose X-Forwarded-For/-Proto name the client;
    # empty: the connection's own address, whatever a header says
    trusted_proxies: tuple[str, ...] = ()
    # The Órgão's key signs each PDF issued at lavratura; the audit keys (by key id, the
    # current one first) and the anchor log let the gestor verify the record.
    signer: SigningKey | None = None
    audit_keys: Mapping[str, AuditKey] = field(default_factory=dict)
    anchors: AnchorLog | None = None
    # the static GTFS feed: with it, the public GTFS-Realtime feed is served from the live tables
    feed: Feed | None = None
    # the oldest position the GTFS-Realtime feed publishes, in seconds: the Best Practices want
    # at most 90 s (ops.gtfs_rt.BEST_PRACTICE_MAX_AGE_S), which live vehicle-status allows
    gtfs_rt_max_age_s: float = GTFS_RT_MAX_AGE_S

    @property
    def issuer_name(self) -> str:
        return issuer_name(self.policy)

    @property
    def municipality(self) -> str:
        return municipality_name(self.policy)

    @property
    def timezone(self) -> str:
        return self.policy.policy.timezone

    @property
    def pack(self) -> Pack:
        """The municipality's law and its automatic rules, as the policy names them."""
        return pack_of(self.policy)

    @property
    def ufir_brl(self) -> float:  # for manual infractions
        return self.policy.policy.ufir_brl
