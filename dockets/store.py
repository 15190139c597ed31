"""The docket store's tables (SQLAlchemy 2). The schema itself is made by the alembic
migrations in `dockets/migrations`; these classes must match them (a test checks).

SQLite is the embedded default; PostgreSQL + PostGIS in production, where the migration
also adds a PostGIS point per docket for the Grafana map.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    Numeric,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

ROLES = ("fiscal", "gestor", "titular", "operador")


class UtcDateTime(TypeDecorator):
    """An instant, stored in UTC and read back aware. SQLite keeps no offset: without this,
    a 13:25-03:00 infraction would be read back as a naive 13:25 and shown 3 h off."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"a naive datetime cannot be stored as an instant: {value!r}")
        return value.astimezone(dt.timezone.utc)

    def process_result_value(self, value: dt.datetime | None, dialect) -> dt.datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value.astimezone(dt.timezone.utc)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, dt.datetime: UtcDateTime()}


class Operator(Base):
    """An empresa operadora (GTFS agency)."""

    __tablename__ = "operators"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(80), unique=True)
    full_name: Mapped[str] = mapped_column(String(200))
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16))  # one of ROLES
    # The operator an `operador` user acts for; None for the Órgão Gerencial's staff.
    operator_id: Mapped[str | None] = mapped_column(ForeignKey("operators.id"))
    registration: Mapped[str | None] = mapped_column(String(40))  # matrícula, printed on the auto (art. 5 VIII)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime]


class WebSession(Base):
    """A logged-in browser: only the token's hash is stored."""

    __tablename__ = "web_sessions"
    token_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[dt.datetime]
    expires_at: Mapped[dt.datetime]


class YearCounter(Base):
    """The last auto de infração number issued in a year (numbers restart each year)."""

    __tablename__ = "year_counters"
    year: Mapped[int] = mapped_column(Integer, primary_key=True)
    last_number: Mapped[int] = mapped_column(Integer)


class Docket(Base):
    """An auto de infração: one infraction (art. 10: each carries its own fine)."""

    __tablename__ = "dockets"
    __table_args__ = (UniqueConstraint("year", "number", name="uq_dockets_year_number"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Idempotency: the same infraction never makes two dockets.
    infraction_id: Mapped[str] = mapped_column(String(64), unique=True)
    source: Mapped[str] = mapped_column(String(16))  # "automatico" | "manual"
    year: Mapped[int | None] = mapped_column(Integer)
    number: Mapped[int | None] = mapped_column(Integer)
    code: Mapped[str] = mapped_column(String(32))  # as the law writes it: "D-11", "art. 19 § único"
    group: Mapped[str] = mapped_column(String(16))  # the law's class: "D", "multa"
    fine_ufir: Mapped[int] = mapped_column(Integer)
    ufir_brl: Mapped[float] = mapped_column(Numeric(12, 4))
    operator_id: Mapped[str] = mapped_column(ForeignKey("operators.id"), index=True)
    route_id: Mapped[str | None] = mapped_column(String(64))
    direction_id: Mapped[int | None] = mapped_column(Integer)
    trip_id: Mapped[str | None] = mapped_column(String(128))
    vehicle_id: Mapped[str | None] = mapped_column(String(64))
    plate: Mapped[str | None] = mapped_column(String(16))
    service_date: Mapped[dt.date] = mapped_column(Date)
    occurred_at: Mapped[dt.datetime]
    lat: Mapped[float | None] = mapped_column(Float)
    lon: Mapped[float | None] = mapped_column(Float)
    place: Mapped[str | None] = mapped_column(Text)  # local da infração (art. 5 III), pt-BR
    description: Mapped[str] = mapped_column(Text)
    # The record's legal_basis in its two halves (rules.model.split_legal_basis): the
    # dispositivo, and the law's text it quotes (None: it quotes none).
    legal_basis: Mapped[str] = mapped_column(Text)
    legal_text: Mapped[str | None] = mapped_column(Text)
    infraction: Mapped[dict[str, Any]]  # the full infraction record as received
    stage: Mapped[str] = mapped_column(String(32), index=True)
    status: Mapped[dict[str, Any]]  # dockets.workflow.DocketStatus, cached from the audit log
    # The earliest deadline running (cached for the operations room's queries and Grafana).
    next_deadline: Mapped[dt.date | None] = mapped_column(Date, index=True)
    next_deadline_label: Mapped[str | None] = mapped_column(String(40))
    lavrado_por: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    bundle_sha256: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[dt.datetime]

    bundle: Mapped[EvidenceBundle | None] = relationship(lazy="raise", uselist=False)
    pdf: Mapped[DocketPdf | None] = relationship(lazy="raise", uselist=False)
    judgment_pdf: Mapped[JudgmentPdf | None] = relationship(lazy="raise", uselist=False)
    appeal_pdf: Mapped[AppealPdf | None] = relationship(lazy="raise", uselist=False)

    @property
    def label(self) -> str:
        """The auto's number as printed: 0007/2026, or the draft's id."""
        return f"{self.number:04d}/{self.year}" if self.number else f"rascunho {self.id}"

    @property
    def file_stem(self) -> str:
        """The name its files share wherever they are written or downloaded (export, web):
        auto-2026-0007-D-11 (.pdf, -evidencias.zip), or the draft's. A code as another law
        writes it ("art. 42 A") is written with hyphens: auto-2026-0001-art-42-A."""
        code = re.sub(r"[^0-9A-Za-z]+", "-", unicodedata.normalize("NFKD", self.code).encode("ascii", "ignore")
                      .decode()).strip("-")
        return f"auto-{self.year}-{self.number:04d}-{code}" if self.number else f"rascunho-{self.id}-{code}"


class EvidenceBundle(Base):
    __tablename__ = "evidence_bundles"
    docket_id: Mapped[int] = mapped_column(ForeignKey("dockets.id"), primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64))
    data: Mapped[bytes] = mapped_column(LargeBinary)


class _StoredPdf:
    """A PDF kept at its act, one per docket: its bytes, their digest and the Órgão's
    Ed25519 signature of them (dockets.signing)."""

    docket_id: Mapped[int] = mapped_column(ForeignKey("dockets.id"), primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64))
    data: Mapped[bytes] = mapped_column(LargeBinary)
    rendered_at: Mapped[dt.datetime]
    signature: Mapped[dict[str, Any] | None]


class DocketPdf(_StoredPdf, Base):
    """The auto as issued at lavratura: kept, never re-rendered."""

    __tablename__ = "docket_pdfs"


class JudgmentPdf(_StoredPdf, Base):
    """The judgment of the defence as the gestor recorded it (issue 30): rendered once, in
    the act that records the judgment, signed like the auto, certified by that act's audit
    entry, and served from here ever after, never re-rendered: what is downloaded later is
    what was decided, whatever the templates or the re-judgment's wording became."""

    __tablename__ = "judgment_pdfs"


class AppealPdf(_StoredPdf, Base):
    """The judgment of the recurso as the titular recorded it: kept as the judgment of the
    defence is (rendered once in its act, signed, certified by that act's audit entry)."""

    __tablename__ = "appeal_pdfs"


class Attachment(Base):
    """A file filed with a defence or appeal (e.g. the operator's own tachograph discs)."""

    __tablename__ = "attachments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    docket_id: Mapped[int] = mapped_column(ForeignKey("dockets.id"), index=True)
    audit_id: Mapped[int | None] = mapped_column(ForeignKey("audit_log.id"))
    filename: Mapped[str] = mapped_column(String(255))
    content_type: Mapped[str] = mapped_column(String(100))
    size: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    data: Mapped[bytes] = mapped_column(LargeBinary)
    uploaded_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    uploaded_at: Mapped[dt.datetime]


class DisputedReading(Base):
    """A reading of its own evidence the operator disputes in its defence (issue 30): one
    line of the bundle's tachograph or catraca (`line`), or a time span of one vehicle's
    (`vehicle_id`, `span_start`, `span_end`), with the reason. Kept: the bundle is never
    changed, the auto is re-judged without them (`Rejudgment`)."""

    __tablename__ = "disputed_readings"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    docket_id: Mapped[int] = mapped_column(ForeignKey("dockets.id"), index=True)
    audit_id: Mapped[int | None] = mapped_column(ForeignKey("audit_log.id"))  # the act that marked it
    source: Mapped[str] = mapped_column(String(16))  # "tachograph" | "catraca"
    line: Mapped[int | None] = mapped_column(Integer)  # the bundle's line number (from 1), or a span:
    vehicle_id: Mapped[str | None] = mapped_column(String(64))
    span_start: Mapped[dt.datetime | None]
    span_end: Mapped[dt.datetime | None]
    reason: Mapped[str] = mapped_column(Text)
    created_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[dt.datetime]


class Rejudgment(Base):
    """The auto re-judged on its bundle without every reading its defence disputes
    (`dockets.rejudgment.Rejudgment` as JSON), computed when the marks are saved: seconds
    of CPU, never per page view. Its inputs are named by digest."""

    __tablename__ = "rejudgments"
    docket_id: Mapped[int] = mapped_column(ForeignKey("dockets.id"), primary_key=True)
    bundle_sha256: Mapped[str] = mapped_column(String(64))
    disputed_sha256: Mapped[str] = mapped_column(String(64))
    result: Mapped[dict[str, Any]]
    computed_at: Mapped[dt.datetime]


class Occurrence(Base):
    """An occurrence registered by a fiscal (the `occurrences` contract of DESIGN.md)."""

    __tablename__ = "occurrences"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    start: Mapped[dt.datetime]
    end: Mapped[dt.datetime]
    route_id: Mapped[str | None] = mapped_column(String(64))
    vehicle_id: Mapped[str | None] = mapped_column(String(64))
    geometry: Mapped[dict[str, Any] | None]
    note: Mapped[str | None] = mapped_column(Text)
    created_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[dt.datetime]
    # the outbox: when the docket sink put it on the `occurrences` topic (None: not yet)
    published_at: Mapped[dt.datetime | None]


def occurrence_record(occurrence: Occurrence, tz: dt.tzinfo) -> dict:
    """The occurrence as the contract's JSON object (times ISO-8601 with offset)."""
    record = {"id": occurrence.id, "kind": occurrence.kind,
              "start": occurrence.start.astimezone(tz).isoformat(),
              "end": occurrence.end.astimezone(tz).isoformat()}
    for name in ("route_id", "vehicle_id", "geometry", "note"):
        value = getattr(occurrence, name)
        if value is not None:
            record[name] = value
    return record


class AuditEntry(Base):
    """Append-only: every state change, chained by HMAC (dockets.audit). The migrations
    install triggers that refuse UPDATE, DELETE and REPLACE on this table."""

    __tablename__ = "audit_log"
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    at: Mapped[dt.datetime]
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    actor_role: Mapped[str] = mapped_column(String(16))  # or "sistema"
    entity: Mapped[str] = mapped_column(String(16))  # "docket" | "occurrence" | "user"
    entity_id: Mapped[str] = mapped_column(String(64), index=True)
    action: Mapped[str] = mapped_column(String(40))
    payload: Mapped[dict[str, Any]]
    prev_mac: Mapped[str] = mapped_column(String(64))
    mac: Mapped[str] = mapped_column(String(64))  # HMAC-SHA256 with the audit key named by key_id
    key_id: Mapped[str] = mapped_column(String(16))
