"""The docket commands: `fiscaliza demo` writes the autos, `dockets ingest/lavrar/export`,
`users add` and `verify`, run as a user runs them (subprocess)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import zipfile
from zoneinfo import ZoneInfo

import pytest
from cli_helpers import assert_bad_input, fiscaliza


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    # a fixed day, so the counts below hold whatever today is (the default day, the last
    # service day before today, is run by the web app's contest-flow test)
    result = fiscaliza("demo", "--out", out, "--date", "2026-12-01")
    assert result.returncode == 0, result.stderr
    return out, result.stdout


def test_demo_ends_by_writing_the_autos_and_telling_where(demo):
    out, stdout = demo
    autos = out / "autos"
    pdfs = sorted(autos.glob("auto-2026-*.pdf"))
    bundles = sorted(autos.glob("auto-2026-*-evidencias.zip"))
    confirmed = [json.loads(line) for line in (out / "replay" / "infractions.jsonl").read_text().splitlines()]
    confirmed = [r for r in confirmed if r["status"] == "confirmed"]
    assert len(pdfs) == len(bundles) == len(confirmed) == 5
    assert all(p.read_bytes().startswith(b"%PDF") for p in pdfs)
    assert "Autos de infração lavrados" in stdout and str(autos) in " ".join(stdout.split())
    assert "fiscaliza serve --db" in " ".join(stdout.split())
    # it ends with what a new user does next: the accounts, then the web app and its address
    last_lines = stdout.rstrip().splitlines()[-2:]
    assert "serve --db" in last_lines[0] and "abra http://127.0.0.1:8000 com uma das contas acima" in last_lines[1]
    assert "Contas de demonstração" in stdout.split("Sistema web:")[0].rsplit("Registro de auditoria", 1)[-1]
    # its audit record verifies, with the key beside the store, as the demo prints
    said = " ".join(stdout.split())
    assert f"fiscaliza audit verify --db sqlite:///{autos / 'autos.sqlite3'} --audit-key" in said
    record = fiscaliza("audit", "verify", "--db", f"sqlite:///{autos / 'autos.sqlite3'}",
                       "--audit-key", out / "chave-de-auditoria.key")
    assert record.returncode == 0 and "5 autos conferidos" in record.stdout, record.stdout + record.stderr
    # the folder says whose demo it holds: another city's run into it is refused (its store,
    # autos and passwords stay), one line, exit 2
    assert (out / "cidade.txt").read_text() == "joao-neiva\n"
    assert_bad_input(fiscaliza("demo", "--city", "conselheiro-lafaiete", "--out", out, "--date", "2026-12-01"),
                     "holds the demo of --city joao-neiva")
    again = fiscaliza("audit", "verify", "--db", f"sqlite:///{autos / 'autos.sqlite3'}",
                      "--audit-key", out / "chave-de-auditoria.key")
    assert again.returncode == 0 and "5 autos conferidos" in again.stdout


def forged_copy(out, tmp_path, member: str, change):
    """The demo's D-11 bundle with one member changed and its manifest recomputed, as a
    forger would (the signature left as it was)."""
    source = sorted((out / "autos").glob("*-D-11-evidencias.zip"))[0]
    with zipfile.ZipFile(source) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    members[member] = change(members[member])
    manifest = json.loads(members["manifest.json"])
    manifest["files"][member] = hashlib.sha256(members[member]).hexdigest()
    members["manifest.json"] = json.dumps(manifest).encode()
    forged = tmp_path / "forged.zip"
    with zipfile.ZipFile(forged, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return forged


def test_verify_reproduces_a_demo_bundle_signed_by_the_published_key_exit_0(demo):
    out, stdout = demo
    bundle = sorted((out / "autos").glob("*-D-11-evidencias.zip"))[0]
    public = out / "chave-do-orgao.pub"
    assert f"--public-key {public}" in " ".join(stdout.split())  # the demo says how
    result = fiscaliza("verify", bundle, "--public-key", public)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Autenticidade: assinatura Ed25519 válida da chave" in result.stdout
    assert "RESULTADO: pacote íntegro, autêntico, e a infração é reproduzida" in result.stdout


def test_verify_without_the_published_key_does_not_uphold_the_bundle_exit_1(demo):
    # reproduced, but who made it is not established: not enough to accuse on
    out, _ = demo
    bundle = sorted((out / "autos").glob("*-D-11-evidencias.zip"))[0]
    result = fiscaliza("verify", bundle)
    assert result.returncode == 1
    assert "Autenticidade NÃO comprovada" in result.stdout and "infração reproduzida, mas" in result.stdout


def test_verify_a_forged_bundle_with_a_recomputed_manifest_fails_authenticity_exit_1(demo, tmp_path):
    # before: deleting other vehicles' pings and recomputing manifest.json gave exit 0
    out, _ = demo
    forged = forged_copy(out, tmp_path, "tachograph.jsonl", lambda content: b"\n".join(
        line for line in content.split(b"\n") if b"JN-2014" in line) + b"\n")
    result = fiscaliza("verify", forged, "--public-key", out / "chave-do-orgao.pub")
    assert result.returncode == 1
    assert "Autenticidade NÃO comprovada" in result.stdout and "conteúdo assinado foi alterado" in result.stdout


def test_verify_a_bundle_altered_after_its_manifest_is_a_failed_check_exit_1(demo, tmp_path):
    # before: exit 2, as if the file could not be checked; it was checked, and is altered
    out, _ = demo
    source = sorted((out / "autos").glob("*-D-11-evidencias.zip"))[0]
    altered = tmp_path / "alterado.zip"
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(altered, "w") as copy:
        for name in original.namelist():
            data = original.read(name)
            copy.writestr(name, data.replace(b"JN-2014", b"JN-2013") if name == "tachograph.jsonl" else data)
    result = fiscaliza("verify", altered, "--public-key", out / "chave-do-orgao.pub")
    assert result.returncode == 1, result.stderr
    assert "tachograph.jsonl foi alterado" in result.stdout and "pacote ADULTERADO" in result.stdout


def test_verify_with_a_rotated_out_key_still_upholds_old_bundles(demo, tmp_path):
    # a new key is created and published; the old public key stays published beside it
    out, _ = demo
    assert fiscaliza("keys", "init", "--out", tmp_path / "nova.pem").returncode == 0
    bundle = sorted((out / "autos").glob("*-D-11-evidencias.zip"))[0]
    result = fiscaliza("verify", bundle, "--public-key", tmp_path / "nova.pub", "--public-key",
                       out / "chave-do-orgao.pub")
    assert result.returncode == 0, result.stdout
    # the new key alone does not vouch for what the old one signed
    assert fiscaliza("verify", bundle, "--public-key", tmp_path / "nova.pub").returncode == 1


def test_keys_init_never_overwrites_a_key(tmp_path):
    assert fiscaliza("keys", "init", "--out", tmp_path / "k.pem").returncode == 0
    first = (tmp_path / "k.pem").read_bytes()
    assert_bad_input(fiscaliza("keys", "init", "--out", tmp_path / "k.pem"), "never overwritten")
    assert (tmp_path / "k.pem").read_bytes() == first
    assert (tmp_path / "k.pem").stat().st_mode & 0o777 == 0o600


def test_verify_a_bundle_whose_infraction_was_altered_exits_1(demo, tmp_path):
    """Raising the recorded fine and re-signing the manifest: the re-run disagrees."""
    out, _ = demo
    forged = forged_copy(out, tmp_path, "infraction.json",
                         lambda content: json.dumps({**json.loads(content), "fine_ufir": 400}).encode())
    result = fiscaliza("verify", forged, "--public-key", out / "chave-do-orgao.pub")
    assert result.returncode == 1
    assert "NÃO reproduzida" in result.stdout and "gerou a mesma infração" not in result.stdout
    assert re.search(r"multa \(UFIR\)\s+│ 400\s+│ 200", result.stdout), result.stdout  # side by side


def test_verify_a_file_that_is_not_a_bundle_exits_2(tmp_path):
    path = tmp_path / "x.zip"
    path.write_text("not a zip")
    assert_bad_input(fiscaliza("verify", path), "não é um pacote")


def test_verify_a_missing_file_exits_2(tmp_path):
    assert_bad_input(fiscaliza("verify", tmp_path / "absent.zip"), "cannot read")


@pytest.fixture
def keys(tmp_path) -> dict[str, str]:
    """The Órgão's signing key and the audit key, made as an administrator makes them, in
    the environment of the commands that write."""
    assert fiscaliza("keys", "init", "--out", tmp_path / "orgao.pem").returncode == 0
    made = fiscaliza("keys", "audit-init", "--out", tmp_path / "auditoria.key")
    assert made.returncode == 0 and "chave de auditoria" in made.stdout, made.stderr
    return {"FISCALIZA_SIGNING_KEY": str(tmp_path / "orgao.pem"), "FISCALIZA_AUDIT_KEY": str(tmp_path / "auditoria.key")}


def test_ingest_lavrar_export_from_a_replay(demo, tmp_path, keys):
    out, _ = demo
    db = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    from samples import joao_neiva
    feed, fleet = joao_neiva()
    args = ["dockets", "ingest", "--db", db,
            "--infractions", out / "replay" / "infractions.jsonl",
            "--feed", feed, "--fleet", fleet, "--tachograph", out / "telemetry" / "tachograph.jsonl",
            "--catraca", out / "telemetry" / "catraca.jsonl"]
    first = fiscaliza(*args, env=keys)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("5 autos em rascunho criados; 0 já registrados; 1 ")
    again = fiscaliza(*args, env=keys)
    assert again.stdout.startswith("0 autos em rascunho criados; 5 já registrados")
    env_password = {"FISCALIZA_PASSWORD": "uma-senha-longa", **keys}
    created = fiscaliza("users", "add", "--db", db, "--username", "ana", "--name", "Ana Fiscal",
                        "--role", "fiscal", "--registration", "777", env=env_password)
    assert created.returncode == 0, created.stderr
    # lavrados today (the clock in the policy's timezone; no option dates an act)
    year = dt.datetime.now(ZoneInfo("America/Sao_Paulo")).year
    lavrados = fiscaliza("dockets", "lavrar", "--db", db, "--fiscal", "ana", env=keys)
    assert lavrados.returncode == 0, lavrados.stderr
    assert lavrados.stdout.startswith(f"5 autos lavrados: 0001/{year}, 0002/{year}")
    exported = fiscaliza("dockets", "export", "--db", db, "--out", tmp_path / "autos")
    assert exported.stdout.startswith("15 arquivos escritos")  # 5 PDFs, their signatures, 5 bundles
    pdfs = sorted((tmp_path / "autos").glob(f"auto-{year}-*.pdf"))
    assert len(pdfs) == 5
    backdated = fiscaliza("dockets", "lavrar", "--db", db, "--fiscal", "ana", "--on", "2026-12-02", env=keys)
    assert backdated.returncode == 2 and "--on" in backdated.stderr
    # each PDF is the one the Órgão signed (#13: "each issued PDF's digest" signed)
    signed = fiscaliza("verify", pdfs[0], "--public-key", tmp_path / "orgao.pub")
    assert signed.returncode == 0 and "PDF autêntico" in signed.stdout, signed.stdout + signed.stderr
    forged = tmp_path / "forjado.pdf"
    forged.write_bytes(pdfs[0].read_bytes() + b"%% uma linha acrescentada\n")
    refused = fiscaliza("verify", forged, "--public-key", tmp_path / "orgao.pub",
                        "--signature", f"{pdfs[0]}.assinatura.json")
    assert refused.returncode == 1 and "NÃO foi comprovada" in refused.stdout
    record = fiscaliza("audit", "verify", "--db", db, env=keys)
    assert record.returncode == 0 and "5 autos conferidos" in record.stdout, record.stdout + record.stderr


def test_lavrar_by_an_unknown_fiscal_exits_2(tmp_path, keys):
    db = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    assert_bad_input(fiscaliza("dockets", "lavrar", "--db", db, "--fiscal", "ninguem", env=keys), "no active fiscal")


def test_users_add_an_operador_without_operator_exits_2(tmp_path, keys):
    db = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    result = fiscaliza("users", "add", "--db", db, "--username", "x", "--name", "X", "--role", "operador",
                       env={"FISCALIZA_PASSWORD": "uma-senha-longa", **keys})
    assert_bad_input(result, "empresa operadora")


def test_users_add_a_short_password_exits_2(tmp_path, keys):
    db = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    result = fiscaliza("users", "add", "--db", db, "--username", "x", "--name", "X", "--role", "gestor",
                       env={"FISCALIZA_PASSWORD": "curta", **keys})
    assert_bad_input(result, "10 caracteres")


def test_a_writer_without_the_audit_key_exits_2(tmp_path):
    db = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    result = fiscaliza("users", "add", "--db", db, "--username", "x", "--name", "X", "--role", "gestor",
                       env={"FISCALIZA_PASSWORD": "uma-senha-longa", "FISCALIZA_AUDIT_KEY": ""})
    assert_bad_input(result, "no audit key", "fiscaliza keys audit-init")


def test_keys_audit_init_never_overwrites_a_key(tmp_path):
    assert fiscaliza("keys", "audit-init", "--out", tmp_path / "a.key").returncode == 0
    before = (tmp_path / "a.key").read_bytes()
    assert_bad_input(fiscaliza("keys", "audit-init", "--out", tmp_path / "a.key"), "nunca é sobrescrita")
    assert (tmp_path / "a.key").read_bytes() == before
    assert (tmp_path / "a.key").stat().st_mode & 0o077 == 0  # owner-only


def test_ingest_without_a_signing_key_exits_2(tmp_path):
    # an unsigned bundle could be anyone's: bundles are only made with the Órgão's key
    result = fiscaliza("dockets", "ingest", "--db", f"sqlite:///{tmp_path / 's.sqlite3'}", "--infractions",
                       tmp_path / "i.jsonl", "--feed", tmp_path, "--fleet", tmp_path / "f.csv", "--tachograph",
                       tmp_path / "t.jsonl", env={"FISCALIZA_SIGNING_KEY": ""})
    assert_bad_input(result, "no signing key")


def test_audit_verify_names_the_first_broken_entry_and_the_sink_does_not_start(tmp_path, keys):
    import sqlite3

    db = tmp_path / "store.sqlite3"
    url = f"sqlite:///{db}"
    env_password = {"FISCALIZA_PASSWORD": "uma-senha-longa", **keys}
    for name in ("ana", "bia"):
        assert fiscaliza("users", "add", "--db", url, "--username", name, "--name", name.title(), "--role", "fiscal",
                         "--registration", "1", env=env_password).returncode == 0
    anchors = [json.loads(line) for line in (tmp_path / "store.sqlite3.ancoras.jsonl").read_text().splitlines()]
    assert [a["entry_id"] for a in anchors] == [1, 2]  # one per commit, beside the SQLite store
    whole = fiscaliza("audit", "verify", "--db", url, env=keys)
    assert whole.returncode == 0 and "íntegro: 2 registros" in whole.stdout and "2 âncoras" in whole.stdout
    with sqlite3.connect(db) as connection:  # someone with DDL rights rewrites entry 1
        connection.execute("DROP TRIGGER audit_log_no_update")
        connection.execute("UPDATE audit_log SET payload = '{}' WHERE id = 1")
    broken = fiscaliza("audit", "verify", "--db", url, env=keys)
    assert broken.returncode == 1 and "registro de auditoria 1 não confere" in broken.stdout
    # the docket sink checks the same on start and does not extend a broken record
    sink = fiscaliza("dockets", "sink", "--db", url, env={**keys, "FISCALIZA_KAFKA_BOOTSTRAP": "127.0.0.1:9",
                                                          "FISCALIZA_AUDIT_ANCHORS": str(db) + ".ancoras.jsonl"})
    assert sink.returncode == 1 and "REGISTRO DE AUDITORIA ROMPIDO" in sink.stderr and "Traceback" not in sink.stderr


def test_audit_verify_on_a_dropped_or_emptied_audit_log_names_the_break(tmp_path, keys):
    # before: a dropped audit_log ended in a traceback; an emptied one with its anchor file
    # gone printed "íntegro: 0 registros"
    import sqlite3

    db = tmp_path / "store.sqlite3"
    url = f"sqlite:///{db}"
    assert fiscaliza("users", "add", "--db", url, "--username", "ana", "--name", "Ana", "--role", "gestor",
                     env={"FISCALIZA_PASSWORD": "uma-senha-longa", **keys}).returncode == 0
    (tmp_path / "store.sqlite3.ancoras.jsonl").unlink()
    with sqlite3.connect(db) as connection:
        connection.execute("DROP TRIGGER audit_log_no_delete")
        connection.execute("DELETE FROM audit_log")
    emptied = fiscaliza("audit", "verify", "--db", url, env=keys)
    assert emptied.returncode == 1, emptied.stderr
    assert emptied.stdout == ("REGISTRO ROMPIDO: o registro de auditoria está vazio, mas o banco tem 1 usuário: "
                              "registros foram apagados\n")
    with sqlite3.connect(db) as connection:
        connection.execute("DROP TABLE audit_log")
    dropped = fiscaliza("audit", "verify", "--db", url, env=keys)
    assert dropped.returncode == 1 and "Traceback" not in dropped.stderr
    assert dropped.stdout == "REGISTRO ROMPIDO: a tabela audit_log não existe no banco: o registro foi apagado\n"


@pytest.mark.parametrize("command", [["serve"], ["dockets", "sink"]])
def test_serve_and_the_sink_warn_when_a_server_store_is_anchored_in_a_file(tmp_path, keys, command):
    # a PostgreSQL store restored with its anchor file is not detected (README); here the
    # server is not even reachable, and the warning comes first
    unreachable = "postgresql+psycopg://fiscaliza_app:segredo@127.0.0.1:9/fiscaliza"
    result = fiscaliza(*command, "--db", unreachable, "--anchors", tmp_path / "ancoras.jsonl", env=keys)
    warning, error = result.stderr.splitlines()
    assert warning == (f"fiscaliza: atenção: as âncoras do registro de auditoria estão no arquivo {tmp_path / 'ancoras.jsonl'}, "
                       "não no tópico audit-anchors do Kafka: um banco restaurado junto com esse arquivo não é "
                       "detectado (defina FISCALIZA_KAFKA_BOOTSTRAP ou FISCALIZA_AUDIT_ANCHORS=kafka://HOST:PORTA)")
    assert result.returncode == 2 and error.startswith("fiscaliza: error: cannot open the docket store "
                                                       "postgresql+psycopg://fiscaliza_app:***@127.0.0.1:9/fiscaliza")
    assert "segredo" not in result.stderr  # before: the password, in a message that ends up in logs
    on_kafka = fiscaliza(*command, "--db", unreachable, "--anchors", "kafka://127.0.0.1:9", env=keys)
    assert on_kafka.returncode == 2 and "atenção" not in on_kafka.stderr


def test_users_add_refuses_a_second_account_normalizing_the_same_and_passwd_changes_it(tmp_path, keys):
    # before: `TRD` was created beside `trd`, and five failures on it locked the real one out
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    env = {"FISCALIZA_PASSWORD": "uma-senha-longa", **keys}
    made = fiscaliza("users", "add", "--db", url, "--username", " Ana ", "--name", "Ana", "--role", "gestor", env=env)
    assert made.returncode == 0 and made.stdout == "usuário ana (gestor) criado\n", made.stderr
    assert_bad_input(fiscaliza("users", "add", "--db", url, "--username", "ANA", "--name", "Outra", "--role", "gestor",
                               env=env), "o usuário ANA já existe (como ana)")
    changed = fiscaliza("users", "passwd", "--db", url, "--username", "Ana",
                        env={**env, "FISCALIZA_PASSWORD": "outra-senha-longa"})
    assert changed.returncode == 0 and changed.stdout == "senha do usuário ana alterada\n", changed.stderr
    assert_bad_input(fiscaliza("users", "passwd", "--db", url, "--username", "bia", env=env), "usuário desconhecido: bia")
    record = fiscaliza("audit", "verify", "--db", url, env=keys)
    assert record.returncode == 0 and "íntegro: 2 registros" in record.stdout, record.stdout
