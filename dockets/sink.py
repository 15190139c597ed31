"""The docket sink: confirmed infractions (a replay's results or its infractions.jsonl)
become draft autos de infração in the store, each with its evidence bundle."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from dockets.bundle import BundleMaker
from dockets.place import place_finder
from dockets.service import IngestReport, ensure_operators, ingest
from dockets.signing import SigningKey
from engine import Context
from kernel.inputs import StaticInputs
from rules.model import infraction_record
from telemetry.files import TelemetryFiles


def read_infractions(path: Path) -> list[dict]:
    """infractions.jsonl's records (the replay's final state, one per id)."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def ingest_replay(sessions: sessionmaker[Session], static: StaticInputs, telemetry: TelemetryFiles, context: Context,
                  records: Iterable[Mapping], signer: SigningKey | None = None) -> IngestReport:
    """Store the confirmed infractions of a replay over `static` and `telemetry`, bundling
    the raw lines of those same files (signed by `signer`). Running it twice adds nothing."""
    maker = BundleMaker.for_files(static, telemetry, context.fleet, context.policy.policy.timezone, signer=signer)
    plates = {v.vehicle_id: v.plate for v in context.fleet.values()}
    with sessions.begin() as session:
        ensure_operators(session, {a.agency_id: a.name for a in context.feed.agencies.values()})
        return ingest(session, list(records), plates=plates, ufir_brl=context.policy.policy.ufir_brl,
                      bundle_for=maker.bundle, place_for=place_finder(context.feed))


def records_of(infractions) -> list[dict]:
    return [infraction_record(i) for i in infractions]
