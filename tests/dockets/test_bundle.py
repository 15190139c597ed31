"""The evidence bundle: deterministic, tamper-evident, and re-runnable by anyone."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from dockets.bundle import BundleError, BundleMaker, read_bundle, sha256, verify_bundle


@pytest.fixture(scope="module")
def maker(demo_day):
    return BundleMaker.for_replay(demo_day.inputs, demo_day.context.fleet, demo_day.context.policy.policy.timezone)


def _rewrite(data: bytes, name: str, change, *, fix_manifest: bool) -> bytes:
    """A copy of the bundle with one member changed (and the manifest re-signed or not)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    members[name] = change(members[name])
    if fix_manifest:
        manifest = json.loads(members["manifest.json"])
        manifest["files"][name] = sha256(members[name])
        members["manifest.json"] = json.dumps(manifest).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for n, content in members.items():
            archive.writestr(n, content)
    return out.getvalue()


def test_the_same_infraction_gives_the_same_bundle_bytes(demo_day, maker):
    record = demo_day.record("D-11")
    again = BundleMaker.for_replay(demo_day.inputs, demo_day.context.fleet, "America/Sao_Paulo")
    assert sha256(maker.bundle(record)) == sha256(again.bundle(record))


def test_a_bundle_holds_only_the_accused_operators_vehicles_on_that_day(demo_day, maker):
    record = demo_day.record("D-11")  # TRD's vehicle JN-2014
    bundle = read_bundle(maker.bundle(record))
    vehicles = {json.loads(line)["vehicle_id"] for line in bundle.lines("tachograph")}
    trd = {v.vehicle_id for v in demo_day.context.fleet.values() if v.operator_id == record["operator_id"]}
    assert vehicles == trd
    fleet_rows = bundle.members["fleet.csv"].decode().splitlines()[1:]
    assert {row.split(",")[2] for row in fleet_rows} == {record["operator_id"]}
    days = {json.loads(line)["ts"][:10] for line in bundle.lines("tachograph")}
    assert days <= {"2026-12-01", "2026-12-02"}
    assert bundle.manifest["messages"]["tachograph"] == len(bundle.lines("tachograph"))


@pytest.mark.parametrize("code", ["A-07", "C-01", "D-11", "D-13", "D-21"])
def test_every_confirmed_demo_infraction_is_reproduced_from_its_bundle_alone(demo_day, maker, code):
    record = demo_day.record(code)
    verdict = verify_bundle(maker.bundle(record))
    assert verdict.reproduced, verdict.findings
    assert verdict.infraction_id == record["infraction_id"]


def test_a_d22_exemption_is_checked_against_the_months_recorded_figures(demo_day, maker):
    record = demo_day.record("D-22")
    assert record["status"] == "exempt_art45"  # 98.548 % ≥ 98 % and not the first trip of the day
    verdict = verify_bundle(maker.bundle(record))
    assert verdict.reproduced, verdict.findings
    assert any("Art. 45" in f for f in verdict.findings)


def test_a_d22_whose_status_contradicts_art45_is_not_reproduced(demo_day, maker):
    record = dict(demo_day.record("D-22"), status="confirmed")  # exempt by its own figures
    verdict = verify_bundle(maker.bundle(record))
    assert not verdict.reproduced


def test_a_changed_telemetry_line_breaks_the_manifest(demo_day, maker):
    data = maker.bundle(demo_day.record("D-11"))
    forged = _rewrite(data, "tachograph.jsonl", lambda b: b.replace(b'"speed_kmh":', b'"speed_kmh": ', 1),
                      fix_manifest=False)
    with pytest.raises(BundleError, match="tachograph.jsonl foi alterado"):
        verify_bundle(forged)


def test_forged_telemetry_with_a_resigned_manifest_is_not_reproduced(demo_day, maker):
    """Removing the off-route pings and re-signing the manifest: the rule no longer fires."""
    record = demo_day.record("D-11")
    data = maker.bundle(record)
    off_route = {p.split("/")[1].split("#")[0] for e in record["evidence"]["episodes"] for p in e["pings"]}

    def drop(content: bytes) -> bytes:
        return b"\n".join(line for line in content.split(b"\n")
                          if not (b"JN-2014" in line and json.loads(line)["ts"] in off_route)) + b"\n"

    forged = _rewrite(data, "tachograph.jsonl", drop, fix_manifest=True)
    verdict = verify_bundle(forged)
    assert not verdict.reproduced
    assert verdict.bundle_sha256 != sha256(data)


def test_not_a_zip_is_a_bundle_error():
    with pytest.raises(BundleError, match="não é um pacote"):
        read_bundle(b"not a zip")


def test_a_zip_without_manifest_is_a_bundle_error():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("x.txt", "x")
    with pytest.raises(BundleError, match="sem manifesto"):
        read_bundle(out.getvalue())
