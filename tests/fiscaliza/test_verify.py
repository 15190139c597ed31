"""`fiscaliza verify` against an adversary (#32 item 8): hostile signatures, bundles with
bytes around them, the digest the auto prints, and keys named by fingerprint, not owner."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from cli_helpers import assert_bad_input, fiscaliza

from dockets.bundle import BundleMaker
from dockets.signing import create_key, fingerprint


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    root = tmp_path_factory.mktemp("verify-keys")
    return {"orgao": (create_key(root / "orgao.pem"), root / "orgao.pub"),
            "outra": (create_key(root / "outra.pem"), root / "outra.pub")}


@pytest.fixture(scope="module")
def signed_bundle(demo_day, keys, tmp_path_factory):
    """The demo day's D-11 bundle signed by the Órgão's key, as a file."""
    orgao, _ = keys["orgao"]
    maker = BundleMaker.for_files(demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context.fleet,
                                  "America/Sao_Paulo", signer=orgao)
    path = tmp_path_factory.mktemp("verify-bundle") / "auto-evidencias.zip"
    path.write_bytes(maker.bundle(demo_day.record("D-11")))
    return path


def test_a_pdf_signature_nested_100000_deep_is_one_line_and_exit_2(tmp_path):
    # before: RecursionError traceback from json.loads
    pdf = tmp_path / "x.pdf"
    pdf.write_bytes(b"%PDF-1.4\n%%EOF\n")
    (tmp_path / "x.pdf.assinatura.json").write_text("[" * 100_000)
    assert_bad_input(fiscaliza("verify", pdf), "is not a signature")


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_bundle_with_junk_around_it_is_refused(signed_bundle, keys, tmp_path, where):
    # before: exit 0 (zipfile skips the junk), while its SHA-256 was not the auto's
    data = signed_bundle.read_bytes()
    junk = b"JUNK" * 1000
    forged = tmp_path / "junk.zip"
    forged.write_bytes(junk + data if where == "before" else data + junk)
    result = fiscaliza("verify", forged, "--public-key", keys["orgao"][1])
    assert_bad_input(result, "este não é o pacote que o Órgão gerou")


def test_verify_compares_the_bundle_with_the_digest_printed_on_the_auto(signed_bundle, keys, tmp_path):
    data = signed_bundle.read_bytes()
    printed = hashlib.sha256(data).hexdigest()
    # typed as read off the page: groups and capitals are fine
    upheld = fiscaliza("verify", signed_bundle, "--public-key", keys["orgao"][1],
                       "--sha256", " ".join(re.findall("....", printed.upper())))
    assert upheld.returncode == 0, upheld.stdout + upheld.stderr
    assert "Identidade: o SHA-256 confere com o impresso no auto" in upheld.stdout
    # another (even a genuine) bundle is not the one this auto names
    other = hashlib.sha256(b"another auto's bundle").hexdigest()
    refused = fiscaliza("verify", signed_bundle, "--public-key", keys["orgao"][1], "--sha256", other)
    assert refused.returncode == 1
    assert f"o SHA-256 impresso no auto é {other}: este não é o pacote do auto" in refused.stdout
    assert "RESULTADO: pacote DIFERENTE do que o auto identifica" in refused.stdout
    assert_bad_input(fiscaliza("verify", signed_bundle, "--sha256", "abc"), "--sha256 must be the 64")


def test_a_key_passed_with_public_key_is_named_by_id_and_fingerprint_not_as_the_organs(signed_bundle, keys,
                                                                                         tmp_path):
    # before: any key given was labelled "do Órgão Gerencial", whoever made it
    forger, forger_public = keys["outra"]
    pdf = tmp_path / "auto.pdf"
    pdf.write_bytes(b"%PDF-1.4\nforjado\n%%EOF\n")
    (tmp_path / "auto.pdf.assinatura.json").write_text(json.dumps(forger.sign(pdf.read_bytes())))
    result = fiscaliza("verify", pdf, "--public-key", forger_public)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Órgão Gerencial" not in result.stdout
    shown = f"chave {forger.key_id} (impressão digital SHA-256 {fingerprint(forger.public)})"
    assert f"Chave informada outra.pub: {shown}" in result.stdout
    assert f"Autenticidade: assinatura Ed25519 válida da {shown}" in result.stdout
    assert f"RESULTADO: PDF autêntico, assinado pela chave {forger.key_id}" in result.stdout
    # the fingerprint is the key's whole SHA-256: its id is the first 16 digits
    assert fingerprint(forger.public).replace(" ", "").startswith(forger.key_id)


@pytest.fixture(scope="module")
def issued_auto(demo_day, keys, tmp_path_factory):
    """The demo day's D-11 auto lavrado and signed by the Órgão, exported as a lawyer gets it:
    its PDF, the PDF's signature beside it, its bundle; and the A-07 auto's bundle."""
    import datetime as dt

    from sqlalchemy import select
    from stores import open_test_store

    from dockets import workflow
    from dockets.calendar import BusinessCalendar
    from dockets.document import make_renderer
    from dockets.service import Actor, perform
    from dockets.sink import ingest_replay
    from dockets.store import Docket, DocketPdf, EvidenceBundle
    from dockets.users import create_user
    from rules.joao_neiva.anexo_i import LAW

    orgao, _ = keys["orgao"]
    root = tmp_path_factory.mktemp("issued-auto")
    sessions = open_test_store(f"sqlite:///{root / 'autos.sqlite3'}")
    calendar = BusinessCalendar.for_municipality("ES", law=LAW)
    try:
        ingest_replay(sessions, demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context,
                      demo_day.records(), signer=orgao)
        with sessions.begin() as session:
            fiscal = Actor.of(create_user(session, username="fiscal", full_name="Fiscal", role="fiscal",
                                          password="senha-de-teste", registration="1"))
            docket_id = session.scalar(select(Docket.id).where(Docket.code == "D-11"))
            perform(session, fiscal, docket_id, workflow.Lavrar(on=dt.date(2026, 12, 2)), calendar, signer=orgao,
                    renderer=make_renderer(session, calendar=calendar, issuer_name="Órgão Gerencial — teste"))
        with sessions() as session:
            pdf = session.get(DocketPdf, docket_id)
            (root / "auto.pdf").write_bytes(pdf.data)
            (root / "auto.pdf.assinatura.json").write_text(json.dumps(pdf.signature))
            (root / "auto-evidencias.zip").write_bytes(session.get(EvidenceBundle, docket_id).data)
            other = session.scalar(select(Docket.id).where(Docket.code == "A-07"))
            (root / "outro-evidencias.zip").write_bytes(session.get(EvidenceBundle, other).data)
    finally:
        sessions.kw["bind"].dispose()
    return root


def test_verify_takes_the_autos_pdf_and_compares_the_digest_it_prints(issued_auto, keys, tmp_path):
    public = keys["orgao"][1]
    upheld = fiscaliza("verify", issued_auto / "auto-evidencias.zip", "--auto", issued_auto / "auto.pdf",
                       "--public-key", public)
    assert upheld.returncode == 0, upheld.stdout + upheld.stderr
    assert f"Auto auto.pdf: assinatura Ed25519 válida da chave {keys['orgao'][0].key_id}" in upheld.stdout
    assert "Identidade: o SHA-256 confere com o impresso no auto" in upheld.stdout
    # a genuine bundle of another auto is not this auto's
    other = fiscaliza("verify", issued_auto / "outro-evidencias.zip", "--auto", issued_auto / "auto.pdf",
                      "--public-key", public)
    assert other.returncode == 1 and "RESULTADO: pacote DIFERENTE do que o auto identifica" in other.stdout
    # a PDF printing any digest proves nothing unless it is the one signed
    forged = tmp_path / "auto.pdf"
    forged.write_bytes((issued_auto / "auto.pdf").read_bytes() + b"\n%% alterado\n")
    (tmp_path / "auto.pdf.assinatura.json").write_bytes((issued_auto / "auto.pdf.assinatura.json").read_bytes())
    refused = fiscaliza("verify", issued_auto / "auto-evidencias.zip", "--auto", forged, "--public-key", public)
    assert refused.returncode == 1 and "a autenticidade do PDF do auto NÃO foi comprovada" in refused.stdout
    assert_bad_input(fiscaliza("verify", issued_auto / "auto-evidencias.zip", "--auto", issued_auto / "auto.pdf",
                               "--sha256", "0" * 64), "either --sha256 or --auto")


# --- verify --without: the defence's own experiment (issue 30) ---

def _jumped_core(jumped_day, disputed):
    from dockets.bundle import read_bundle, sha256
    from dockets.rejudgment import bundle_context, judge_with, rejudge

    bundle = read_bundle(jumped_day.data)
    return rejudge(bundle, sha256(jumped_day.data), disputed, judge_with(bundle_context(bundle)), "America/Sao_Paulo")


def _lines_of(jumped_day, msg_ids) -> list[int]:
    from dockets.bundle import read_bundle
    from dockets.rejudgment import readings

    numbers = {r.msg_id: r.number for r in readings(read_bundle(jumped_day.data), "America/Sao_Paulo")}
    return [numbers[name] for name in msg_ids]


def test_verify_without_the_three_fixes_of_a_multipath_jump_yields_the_d11_standing(jumped_day):
    # the core's answer (tests/dockets/test_rejudgment.py), through the command line: 11 of 14
    # fixes left off the itinerary, 130 s and > 300 m, the same 200 UFIR
    from dockets.rejudgment import Disputed

    first, second, third = _lines_of(jumped_day, jumped_day.jump)
    result = fiscaliza("verify", jumped_day.path, "--without", f"{first},{second}", "--without", str(third))
    assert result.returncode == 0, result.stderr
    core = _jumped_core(jumped_day, Disputed(msg_ids=jumped_day.jump))
    assert core.outcome == "stands"
    assert "RESULTADO: sem as leituras contestadas, a infração subsiste (multa de 200 UFIR)" in result.stdout
    assert f"SHA-256 do conjunto {core.disputed_sha256}" in result.stdout
    assert "11 registros" in result.stdout and "Pacote inteiro reexecutado: reproduz" in result.stdout
    assert f"para refazê-lo: fiscaliza verify {jumped_day.path.name} --without {first},{second} --without {third}" \
        in result.stdout


def test_verify_without_the_span_of_the_episode_yields_what_the_core_yields(jumped_day):
    from dockets.rejudgment import Disputed

    start, end = (name.split("/", 1)[1].split("#")[0] for name in (jumped_day.episode[0], jumped_day.episode[-1]))
    # the span as typed, without an offset: read in the feed's zone (-03:00)
    result = fiscaliza("verify", jumped_day.path, "--without-span", "tachograph:JN-2014", start[:19], end[:19])
    assert result.returncode == 0, result.stderr
    core = _jumped_core(jumped_day, Disputed(msg_ids=jumped_day.episode))
    assert core.outcome in ("insufficient_evidence", "disappears")
    words = {"insufficient_evidence": "passa a evidência insuficiente", "disappears": "a infração desaparece"}
    assert f"RESULTADO: sem as leituras contestadas, {words[core.outcome]}." in result.stdout
    assert f"SHA-256 do conjunto {core.disputed_sha256}" in result.stdout


@pytest.mark.parametrize(("arguments", "needle"), [
    (["--without", "99999999"], "fora do arquivo tachograph.jsonl"),
    (["--without", "12,x"], "leitura inválida: 'x'"),
    (["--without", "18-12"], "intervalo de linhas invertido"),
    (["--without-span", "JN-2014", "ontem", "hoje"], "data e hora inválida: 'ontem'"),
    (["--without-span", "JN-2014", "2026-12-01T10:00:00"], "--without-span takes three values"),
    (["--without-span", "JN-9999", "2026-12-01T10:00:00", "2026-12-01T11:00:00"], "nenhuma leitura de JN-9999"),
    (["--without", "12", "--no-such-option"], "unexpected argument '--no-such-option'"),
])
def test_verify_without_a_reading_the_bundle_does_not_hold_is_one_line_and_exit_2(jumped_day, arguments, needle):
    assert_bad_input(fiscaliza("verify", jumped_day.path, *arguments), needle)
