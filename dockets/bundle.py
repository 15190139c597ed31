"""The evidence bundle of an auto de infração, and its verification.

A bundle is a deterministic zip holding everything needed to re-run the rule: the raw
telemetry lines exactly as received (the accused operator's vehicles, over the service
day), the occurrences, the GTFS feed, the operator's fleet rows, the policy file and the
infraction record itself, with a manifest of per-file SHA-256 digests. The same inputs
always give the same bytes, so the SHA-256 printed on the docket identifies it.

`verify_bundle` re-runs `fiscaliza replay` on the bundle alone (the same engine as the
workers) and reports whether it reproduces the infraction: what an operator's lawyer runs.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import hashlib
import io
import json
import re
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol
from zoneinfo import ZoneInfo

from dockets import ptbr
from dockets.signing import SigningKey, check
from kernel import __version__
from kernel.errors import FiscalizaError
from kernel.fleet import Vehicle
from kernel.inputs import StaticInputs
from kernel.policy import load_policy, policy_bytes
from telemetry import CutMessage, Rejection, decode
from telemetry.files import TelemetryFiles, numbered_lines
from telemetry.validation import SOURCES as TELEMETRY_SOURCES

FORMAT = "fiscaliza-evidence-bundle/1"
SIGNATURE_FORMAT = "fiscaliza-signature/1"
MANIFEST = "manifest.json"
SIGNATURE = "signature.json"  # the Órgão's signature of the manifest (dockets.signing)
INFRACTION = "infraction.json"
# The zip's fixed timestamp: a bundle's bytes depend only on its contents.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
# Telemetry of a service day: from its local midnight to 06:00 the next day, so a trip
# running past midnight and the vehicle's operating-day cutover (03:00) are covered.
_DAY_END_MARGIN = dt.timedelta(hours=30)


class BundleError(FiscalizaError, ValueError):
    """The file is not a readable evidence bundle, or its contents fail their digests."""


class BundleAltered(BundleError):
    """A readable bundle whose files are not the ones its manifest lists: an answer of the
    check (not upheld), not a file that cannot be checked."""


@dataclass(frozen=True)
class RawLines:
    """Raw telemetry lines of one source, as received."""

    source: str
    lines: tuple[bytes, ...]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def day_window(service_date: dt.date, timezone: str) -> tuple[float, float]:
    """The epoch interval whose telemetry decides a service day's infractions."""
    start = dt.datetime.combine(service_date, dt.time(0), tzinfo=ZoneInfo(timezone))
    return start.timestamp(), (start + _DAY_END_MARGIN).timestamp()


def select_lines(source: str, lines: Iterable[bytes | CutMessage], vehicles: frozenset[str],
                 window: tuple[float, float], max_message_bytes: int | None = None) -> tuple[bytes, ...]:
    """The lines of `source` that belong in a bundle: the vehicles' telemetry inside the
    window, or the occurrences overlapping it, sorted by event time (then bytes). Lines
    that do not decode (under the policy's bound on a message) are left out: they were
    rejected at ingestion and accuse nobody."""
    start, end = window
    chosen = []
    for line in lines:
        body = decode(source, line, max_bytes=max_message_bytes)
        if isinstance(body, Rejection):
            continue
        if source == "occurrences":
            if body.start_epoch < end and body.end_epoch >= start:
                chosen.append((body.start_epoch, line))
        elif body.vehicle_id in vehicles and start <= body.epoch < end:
            chosen.append((body.epoch, line))
    # In event-time order, whatever order they arrived in (files, Kafka partitions).
    chosen.sort()
    return tuple(line for _, line in chosen)


def fleet_csv(vehicles: Iterable[Vehicle]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["vehicle_id", "plate", "operator_id", "capacity"])
    for v in sorted(vehicles, key=lambda v: v.vehicle_id):
        writer.writerow([v.vehicle_id, v.plate, v.operator_id, "" if v.capacity is None else v.capacity])
    return out.getvalue().encode("utf-8")


def feed_files(feed: Path) -> dict[str, bytes]:
    """The GTFS feed's files (a directory or a .zip), by name."""
    if feed.is_dir():
        return {p.name: p.read_bytes() for p in sorted(feed.glob("*.txt"))}
    with zipfile.ZipFile(feed) as archive:
        return {Path(n).name: archive.read(n) for n in sorted(archive.namelist()) if n.endswith(".txt")}


def build_bundle(*, infraction: Mapping, feed: Mapping[str, bytes], fleet: bytes, policy: bytes,
                 telemetry: Iterable[RawLines], geofences: bytes | None = None,
                 signer: SigningKey | None = None) -> bytes:
    """The bundle's bytes: deterministic for the same contents (and key: Ed25519
    signatures are deterministic)."""
    members: dict[str, bytes] = {
        INFRACTION: json.dumps(infraction, ensure_ascii=False, sort_keys=True, indent=1).encode("utf-8"),
        "fleet.csv": fleet,
        "policy.toml": policy,
    }
    members.update({f"feed/{name}": data for name, data in feed.items()})
    counts = {}
    for raw in telemetry:
        if raw.source == "occurrences" and not raw.lines:
            continue  # none registered: the same bundle whether the source was given or not
        members[f"{raw.source}.jsonl"] = b"".join(line + b"\n" for line in raw.lines)
        counts[raw.source] = len(raw.lines)
    if geofences is not None:
        members["geofences.geojson"] = geofences
    manifest = {
        "format": FORMAT,
        "infraction_id": infraction["infraction_id"],
        "code": infraction["code"],
        "engine_version": infraction.get("evidence", {}).get("engine_version", __version__),
        "policy_version": infraction.get("evidence", {}).get("policy_version"),
        "messages": counts,
        "files": {name: sha256(data) for name, data in sorted(members.items())},
        "verify": "fiscaliza verify <este arquivo>",
    }
    return _zip_members(members, manifest, signer)


MANUAL = "manual"  # the manifest's `source` of a fiscal's manual infraction
ATTACHMENTS_DIR = "anexos/"


@dataclass(frozen=True)
class BundledFile:
    """A file a fiscal attached to a manual infraction (photo, document), as stored."""

    filename: str  # already made safe (web.security.safe_filename)
    content_type: str
    data: bytes


def attachment_member(index: int, filename: str) -> str:
    """The attachment's name in the bundle: numbered, so two files named alike stay apart."""
    return f"{ATTACHMENTS_DIR}{index:02d}-{filename}"


def build_manual_bundle(*, infraction: Mapping, attachments: Sequence[BundledFile],
                        signer: SigningKey | None = None) -> bytes:
    """The bundle of a fiscal's manual infraction (a code the telemetry cannot prove): its
    record and the files the fiscal attached (the relato's photos and documents), with the
    manifest of their digests, signed. There is no rule to re-run: what it proves is that
    these are the files the auto was lavrado on."""
    members: dict[str, bytes] = {
        INFRACTION: json.dumps(infraction, ensure_ascii=False, sort_keys=True, indent=1).encode("utf-8")}
    listed = []
    for index, attached in enumerate(attachments, start=1):
        name = attachment_member(index, attached.filename)
        members[name] = attached.data
        listed.append({"file": name, "filename": attached.filename, "content_type": attached.content_type,
                       "size": len(attached.data), "sha256": sha256(attached.data)})
    manifest = {
        "format": FORMAT,
        "source": MANUAL,
        "infraction_id": infraction["infraction_id"],
        "code": infraction["code"],
        "attachments": listed,
        "files": {name: sha256(data) for name, data in sorted(members.items())},
        "verify": "fiscaliza verify <este arquivo>",
    }
    return _zip_members(members, manifest, signer)


def _zip_members(members: dict[str, bytes], manifest: dict, signer: SigningKey | None) -> bytes:
    members = dict(members)
    members[MANIFEST] = json.dumps(manifest, ensure_ascii=False, sort_keys=True, indent=1).encode("utf-8")
    if signer is not None:
        signature = {"format": SIGNATURE_FORMAT, "signed": MANIFEST, **signer.sign(members[MANIFEST])}
        members[SIGNATURE] = json.dumps(signature, sort_keys=True, indent=1).encode("utf-8")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, date_time=_ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, members[name])
    return out.getvalue()


def is_manual(manifest: Mapping) -> bool:
    return manifest.get("source") == MANUAL


@dataclass(frozen=True)
class Bundle:
    """A bundle read back, its digests checked."""

    manifest: dict
    infraction: dict
    members: dict[str, bytes]

    def lines(self, source: str) -> list[bytes]:
        data = self.members.get(f"{source}.jsonl", b"")
        return [line for line in data.split(b"\n") if line.strip()]


# What a bundle may hold (`build_bundle`): fixed names, and the feed's flat .txt files.
_FIXED_NAMES = frozenset({MANIFEST, SIGNATURE, INFRACTION, "fleet.csv", "policy.toml", "geofences.geojson",
                          *(f"{source}.jsonl" for source in TELEMETRY_SOURCES)})
_FEED_NAME = re.compile(r"feed/[a-z0-9_]{1,64}\.txt")
# a manual infraction's attachments: numbered, a safe base name (web.security.safe_filename), flat
_ATTACHMENT_NAME = re.compile(r"anexos/\d{2}-[\w .()\-]{1,100}", re.UNICODE)
# Limits checked on the zip's directory before anything is decompressed (a zip bomb of
# 2.4 MB holding 2 GiB of zeros used to be read whole into memory): a service day of an
# operator's telemetry is at most a few hundred MB; JSON lines and GTFS deflate to
# 1/5-1/30 of their size, zeros to 1/1000.
MAX_MEMBER_BYTES = 2 * 1024**3
MAX_TOTAL_BYTES = 4 * 1024**3
MAX_RATIO = 100
MAX_MEMBERS = 200
_CHUNK = 1 << 20


def allowed_name(name: str) -> bool:
    """A member name the bundle format defines: relative, flat, never `..` or a drive."""
    if name in _FIXED_NAMES or _FEED_NAME.fullmatch(name) is not None:
        return True
    return _ATTACHMENT_NAME.fullmatch(name) is not None and ".." not in name


def read_bundle(data: bytes) -> Bundle:
    """Open a bundle and check every member against the manifest, or BundleError.

    Hostile input is refused before it costs anything: names outside the format (a zip
    slip: `../../.bashrc`, `/etc/x`, `C:\\x`), duplicate names, too many members, and
    sizes or compression ratios beyond the limits are checked on the zip's directory;
    then each member is decompressed in chunks, never beyond the size it declared. The
    members are held in memory: for the Órgão's own bundles; one from elsewhere is
    checked with `unpack_bundle`."""
    with _open_checked(data) as (archive, infos):
        members = {}
        for info in infos:
            content = bytearray()
            _stream_member(archive, info, content.extend)
            members[info.filename] = bytes(content)
    manifest = _json_object(members, MANIFEST)
    infraction = _json_object(members, INFRACTION)
    _check_manifest(manifest, infraction, {name: sha256(content) for name, content in members.items()})
    return Bundle(manifest=manifest, infraction=infraction, members=members)


@dataclass(frozen=True)
class UnpackedBundle:
    """A bundle written out to `root`, its digests checked; only its small JSON documents
    (manifest, infraction record, signature) are held in memory."""

    root: Path
    manifest: dict
    infraction: dict
    manifest_bytes: bytes
    signature: object  # as decoded (None if absent or not JSON), for dockets.signing.check
    names: frozenset[str]


# The JSON documents of a bundle, read into memory: a manifest lists a few dozen files, an
# infraction record's evidence is at most a few MB.
MAX_DOCUMENT_BYTES = 64 * 1024**2


def unpack_bundle(data: bytes, root: Path) -> UnpackedBundle:
    """`read_bundle`'s checks, each member streamed to a file under `root` and hashed on
    the way: what the bundle holds never sits in memory, whatever it inflates to (a member
    of 600 MiB at 60:1, within the limits, took 1.37 GB RSS before its digest was read)."""
    digests = {}
    with _open_checked(data) as (archive, infos):
        for info in infos:
            if info.filename in (MANIFEST, INFRACTION, SIGNATURE) and info.file_size > MAX_DOCUMENT_BYTES:
                raise BundleError(f"{info.filename}: {info.file_size} bytes (máximo {MAX_DOCUMENT_BYTES})")
            target = root / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("wb") as out:
                digests[info.filename] = _stream_member(archive, info, out.write)
    documents = {name: (root / name).read_bytes() for name in (MANIFEST, INFRACTION, SIGNATURE) if name in digests}
    manifest = _json_object(documents, MANIFEST)
    infraction = _json_object(documents, INFRACTION)
    _check_manifest(manifest, infraction, digests)
    return UnpackedBundle(root=root, manifest=manifest, infraction=infraction, manifest_bytes=documents[MANIFEST],
                          signature=_decoded(documents.get(SIGNATURE)), names=frozenset(digests))


@contextlib.contextmanager
def _open_checked(data: bytes):
    """The zip and its member entries, once its layout and directory pass."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise BundleError(f"não é um pacote de evidências legível: {exc}") from None
    with archive:
        _check_layout(data, archive.infolist())
        infos = [i for i in archive.infolist() if not i.filename.endswith("/")]
        _check_directory(infos)
        yield archive, infos


def _check_manifest(manifest: dict, infraction: dict, digests: Mapping[str, str]) -> None:
    """The manifest's format, and each member (by its SHA-256) what it lists, no more."""
    if manifest.get("format") != FORMAT:
        raise BundleError(f"formato desconhecido: {str(manifest.get('format'))[:80]!r} (esperado {FORMAT})")
    listed = manifest.get("files")
    if not isinstance(listed, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in listed.items()):
        raise BundleError("o manifesto não lista os arquivos com seus SHA-256")
    for key in ("infraction_id", "code"):
        if not isinstance(infraction.get(key), str) or not infraction[key]:
            raise BundleError(f"o registro da infração não tem {key}")
    extra = sorted(set(digests) - set(listed) - {MANIFEST, SIGNATURE})
    if extra:
        raise BundleAltered(f"arquivos não listados no manifesto: {', '.join(extra)}")
    for name, digest in sorted(listed.items()):
        if name not in digests:
            raise BundleAltered(f"arquivo ausente do pacote: {name[:120]}")
        if digests[name] != digest:
            raise BundleAltered(f"o arquivo {name} foi alterado: SHA-256 não confere com o manifesto")


def signature_of(bundle: Bundle) -> object:
    """The bundle's signature record as decoded (None if absent or not JSON): checked by
    `dockets.signing.check`, never trusted as it stands."""
    return _decoded(bundle.members.get(SIGNATURE))


def _decoded(document: bytes | None) -> object:
    if document is None:
        return None
    try:
        return json.loads(document)
    except (ValueError, RecursionError):
        return None


_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, then (after 22 bytes) the name's and extra field's lengths
_END_RECORD = struct.Struct("<4s4xHHIIH")  # signature, entries on disk, entries, directory size and offset, comment


def _check_layout(data: bytes, infos: list[zipfile.ZipInfo]) -> None:
    """Every byte of the file is one of the zip's own records, in the order `build_bundle`
    writes them: the members from byte 0, one after the other, the central directory, and
    the end record last, without a comment. zipfile reads a zip with bytes before it (a
    self-extractor), between its records or after them as if they were not there: a
    bundle with junk around it kept its members and manifest, so it verified, while its
    SHA-256 was no longer the one printed on the auto."""
    if len(data) < _END_RECORD.size:
        raise BundleError("não é um pacote de evidências legível: curto demais")
    signature, entries_here, entries, directory_size, directory_at, comment = _END_RECORD.unpack(
        data[-_END_RECORD.size:])
    if signature != b"PK\x05\x06" or comment:
        raise BundleError("há dados depois do fim do zip (ou um comentário): este não é o pacote que o Órgão gerou")
    if entries != len(infos) or entries_here != entries or directory_at + directory_size != len(data) - _END_RECORD.size:
        raise BundleError("há dados antes ou dentro do zip fora dos seus registros: este não é o pacote que o Órgão "
                          "gerou")
    position = 0
    for info in sorted(infos, key=lambda i: i.header_offset):
        header = data[position:position + _LOCAL_HEADER.size]
        if info.header_offset != position or len(header) < _LOCAL_HEADER.size:
            raise BundleError(f"há dados fora dos registros do zip antes de {info.filename[:120]!r}: este não é o "
                              "pacote que o Órgão gerou")
        magic, name_length, extra_length = _LOCAL_HEADER.unpack(header)
        if magic != b"PK\x03\x04" or info.flag_bits & 0x08:  # 0x08: sizes in a trailing descriptor
            raise BundleError(f"{info.filename[:120]}: registro do zip em formato que o pacote não usa")
        position += _LOCAL_HEADER.size + name_length + extra_length + info.compress_size
    if position != directory_at:
        raise BundleError("há dados entre os arquivos do zip e o seu diretório: este não é o pacote que o Órgão gerou")


def _check_directory(infos: list[zipfile.ZipInfo]) -> None:
    if len(infos) > MAX_MEMBERS:
        raise BundleError(f"pacote com {len(infos)} arquivos (máximo {MAX_MEMBERS})")
    names = [i.filename for i in infos]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise BundleError(f"nome repetido no pacote: {duplicated[0][:120]!r}")
    for info in infos:
        if not allowed_name(info.filename):
            raise BundleError(f"nome de arquivo não permitido no pacote: {info.filename[:120]!r}")
        if info.file_size > MAX_MEMBER_BYTES:
            raise BundleError(f"{info.filename}: {info.file_size} bytes descomprimidos (máximo {MAX_MEMBER_BYTES})")
        if info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise BundleError(f"{info.filename}: taxa de compressão {info.file_size // max(info.compress_size, 1)}:1 "
                              f"(máximo {MAX_RATIO}:1): possível bomba de descompressão")
    total = sum(i.file_size for i in infos)
    if total > MAX_TOTAL_BYTES:
        raise BundleError(f"{total} bytes descomprimidos no total (máximo {MAX_TOTAL_BYTES})")


def _stream_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, write: Callable[[bytes], object]) -> str:
    """Decompress a member in chunks into `write`, never past the size its entry declares;
    its SHA-256."""
    digest, size = hashlib.sha256(), 0
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(_CHUNK):
                size += len(chunk)
                if size > info.file_size:
                    raise BundleError(f"{info.filename}: maior do que o tamanho declarado")
                digest.update(chunk)
                write(chunk)
    except BundleError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, NotImplementedError,
            RuntimeError, zlib.error) as exc:
        raise BundleError(f"{info.filename}: não pôde ser lido ({str(exc)[:120]})") from None
    return digest.hexdigest()


def _json_object(members: dict[str, bytes], name: str) -> dict:
    try:
        value = json.loads(members[name])
    except KeyError:
        raise BundleError(f"pacote sem {name}") from None
    except (ValueError, RecursionError) as exc:
        raise BundleError(f"{name} não é JSON válido ({str(exc)[:120]})") from None
    if not isinstance(value, dict):
        raise BundleError(f"{name} não é um objeto JSON")
    return value


@dataclass
class Verdict:
    """What re-running the rule on the bundle alone gave."""

    bundle_sha256: str
    infraction_id: str
    code: str
    reproduced: bool
    authentic: bool = False  # signed by one of the Órgão's published keys
    findings: list[str] = field(default_factory=list)  # pt-BR, one per check
    # what the re-run gave otherwise: (campo, no pacote, reexecutado), pt-BR
    differences: list[tuple[str, str, str]] = field(default_factory=list)
    manual: bool = False  # a fiscal's manual infraction: no rule to re-run, its files are the evidence

    @property
    def upheld(self) -> bool:
        """What `fiscaliza verify` exits 0 on: integrity (or it would not get here),
        authenticity and reproduction, all three; for a manual infraction, which no rule
        reproduces, integrity and authenticity."""
        return self.authentic and (self.reproduced or self.manual)


# Fields whose equality proves the same infraction: the contract's fields.
# detected_at is not compared: it is when the live stream's watermark reached the facts,
# which depends on the rest of the stream (other operators, the next day), not on them.
_COMPARED = {"code": "código", "group": "grupo", "fine_ufir": "multa (UFIR)", "operator_id": "empresa operadora",
             "route_id": "linha", "direction_id": "sentido", "trip_id": "viagem", "vehicle_id": "veículo",
             "service_date": "dia de operação", "occurred_at": "data e hora", "lat": "latitude",
             "lon": "longitude", "description": "descrição"}

# The contract's statuses as the Código Disciplinar's reader says them.
STATUS_PT = {"provisional": "provisória", "confirmed": "confirmada", "exempt_art45": "isenta (art. 45)",
             "justified": "justificada", "withdrawn": "retirada"}


def _status(value: str) -> str:
    return STATUS_PT.get(value, value)


def _shown(value, key: str | None = None, evidence: bool = False) -> str:
    """A recorded value for a side-by-side comparison, written as the auto writes it: an
    evidence value by its label's formatter, a record's field in Brazilian notation; short.
    Anything a formatter cannot read is shown as plain JSON (never as Python)."""
    from dockets import labels, ptbr

    if value is None:
        return "—"
    try:
        if evidence and (known := labels.label(key)) is not None:
            text = known.format(value, labels.Context())
        elif key == "occurred_at":
            text = ptbr.instant(dt.datetime.fromisoformat(value))
        elif key == "service_date":
            text = ptbr.date(dt.date.fromisoformat(value))
        elif key == "description":
            text = ptbr.decimal_commas(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            text = ptbr.amount(value, 7 if key in ("lat", "lon") else 3)
        else:
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    except (ValueError, TypeError, KeyError, AttributeError):
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "…"


class Rerun(Protocol):
    """The engine re-run on a bundle's own files (the replay, passed in by the entry
    point: the dockets do not depend on the command line's runner)."""

    def __call__(self, static: StaticInputs, telemetry: TelemetryFiles) -> RerunResult: ...


class RerunResult(Protocol):
    infractions: Sequence  # rules.model.Infraction, the final state per id
    messages: int


def verify_bundle(data: bytes, trusted: Mapping | None = None, *, rerun: Rerun) -> Verdict:
    """Three separate findings: integrity (the files against the manifest), authenticity
    (the manifest signed by one of the `trusted` public keys, by key id) and reproduction
    (`rerun`, the whole replay, on the bundle's own inputs gives its infraction)."""
    from rules.model import infraction_record

    with tempfile.TemporaryDirectory(prefix="fiscaliza-verify-") as tmp:
        root = Path(tmp)
        bundle = unpack_bundle(data, root)  # streamed to disk: a bundle from anyone
        recorded = bundle.infraction
        verdict = Verdict(sha256(data), recorded["infraction_id"], recorded["code"], reproduced=False)
        verdict.findings.append(f"Integridade: {len(bundle.manifest['files'])} arquivos conferem com o manifesto "
                                "(SHA-256). Isso não diz quem fez o pacote: qualquer um pode recalcular o manifesto.")
        verdict.authentic, why = check(bundle.signature, bundle.manifest_bytes, dict(trusted or {}))
        verdict.findings.append(f"Autenticidade: {why}." if verdict.authentic
                                else f"Autenticidade NÃO comprovada: {why}.")
        if is_manual(bundle.manifest):
            verdict.manual = True
            files = [a.get("filename", a.get("file")) for a in bundle.manifest.get("attachments") or []
                     if isinstance(a, dict)]
            verdict.findings.append(
                f"Infração {recorded['code']} constatada pelo fiscal (registro manual): não há regra da telemetria a "
                "reexecutar; as evidências são o relato e os anexos do pacote"
                + (f" ({', '.join(map(str, files))})." if files else " (sem anexos)."))
            return verdict
        static = StaticInputs(
            feed=root / "feed",
            fleet=root / "fleet.csv",
            policy=root / "policy.toml",
            geofences=(root / "geofences.geojson") if "geofences.geojson" in bundle.names else None,
        )
        telemetry = TelemetryFiles(
            tachograph=root / "tachograph.jsonl",
            catraca=(root / "catraca.jsonl") if "catraca.jsonl" in bundle.names else None,
            occurrences=(root / "occurrences.jsonl") if "occurrences.jsonl" in bundle.names else None,
        )
        if not telemetry.tachograph.exists():
            telemetry.tachograph.write_bytes(b"")
        result = rerun(static, telemetry)
    records = {i.infraction_id: infraction_record(i) for i in result.infractions}
    again = records.get(recorded["infraction_id"])
    rerun_of = f"A regra {recorded['code']} foi reexecutada sobre {result.messages} mensagens do pacote"
    if again is None:
        verdict.findings.append(f"{rerun_of} e não gerou esta infração (identificador "
                                f"{recorded['infraction_id']}): NÃO reproduzida.")
        return verdict
    verdict.differences = [(name, _shown(recorded.get(key), key), _shown(again.get(key), key))
                           for key, name in _COMPARED.items() if again.get(key) != recorded.get(key)]
    if verdict.differences:
        verdict.findings.append(f"{rerun_of} e gerou um registro de mesmo identificador ({recorded['infraction_id']}) "
                                f"com {len(verdict.differences)} campo(s) diferente(s) do pacote: NÃO reproduzida.")
        return verdict
    status_ok = _status_reproduced(recorded, again, verdict.findings)
    evidence_ok = _evidence_reproduced(recorded, again, verdict)
    verdict.reproduced = status_ok and evidence_ok
    verdict.findings.insert(2, f"{rerun_of}: " + (
        f"gerou a mesma infração (identificador {recorded['infraction_id']})." if verdict.reproduced else
        f"gerou um registro de mesmo identificador ({recorded['infraction_id']}) que diverge do pacote: "
        "NÃO reproduzida."))
    return verdict


def _without_art45(evidence: dict) -> dict:
    return {k: v for k, v in evidence.items() if k != "art45"}


def _evidence_reproduced(recorded: dict, again: dict, verdict: Verdict) -> bool:
    from dockets.labels import label

    if _without_art45(again["evidence"]) != _without_art45(recorded["evidence"]):
        keys = sorted(k for k in set(again["evidence"]) | set(recorded["evidence"])
                      if again["evidence"].get(k) != recorded["evidence"].get(k) and k != "art45")
        verdict.differences += [(f"evidência: {label(k).text if label(k) else k}",
                                 _shown(recorded["evidence"].get(k), k, evidence=True),
                                 _shown(again["evidence"].get(k), k, evidence=True)) for k in keys]
        verdict.findings.append(f"Evidências recalculadas diferentes das registradas em {len(keys)} item(ns).")
        return False
    verdict.findings.append("As evidências recalculadas são idênticas às registradas.")
    return True


def _status_reproduced(recorded: dict, again: dict, findings: list[str]) -> bool:
    """D-22's status depends on the whole month (art. 45), which a one-day bundle does not
    hold: it is checked against the month's figures recorded in the evidence instead."""
    art45 = recorded["evidence"].get("art45")
    if recorded["code"] == "D-22" and art45 is not None:
        due = art45["start_of_operation"] or art45["efficiency_pct"] < art45["min_efficiency_pct"]
        expected = "confirmed" if due else "exempt_art45"
        findings.append(
            f"Art. 45: eficiência do mês {art45['month'][5:]}/{art45['month'][:4]} registrada em "
            f"{ptbr.amount(art45['efficiency_pct'], 3)} % (mínimo {ptbr.amount(art45['min_efficiency_pct'], 3)} %), "
            "início da operação: "
            f"{'sim' if art45['start_of_operation'] else 'não'} → situação {_status(expected)}. "
            "Os km do mês vêm do registro; a telemetria do mês não está no pacote.")
        if recorded["status"] != expected:
            findings.append(f"Situação registrada {_status(recorded['status'])} não confere com o art. 45.")
            return False
        return True
    if again["status"] != recorded["status"]:
        findings.append(f"Situação divergente: registrada {_status(recorded['status'])}, "
                        f"recalculada {_status(again['status'])}.")
        return False
    findings.append(f"Situação reproduzida: {_status(again['status'])}.")
    return True


class FileTelemetry:
    """The replay's input files as the source of bundles' raw lines (read once)."""

    def __init__(self, files: TelemetryFiles, max_message_bytes: int):
        present = files.present()
        self.sources = tuple(present)
        self.max_message_bytes = max_message_bytes
        self._raw = {source: [line for _, line in numbered_lines(path, max_message_bytes)]
                     for source, path in present.items()}

    def lines(self, source: str, vehicles: frozenset[str], window: tuple[float, float]) -> tuple[bytes, ...]:
        return select_lines(source, self._raw[source], vehicles, window, self.max_message_bytes)


class BundleMaker:
    """Bundles for infractions, their raw lines taken from `telemetry` (the replay's files,
    or the Kafka input topics). The lines of each (operator, service day) are selected
    once and shared by that day's infractions of the operator."""

    def __init__(self, telemetry, *, feed: Path, policy: Path | None, geofences: Path | None,
                 fleet: Mapping[str, Vehicle], timezone: str, signer: SigningKey | None = None):
        self.telemetry = telemetry
        self.signer = signer
        self.fleet = fleet
        self.timezone = timezone
        self._feed = feed_files(Path(feed))
        self._policy = policy_bytes(policy)
        self._geofences = Path(geofences).read_bytes() if geofences else None
        self._selected: dict[tuple, tuple[RawLines, ...]] = {}

    @classmethod
    def for_files(cls, static: StaticInputs, telemetry: TelemetryFiles, fleet: Mapping[str, Vehicle], timezone: str,
                  signer: SigningKey | None = None) -> BundleMaker:
        # the replay's own bound on a line: a bundle holds the lines the replay accepted
        telemetry = FileTelemetry(telemetry, load_policy(static.policy).stream.max_message_bytes)
        return cls(telemetry, feed=static.feed, policy=static.policy, geofences=static.geofences,
                   fleet=fleet, timezone=timezone, signer=signer)

    def bundle(self, record: Mapping) -> bytes:
        operator = record["operator_id"]
        vehicles = [v for v in self.fleet.values() if v.operator_id == operator]
        service_date = dt.date.fromisoformat(record["service_date"])
        key = (operator, service_date)
        if key not in self._selected:
            ids = frozenset(v.vehicle_id for v in vehicles)
            window = day_window(service_date, self.timezone)
            self._selected[key] = tuple(RawLines(source, self.telemetry.lines(source, ids, window))
                                        for source in self.telemetry.sources)
        return build_bundle(infraction=record, feed=self._feed, fleet=fleet_csv(vehicles), policy=self._policy,
                            telemetry=self._selected[key], geofences=self._geofences, signer=self.signer)
