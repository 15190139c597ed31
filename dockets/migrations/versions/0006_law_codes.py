"""Codes and groups as any municipality's law writes them (#18): `code` up to 32
characters ("art. 19 § único", "art. 10 § 5º"; was 8, enough for João Neiva's "D-11")
and `group` up to 16 ("A"–"F" of Lafaiete's art. 42, Canarana's "multa"; was 1).

PostgreSQL will not change the type of a column a view reads, so the Grafana view of
0004 is dropped and created again around the change, with its grant. SQLite changes a
column by copying the table (alembic's batch mode); it has no such view.

Revision ID: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

READER = "fiscaliza_reader"
# the view as 0004 created it (a migration's SQL is frozen with it, never imported from a later one)
DASHBOARD_DOCKETS = """
CREATE VIEW dashboard_dockets AS
SELECT d.id, d.year, d.number, d.code, d."group", d.fine_ufir, d.ufir_brl, d.operator_id, o.name AS operator_name,
       d.route_id, d.direction_id, d.vehicle_id, d.service_date, d.occurred_at, d.lat, d.lon, d.location, d.place,
       d.stage, d.next_deadline, d.next_deadline_label
FROM dockets d JOIN operators o ON o.id = d.operator_id
"""


def _widen(code: int, group: int) -> None:
    if op.get_bind().dialect.name != "postgresql":
        with op.batch_alter_table("dockets") as batch:
            batch.alter_column("code", type_=sa.String(code), existing_nullable=False)
            batch.alter_column("group", type_=sa.String(group), existing_nullable=False)
        return
    op.execute("DROP VIEW dashboard_dockets")
    op.alter_column("dockets", "code", type_=sa.String(code), existing_nullable=False)
    op.alter_column("dockets", "group", type_=sa.String(group), existing_nullable=False)
    op.execute(DASHBOARD_DOCKETS)
    if op.get_bind().exec_driver_sql("SELECT 1 FROM pg_roles WHERE rolname = %(name)s", {"name": READER}).scalar():
        op.execute(f"GRANT SELECT ON dashboard_dockets TO {READER}")


def upgrade() -> None:
    _widen(32, 16)


def downgrade() -> None:
    _widen(8, 1)  # refused by PostgreSQL while a longer code is stored: such autos must not be truncated
