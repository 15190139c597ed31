"""Evidence on the auto that reads as law, not code (#15 item 5): the PDF of an auto of
each automatic code, read as text (pdftotext) as the operator's lawyer reads it, prints
no evidence key, no Python value and no ISO date."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from sqlalchemy import select

from dockets.document import render_pdf
from dockets.store import Docket, EvidenceBundle
from rules.joao_neiva.pack import CATALOGUE

ISSUER = "Prefeitura Municipal de João Neiva — Órgão Gerencial do Transporte Coletivo"

# snake_case identifiers (msg_id, speed_kmh, max_distance_m): no Portuguese word has an underscore
RAW_KEY = re.compile(r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b")
PYTHON_VALUE = re.compile(r"\b(?:True|False|None)\b|\[|\{'|\{\"")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# 155.3, 2.2 min, -19.767 (not 5.274, Brazil's thousands separator)
DECIMAL_POINT = re.compile(r"\d\.(?!\d{3}(?!\d))\d")


def _text(pdf: bytes, tmp_path) -> str:
    tool = shutil.which("pdftotext")
    assert tool, "pdftotext missing: install the Debian package poppler-utils (scripts/test does)"
    path = tmp_path / "auto.pdf"
    path.write_bytes(pdf)
    return subprocess.run([tool, str(path), "-"], capture_output=True, text=True, check=True).stdout


def auto_text(sessions, code: str, calendar, tmp_path) -> tuple[Docket, str]:
    with sessions() as session:
        docket = session.scalar(select(Docket).where(Docket.code == code).order_by(Docket.id))
        assert docket is not None, f"no auto {code} in the store"
        bundle = session.get(EvidenceBundle, docket.id).data
        session.expunge(docket)
    return docket, _text(render_pdf(docket, bundle, calendar=calendar, issuer_name=ISSUER), tmp_path)


def test_the_day_has_a_confirmed_auto_of_every_automatic_code(every_code_sessions):
    with every_code_sessions() as session:
        assert set(session.scalars(select(Docket.code))) == set(CATALOGUE)


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_the_auto_reads_as_law_not_code(every_code_sessions, calendar, tmp_path, code):
    docket, text = auto_text(every_code_sessions, code, calendar, tmp_path)
    evidence_page = text[text.index("Evidências (art. 6º"):]
    versions = docket.infraction["evidence"]["policy_version"], docket.infraction["evidence"]["engine_version"]
    assert all(v in text for v in versions)
    numbers = text.replace(versions[0], "").replace(versions[1], "")  # identifiers, not quantities
    assert RAW_KEY.findall(text) == [], "evidence keys printed as code"
    assert PYTHON_VALUE.findall(text) == [], "Python values printed"
    assert ISO_DATE.findall(text) == [], "ISO dates printed"
    assert DECIMAL_POINT.findall(numbers) == [], "a decimal point where Brazil writes a comma"
    assert "1 itens" not in text
    assert len(evidence_page.splitlines()) > 5  # the evidence is there, in words


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_d11_tells_the_measured_distance_from_the_tolerated_one(every_code_sessions, calendar, tmp_path):
    docket, text = auto_text(every_code_sessions, "D-11", calendar, tmp_path)
    evidence = docket.infraction["evidence"]
    farthest = f"{evidence['episodes'][0]['max_distance_m']:.1f}".replace(".", ",")  # 155,7 on this day
    flat = _flat(text)
    assert "distância máxima tolerada do itinerário 50 m" in flat
    assert flat.count("tolerada") == 1  # the episode's distance is a measurement, not a tolerance
    assert "maior distância registrada" in flat and f"{farthest} m" in flat


def test_d13_names_the_vehicle_and_its_plate_and_computes_the_fine_in_words(every_code_sessions, calendar,
                                                                           every_code_day, tmp_path):
    docket, text = auto_text(every_code_sessions, "D-13", calendar, tmp_path)
    evidence = docket.infraction["evidence"]
    vehicle = evidence["trips"][0]["vehicle_id"]
    plate = every_code_day.context.fleet[vehicle].plate
    flat = _flat(text)
    assert docket.vehicle_id is None and f"Veículo (número de ordem) {vehicle} · placa {plate}" in flat
    off, realized = evidence["off_schedule_trips"], evidence["realized_trips"]  # 1 of 68 on this day
    pct = f"{100 * off / realized:.2f}".replace(".", ",")
    assert (f"multa de 200 UFIR acrescida de 100 % a cada 10 % de viagens fora do horário: {off} de {realized} "
            f"viagens realizadas = {pct} % das viagens → nenhum acréscimo → 200 UFIR") in flat
    assert "floor" not in flat


@pytest.mark.parametrize("code", ["D-19", "D-21"])
def test_a_catraca_auto_charts_the_counter_and_seal(every_code_sessions, calendar, tmp_path, code):
    _, text = auto_text(every_code_sessions, code, calendar, tmp_path)
    assert "Registros da catraca no dia da infração: contador de passagens, estado do lacre" in _flat(text)


def test_every_demo_auto_states_the_readings_its_verdict_needs(sessions, calendar, tmp_path):
    # issue 30 item 3: leave-one-out over the readings each finding cites, in the PDF; the demo
    # day's D-21 cites some 240 catraca readings, more than the policy's 16 runs: 16 of them,
    # evenly spaced, the same on any machine
    said = {}
    for code in ("A-07", "C-01", "D-11", "D-13", "D-21"):
        _, text = auto_text(sessions, code, calendar, tmp_path)
        words = " ".join(text.split())
        said[code] = words[words.index("Leituras de que depende a constatação"):][:400]
    for code in ("A-07", "C-01", "D-11", "D-13"):
        assert "a infração subsiste sem qualquer leitura isolada" in said[code], said[code]
    assert re.search(r"a infração subsiste sem cada leitura verificada \(verificadas 16 de \d+ leituras citadas, "
                     r"igualmente espaçadas, a primeira e a última incluídas", said["D-21"]), said["D-21"]


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_the_printed_commands_copy_out_whole(every_code_sessions, calendar, tmp_path, code):
    # a line broken at a hyphen inside a word reads as a word hyphenated at the line's end:
    # pdftotext, like a reader copying the command, joins it one dash short
    # ("auto-2026-0001-C-01evidencias.zip", "-without")
    docket, text = auto_text(every_code_sessions, code, calendar, tmp_path)
    words = text.split()
    named = [word for word in words if docket.file_stem in word]
    assert named and set(named) <= {f"{docket.file_stem}-evidencias.zip", f"{docket.file_stem}.pdf"}, named
    assert {word for word in words if "without" in word or "public-key" in word} <= {"--without", "--public-key"}
