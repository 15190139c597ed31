"""Batch work on the store: lavrar the drafts, and write the autos' PDFs and bundles."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from dockets import workflow
from dockets.calendar import BusinessCalendar
from dockets.document import make_renderer
from dockets.service import Actor, perform
from dockets.signing import SigningKey, signature_path
from dockets.store import AppealPdf, Docket, DocketPdf, EvidenceBundle, JudgmentPdf


def lavrar_drafts(sessions: sessionmaker[Session], fiscal: Actor, on: dt.date, *, calendar: BusinessCalendar,
                  issuer_name: str, signer: SigningKey | None) -> list[str]:
    """Lavrar every auto still in draft, in the order of the infractions, each PDF signed
    by `signer`; their labels."""
    labels = []
    with sessions.begin() as session:
        drafts = session.scalars(select(Docket).where(Docket.stage == workflow.Stage.RASCUNHO.value)
                                 .order_by(Docket.occurred_at, Docket.id)).all()
        renderer = make_renderer(session, calendar=calendar, issuer_name=issuer_name)
        for docket in drafts:
            if docket.stage == workflow.Stage.RASCUNHO.value:  # not lavrado with an auto of its drive (art. 10)
                perform(session, fiscal, docket.id, workflow.Lavrar(on=on), calendar, renderer=renderer,
                        signer=signer)
            labels.append(docket.label)
    return labels


def export_files(sessions: sessionmaker[Session], out: Path) -> list[Path]:
    """Write each lavrado auto's PDF and its judgments', the defence's and the recurso's once
    judged (each with the Órgão's signature beside it), and evidence bundle into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sessions() as session:
        for docket in session.scalars(select(Docket).where(Docket.number.is_not(None))
                                      .order_by(Docket.year, Docket.number)):
            stem = docket.file_stem
            for pdf, path in ((session.get(DocketPdf, docket.id), out / f"{stem}.pdf"),
                              (session.get(JudgmentPdf, docket.id), out / f"{stem}-julgamento.pdf"),
                              (session.get(AppealPdf, docket.id), out / f"{stem}-julgamento-recurso.pdf")):
                if pdf is not None:
                    path.write_bytes(pdf.data)
                    written.append(path)
                    if pdf.signature is not None:
                        signature = signature_path(path)
                        signature.write_text(json.dumps(pdf.signature, indent=1) + "\n", encoding="utf-8")
                        written.append(signature)
            bundle = session.get(EvidenceBundle, docket.id)
            if bundle is not None:
                path = out / f"{stem}-evidencias.zip"
                path.write_bytes(bundle.data)
                written.append(path)
    return written
