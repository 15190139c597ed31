"""Least privilege on PostgreSQL: what the application's roles may do, and the views
Grafana reads.

Three roles, created by the deployment (deploy/postgres/roles.sh), never by the
application: the owner, who runs the migrations and alone may change the schema or the
triggers; `fiscaliza_app` (the web app and the docket sink), who may read and write the
docket tables but only insert into the audit log; and `fiscaliza_reader` (Grafana), who
may only read the `dashboard_*` views, which leave out accounts, sessions, files and the
audit log. The grants are made to the roles that exist when this runs; a migration that
adds a table must grant on it too (tests/dockets/test_roles.py checks every table).

Revision ID: 0004
"""

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

APP, READER = "fiscaliza_app", "fiscaliza_reader"

# table -> the privileges of the app role (column lists where an update is that narrow)
APP_GRANTS = {
    "alembic_version": "SELECT",  # the app checks the schema is at head on start
    "operators": "SELECT, INSERT",
    "users": "SELECT, INSERT, UPDATE",
    "web_sessions": "SELECT, INSERT, UPDATE, DELETE",
    "year_counters": "SELECT, INSERT, UPDATE",
    "dockets": "SELECT, INSERT, UPDATE",
    "evidence_bundles": "SELECT, INSERT, DELETE",  # a draft's bundle is replaced by a newer record's
    "docket_pdfs": "SELECT, INSERT",
    "attachments": "SELECT, INSERT, UPDATE (audit_id)",
    "occurrences": "SELECT, INSERT, UPDATE (published_at)",
    "audit_log": "SELECT, INSERT",
}

DASHBOARD_DOCKETS = """
CREATE VIEW dashboard_dockets AS
SELECT d.id, d.year, d.number, d.code, d."group", d.fine_ufir, d.ufir_brl, d.operator_id, o.name AS operator_name,
       d.route_id, d.direction_id, d.vehicle_id, d.service_date, d.occurred_at, d.lat, d.lon, d.location, d.place,
       d.stage, d.next_deadline, d.next_deadline_label
FROM dockets d JOIN operators o ON o.id = d.operator_id
"""


def _role_exists(name: str) -> bool:
    return bool(op.get_bind().exec_driver_sql("SELECT 1 FROM pg_roles WHERE rolname = %(name)s",
                                              {"name": name}).scalar())


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(DASHBOARD_DOCKETS)
    op.execute("REVOKE ALL ON SCHEMA public FROM PUBLIC")
    if _role_exists(APP):
        op.execute(f"GRANT USAGE ON SCHEMA public TO {APP}")
        for table, privileges in APP_GRANTS.items():
            op.execute(f"GRANT {privileges} ON {table} TO {APP}")
        op.execute(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {APP}")
    if _role_exists(READER):
        op.execute(f"GRANT USAGE ON SCHEMA public TO {READER}")
        op.execute(f"GRANT SELECT ON dashboard_dockets TO {READER}")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for role in (APP, READER):
        if _role_exists(role):
            op.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}")
            op.execute(f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {role}")
            op.execute(f"REVOKE USAGE ON SCHEMA public FROM {role}")
    op.execute("DROP VIEW dashboard_dockets")
