"""The docket store: operators, users, sessions, dockets with their evidence and PDF,
attachments, occurrences and the append-only audit log.

Revision ID: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "operators",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("username", sa.String(80), nullable=False, unique=True),
        sa.Column("full_name", sa.String(200), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("operator_id", sa.String(64), sa.ForeignKey("operators.id")),
        sa.Column("registration", sa.String(40)),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.CheckConstraint("role IN ('fiscal', 'gestor', 'operador')", name="ck_users_role"),
        sa.CheckConstraint("(role = 'operador') = (operator_id IS NOT NULL)", name="ck_users_operator"),
    )
    op.create_table(
        "web_sessions",
        sa.Column("token_sha256", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("expires_at", TZ, nullable=False),
    )
    op.create_table(
        "year_counters",
        sa.Column("year", sa.Integer, primary_key=True),
        sa.Column("last_number", sa.Integer, nullable=False),
    )
    op.create_table(
        "audit_log",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True),
        sa.Column("at", TZ, nullable=False),
        sa.Column("actor_id", sa.Integer, sa.ForeignKey("users.id")),
        sa.Column("actor_role", sa.String(16), nullable=False),
        sa.Column("entity", sa.String(16), nullable=False),
        sa.Column("entity_id", sa.String(64), nullable=False, index=True),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("prev_sha256", sa.String(64), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
    )
    op.create_table(
        "dockets",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("infraction_id", sa.String(64), nullable=False, unique=True),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("year", sa.Integer),
        sa.Column("number", sa.Integer),
        sa.Column("code", sa.String(8), nullable=False),
        sa.Column("group", sa.String(1), nullable=False),
        sa.Column("fine_ufir", sa.Integer, nullable=False),
        sa.Column("ufir_brl", sa.Numeric(12, 4), nullable=False),
        sa.Column("operator_id", sa.String(64), sa.ForeignKey("operators.id"), nullable=False, index=True),
        sa.Column("route_id", sa.String(64)),
        sa.Column("direction_id", sa.Integer),
        sa.Column("trip_id", sa.String(128)),
        sa.Column("vehicle_id", sa.String(64)),
        sa.Column("plate", sa.String(16)),
        sa.Column("service_date", sa.Date, nullable=False),
        sa.Column("occurred_at", TZ, nullable=False),
        sa.Column("lat", sa.Float),
        sa.Column("lon", sa.Float),
        sa.Column("place", sa.Text),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("legal_basis", sa.Text, nullable=False),
        sa.Column("infraction", sa.JSON, nullable=False),
        sa.Column("stage", sa.String(32), nullable=False, index=True),
        sa.Column("status", sa.JSON, nullable=False),
        sa.Column("next_deadline", sa.Date, index=True),
        sa.Column("next_deadline_label", sa.String(40)),
        sa.Column("lavrado_por", sa.Integer, sa.ForeignKey("users.id")),
        sa.Column("bundle_sha256", sa.String(64)),
        sa.Column("created_at", TZ, nullable=False),
        sa.UniqueConstraint("year", "number", name="uq_dockets_year_number"),
    )
    op.create_table(
        "evidence_bundles",
        sa.Column("docket_id", sa.Integer, sa.ForeignKey("dockets.id"), primary_key=True),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "docket_pdfs",
        sa.Column("docket_id", sa.Integer, sa.ForeignKey("dockets.id"), primary_key=True),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("rendered_at", TZ, nullable=False),
    )
    op.create_table(
        "attachments",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("docket_id", sa.Integer, sa.ForeignKey("dockets.id"), nullable=False, index=True),
        sa.Column("audit_id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), sa.ForeignKey("audit_log.id")),
        sa.Column("filename", sa.String(255), nullable=False),
        sa.Column("content_type", sa.String(100), nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("uploaded_by", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("uploaded_at", TZ, nullable=False),
    )
    op.create_table(
        "occurrences",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("start", TZ, nullable=False),
        sa.Column("end", TZ, nullable=False),
        sa.Column("route_id", sa.String(64)),
        sa.Column("vehicle_id", sa.String(64)),
        sa.Column("geometry", sa.JSON),
        sa.Column("note", sa.Text),
        sa.Column("created_by", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("published_at", TZ),
    )
    _append_only_audit_log()
    _postgis_location()


def _append_only_audit_log() -> None:
    """The audit log refuses UPDATE, DELETE and TRUNCATE, whoever connects (short of DDL)."""
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for verb in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER audit_log_no_{verb.lower()} BEFORE {verb} ON audit_log "
                "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END"
            )
    elif dialect == "postgresql":
        op.execute(
            "CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$"
        )
        op.execute(
            "CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log "
            "FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()"
        )
        # Row triggers do not fire on TRUNCATE: refuse it per statement.
        op.execute(
            "CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log "
            "FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()"
        )


def _postgis_location() -> None:
    """On PostgreSQL, a PostGIS point per docket (for Grafana's map and spatial queries)."""
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("CREATE EXTENSION IF NOT EXISTS postgis")
    op.execute(
        "ALTER TABLE dockets ADD COLUMN location geometry(Point, 4326) "
        "GENERATED ALWAYS AS (CASE WHEN lon IS NULL OR lat IS NULL THEN NULL "
        "ELSE ST_SetSRID(ST_MakePoint(lon, lat), 4326) END) STORED"
    )
    op.execute("CREATE INDEX ix_dockets_location ON dockets USING gist (location)")


def downgrade() -> None:
    for table in ("occurrences", "attachments", "docket_pdfs", "evidence_bundles", "dockets",
                  "audit_log", "year_counters", "web_sessions", "users", "operators"):
        op.drop_table(table)
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS audit_log_append_only()")
