"""The live tables: each vehicle's latest status, realized trips, infraction records.

On PostgreSQL each vehicle status and infraction gets a PostGIS point (Grafana's maps),
the web app and sinks' role writes them and Grafana's reads them (roles: see the docket
store's migration 0004).

Revision ID: ops0001
"""

import sqlalchemy as sa
from alembic import op

revision = "ops0001"
down_revision = None
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)
APP, READER = "fiscaliza_app", "fiscaliza_reader"
TABLES = ("live_vehicle_status", "live_trips", "live_infractions")


def upgrade() -> None:
    op.create_table(
        "live_vehicle_status",
        sa.Column("vehicle_id", sa.String(64), primary_key=True),
        sa.Column("operator_id", sa.String(64), nullable=False, index=True),
        sa.Column("ts", TZ, nullable=False),
        sa.Column("lat", sa.Float, nullable=False),
        sa.Column("lon", sa.Float, nullable=False),
        sa.Column("speed_kmh", sa.Float, nullable=False),
        sa.Column("in_service", sa.Boolean, nullable=False),
        sa.Column("route_id", sa.String(64)),
        sa.Column("direction_id", sa.Integer),
        sa.Column("trip_id", sa.String(128)),
        sa.Column("progress", sa.Float),
        sa.Column("departed_at", TZ),
        sa.Column("schedule_deviation_s", sa.Float),
        sa.Column("headway_s", sa.Float),
        sa.Column("scheduled_headway_s", sa.Integer),
        sa.Column("vehicle_ahead", sa.String(64)),
        sa.Column("off_route_m", sa.Float),
        sa.Column("off_route_since", TZ),
        sa.Column("catraca_silent_since", TZ),
    )
    op.create_table(
        "live_trips",
        sa.Column("vehicle_id", sa.String(64), primary_key=True),
        sa.Column("departed_at", TZ, primary_key=True),
        sa.Column("operator_id", sa.String(64), nullable=False, index=True),
        sa.Column("route_id", sa.String(64), nullable=False),
        sa.Column("direction_id", sa.Integer, nullable=False),
        sa.Column("trip_id", sa.String(128)),
        sa.Column("service_date", sa.Date, nullable=False, index=True),
        sa.Column("arrived_at", TZ, nullable=False),
        sa.Column("departure_deviation_s", sa.Float),
        sa.Column("coverage", sa.Float, nullable=False),
    )
    op.create_table(
        "live_infractions",
        sa.Column("infraction_id", sa.String(64), primary_key=True),
        sa.Column("code", sa.String(8), nullable=False, index=True),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("operator_id", sa.String(64), nullable=False, index=True),
        sa.Column("route_id", sa.String(64)),
        sa.Column("vehicle_id", sa.String(64)),
        sa.Column("service_date", sa.Date, nullable=False, index=True),
        sa.Column("occurred_at", TZ, nullable=False),
        sa.Column("detected_at", TZ),
        sa.Column("fine_ufir", sa.Integer, nullable=False),
        sa.Column("lat", sa.Float),
        sa.Column("lon", sa.Float),
        sa.Column("record", sa.JSON, nullable=False),
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("CREATE EXTENSION IF NOT EXISTS postgis")
    for table in ("live_vehicle_status", "live_infractions"):
        op.execute(f"ALTER TABLE {table} ADD COLUMN location geometry(Point, 4326) GENERATED ALWAYS AS "
                   "(CASE WHEN lon IS NULL OR lat IS NULL THEN NULL "
                   "ELSE ST_SetSRID(ST_MakePoint(lon, lat), 4326) END) STORED")
    bind = op.get_bind()
    for role, privileges in ((APP, "SELECT, INSERT, UPDATE"), (READER, "SELECT")):
        if bind.exec_driver_sql("SELECT 1 FROM pg_roles WHERE rolname = %(r)s", {"r": role}).scalar():
            op.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
            for table in TABLES:
                op.execute(f"GRANT {privileges} ON {table} TO {role}")
            if role == APP:
                op.execute(f"GRANT SELECT ON ops_alembic_version TO {role}")


def downgrade() -> None:
    for table in reversed(TABLES):
        op.drop_table(table)
