"""The audit log: every state change of the docket store, in a keyed chain anchored
outside the database (#13, tamper-evident record).

- **Keyed.** Each entry carries an HMAC-SHA256 of its content and of the previous
  entry's MAC, made with a key the database never holds (`fiscaliza keys audit-init`).
  Whoever can write the tables but cannot read the key cannot rewrite an entry, nor
  recompute the chain after it.
- **Covering.** An entry about a docket carries the docket's resulting state: stage,
  status, fine, the SHA-256 of its infraction record, bundle, PDF and attachments. A row
  changed behind the application's back no longer matches its last entry, and a blob no
  longer matches its digest.
- **Anchored.** Each commit's head (entry id and MAC) is appended to an anchor log
  outside the database (`dockets.anchors`: Kafka's `audit-anchors`, or a file), so
  deleting the latest entries, or all of them, shows.

`verify_record` checks the three and names the first thing that breaks.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import func, inspect, select
from sqlalchemy.orm import Session

from dockets.signing import check_embedded, write_secret
from dockets.store import (AppealPdf, Attachment, AuditEntry, DisputedReading, Docket, DocketPdf, EvidenceBundle,
                           JudgmentPdf, Occurrence, Rejudgment, User, occurrence_record)
from kernel.errors import FiscalizaError
from rules.model import join_legal_basis, split_legal_basis

GENESIS = "0" * 64
KEY_BYTES = 32
SESSION_KEY = "audit_key"  # session.info: the AuditKey every writer needs
SESSION_HEAD = "audit_head"  # session.info: the Head written in this transaction, anchored at commit


class AuditError(FiscalizaError):
    """A missing key, or a record that does not verify (message in pt-BR, for the gestor)."""


@dataclass(frozen=True)
class AuditKey:
    secret: bytes

    @property
    def key_id(self) -> str:
        """Names the key in each entry (so a rotated key's entries still verify with it),
        without revealing it: a domain-separated SHA-256."""
        return hashlib.sha256(b"fiscaliza audit key id\0" + self.secret).hexdigest()[:16]

    def mac(self, body: bytes) -> str:
        return hmac.new(self.secret, body, hashlib.sha256).hexdigest()


def create_audit_key(path: Path) -> AuditKey:
    """A new random key at `path` (owner-only, hex); never overwrites."""
    key = AuditKey(os.urandom(KEY_BYTES))
    try:
        write_secret(path, (key.secret.hex() + "\n").encode("ascii"))
    except FileExistsError:
        raise AuditError(f"{path} já existe: uma chave de auditoria nunca é sobrescrita") from None
    except OSError as exc:
        raise AuditError(f"não foi possível criar {path}: {exc.strerror}") from None
    return key


def load_audit_key(path: Path) -> AuditKey:
    try:
        text = Path(path).read_text(encoding="ascii").strip()
        secret = bytes.fromhex(text)
    except OSError as exc:
        raise AuditError(f"não foi possível ler a chave de auditoria {path}: {exc.strerror}") from None
    except (ValueError, UnicodeDecodeError):
        raise AuditError(f"{path} não é uma chave de auditoria (esperados {KEY_BYTES} bytes em hexadecimal)") from None
    if len(secret) != KEY_BYTES:
        raise AuditError(f"{path} não é uma chave de auditoria (esperados {KEY_BYTES} bytes em hexadecimal)")
    return AuditKey(secret)


@dataclass(frozen=True)
class Head:
    """The chain's latest entry: what an anchor records and an auto prints."""
    entry_id: int
    mac: str
    key_id: str

    def short(self) -> str:
        return f"registro nº {self.entry_id}, HMAC {self.mac[:16]}…"


def _body(prev_mac: str, at: dt.datetime, actor_id: int | None, actor_role: str, entity: str, entity_id: str,
          action: str, payload: Mapping, key_id: str) -> bytes:
    at = at if at.tzinfo else at.replace(tzinfo=dt.timezone.utc)
    return json.dumps([prev_mac, at.astimezone(dt.timezone.utc).isoformat(), actor_id, actor_role, entity, entity_id,
                       action, payload, key_id], sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")


def head(session: Session) -> Head | None:
    entry = session.scalar(select(AuditEntry).order_by(AuditEntry.id.desc()).limit(1))
    return Head(entry.id, entry.mac, entry.key_id) if entry is not None else None


def append(session: Session, *, actor_id: int | None, actor_role: str, entity: str, entity_id: str,
           action: str, payload: Mapping[str, Any], at: dt.datetime | None = None) -> AuditEntry:
    """Append one entry, chained to the previous one by the session's audit key."""
    key = session.info.get(SESSION_KEY)
    if key is None:
        raise AuditError("Sem chave de auditoria: o registro não pode ser escrito "
                         "(FISCALIZA_AUDIT_KEY; crie uma com fiscaliza keys audit-init).")
    if session.get_bind().dialect.name == "postgresql":
        # One chain: concurrent writers take turns (released at commit).
        session.execute(select(func.pg_advisory_xact_lock(867_1998)))
    previous = head(session)
    prev_mac = previous.mac if previous else GENESIS
    at = at or dt.datetime.now(dt.timezone.utc)
    payload = json.loads(json.dumps(payload, ensure_ascii=False, default=str))
    entry = AuditEntry(at=at, actor_id=actor_id, actor_role=actor_role, entity=entity, entity_id=entity_id,
                       action=action, payload=payload, prev_mac=prev_mac, key_id=key.key_id,
                       mac=key.mac(_body(prev_mac, at, actor_id, actor_role, entity, entity_id, action, payload,
                                         key.key_id)))
    session.add(entry)
    session.flush()
    session.info[SESSION_HEAD] = Head(entry.id, entry.mac, entry.key_id)
    return entry


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def _instant(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    return (value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)).astimezone(dt.timezone.utc).isoformat()


def docket_state(session: Session, docket: Docket) -> dict[str, Any]:
    """What an entry about `docket` certifies: every column that changes its legal
    meaning, and the digests of its blobs (checked against their bytes by verify)."""
    session.flush()
    # the digest columns only: the blobs (MBs) are checked against them by verify_record
    pdf_sha256 = session.scalar(select(DocketPdf.sha256).where(DocketPdf.docket_id == docket.id))
    bundle_sha256 = session.scalar(select(EvidenceBundle.sha256).where(EvidenceBundle.docket_id == docket.id))
    attachments = session.scalars(select(Attachment.sha256).where(Attachment.docket_id == docket.id)
                                  .order_by(Attachment.id)).all()
    return {**_disputes_state(session, docket), **_judgment_state(session, docket),
        "infraction_id": docket.infraction_id, "source": docket.source, "code": docket.code,
        "group": docket.group, "fine_ufir": int(docket.fine_ufir), "ufir_brl": f"{float(docket.ufir_brl):.4f}",
        "operator_id": docket.operator_id, "vehicle_id": docket.vehicle_id, "plate": docket.plate,
        "route_id": docket.route_id, "direction_id": docket.direction_id, "trip_id": docket.trip_id,
        "service_date": docket.service_date.isoformat(), "occurred_at": _instant(docket.occurred_at),
        "lat": docket.lat, "lon": docket.lon, "place": docket.place, "description": docket.description,
        # The record's joined string, as entries certified it while one column held it
        # (before migration 0005): they still verify. verify_record checks that the two
        # columns are its halves, so both are certified.
        "legal_basis": join_legal_basis(docket.legal_basis, docket.legal_text),
        "infraction_sha256": _digest(docket.infraction),
        "stage": docket.stage, "status_sha256": _digest(docket.status), "year": docket.year,
        "number": docket.number, "lavrado_por": docket.lavrado_por,
        "next_deadline": docket.next_deadline.isoformat() if docket.next_deadline else None,
        "bundle_sha256": bundle_sha256,
        "pdf_sha256": pdf_sha256,
        "attachments_sha256": list(attachments),
    }


def _disputes_state(session: Session, docket: Docket) -> dict[str, Any]:
    """The readings its defence disputes and the re-judgment without them (issue 30), by
    digest; absent while there are none, as the entries before them certified (and in a
    store not yet migrated to 0008, as the migrations' tests write one)."""
    if not inspect(session.connection()).has_table(DisputedReading.__tablename__):
        return {}
    marks = session.execute(select(DisputedReading.source, DisputedReading.line, DisputedReading.vehicle_id,
                                   DisputedReading.span_start, DisputedReading.span_end, DisputedReading.reason,
                                   DisputedReading.created_by)
                            .where(DisputedReading.docket_id == docket.id).order_by(DisputedReading.id)).all()
    if not marks:
        return {}
    rejudged = session.scalar(select(Rejudgment.result).where(Rejudgment.docket_id == docket.id))
    return {"disputed_sha256": _digest([[m.source, m.line, m.vehicle_id, _instant(m.span_start),
                                          _instant(m.span_end), m.reason,
                                          m.created_by] for m in marks]),
            "rejudgment_sha256": _digest(rejudged) if rejudged is not None else None}


def _judgment_state(session: Session, docket: Docket) -> dict[str, Any]:
    """The digests of the judgments' PDFs as the acts that judged the defence and the
    recurso stored them; each absent while there is none, as the entries before it
    certified (and in a store not yet migrated to 0009, 0010)."""
    state = {}
    tables = inspect(session.connection())
    for model, name in ((JudgmentPdf, "judgment_pdf_sha256"), (AppealPdf, "appeal_pdf_sha256")):
        if tables.has_table(model.__tablename__):
            digest = session.scalar(select(model.sha256).where(model.docket_id == docket.id))
            if digest is not None:
                state[name] = digest
    return state


def user_state(user: User) -> dict[str, Any]:
    """What an entry about an account certifies: what it may do, for whom, and the digest
    of its password hash (a hash swapped behind the app no longer matches)."""
    return {"username": user.username, "full_name": user.full_name, "role": user.role,
            "operator_id": user.operator_id, "registration": user.registration, "active": bool(user.active),
            "password_sha256": hashlib.sha256(user.password_hash.encode("utf-8")).hexdigest()}


# What an account's entries certified before they carried its whole state.
_LEGACY_USER_FIELDS = ("username", "role", "operator_id")


@dataclass(frozen=True)
class Anchor:
    """A head written outside the database, with when it was written."""
    entry_id: int
    mac: str
    key_id: str
    at: str

    @classmethod
    def of(cls, head: Head) -> Anchor:
        return cls(head.entry_id, head.mac, head.key_id, dt.datetime.now(dt.timezone.utc).isoformat())

    def encode(self) -> bytes:
        return json.dumps({"entry_id": self.entry_id, "mac": self.mac, "key_id": self.key_id, "at": self.at},
                          sort_keys=True).encode()

    @classmethod
    def decode(cls, data: bytes) -> Anchor:
        try:
            record = json.loads(data)
            return cls(int(record["entry_id"]), str(record["mac"]), str(record["key_id"]), str(record["at"]))
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            raise AuditError(f"âncora ilegível: {str(exc)[:120]}") from None


@dataclass(frozen=True)
class AuditReport:
    entries: int
    dockets: int
    anchors: int
    head: Head | None
    last_anchored: int | None


def verify_record(session: Session, keys: Mapping[str, AuditKey], anchors: Sequence[Anchor]) -> AuditReport:
    """Check the chain entry by entry with `keys` (by key id), each anchor against its
    entry, and each docket, account, occurrence and blob against its last entry.
    AuditError names the first thing that breaks."""
    tables = set(inspect(session.get_bind()).get_table_names())
    read = (AuditEntry, Docket, User, Occurrence, EvidenceBundle, DocketPdf, JudgmentPdf, AppealPdf, Attachment)
    missing = [t.__tablename__ for t in read if t.__tablename__ not in tables]
    if missing:  # dropped: the chain's own table, or what it certifies
        raise AuditError(f"a tabela {missing[0]} não existe no banco: o registro foi apagado")
    by_id: dict[int, list[Anchor]] = {}
    for anchor in anchors:
        by_id.setdefault(anchor.entry_id, []).append(anchor)
    prev_mac, last = GENESIS, None
    count = 0
    states: dict[str, dict] = {}
    users: dict[str, dict] = {}  # user id -> the state its last entry certified
    occurrences: dict[str, tuple[dict, int | None]] = {}  # id -> (record registered, by whom)
    for entry in session.scalars(select(AuditEntry).order_by(AuditEntry.id).execution_options(yield_per=1000)):
        key = keys.get(entry.key_id)
        if key is None:
            raise AuditError(f"registro de auditoria {entry.id}: feito com a chave {entry.key_id}, "
                             "que não foi fornecida")
        body = _body(prev_mac, entry.at, entry.actor_id, entry.actor_role, entry.entity, entry.entity_id,
                     entry.action, entry.payload, entry.key_id)
        if entry.prev_mac != prev_mac or not hmac.compare_digest(entry.mac, key.mac(body)):
            raise AuditError(f"registro de auditoria {entry.id} não confere com a cadeia (HMAC): "
                             "foi alterado, inserido ou um anterior foi apagado")
        for anchor in by_id.get(entry.id, ()):
            if anchor.mac != entry.mac:
                raise AuditError(f"registro de auditoria {entry.id} difere da âncora de {anchor.at}")
        if isinstance(entry.payload, dict):
            if entry.entity == "docket" and "state" in entry.payload:
                states[entry.entity_id] = entry.payload["state"]
            elif entry.entity == "user":
                users[entry.entity_id] = entry.payload.get("state") or {
                    name: entry.payload.get(name) for name in _LEGACY_USER_FIELDS}
            elif entry.entity == "occurrence":
                occurrences[entry.entity_id] = (entry.payload, entry.actor_id)
        prev_mac, last = entry.mac, Head(entry.id, entry.mac, entry.key_id)
        count += 1
    anchored = max(by_id, default=None)
    if anchored is not None and (last is None or anchored > last.entry_id):
        missing = min(i for i in by_id if last is None or i > last.entry_id)
        raise AuditError(f"registro de auditoria {missing}, ancorado em {by_id[missing][0].at}, "
                         "não está no banco: registros foram apagados")
    if last is None:  # an empty chain certifies an empty store only
        named = ((User, "usuário", "usuários"), (Docket, "auto", "autos"),
                 (Occurrence, "ocorrência", "ocorrências"))
        kept = [(session.scalar(select(func.count()).select_from(table)), one, many) for table, one, many in named]
        if any(n for n, _, _ in kept):
            raise AuditError("o registro de auditoria está vazio, mas o banco tem "
                             + ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in kept if n)
                             + ": registros foram apagados")
    dockets = 0
    for docket in session.scalars(select(Docket).order_by(Docket.id)):
        recorded = states.get(str(docket.id))
        if recorded is None:
            raise AuditError(f"auto {docket.label} (id {docket.id}) sem registro de auditoria do seu estado")
        current = docket_state(session, docket)
        differing = _differing(current, recorded, docket)
        if differing:
            raise AuditError(f"auto {docket.label} (id {docket.id}) difere do seu último registro de auditoria "
                             f"em: {', '.join(differing)}")
        dockets += 1
    _verify_users(session, users)
    _verify_occurrences(session, occurrences)
    _verify_blobs(session)
    return AuditReport(count, dockets, len(anchors), last, anchored)


def _verify_users(session: Session, recorded: Mapping[str, dict]) -> None:
    """Each account as its last entry left it: one inserted behind the app has none; a
    role, operator or password hash changed behind it differs."""
    for user in session.scalars(select(User).order_by(User.id)):
        certified = recorded.get(str(user.id))
        if certified is None:
            raise AuditError(f"usuário {user.username!r} (id {user.id}) sem registro de auditoria: "
                             "foi criado fora do sistema")
        differing = [name for name, value in user_state(user).items() if name in certified and certified[name] != value]
        if differing:
            raise AuditError(f"usuário {user.username!r} (id {user.id}) difere do seu último registro de auditoria "
                             f"em: {', '.join(differing)}")


def _verify_occurrences(session: Session, recorded: Mapping[str, tuple[dict, int | None]]) -> None:
    """Each occurrence as it was registered: they justify infractions, so one inserted or
    changed behind the app would excuse what the rules found."""
    for occurrence in session.scalars(select(Occurrence).order_by(Occurrence.id)):
        certified = recorded.get(occurrence.id)
        if certified is None:
            raise AuditError(f"ocorrência {occurrence.id} sem registro de auditoria: foi inserida fora do sistema")
        record, registered_by = certified
        current = occurrence_record(occurrence, dt.timezone.utc)
        differing = sorted(k for k in set(current) | set(record) if current.get(k) != record.get(k))
        if occurrence.created_by != registered_by:
            differing.append("created_by")
        if differing:
            raise AuditError(f"ocorrência {occurrence.id} difere do seu registro de auditoria em: "
                             f"{', '.join(differing)}")


def _differing(current: Mapping[str, Any], recorded: Mapping[str, Any], docket: Docket) -> list[str]:
    """What in a docket's state differs from its last entry. The entry certifies the
    record's joined legal_basis: the two columns must be its halves, which also names the
    one changed (and catches the same words cut elsewhere between them)."""
    differing = [name for name in current if name != "legal_basis" and current[name] != recorded.get(name)]
    # the defence's marks and their re-judgment, or a judgment's PDF, certified and since deleted
    differing += [name for name in ("disputed_sha256", "rejudgment_sha256", "judgment_pdf_sha256", "appeal_pdf_sha256")
                  if name in recorded and name not in current]
    certified = recorded.get("legal_basis")
    halves = split_legal_basis(certified) if isinstance(certified, str) else (None, None)
    differing += [name for name, now, then in zip(("legal_basis", "legal_text"),
                                                  (docket.legal_basis, docket.legal_text), halves) if now != then]
    return differing


def _verify_blobs(session: Session) -> None:
    for model, what in ((EvidenceBundle, "pacote de evidências"), (DocketPdf, "PDF"),
                        (JudgmentPdf, "PDF do julgamento da defesa"), (AppealPdf, "PDF do julgamento do recurso")):
        for row in session.scalars(select(model).order_by(model.docket_id).execution_options(yield_per=50)):
            if hashlib.sha256(row.data).hexdigest() != row.sha256:
                raise AuditError(f"{what} do auto id {row.docket_id} não confere com o seu SHA-256")
            signature = getattr(row, "signature", None)
            if signature is not None:
                consistent, why = check_embedded(signature, row.data)
                if not consistent:
                    raise AuditError(f"{what} do auto id {row.docket_id}: {why}")
            session.expunge(row)  # one blob in memory at a time
    for row in session.scalars(select(Attachment).order_by(Attachment.id).execution_options(yield_per=50)):
        if hashlib.sha256(row.data).hexdigest() != row.sha256 or len(row.data) != row.size:
            raise AuditError(f"anexo {row.id} ({row.filename}) não confere com o seu SHA-256")
        session.expunge(row)
