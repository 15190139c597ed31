"""The Órgão's signature of a bundle's manifest: made by its key, checked against the
keys it published, and a forged or re-signed bundle never passes for authentic."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from functools import partial

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from dockets.bundle import BundleMaker, sha256, verify_bundle
from dockets.signing import SigningError, SigningKey, check, create_key, load_key, load_public_key, public_path
from fiscaliza.replay import rerun

verify = partial(verify_bundle, rerun=rerun)  # the bundle re-run by the replay, as `fiscaliza verify` does


@pytest.fixture(scope="module")
def orgao(tmp_path_factory) -> SigningKey:
    return create_key(tmp_path_factory.mktemp("keys") / "orgao.pem")


@pytest.fixture(scope="module")
def signed(demo_day, orgao):
    maker = BundleMaker.for_files(demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context.fleet, "America/Sao_Paulo", signer=orgao)
    return maker.bundle(demo_day.record("D-11"))


def members_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {n: archive.read(n) for n in archive.namelist()}


def zipped(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return out.getvalue()


def test_a_signed_bundle_is_authentic_against_the_published_key(signed, orgao):
    verdict = verify(signed, {orgao.key_id: orgao.public})
    assert verdict.authentic and verdict.reproduced and verdict.upheld
    assert any(f"chave {orgao.key_id}" in f for f in verdict.findings)


def test_the_same_bundle_signed_twice_is_the_same_bytes(demo_day, orgao, signed):
    again = BundleMaker.for_files(demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context.fleet, "America/Sao_Paulo", signer=orgao)
    assert again.bundle(demo_day.record("D-11")) == signed  # Ed25519 is deterministic


def test_pings_deleted_and_the_manifest_recomputed_fail_authenticity(signed, orgao):
    members = members_of(signed)
    members["tachograph.jsonl"] = members["tachograph.jsonl"].split(b"\n", 1)[1]
    manifest = json.loads(members["manifest.json"])
    manifest["files"]["tachograph.jsonl"] = sha256(members["tachograph.jsonl"])
    members["manifest.json"] = json.dumps(manifest).encode()
    verdict = verify(zipped(members), {orgao.key_id: orgao.public})
    assert not verdict.authentic and not verdict.upheld
    assert any("conteúdo assinado foi alterado" in f for f in verdict.findings)


def test_a_bundle_re_signed_with_another_key_is_not_the_organs(signed, orgao):
    # the forger signs the forged manifest with a key of their own, and names it
    forger = SigningKey(Ed25519PrivateKey.generate())
    members = members_of(signed)
    members["signature.json"] = json.dumps({"format": "fiscaliza-signature/1", "signed": "manifest.json",
                                            **forger.sign(members["manifest.json"])}).encode()
    verdict = verify(zipped(members), {orgao.key_id: orgao.public})
    assert not verdict.authentic
    assert any("não é nenhuma das chaves informadas" in f for f in verdict.findings)


@pytest.mark.parametrize("signature", [None, [], {"algorithm": "RSA"}, {"algorithm": "Ed25519", "key_id": 7},
                                       {"algorithm": "Ed25519", "key_id": "KEY", "signature": "***"},
                                       {"algorithm": "Ed25519", "key_id": "KEY",
                                        "signature": base64.b64encode(bytes(64)).decode()}])
def test_a_malformed_signature_is_not_authentic_and_never_raises(orgao, signature):
    if isinstance(signature, dict) and signature.get("key_id") == "KEY":
        signature = {**signature, "key_id": orgao.key_id}
    authentic, why = check(signature, b"manifest", {orgao.key_id: orgao.public})
    assert not authentic and why


def test_an_unsigned_bundle_is_not_authentic(demo_day, orgao):
    unsigned = BundleMaker.for_files(demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context.fleet, "America/Sao_Paulo")
    verdict = verify(unsigned.bundle(demo_day.record("D-11")), {orgao.key_id: orgao.public})
    assert verdict.reproduced and not verdict.authentic


def test_keys_load_back_and_bad_key_files_are_signing_errors(tmp_path):
    key = create_key(tmp_path / "k.pem")
    assert load_key(tmp_path / "k.pem").key_id == key.key_id
    assert load_public_key(public_path(tmp_path / "k.pem")) == key.public
    (tmp_path / "bad.pem").write_text("not a key")
    with pytest.raises(SigningError):
        load_key(tmp_path / "bad.pem")
    with pytest.raises(SigningError):
        load_public_key(tmp_path / "bad.pem")
    with pytest.raises(SigningError, match="never overwritten"):
        create_key(tmp_path / "k.pem")


def test_a_stored_signature_checks_its_bytes_against_the_key_it_carries(orgao):
    # what `audit verify` asks of a kept PDF: the bytes kept are the ones signed (by whichever key)
    from dockets.signing import check_embedded

    pdf = b"%PDF-1.4\njulgamento\n%%EOF\n"
    signature = orgao.sign(pdf)
    assert check_embedded(signature, pdf) == (True, check(signature, pdf, {orgao.key_id: orgao.public})[1])
    consistent, why = check_embedded(signature, pdf.replace(b"julgamento", b"julgamentO"))
    assert not consistent and "o conteúdo assinado foi alterado" in why
    assert check_embedded({**signature, "public_key": "não é base64"}, pdf) == (
        False, "a assinatura não traz uma chave pública Ed25519")
    assert check_embedded("lixo", pdf) == (False, "assinatura ilegível")
