"""A fourth role, `titular`: the head of the Órgão Gerencial, who judges the recurso
(Lei 867/1998, art. 7º § 3º and art. 4º; #32 item 1). The users' role check admits it.

SQLite changes a constraint by copying the table (alembic's batch mode).

Revision ID: 0007
"""

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

def _roles(roles: tuple[str, ...]) -> None:
    check = "role IN (" + ", ".join(f"'{r}'" for r in roles) + ")"
    if op.get_bind().dialect.name != "postgresql":
        with op.batch_alter_table("users") as batch:
            batch.drop_constraint("ck_users_role", type_="check")
            batch.create_check_constraint("ck_users_role", check)
        return
    op.drop_constraint("ck_users_role", "users", type_="check")
    op.create_check_constraint("ck_users_role", "users", check)


def upgrade() -> None:
    _roles(("fiscal", "gestor", "titular", "operador"))


def downgrade() -> None:
    _roles(("fiscal", "gestor", "operador"))  # refused while a titular account exists
