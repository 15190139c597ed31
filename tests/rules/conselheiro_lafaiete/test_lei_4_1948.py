"""Lei 4/1948 as coded against the law's own text (../shared/legislation)."""

import re
from pathlib import Path

import pytest

from rules.conselheiro_lafaiete.lei_4_1948 import (
    ARTICLES,
    FINE_RANGE_B_CR,
    FINES_CR,
    LAW,
    LEI_4_1948,
    OCR_CORRECTIONS,
)

LAW_FILE = Path(__file__).resolve().parents[4] / "shared" / "legislation" / "conselheiro-lafaiete-lei-4-1948.txt"


def printed() -> str:
    """The law file as one line: lines joined by a space, the OCR's U+FFFE (a word broken
    at a line end) removed, as lei_4_1948's docstring reads it."""
    return " ".join(line.strip() for line in LAW_FILE.read_text(encoding="utf-8").splitlines()).replace("\ufffe", "")


def restored() -> str:
    text = printed()
    for damaged, repaired in OCR_CORRECTIONS.items():
        text = text.replace(damaged, repaired)
    return text


PRINTED, RESTORED = printed(), restored()


@pytest.mark.parametrize("damaged", list(OCR_CORRECTIONS))
def test_every_correction_names_one_fragment_really_printed(damaged):
    # once: a correction must not repair (or damage) text elsewhere in the law
    assert PRINTED.count(damaged) == 1


@pytest.mark.parametrize("code", list(ARTICLES))
def test_article_text_is_the_law_letter_for_letter(code):
    assert ARTICLES[code].text in RESTORED


def test_codes_follow_the_scheme():
    # "art. N", "art. N § único" or "art. N L" (the law's letter)
    assert all(re.fullmatch(r"art\. \d+( § único| [A-G])?", code) for code in ARTICLES)
    assert list(ARTICLES) == [
        "art. 14 § único", "art. 17", "art. 19 § único",
        "art. 33 A", "art. 33 B", "art. 33 C", "art. 33 D", "art. 33 E", "art. 33 F", "art. 33 G",
        "art. 42 A", "art. 42 C", "art. 42 D", "art. 42 E", "art. 42 F"]


@pytest.mark.parametrize("letter", ["A", "C", "D", "E", "F"])
def test_art_42_letters_carry_the_fine_printed_in_them(letter):
    # "de Cr$20,00 por viagem ..." -> 20; C 50, D 50, E 100, F 200 cruzeiros of 1948
    article = ARTICLES[f"art. 42 {letter}"]
    printed_fine = int(re.match(r"de Cr\$(\d+),00 ", article.text).group(1))
    assert article.fine == printed_fine == FINES_CR[letter]
    assert article.group == letter and article.fine_max is None


def test_art_42_fines_are_the_printed_amounts():
    assert FINES_CR == {"A": 20, "C": 50, "D": 50, "E": 100, "F": 200}
    assert FINE_RANGE_B_CR == (5, 30)
    assert "B)— de Cr$5,00 a Cr$30,00 no caso de infração de qualquer das letras do artigo 33º" in RESTORED


def test_art_33_letters_are_fined_by_art_42_b_as_a_range():
    letters = [a for a in LEI_4_1948 if a.code.startswith("art. 33 ")]
    assert [a.code[-1] for a in letters] == list("ABCDEFG")
    # Cr$ 5,00 floor, Cr$ 30,00 ceiling
    assert {(a.group, a.fine, a.fine_max) for a in letters} == {("B", 5, 30)}
    assert all("art. 42, letra B" in a.legal_basis for a in letters)


def test_precepts_without_a_fine_of_their_own_take_the_reading_of_the_docstring():
    # art. 14 § único ~ 42 A (Cr$ 20,00), art. 17 ~ 42 F (Cr$ 200,00): analogy, art. 43;
    # art. 19 § único is art. 33 A's duty: 42 B directly (Cr$ 5,00 to 30,00)
    turning_back, other_line, off_stop = (ARTICLES[c] for c in ("art. 14 § único", "art. 17", "art. 19 § único"))
    assert (turning_back.group, turning_back.fine) == ("A", 20)
    assert (other_line.group, other_line.fine) == ("F", 200)
    assert (off_stop.group, off_stop.fine, off_stop.fine_max) == ("B", 5, 30)
    assert "analogia (art. 43)" in turning_back.legal_basis and "analogia (art. 43)" in other_line.legal_basis
    assert "analogia" not in off_stop.legal_basis


def test_only_what_the_pack_detects_is_automatic():
    # turning back, another line (art. 17: the fleet's licensed lines and the catraca) and
    # stopping outside the marked stops by the shared track, trip and door detectors
    assert sorted(a.code for a in LEI_4_1948 if a.automatic) == \
        ["art. 14 § único", "art. 17", "art. 19 § único", "art. 42 A"]


def test_law_names_its_unit_and_the_policy_maps_the_same_unit():
    from kernel.policy import load_policy
    from rules.packs import PACKS

    policy = load_policy(Path(__file__).resolve().parents[3] / "kernel" / "policies" / "conselheiro-lafaiete.toml")
    assert LAW.fine_unit == policy.fines.unit == "Cr$ de 1948"
    assert PACKS["conselheiro-lafaiete"].law is LAW


def test_terms_are_art_42_paragraphs_2_and_4():
    assert "dentro de quinze dias a contar da data da imposição" in RESTORED  # § 2º
    assert "recurso para o Prefeito, dentro do prazo de 5 dias" in RESTORED  # § 4º
    terms = LAW.terms
    assert (terms.pagamento.days, terms.pagamento.business_days, terms.pagamento.basis) == (15, False, "art. 42, § 2º")
    assert (terms.recurso.days, terms.recurso.business_days, terms.recurso.basis) == (5, False, "art. 42, § 4º")
    assert terms.defesa is None and terms.notificacao is None  # the law sets neither


def test_recidivism_doubles_as_art_42_paragraph_1():
    assert "As multas serão cobradas em dôbro, nos casos de reincidência" in RESTORED
    assert (LAW.recidivism.factor, LAW.recidivism.basis) == (2, "art. 42, § 1º")


def test_a_fine_within_the_laws_range_is_the_policys_and_stays_inside_it():
    # art. 42 B: Cr$ 5,00 to 30,00 for art. 33's duties (art. 19 § único reads as 33 A)
    import msgspec

    from kernel.policy import PolicyError, load_policy, shipped_policy_path
    from rules.laws import law_of
    from rules.model import fine_of

    policy = load_policy(shipped_policy_path("conselheiro-lafaiete"))
    law = law_of(policy)
    article = law.article("art. 19 § único")
    assert fine_of(law, article, policy) == 5  # no graded amount set: the law's floor

    def graded(amount: int):
        return msgspec.structs.replace(policy, fines=msgspec.structs.replace(
            policy.fines, table={"art. 19 § único": amount}))

    assert fine_of(law, article, graded(20)) == 20  # within 5..30
    with pytest.raises(PolicyError, match=r"outside the law's 5\.\.30"):
        fine_of(law, article, graded(40))
