"""Anexo I as coded against the law's own text (../shared/legislation)."""

import re
from collections import Counter
from pathlib import Path

import pytest

from rules.joao_neiva.anexo_i import ANEXO_I, ARTICLES, GROUP_FINES_UFIR, OCR_CORRECTIONS, Category

LAW = Path(__file__).resolve().parents[4] / "shared" / "legislation" / "joao-neiva-lei-867-1998.txt"
CATEGORIES = {"pessoal de operação": Category.PESSOAL, "veículo": Category.VEICULO,
              "Administração": Category.ADMINISTRACAO}


def printed_codes() -> dict[str, tuple[Category, str]]:
    """Code -> (category, text) as printed in Capítulo II of Anexo I.

    D-18 and D-19 lost their labels in the OCR ("a 18 -", "- 19 -"); page headers
    ("PREFEITURA…", "AV. …", "CEP …") interrupt the text and are skipped.
    """
    lines = LAW.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("GRUPO \u201cA\u201d"))
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith("Art. 13"))
    codes, category, current = {}, None, None
    for line in lines[start:end]:
        if line.startswith(("PREFEITURA", "AV. ", "CEP", "GRUPO")):
            continue
        heading = re.match(r"^Quanto (?:ao|à) (.*?)\s*:", line)
        if heading:
            category, current = CATEGORIES[heading.group(1)], None
            continue
        label = re.match(r"^([A-D])\s*-\s*(\d{2})\s*-\s*(.*)$", line) or re.match(r"^(a|-) (\d{2}) - (.*)$", line)
        if label:
            group = label.group(1) if label.group(1) in "ABCD" else "D"
            current = f"{group}-{label.group(2)}"
            codes[current] = [category, label.group(3).strip()]
        elif current and line.strip():
            codes[current][1] += " " + line.strip()
    return {code: (cat, text) for code, (cat, text) in codes.items()}


PRINTED = printed_codes()


def test_catalogue_has_every_code_of_the_law_in_order():
    # groups A, B, C, D hold 15, 26, 17 and 23 codes as printed: 81 in all
    assert [a.code for a in ANEXO_I] == list(PRINTED)
    assert Counter(a.group for a in ANEXO_I) == {"A": 15, "B": 26, "C": 17, "D": 23}


@pytest.mark.parametrize("code", list(PRINTED))
def test_catalogue_text_is_the_law_letter_for_letter(code):
    category, text = PRINTED[code]
    if code in OCR_CORRECTIONS:
        damaged, restored = OCR_CORRECTIONS[code]
        assert damaged in text  # the correction names a fragment that really is in the OCR
        text = text.replace(damaged, restored)
    assert ARTICLES[code].text == text
    assert ARTICLES[code].category == category


def test_d18_and_d19_labels_are_restored():
    assert ARTICLES["D-18"].text == "deixar de cumprir determinação de Órgão Gerencial."
    assert ARTICLES["D-19"].text.startswith("operar veículo sem dispositivo de controle de numeração")
    assert ARTICLES["D-19"].text.endswith("ou catraca violada.")


@pytest.mark.parametrize("group,fine", [("A", 50), ("B", 100), ("C", 150), ("D", 200)])
def test_fines_follow_art_3(group, fine):
    # art. 3: A 50, B 100, C 150, D 200 UFIR
    assert GROUP_FINES_UFIR[group] == fine
    assert {a.fine for a in ANEXO_I if a.group == group} == {fine}


def test_automatic_codes_are_the_nine_of_the_design():
    assert sorted(a.code for a in ANEXO_I if a.automatic) == [
        "A-07", "B-04", "C-01", "D-11", "D-12", "D-13", "D-19", "D-21", "D-22"]
