"""The evidence bundle: deterministic, tamper-evident, and re-runnable by anyone."""

from __future__ import annotations

import io
import json
import re
import zipfile
from functools import partial

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dockets.bundle import BundleError, BundleMaker, FileTelemetry, read_bundle, sha256, verify_bundle
from fiscaliza.replay import rerun
from telemetry.files import TelemetryFiles

verify = partial(verify_bundle, rerun=rerun)  # the bundle re-run by the replay, as `fiscaliza verify` does


@pytest.fixture(scope="module")
def maker(demo_day):
    return BundleMaker.for_files(demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context.fleet, demo_day.context.policy.policy.timezone)


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
    again = BundleMaker.for_files(demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context.fleet, "America/Sao_Paulo")
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
    verdict = verify(maker.bundle(record))
    assert verdict.reproduced, verdict.findings
    assert verdict.infraction_id == record["infraction_id"]


def test_a_d22_exemption_is_checked_against_the_months_recorded_figures(demo_day, maker):
    record = demo_day.record("D-22")
    assert record["status"] == "exempt_art45"  # 98.548 % ≥ 98 % and not the first trip of the day
    verdict = verify(maker.bundle(record))
    assert verdict.reproduced, verdict.findings
    assert any("Art. 45" in f for f in verdict.findings)


def test_a_d22_whose_status_contradicts_art45_is_not_reproduced(demo_day, maker):
    record = dict(demo_day.record("D-22"), status="confirmed")  # exempt by its own figures
    verdict = verify(maker.bundle(record))
    assert not verdict.reproduced


def test_a_changed_telemetry_line_breaks_the_manifest(demo_day, maker):
    data = maker.bundle(demo_day.record("D-11"))
    forged = _rewrite(data, "tachograph.jsonl", lambda b: b.replace(b'"speed_kmh":', b'"speed_kmh": ', 1),
                      fix_manifest=False)
    with pytest.raises(BundleError, match="tachograph.jsonl foi alterado"):
        verify(forged)


def test_forged_telemetry_with_a_resigned_manifest_is_not_reproduced(demo_day, maker):
    """Removing the off-route pings and re-signing the manifest: the rule no longer fires."""
    record = demo_day.record("D-11")
    data = maker.bundle(record)
    off_route = {p.split("/")[1].split("#")[0] for e in record["evidence"]["episodes"] for p in e["pings"]}

    def drop(content: bytes) -> bytes:
        return b"\n".join(line for line in content.split(b"\n")
                          if not (b"JN-2014" in line and json.loads(line)["ts"] in off_route)) + b"\n"

    forged = _rewrite(data, "tachograph.jsonl", drop, fix_manifest=True)
    verdict = verify(forged)
    assert not verdict.reproduced
    assert verdict.bundle_sha256 != sha256(data)


def test_not_a_zip_is_a_bundle_error():
    with pytest.raises(BundleError, match="não é um pacote"):
        read_bundle(b"not a zip")


def test_a_zip_without_manifest_is_a_bundle_error():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("fleet.csv", "x")
    with pytest.raises(BundleError, match="sem manifest.json"):
        read_bundle(out.getvalue())


# --- hostile bundles (#13, finding 1): refused before they cost anything --------------


def _zip(members: list[tuple[str, bytes]], compression=zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as archive:
        for name, content in members:
            archive.writestr(zipfile.ZipInfo(name), content, compress_type=compression)
    return out.getvalue()


def _signed_alike(data: bytes, extra: list[tuple[str, bytes]]) -> bytes:
    """The genuine bundle plus `extra` members, each listed in a recomputed manifest: what
    an attacker sends, since the manifest alone authenticates nothing."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    manifest = json.loads(members.pop("manifest.json"))
    for name, content in extra:
        manifest["files"][name] = sha256(content)
    return _zip([*members.items(), *extra, ("manifest.json", json.dumps(manifest).encode())])


@pytest.mark.parametrize("name", ["../../../../tmp/fiscaliza-zip-slip", "/tmp/fiscaliza-zip-slip",
                                  "feed/../../fiscaliza-zip-slip.txt", "C:\\fiscaliza-zip-slip",
                                  "feed/sub/stops.txt", "notes.txt"])
def test_a_member_named_outside_the_bundle_format_is_refused_and_nothing_is_written(demo_day, maker, tmp_path,
                                                                                    name):
    # before: listed in a recomputed manifest, "../../../../home/x/.bashrc" was written
    # wherever it pointed and verify said "infração reproduzida" (exit 0)
    from pathlib import Path

    data = _signed_alike(maker.bundle(demo_day.record("D-11")), [(name, b"echo pwned\n")])
    with pytest.raises(BundleError, match="nome de arquivo não permitido"):
        verify(data)
    assert not Path("/tmp/fiscaliza-zip-slip").exists() and not Path("/fiscaliza-zip-slip.txt").exists()


def test_a_duplicate_member_name_is_refused(demo_day, maker):
    # before: the last of two "tachograph.jsonl" won
    data = maker.bundle(demo_day.record("D-11"))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = [(n, archive.read(n)) for n in archive.namelist()]
    with pytest.warns(UserWarning, match="Duplicate name"):
        doubled = _zip([*members, ("tachograph.jsonl", b"")])
    with pytest.raises(BundleError, match="nome repetido"):
        read_bundle(doubled)


def test_a_zip_bomb_is_refused_from_its_directory_without_decompressing_it():
    # 256 MiB of zeros deflate to about 255 KB: 1000:1 > 100:1. Before, read_bundle
    # decompressed every member into memory (2 GiB of zeros: 4.3 GB RSS); the ratio is
    # read from the zip's directory, before any member is opened
    bomb = _zip([("tachograph.jsonl", bytes(256 * 1024**2))])
    assert len(bomb) < 1024**2
    with pytest.raises(BundleError, match="bomba de descompressão"):
        read_bundle(bomb)


def _bomb_within_the_limits(path, mib: int, *, digest_right: bool = True) -> bytes:
    """A bundle whose telemetry inflates to `mib` MiB at about 60:1 (under the 100:1 limit,
    far under the member limit), listed in its manifest with its true SHA-256 (or not)."""
    import hashlib
    import os

    block = os.urandom(15_000) + bytes(1024**2 - 15_000)  # random bytes barely deflate, zeros do
    digest = hashlib.sha256()
    for _ in range(mib):
        digest.update(block)
    infraction = json.dumps({"infraction_id": "bomba", "code": "D-11"}).encode()
    manifest = json.dumps({"format": "fiscaliza-evidence-bundle/1", "files": {
        "infraction.json": sha256(infraction),
        "tachograph.jsonl": digest.hexdigest() if digest_right else "0" * 64}}).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("infraction.json", infraction)
        archive.writestr("manifest.json", manifest)
        info = zipfile.ZipInfo("tachograph.jsonl")
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w") as member:
            for _ in range(mib):
                member.write(block)
    return path.read_bytes()


@pytest.mark.parametrize("digest_right", [True, False])
def test_a_bomb_within_the_limits_is_checked_in_bounded_memory(tmp_path, digest_right):
    # before: every member was decompressed into memory and copied, so a member of 600 MiB
    # at 60:1 (a 10 MB file) took `fiscaliza verify` to 1.37 GB RSS; now 144 MB, as
    # for an empty file (130 MB: the interpreter and its imports)
    import tracemalloc

    from dockets.bundle import BundleAltered, unpack_bundle

    data = _bomb_within_the_limits(tmp_path / "bomba.zip", 256, digest_right=digest_right)
    assert len(data) < 5 * 1024**2
    (tmp_path / "out").mkdir()
    tracemalloc.start()
    try:
        if digest_right:
            unpacked = unpack_bundle(data, tmp_path / "out")
        else:
            with pytest.raises(BundleAltered, match="tachograph.jsonl foi alterado"):
                unpack_bundle(data, tmp_path / "out")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024**2, peak  # a chunk or two of 1 MiB, never the 256 MiB
    if digest_right:
        assert (tmp_path / "out" / "tachograph.jsonl").stat().st_size == 256 * 1024**2
        assert unpacked.infraction["infraction_id"] == "bomba" and unpacked.signature is None


def test_a_bundles_json_documents_are_refused_beyond_their_limit(tmp_path):
    from dockets.bundle import MAX_DOCUMENT_BYTES, unpack_bundle

    oversized = _zip([("manifest.json", b" " * (MAX_DOCUMENT_BYTES + 1)), ("infraction.json", b"{}")],
                     compression=zipfile.ZIP_STORED)
    with pytest.raises(BundleError, match=f"manifest.json: {MAX_DOCUMENT_BYTES + 1} bytes"):
        unpack_bundle(oversized, tmp_path)


def _with_gap(data: bytes, before_member: int, gap: bytes) -> bytes:
    """The zip with `gap` inserted before its `before_member`-th local record, every offset
    after it moved in the central directory and the end record: a zip zipfile reads whole."""
    import struct

    directory_at = struct.unpack("<I", data[-6:-2])[0]
    entries, position, offsets = bytearray(data[directory_at:-22]), 0, []
    while position < len(entries):
        offsets.append((position, struct.unpack("<I", entries[position + 42:position + 46])[0]))
        name, extra, comment = struct.unpack("<HHH", entries[position + 28:position + 34])
        position += 46 + name + extra + comment
    cut = sorted(offset for _, offset in offsets)[before_member]
    for position, offset in offsets:
        if offset >= cut:
            entries[position + 42:position + 46] = struct.pack("<I", offset + len(gap))
    end = bytearray(data[-22:])
    end[16:20] = struct.pack("<I", directory_at + len(gap))
    return data[:cut] + gap + data[cut:directory_at] + bytes(entries) + bytes(end)


def test_bytes_between_a_bundles_records_are_refused(demo_day, maker):
    # zipfile reads past a gap its directory accounts for: the members, manifest and
    # signature are intact, but the file is not the one whose SHA-256 the auto prints
    data = maker.bundle(demo_day.record("D-11"))
    gapped = _with_gap(data, 2, b"JUNK" * 100)
    with zipfile.ZipFile(io.BytesIO(gapped)) as archive, zipfile.ZipFile(io.BytesIO(data)) as original:
        assert {n: archive.read(n) for n in archive.namelist()} == {n: original.read(n) for n in original.namelist()}
    with pytest.raises(BundleError, match="há dados fora dos registros do zip antes de"):
        read_bundle(gapped)
    read_bundle(_with_gap(data, 2, b""))  # no gap: the same bundle


def test_a_member_larger_than_its_declared_size_is_refused():
    # an entry that declares 10 bytes but inflates to 1000: read no further than 10
    data = bytearray(_zip([("fleet.csv", b"v" * 1000)], zipfile.ZIP_STORED))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.infolist()[0]
    # patch the central directory's uncompressed size (offset 24 in its record)
    central = bytes(data).rfind(b"PK\x01\x02")
    data[central + 24:central + 28] = (10).to_bytes(4, "little")
    with pytest.raises(BundleError):
        read_bundle(bytes(data))
    assert info.file_size == 1000


@pytest.mark.parametrize("content,message", [
    (b'{"code": "D-11"}', "não tem infraction_id"),
    (b"[1, 2]", "não é um objeto JSON"),
    (b"[" * 100_000, "não é JSON válido"),
])
def test_an_infraction_record_that_is_not_one_is_a_bundle_error_not_a_traceback(demo_day, maker, content, message):
    data = maker.bundle(demo_day.record("D-11"))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    members["infraction.json"] = content
    manifest = json.loads(members["manifest.json"])
    manifest["files"]["infraction.json"] = sha256(content)
    members["manifest.json"] = json.dumps(manifest).encode()
    with pytest.raises(BundleError, match=message):
        verify(_zip(list(members.items()), zipfile.ZIP_STORED))


_NAMES = ["manifest.json", "infraction.json", "fleet.csv", "policy.toml", "tachograph.jsonl", "feed/stops.txt",
          "../x", "/x", "feed/", "a/b", "\\x", "feed/..txt", ""]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(_NAMES) | st.text(max_size=20), st.binary(max_size=200)), max_size=6),
       st.booleans())
def test_any_zip_is_a_bundle_or_a_bundle_error(members, manifest_for_them):
    import warnings

    if manifest_for_them:  # a manifest that lists them all: only the format's rules can refuse
        files = {n: sha256(c) for n, c in members}
        members = [*members, ("manifest.json", json.dumps({"format": "fiscaliza-evidence-bundle/1",
                                                             "files": files}).encode())]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            data = _zip(members)
        except (ValueError, OSError):
            return  # zipfile itself cannot write such a name
    try:
        read_bundle(data)
    except BundleError:
        pass
    # and any bytes at all
    try:
        read_bundle(data[: len(data) // 2] + bytes(3) + data[len(data) // 2:])
    except BundleError:
        pass


def test_fiscaliza_verify_refuses_a_zip_slip_with_one_line_and_exit_2(demo_day, maker, tmp_path):
    from cli_helpers import assert_bad_input, fiscaliza

    target = tmp_path / "escaped.txt"
    bundle = tmp_path / "evidencias.zip"
    bundle.write_bytes(_signed_alike(maker.bundle(demo_day.record("D-11")), [(f"../../../..{target}", b"x")]))
    assert_bad_input(fiscaliza("verify", bundle), "nome de arquivo não permitido")
    assert not target.exists()


def test_a_reproduced_verdict_says_so_once_in_portuguese(demo_day, maker):
    verdict = verify(maker.bundle(demo_day.record("D-11")))
    assert verdict.reproduced and verdict.differences == []
    assert "Situação reproduzida: confirmada." in verdict.findings
    assert sum("gerou a mesma infração" in f for f in verdict.findings) == 1


def test_a_verdict_that_differs_shows_the_values_side_by_side(demo_day, maker):
    record = dict(demo_day.record("D-11"), fine_ufir=400)  # the rule gives 200
    verdict = verify(maker.bundle(record))
    assert not verdict.reproduced
    assert verdict.differences == [("multa (UFIR)", "400", "200")]
    assert not any("gerou a mesma infração" in f for f in verdict.findings)
    assert any("NÃO reproduzida" in f for f in verdict.findings)


def test_differing_values_are_written_as_the_auto_writes_them(demo_day, maker):
    # before: "2026-12-01T09:40:21-03:00 │ 2026-12-01T09:44:21-03:00" and "95.0 │ 80.0"
    recorded = demo_day.record("C-01")
    evidence = dict(recorded["evidence"], max_speed_kmh=95.5)
    record = dict(recorded, occurred_at=recorded["occurred_at"][:10] + "T06:00:00-03:00", evidence=evidence)
    verdict = verify(maker.bundle(record))
    shown = dict((name, (mine, rerun)) for name, mine, rerun in verdict.differences)
    assert shown["data e hora"][0] == "01/12/2026 06:00:00"
    assert re.fullmatch(r"01/12/2026 \d\d:\d\d:\d\d", shown["data e hora"][1])
    # the evidence differs too, but the record's fields are compared first: fix them and look again
    verdict = verify(maker.bundle(dict(recorded, evidence=evidence)))
    shown = dict((name, (mine, rerun)) for name, mine, rerun in verdict.differences)
    assert shown["evidência: maior velocidade registrada"][0] == "95,5 km/h"
    assert shown["evidência: maior velocidade registrada"][1].endswith(" km/h")


def test_a_line_longer_than_the_bound_is_left_out_of_a_bundle_as_the_replay_rejected_it(tmp_path):
    ping = {"vehicle_id": "JN-1011", "ts": "2026-12-01T10:00:00-03:00", "lat": -19.75, "lon": -40.38, "speed_kmh": 20.0}
    ordinary = json.dumps(ping).encode()
    padded = json.dumps({**ping, "ts": "2026-12-01T10:00:10-03:00", "note": "x" * 200}).encode()
    tachograph = tmp_path / "t.jsonl"
    tachograph.write_bytes(b"\n".join([ordinary, padded, bytes(5000), b""]))
    window = (0.0, 2e9)
    lines = FileTelemetry(TelemetryFiles(tachograph), max_message_bytes=150).lines(
        "tachograph", frozenset({"JN-1011"}), window)
    assert lines == (ordinary,)
    unbounded = FileTelemetry(TelemetryFiles(tachograph), max_message_bytes=1000).lines(
        "tachograph", frozenset({"JN-1011"}), window)
    assert unbounded == (ordinary, padded)


@pytest.mark.parametrize("member", ["manifest.json", "infraction.json", "signature.json"])
def test_a_bundle_document_nested_100000_deep_is_refused_or_unauthentic_never_a_traceback(tmp_path, member):
    # stored, not deflated: 100,000 "[" deflate far beyond the 100:1 ratio and would be
    # refused before they are parsed
    from dockets.bundle import unpack_bundle

    infraction = json.dumps({"infraction_id": "x", "code": "D-11"}).encode()
    manifest = json.dumps({"format": "fiscaliza-evidence-bundle/1",
                           "files": {"infraction.json": sha256(infraction)}}).encode()
    documents = {"manifest.json": manifest, "infraction.json": infraction, member: b"[" * 100_000}
    if member == "infraction.json":
        documents["manifest.json"] = json.dumps({"format": "fiscaliza-evidence-bundle/1",
                                                 "files": {"infraction.json": sha256(b"[" * 100_000)}}).encode()
    data = _zip(sorted(documents.items()), compression=zipfile.ZIP_STORED)
    if member == "signature.json":  # read as no signature: not authentic
        assert unpack_bundle(data, tmp_path).signature is None
    else:
        with pytest.raises(BundleError, match=f"{member} não é JSON válido"):
            unpack_bundle(data, tmp_path)


# --- a fiscal's manual infraction: its record and the fiscal's attachments (#32 item 6) ---

MANUAL_RECORD = {"infraction_id": "f" * 64, "code": "A-02", "status": "confirmed", "operator_id": "TRD",
                 "evidence": {"relato": "Motorista sem uniforme.", "fiscal": "Ana Souza"}}
PHOTO = b"\x89PNG\r\n\x1a\n" + b"foto" * 8
REPORT = b"%PDF-1.4\n" + b"boletim" * 8


def _manual_bundle(signer, attachments=None):
    from dockets.bundle import BundledFile, build_manual_bundle

    files = attachments if attachments is not None else [BundledFile("foto do ônibus.png", "image/png", PHOTO),
                                                         BundledFile("boletim.pdf", "application/pdf", REPORT)]
    return build_manual_bundle(infraction=MANUAL_RECORD, attachments=files, signer=signer)


@pytest.mark.parametrize("name, allowed", [
    ("anexos/01-foto do ônibus.png", True), ("anexos/12-boletim (1).pdf", True),
    ("anexos/../x", False), ("anexos/01-..", False), ("anexos/01-a/b.png", False), ("anexos/foto.png", False),
    ("anexos/01-", False), ("anexos/01-x\\y.png", False),
])
def test_a_manual_bundles_attachments_have_flat_numbered_names(name, allowed):
    from dockets.bundle import allowed_name

    assert allowed_name(name) is allowed


def test_a_manual_bundle_holds_the_attachments_and_verifies_without_a_rule_to_rerun(signing_key):
    data = _manual_bundle(signing_key)
    assert data == _manual_bundle(signing_key)  # deterministic, as every bundle
    bundle = read_bundle(data)
    assert bundle.members["anexos/01-foto do ônibus.png"] == PHOTO
    assert bundle.members["anexos/02-boletim.pdf"] == REPORT
    assert [a["sha256"] for a in bundle.manifest["attachments"]] == [sha256(PHOTO), sha256(REPORT)]

    def no_rerun(static, telemetry):
        raise AssertionError("a manual infraction has no rule to re-run")

    verdict = verify_bundle(data, {signing_key.key_id: signing_key.public}, rerun=no_rerun)
    assert verdict.upheld and verdict.manual and not verdict.reproduced
    assert "constatada pelo fiscal (registro manual)" in " ".join(verdict.findings)
    # without the Órgão's key given: not upheld
    assert not verify_bundle(data, {}, rerun=no_rerun).upheld


def test_a_changed_or_swapped_attachment_of_a_manual_bundle_is_caught(signing_key, tmp_path):
    from dockets.bundle import BundleAltered, BundledFile
    from dockets.signing import create_key

    data = _manual_bundle(signing_key)
    with pytest.raises(BundleAltered, match="anexos/01-foto do ônibus.png foi alterado"):
        read_bundle(_rewrite(data, "anexos/01-foto do ônibus.png", lambda b: b + b"x", fix_manifest=False))
    # another photo, in a bundle signed by some other key: integrity holds, authenticity does not
    forger = create_key(tmp_path / "outra.pem")
    forged = _manual_bundle(forger, [BundledFile("foto do ônibus.png", "image/png", PHOTO + b"outra")])
    verdict = verify_bundle(forged, {signing_key.key_id: signing_key.public}, rerun=rerun)
    assert verdict.manual and not verdict.authentic and not verdict.upheld


def test_fiscaliza_verify_on_a_manual_bundle_says_what_it_checked(signing_key, tmp_path):
    from cli_helpers import fiscaliza

    from dockets.signing import public_path

    bundle = tmp_path / "evidencias.zip"
    bundle.write_bytes(_manual_bundle(signing_key))
    key = public_path(tmp_path / "orgao.pem")
    key.write_bytes(signing_key.public_pem())
    result = fiscaliza("verify", bundle, "--public-key", key)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "foto do ônibus.png, boletim.pdf" in result.stdout
    assert "RESULTADO: pacote íntegro e autêntico: o relato e os anexos são os do auto" in result.stdout
    unsigned = tmp_path / "sem-assinatura.zip"
    unsigned.write_bytes(_manual_bundle(None))
    result = fiscaliza("verify", unsigned, "--public-key", key)
    assert result.returncode == 1 and "autenticidade NÃO foi comprovada" in result.stdout
