"""A docket keeps its record's legal_basis in two columns: the dispositivo in
`legal_basis`, the law's text it quotes in the new `legal_text` (#17 item 4).

Existing rows are split by `rules.model.split_legal_basis`, the one place that knows the
record's format (imported, not copied: the audit record already holds that format fixed);
a row that quotes no law keeps its whole string, and NULL. The audit
entries certify the joined string (`dockets.audit.docket_state`), which the two columns
always give back: entries written before this revision still verify. Downgrade joins
the columns again.

The app role's UPDATE on dockets is table-wide (0004): there is nothing to grant.

Revision ID: 0005
"""

import sqlalchemy as sa
from alembic import op

from rules.model import join_legal_basis, split_legal_basis

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

DOCKETS = sa.table("dockets", sa.column("id", sa.Integer), sa.column("legal_basis", sa.Text),
                   sa.column("legal_text", sa.Text))


def _set(values: list[dict]) -> None:
    """Each docket id's new column values (`{"docket_id": …, "legal_basis": …}`), in one
    executemany; the bound names are prefixed, the columns' own being reserved for SET."""
    if not values:
        return
    columns = {name: sa.bindparam(f"new_{name}") for name in values[0] if name != "docket_id"}
    rows = [{"docket_id": row["docket_id"], **{f"new_{name}": row[name] for name in columns}} for row in values]
    op.get_bind().execute(DOCKETS.update().where(DOCKETS.c.id == sa.bindparam("docket_id")).values(columns), rows)


def upgrade() -> None:
    op.add_column("dockets", sa.Column("legal_text", sa.Text))
    rows = op.get_bind().execute(sa.select(DOCKETS.c.id, DOCKETS.c.legal_basis)).all()
    halves = ((docket_id, *split_legal_basis(joined)) for docket_id, joined in rows)
    _set([{"docket_id": docket_id, "legal_basis": dispositivo, "legal_text": law_text}
          for docket_id, dispositivo, law_text in halves if law_text is not None])


def downgrade() -> None:
    rows = op.get_bind().execute(sa.select(DOCKETS.c.id, DOCKETS.c.legal_basis, DOCKETS.c.legal_text)
                                 .where(DOCKETS.c.legal_text.is_not(None))).all()
    _set([{"docket_id": docket_id, "legal_basis": join_legal_basis(dispositivo, law_text)}
          for docket_id, dispositivo, law_text in rows])
    op.drop_column("dockets", "legal_text")
