"""The Órgão Gerencial's signing key: who made an evidence bundle (#13, authenticity).

A bundle's manifest proves its files are the ones it lists, but anyone can rewrite the
files and recompute it. The Órgão signs each manifest with an Ed25519 key kept outside
the database (`fiscaliza keys init`); its public key is published (and named by its key
id on every auto), and `fiscaliza verify --public-key` checks the signature against it.
A rotated key keeps its public key published: old autos stay verifiable with it.
"""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from kernel.errors import FiscalizaError

ALGORITHM = "Ed25519"


class SigningError(FiscalizaError, ValueError):
    """A key file that cannot be created or read as an Ed25519 key."""


def key_id(public_key: Ed25519PublicKey) -> str:
    """A short, stable name of a public key: the first 16 hex digits of the SHA-256 of
    its 32 raw bytes (printed on the autos next to the key's publication)."""
    return hashlib.sha256(_raw(public_key)).hexdigest()[:16]


def fingerprint(public_key: Ed25519PublicKey) -> str:
    """The whole SHA-256 of the key's 32 raw bytes, in groups of four hex digits: what a
    reader compares with the fingerprint the Órgão publishes (the key id is its start)."""
    digest = hashlib.sha256(_raw(public_key)).hexdigest()
    return " ".join(digest[i:i + 4] for i in range(0, len(digest), 4))


def key_label(public_key: Ed25519PublicKey) -> str:
    """A key as a reader is shown it: by its id and fingerprint, never by whose it is
    (whoever runs `verify` chooses which keys to trust)."""
    return f"chave {key_id(public_key)} (impressão digital SHA-256 {fingerprint(public_key)})"


def _raw(public_key: Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


@dataclass(frozen=True)
class SigningKey:
    private: Ed25519PrivateKey

    @property
    def public(self) -> Ed25519PublicKey:
        return self.private.public_key()

    @property
    def key_id(self) -> str:
        return key_id(self.public)

    def public_pem(self) -> bytes:
        return self.public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    def sign(self, data: bytes) -> dict:
        """A detached signature of `data` (deterministic: Ed25519)."""
        return {"algorithm": ALGORITHM, "key_id": self.key_id,
                "public_key": base64.b64encode(_raw(self.public)).decode(),
                "sha256": hashlib.sha256(data).hexdigest(),
                "signature": base64.b64encode(self.private.sign(data)).decode()}


def write_secret(path: Path, data: bytes) -> None:
    """A new owner-only file holding a secret key: FileExistsError rather than overwrite
    one (a key replaced by mistake leaves what it signed or chained unverifiable)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


def create_key(path: Path) -> SigningKey:
    """A new key at `path` (owner-only), its public key beside it (`.pub`); never overwrites."""
    key = SigningKey(Ed25519PrivateKey.generate())
    pem = key.private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    try:
        write_secret(path, pem)
    except FileExistsError:
        raise SigningError(f"{path} already exists: a signing key is never overwritten") from None
    except OSError as exc:
        raise SigningError(f"cannot create {path}: {exc.strerror}") from None
    public_path(path).write_bytes(key.public_pem())
    return key


def signature_path(document: Path) -> Path:
    """Where a signed file's detached signature is kept: auto.pdf -> auto.pdf.assinatura.json."""
    return document.with_name(document.name + ".assinatura.json")


def public_path(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".pem") + ".pub")


def load_key(path: Path) -> SigningKey:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SigningError(f"cannot read the signing key {path}: {exc.strerror}") from None
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise SigningError(f"{path} is not an unencrypted PEM private key: {exc}") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise SigningError(f"{path} is not an Ed25519 key")
    return SigningKey(private)


def load_public_key(path: Path) -> Ed25519PublicKey:
    try:
        public = serialization.load_pem_public_key(Path(path).read_bytes())
    except OSError as exc:
        raise SigningError(f"cannot read the public key {path}: {exc.strerror}") from None
    except (ValueError, TypeError) as exc:
        raise SigningError(f"{path} is not a PEM public key: {exc}") from None
    if not isinstance(public, Ed25519PublicKey):
        raise SigningError(f"{path} is not an Ed25519 public key")
    return public


def check(signature: object, data: bytes, trusted: dict[str, Ed25519PublicKey]) -> tuple[bool, str]:
    """(authentic, why) for a detached signature of `data`: made by one of the `trusted`
    public keys (by key id), over exactly these bytes. Never raises on hostile input.
    The key is named by its id and fingerprint: that it is the Órgão's is for the reader
    to compare with the fingerprint the Órgão published."""
    if not isinstance(signature, dict) or signature.get("algorithm") != ALGORITHM:
        return False, "assinatura ausente ou de algoritmo desconhecido"
    kid = signature.get("key_id")
    if not isinstance(kid, str) or kid not in trusted:
        known = ", ".join(sorted(trusted)) or "nenhuma chave pública informada"
        return False, f"assinada pela chave {str(kid)[:32]!r}, que não é nenhuma das chaves informadas ({known})"
    try:
        raw = base64.b64decode(str(signature.get("signature")), validate=True)
        trusted[kid].verify(raw, data)
    except (InvalidSignature, ValueError, TypeError):
        return False, f"a assinatura não confere com a chave {kid}: o conteúdo assinado foi alterado"
    return True, f"assinatura Ed25519 válida da {key_label(trusted[kid])}"


def check_embedded(signature: object, data: bytes) -> tuple[bool, str]:
    """(consistent, why) for a stored signature against the public key it carries: the
    bytes kept are the ones signed (integrity only; whose key it is, `check` answers
    against the keys a reader trusts). Never raises on hostile input."""
    if not isinstance(signature, dict):
        return False, "assinatura ilegível"
    try:
        public = Ed25519PublicKey.from_public_bytes(base64.b64decode(str(signature.get("public_key")), validate=True))
    except (ValueError, TypeError):
        return False, "a assinatura não traz uma chave pública Ed25519"
    return check(signature, data, {key_id(public): public})
