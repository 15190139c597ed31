"""Writing the store's documents to files: each auto's PDF, its judgment's once judged, each
with the Órgão's signature beside it, and its evidence bundle."""

from __future__ import annotations

import datetime as dt
import json

from sqlalchemy import select

from dockets import workflow
from dockets.export import export_files
from dockets.service import Actor, perform
from dockets.signing import check, signature_path
from dockets.store import Docket
from dockets.users import create_user

D = dt.date


def test_the_judgment_is_written_beside_its_auto_with_its_signature(sessions, actors, calendar, signing_key,
                                                                    tmp_path):
    fiscal, trd = actors["fiscal"], actors["trd"]
    with sessions.begin() as session:
        gestor = Actor.of(create_user(session, username="gestor-export", full_name="G", role="gestor",
                                      password="senha-de-teste"))
        docket_id = session.scalar(select(Docket.id).where(Docket.code == "C-01"))
        perform(session, fiscal, docket_id, workflow.Lavrar(on=D(2026, 12, 2)), calendar,
                renderer=lambda d, b, h: b"%PDF-1.4 auto", signer=signing_key)
        perform(session, fiscal, docket_id, workflow.Notificar(on=D(2026, 12, 3)), calendar)
        perform(session, trd, docket_id, workflow.ApresentarDefesa(on=D(2026, 12, 10)), calendar)
        perform(session, gestor, docket_id,
                workflow.JulgarDefesa(on=D(2026, 12, 15), procedente=False, fundamentacao="Não comprovado."),
                calendar, judgment_renderer=lambda d, a, j: b"%PDF-1.4 julgamento", signer=signing_key)
        stem = session.get(Docket, docket_id).file_stem
    written = export_files(sessions, tmp_path / "autos")
    judgment = tmp_path / "autos" / f"{stem}-julgamento.pdf"
    assert judgment in written and signature_path(judgment) in written
    assert judgment.read_bytes() == b"%PDF-1.4 julgamento"
    signature = json.loads(signature_path(judgment).read_text())
    assert check(signature, judgment.read_bytes(), {signing_key.key_id: signing_key.public})[0]
    assert (tmp_path / "autos" / f"{stem}.pdf").read_bytes() == b"%PDF-1.4 auto"
