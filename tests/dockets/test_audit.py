"""The audit record (#13 item 4): keyed, covering every docket's state and files, anchored
outside the database. Each attack below is made the way someone with write access to the
tables (but not to the audit key or the anchor log) would make it."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import select

from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType

from dockets import workflow
from dockets.anchors import FileAnchorLog, KafkaAnchorLog, default_destination
from dockets.audit import GENESIS, Anchor, AuditError, AuditKey, Head, _body, verify_record
from dockets.document import make_renderer
from dockets.service import DocketError, perform
from dockets.store import AuditEntry, Docket
from rules.model import join_legal_basis
from stores import TEST_AUDIT_KEY, open_test_store
from streams.admin import create_topics

KEYS = {TEST_AUDIT_KEY.key_id: TEST_AUDIT_KEY}
ON = dt.date(2026, 12, 2)


@pytest.fixture
def anchored(sessions, tmp_path):
    """The test store reopened as a writer whose commits are anchored in a file; the
    demo day's drafts (made before) are anchored once, as the sink would have."""
    anchors = FileAnchorLog(tmp_path / "anchors.jsonl")
    url = str(sessions.kw["bind"].url)
    writer = open_test_store(url, anchors=anchors)
    with writer() as session:
        entry = session.scalar(select(AuditEntry).order_by(AuditEntry.id.desc()).limit(1))
        anchors.append(Anchor.of(Head(entry.id, entry.mac, entry.key_id)))
    yield writer, anchors
    writer.kw["bind"].dispose()


def _lavrar(sessions, actors, calendar, code="D-11", signer=None):
    with sessions.begin() as session:
        docket_id = session.scalar(select(Docket.id).where(Docket.code == code))
        perform(session, actors["fiscal"], docket_id, workflow.Lavrar(on=ON), calendar, signer=signer,
                renderer=make_renderer(session, calendar=calendar, issuer_name="Órgão Gerencial — teste"))
    return docket_id


def _verify(sessions, anchors=()):
    with sessions() as session:
        return verify_record(session, KEYS, list(anchors))


def _tamper(sessions, *statements):
    """An attacker with DDL rights: the append-only triggers go first."""
    with sessions.begin() as session:
        for trigger in ("audit_log_no_update", "audit_log_no_delete"):
            session.execute(sa.text(f"DROP TRIGGER IF EXISTS {trigger}"))
        for statement in statements:
            session.execute(sa.text(statement))


def test_each_commit_anchors_the_chain_head_outside_the_database(anchored, actors, calendar):
    writer, anchors = anchored
    before = anchors.read()
    docket_id = _lavrar(writer, actors, calendar)
    with writer.begin() as session:
        session.scalar(select(Docket.id))  # a commit that writes nothing anchors nothing
    after = anchors.read()
    assert len(after) == len(before) + 1
    with writer() as session:
        last = session.scalar(select(AuditEntry).order_by(AuditEntry.id.desc()).limit(1))
    assert (after[-1].entry_id, after[-1].mac) == (last.id, last.mac)
    assert last.entity_id == str(docket_id) and last.action == "Lavrar"
    report = _verify(writer, after)
    assert report.last_anchored == report.head.entry_id == last.id


def test_an_entry_rewritten_with_the_chain_recomputed_without_the_key_is_named(anchored):
    # before #13: an unkeyed SHA-256 chain, so rewriting every entry still verified
    writer, anchors = anchored
    with writer() as session:
        entries = session.scalars(select(AuditEntry).order_by(AuditEntry.id)).all()
    guess = AuditKey(b"\0" * 32)  # the attacker's best: any key but the real one
    prev = GENESIS
    statements = []
    for entry in entries:
        payload = {**entry.payload, "code": "X-99"} if entry.id == 2 else entry.payload
        mac = guess.mac(_body(prev, entry.at, entry.actor_id, entry.actor_role, entry.entity, entry.entity_id,
                              entry.action, payload, entry.key_id))
        statements.append(f"UPDATE audit_log SET payload = '{json.dumps(payload)}', prev_mac = '{prev}', "
                          f"mac = '{mac}' WHERE id = {entry.id}")
        prev = mac
    _tamper(writer, *statements)
    with pytest.raises(AuditError, match="registro de auditoria 1 não confere com a cadeia"):
        _verify(writer)


@pytest.mark.parametrize("column, value", [("stage", "'arquivado'"), ("fine_ufir", "1"),
                                           ("next_deadline", "NULL"), ("operator_id", "'VNV'"),
                                           ("legal_basis", "'D-11'"), ("legal_text", "'conduzir com cuidado.'"),
                                           ("legal_text", "NULL")])
def test_a_docket_changed_behind_the_application_is_named(anchored, actors, calendar, column, value):
    # before #13: docket stage, fine and files were outside the chain
    writer, anchors = anchored
    docket_id = _lavrar(writer, actors, calendar)
    _tamper(writer, f"UPDATE dockets SET {column} = {value} WHERE id = {docket_id}")
    with pytest.raises(AuditError, match=rf"auto 0001/2026 \(id {docket_id}\) difere .* em: {column}"):
        _verify(writer, anchors.read())


def test_the_law_text_moved_into_the_dispositivo_column_is_named(anchored, actors, calendar):
    # the entry certifies the record's joined legal_basis (as before the two columns,
    # migration 0005); the words moved between the columns still join to it
    writer, anchors = anchored
    docket_id = _lavrar(writer, actors, calendar)
    with writer() as session:
        certified = session.scalars(select(AuditEntry).where(AuditEntry.entity_id == str(docket_id))
                                    .order_by(AuditEntry.id.desc())).first().payload["state"]["legal_basis"]
    _tamper(writer, "UPDATE dockets SET legal_basis = legal_basis || '. Texto legal: “' || legal_text || '”', "
                    f"legal_text = NULL WHERE id = {docket_id}")
    with writer() as session:
        docket = session.get(Docket, docket_id)
        assert docket.legal_text is None and join_legal_basis(docket.legal_basis, docket.legal_text) == certified
    with pytest.raises(AuditError, match=rf"auto 0001/2026 \(id {docket_id}\) difere .* em: legal_basis, legal_text$"):
        _verify(writer, anchors.read())


def test_a_replaced_pdf_is_named_whether_or_not_its_digest_is_updated(anchored, actors, calendar):
    writer, anchors = anchored
    docket_id = _lavrar(writer, actors, calendar)
    forged = b"%PDF-1.7 forged"
    _tamper(writer, f"UPDATE docket_pdfs SET data = X'{forged.hex()}' WHERE docket_id = {docket_id}")
    with pytest.raises(AuditError, match=f"PDF do auto id {docket_id} não confere"):
        _verify(writer, anchors.read())
    _tamper(writer, f"UPDATE docket_pdfs SET sha256 = '{hashlib.sha256(forged).hexdigest()}' "
                    f"WHERE docket_id = {docket_id}")
    with pytest.raises(AuditError, match="em: pdf_sha256"):
        _verify(writer, anchors.read())


def test_a_replaced_bundle_or_attachment_is_named(anchored, actors, calendar):
    writer, anchors = anchored
    docket_id = _lavrar(writer, actors, calendar)
    with writer.begin() as session:
        perform(session, actors["fiscal"], docket_id, workflow.Notificar(on=ON), calendar)
        perform(session, actors["trd"], docket_id, workflow.ApresentarDefesa(on=ON), calendar,
                attachments=[("disco.pdf", "application/pdf", b"%PDF-1.4 disco")])
    _verify(writer, anchors.read())
    _tamper(writer, "UPDATE attachments SET data = X'00'")
    with pytest.raises(AuditError, match=r"anexo \d+ \(disco.pdf\) não confere"):
        _verify(writer, anchors.read())
    _tamper(writer, f"UPDATE evidence_bundles SET data = X'00' WHERE docket_id = {docket_id}")
    with pytest.raises(AuditError, match=f"pacote de evidências do auto id {docket_id}"):
        _verify(writer, anchors.read())


def test_deleting_the_latest_entries_or_all_of_them_shows_against_the_anchors(anchored, actors, calendar):
    writer, anchors = anchored
    _lavrar(writer, actors, calendar, "C-01")
    _lavrar(writer, actors, calendar, "D-21")
    with writer() as session:
        last_two = session.scalars(select(AuditEntry.id).order_by(AuditEntry.id.desc()).limit(2)).all()
    # the attacker also puts the dockets back as drafts, so each matches its last entry
    _tamper(writer, f"DELETE FROM audit_log WHERE id >= {min(last_two)}",
            "UPDATE dockets SET stage = 'rascunho'")
    with pytest.raises(AuditError, match=f"registro de auditoria {min(last_two)}, ancorado em .* não está no banco"):
        _verify(writer, anchors.read())
    _tamper(writer, "DELETE FROM audit_log")
    with pytest.raises(AuditError, match="não está no banco: registros foram apagados"):
        _verify(writer, anchors.read())


def test_an_anchor_that_differs_from_its_entry_is_named(anchored):
    writer, anchors = anchored
    genuine = anchors.read()[-1]
    with pytest.raises(AuditError, match=f"registro de auditoria {genuine.entry_id} difere da âncora"):
        _verify(writer, [Anchor(genuine.entry_id, "f" * 64, genuine.key_id, genuine.at)])


def test_a_docket_inserted_without_an_entry_is_named(anchored):
    writer, _ = anchored
    _tamper(writer, "INSERT INTO dockets (infraction_id, source, code, \"group\", fine_ufir, ufir_brl, operator_id, "
                    "service_date, occurred_at, description, legal_basis, infraction, stage, status, created_at) "
                    "SELECT 'forjada', source, code, \"group\", fine_ufir, ufir_brl, operator_id, service_date, "
                    "occurred_at, description, legal_basis, infraction, stage, status, created_at "
                    "FROM dockets LIMIT 1")
    with pytest.raises(AuditError, match="sem registro de auditoria do seu estado"):
        _verify(writer)


def test_an_entry_made_with_an_unknown_key_is_named(anchored):
    writer, _ = anchored
    with pytest.raises(AuditError, match="feito com a chave .* que não foi fornecida"):
        with writer() as session:
            verify_record(session, {}, [])


def test_without_the_audit_key_nothing_is_written(sessions, actors, calendar):
    keyless = open_test_store(str(sessions.kw["bind"].url), audit_key=None)
    with keyless.begin() as session, pytest.raises(DocketError, match="Sem chave de auditoria"):
        docket_id = session.scalar(select(Docket.id).where(Docket.code == "D-11"))
        perform(session, actors["fiscal"], docket_id, workflow.Lavrar(on=ON), calendar)
    keyless.kw["bind"].dispose()


def test_anchors_go_to_kafka_when_a_broker_is_named_else_beside_a_sqlite_store():
    assert default_destination("sqlite:////data/autos.sqlite3", anchors=None, kafka_bootstrap=None) \
        == "/data/autos.sqlite3.ancoras.jsonl"
    assert default_destination("postgresql+psycopg://x@db/f", anchors=None, kafka_bootstrap="kafka:9092") \
        == "kafka://kafka:9092"
    assert default_destination("postgresql+psycopg://x@db/f", anchors="/a.jsonl", kafka_bootstrap="k:1") == "/a.jsonl"
    with pytest.raises(AuditError, match="precisa de âncoras fora do banco"):
        default_destination("postgresql+psycopg://x@db/f", anchors=None, kafka_bootstrap=None)


def test_the_kafka_anchor_log_keeps_every_head_in_order(kafka_bootstrap):
    create_topics(kafka_bootstrap, 4, 1, names=["audit-anchors"])
    log = KafkaAnchorLog(kafka_bootstrap)
    before = log.read()
    written = [Anchor(i, f"{i:064x}", "k", f"2026-12-02T00:00:0{i}+00:00") for i in (1, 5, 9)]
    try:
        for anchor in written:
            log.append(anchor)
    finally:
        log.close()
    assert KafkaAnchorLog(kafka_bootstrap).read() == before + written
    with KafkaAdminClient(bootstrap_servers=kafka_bootstrap) as admin:
        configs = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "audit-anchors")])
    assert configs["topic"]["audit-anchors"]["retention.ms"]["value"] == "-1"  # a legal record: never expires



def test_without_a_broker_the_kafka_anchor_log_fails_clearly_within_its_own_timeout():
    """A commit of the docket store waits on its anchor: with Kafka down, the clerk gets
    the anchor's error within the log's timeout, not after kafka-python's 30 s wait for a
    first broker (its constructor's, before `max_block_ms` even applies)."""
    log = KafkaAnchorLog("127.0.0.1:1", timeout_s=2)
    started = time.monotonic()
    with pytest.raises(AuditError, match=r"^âncora não gravada em kafka://127.0.0.1:1/audit-anchors: "):
        log.append(Anchor(1, f"{1:064x}", "k", "2026-12-02T00:00:01+00:00"))
    with pytest.raises(AuditError, match=r"^não foi possível ler as âncoras em kafka://127.0.0.1:1/audit-anchors: "):
        log.read()
    assert time.monotonic() - started < 15  # two waits of 2 s (and their diagnosis), not 2 × 30 s

# --- accounts and occurrences (#32 item 8): acts that change a power or excuse an infraction ---

def _register_closure(writer, actors):
    from dockets.occurrences import register_occurrence

    with writer.begin() as session:
        register_occurrence(session, actors["fiscal"], occurrence_id="oc-obra", kind="road_closure",
                            start=dt.datetime(2026, 12, 1, 8, tzinfo=dt.UTC),
                            end=dt.datetime(2026, 12, 1, 9, tzinfo=dt.UTC), route_id="101", note="obra")


@pytest.mark.parametrize("statement,named", [
    # before: each of these passed as "íntegro"
    ("UPDATE users SET role = 'gestor' WHERE username = 'fiscal'", "em: role"),
    ("UPDATE users SET operator_id = 'VNV' WHERE username = 'trd'", "em: operator_id"),
    ("UPDATE users SET password_hash = (SELECT password_hash FROM users WHERE username = 'fiscal') "
     "WHERE username = 'gestor'", "em: password_sha256"),
    ("UPDATE users SET active = 1, full_name = 'Outra Pessoa' WHERE username = 'fiscal'", "em: full_name"),
])
def test_an_account_changed_behind_the_application_is_named(anchored, actors, statement, named):
    writer, _ = anchored
    _verify(writer)
    _tamper(writer, statement)
    with pytest.raises(AuditError, match=f"usuário '.*' \\(id \\d+\\) difere do seu último registro de auditoria {named}"):
        _verify(writer)


def test_an_account_inserted_behind_the_application_is_named(anchored, actors):
    writer, _ = anchored
    _tamper(writer, "INSERT INTO users (username, full_name, password_hash, role, active, created_at) "
                    "SELECT 'intruso', 'Intruso', password_hash, 'gestor', 1, created_at FROM users LIMIT 1")
    with pytest.raises(AuditError, match="usuário 'intruso' .* sem registro de auditoria: foi criado fora do sistema"):
        _verify(writer)


def test_a_password_changed_through_the_application_verifies_and_its_hash_is_certified(anchored, actors):
    from dockets.users import authenticate, change_password

    writer, _ = anchored
    with writer.begin() as session:
        change_password(session, " Gestor ", "uma-senha-nova-e-longa")
    _verify(writer)
    with writer() as session:
        assert authenticate(session, "gestor", "uma-senha-nova-e-longa") is not None
        entry = session.scalar(select(AuditEntry).order_by(AuditEntry.id.desc()).limit(1))
        hashed = session.scalar(sa.text("SELECT password_hash FROM users WHERE username = 'gestor'"))
    assert entry.action == "AlterarSenha" and entry.entity == "user"
    assert entry.payload["state"]["password_sha256"] == hashlib.sha256(hashed.encode()).hexdigest()


@pytest.mark.parametrize("statement,named", [
    ("UPDATE occurrences SET \"end\" = '2026-12-01 23:00:00.000000' WHERE id = 'oc-obra'", "em: end"),
    ("UPDATE occurrences SET route_id = NULL WHERE id = 'oc-obra'", "em: route_id"),
    ("UPDATE occurrences SET created_by = (SELECT id FROM users WHERE username = 'gestor')", "em: created_by"),
    ("INSERT INTO occurrences (id, kind, start, \"end\", created_by, created_at) SELECT 'oc-forjada', "
     "'authorized_detour', start, \"end\", created_by, created_at FROM occurrences", "oc-forjada sem registro"),
])
def test_an_occurrence_inserted_or_changed_behind_the_application_is_named(anchored, actors, statement, named):
    # occurrences justify infractions: one forged in the table would excuse what the rules found
    writer, _ = anchored
    _register_closure(writer, actors)
    _verify(writer)
    _tamper(writer, statement)
    with pytest.raises(AuditError, match=f"ocorrência .*{named}"):
        _verify(writer)


def test_publishing_an_occurrence_leaves_it_as_registered(anchored, actors):
    # the outbox's mark is not part of what the occurrence says
    writer, _ = anchored
    _register_closure(writer, actors)
    _tamper(writer, "UPDATE occurrences SET published_at = created_at")
    _verify(writer)


def test_an_emptied_or_dropped_audit_log_is_named_without_anchors_too(anchored, actors):
    # the anchor file rolled back or lost with the store: what the chain certifies still shows
    writer, _ = anchored
    _tamper(writer, "DELETE FROM audit_log")
    # before: "íntegro: 0 registros" once the anchors were gone too
    with pytest.raises(AuditError, match="o registro de auditoria está vazio, mas o banco tem 4 usuários, 5 autos: "
                                         "registros foram apagados"):
        _verify(writer)
    _tamper(writer, "DELETE FROM dockets WHERE id NOT IN (SELECT docket_id FROM evidence_bundles)",
             "DROP TABLE audit_log")
    with pytest.raises(AuditError, match="a tabela audit_log não existe no banco: o registro foi apagado"):
        _verify(writer)


@pytest.mark.parametrize("table", ["evidence_bundles", "docket_pdfs", "attachments", "occurrences"])
def test_a_dropped_table_the_record_certifies_is_named(anchored, actors, table):
    writer, _ = anchored
    _tamper(writer, f"DROP TABLE {table}")
    with pytest.raises(AuditError, match=f"a tabela {table} não existe no banco"):
        _verify(writer)


# --- anchors that roll back with the store (#32 item 8) ---

def _restore(writer, path, snapshot):
    writer.kw["bind"].dispose()  # no connection holds the file while it is put back
    path.write_bytes(snapshot)


def test_a_store_restored_with_its_anchor_file_still_verifies_the_file_mode_cannot_tell(
        anchored, actors, calendar):
    # what README says the file mode cannot protect, and why serve and the sink warn
    writer, anchors = anchored
    store = Path(writer.kw["bind"].url.database)
    snapshot, anchored_then = store.read_bytes(), anchors.path.read_bytes()
    _lavrar(writer, actors, calendar)
    _restore(writer, store, snapshot)
    anchors.path.write_bytes(anchored_then)
    assert _verify(writer, anchors.read()).entries > 0  # the lavratura is gone, undetected


def test_a_store_restored_behind_kafka_anchors_names_the_entries_it_lost(sessions, actors, calendar, kafka_bootstrap):
    create_topics(kafka_bootstrap, 4, 1, names=["audit-anchors"])
    log = KafkaAnchorLog(kafka_bootstrap)
    earlier = len(log.read())  # other tests' stores anchored on the same topic
    writer = open_test_store(str(sessions.kw["bind"].url), anchors=log)
    store = Path(writer.kw["bind"].url.database)
    try:
        snapshot = store.read_bytes()
        _lavrar(writer, actors, calendar)
        _restore(writer, store, snapshot)
        with pytest.raises(AuditError, match=r"registro de auditoria \d+, ancorado em .* não está no banco"):
            _verify(writer, log.read()[earlier:])
    finally:
        log.close()
        writer.kw["bind"].dispose()


@pytest.mark.parametrize("url,destination,warned", [
    ("postgresql+psycopg://app@db/fiscaliza", "/var/lib/fiscaliza/ancoras.jsonl", True),
    ("postgresql+psycopg://app@db/fiscaliza", "kafka://kafka:9092", False),
    ("sqlite:////data/autos.sqlite3", "/data/autos.sqlite3.ancoras.jsonl", False),  # the local, documented use
])
def test_a_server_store_anchored_in_a_file_is_warned_about(url, destination, warned):
    from dockets.anchors import open_anchor_log, rollback_warning

    warning = rollback_warning(url, open_anchor_log(destination))
    assert (warning is not None) == warned
    if warned:
        assert warning.startswith(f"atenção: as âncoras do registro de auditoria estão no arquivo {destination}, "
                                  "não no tópico audit-anchors do Kafka: um banco restaurado junto com esse arquivo "
                                  "não é detectado")
