"""GTFS-Realtime messages through the PyPI `gtfs-rt-validator` (a Python port of
MobilityData's gtfs-realtime-validator rules, E/W ids, plus the current specification's
S rules and the Best Practices' P rules), against a static feed directory."""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path

from gtfs_rt_validator.api import Mode, Request, resolve_roles, validate
from gtfs_rt_validator.rules.registry import severity_for


def feed_zip(feed_dir: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(feed_dir.glob("*.txt")):
            archive.write(path, path.name)
    return target


def findings(static_feed_dir: Path, work: Path, at: dt.datetime, **messages: bytes) -> dict[str, list[str]]:
    """{rule id: the occurrences' texts} of one cycle of the messages, given by role
    (tu=TripUpdates, vp=VehiclePositions, sa=Alerts), with the validator's clock at `at`.
    Errors and warnings both; `severity(rule_id)` tells them apart."""
    work.mkdir(parents=True, exist_ok=True)
    roles = {}
    for role, data in messages.items():
        path = work / f"{role}.pb"
        path.write_bytes(data)
        roles[role] = str(path)
    result = validate(Request(mode=Mode.MODERN, gtfs=feed_zip(static_feed_dir, work / "gtfs.zip"),
                              inputs=resolve_roles(roles), at=at))
    notices = result.run.notices
    found = {rule_id: [o.prefix for o in notices.samples_for(rule_id)] for rule_id in notices.rule_ids()}
    system = {rule_id: [o.prefix for o in result.run.system_errors.samples_for(rule_id)]
              for rule_id in result.run.system_errors.rule_ids()}
    assert not system, system  # bytes the validator could not read
    return found


def severity(rule_id: str) -> str:
    return severity_for(rule_id)


def errors(found: dict[str, list[str]]) -> dict[str, list[str]]:
    return {rule_id: texts for rule_id, texts in found.items() if severity(rule_id) == "ERROR"}
