"""Lei 179/1991 (Canarana) as coded against the law's own text (../shared/legislation)."""

import datetime as dt
import re
from pathlib import Path

import msgspec
import pytest

from kernel.policy import PolicyError, load_policy
from rules.canarana.lei_179_1991 import ARTICLES, FINE_RANGE_VR, LAW, LEI_179, OCR_CORRECTIONS, TERMS
from rules.model import Scope, make_infraction
from rules.packs import pack_of

ROOT = Path(__file__).resolve().parents[3]
LAW_FILE = ROOT.parent / "shared" / "legislation" / "canarana-lei-179-1991.txt"
POLICY = ROOT / "kernel" / "policies" / "canarana.toml"
LINES = LAW_FILE.read_text(encoding="utf-8").splitlines()

# code -> (the line it starts on, the line after its last), as printed
SPANS = {
    "art. 6º II": ("II - interromper o serviço", "III - aumentar ou diminuir"),
    "art. 10": ("Art. 10 - ", "$ 1º - Não se incluem"),
    "art. 10 § 5º": ("-$ 5º - ", '$ 6" - '),
    "art. 13": (". Art. 13 - ", "$ 1º - Em'cada"),  # a speck before the label
}
LABEL = re.compile(r"^(?:\. )?(?:Art\. \d+|-?\$ \dº|[IVX]+) - ")


def printed(code: str) -> str:
    """The provision's text as the OCR prints it: its lines joined by spaces, label dropped."""
    first, after = SPANS[code]
    start = next(i for i, line in enumerate(LINES) if line.strip().startswith(first))
    end = next(i for i in range(start + 1, len(LINES)) if LINES[i].strip().startswith(after))
    return LABEL.sub("", " ".join(line.strip() for line in LINES[start:end]))


def restored(text: str) -> str:
    for damaged, fixed in OCR_CORRECTIONS.items():
        text = text.replace(damaged, fixed)
    return text


def test_the_law_lists_exactly_the_provisions_read_from_the_file():
    assert [a.code for a in LEI_179] == list(SPANS)


@pytest.mark.parametrize("code", list(SPANS))
def test_text_is_the_law_letter_for_letter(code):
    assert ARTICLES[code].text == restored(printed(code))


def test_every_correction_names_a_fragment_really_in_the_ocr():
    texts = [printed(code) for code in SPANS]
    for damaged in OCR_CORRECTIONS:
        assert any(damaged in text for text in texts), damaged


def test_waiting_time_is_art_10_paragraph_5_not_art_11():
    # § 5º follows art. 10's § 4º (a page break between them) and no caput comes between;
    # the article after § 6º is printed "Art. 21" between arts. 10 and 12: art. 11 misread
    # (a real art. 21, on the lighting of the vehicles, follows art. 20)
    heads = [(i, line.strip()) for i, line in enumerate(LINES)
             if re.match(r"^-?(?:Art\.|\$|\. Art\.) ?\d", line.strip())]
    order = [h for _, h in heads]
    p4 = next(i for i, h in enumerate(order) if h.startswith("$ 4º - O número das linhas"))
    assert order[p4 + 1].startswith("-$ 5º") and order[p4 + 2].startswith('$ 6"')
    assert order[p4 + 3].startswith("Art. 21 - A Prefeitura") and order[p4 + 4].startswith("Art. 12")
    assert sum(h.startswith("Art. 21 ") for h in order) == 2
    assert "30(trinta) minutos" in ARTICLES["art. 10 § 5º"].text


def test_automatic_is_what_the_pack_detects():
    # art. 10 (itinerary or timetable altered without authorization) stays a fiscal's
    assert [a.code for a in LEI_179 if a.automatic] == ["art. 6º II", "art. 10 § 5º", "art. 13"]


def test_fines_are_art_39s_bounds_and_the_policy_table():
    text = " ".join(LINES)
    assert "multa ao concessionário que variará de 1VR a 5.000VR" in text
    assert FINE_RANGE_VR == (1, 5000) and LAW.fine_range == FINE_RANGE_VR and LAW.fine_unit == "VR"
    assert {a.group for a in LEI_179} == {"multa", "rescisão"}
    assert ARTICLES["art. 6º II"].group == "rescisão"  # art. 6º: "sob pena de rescisão", not art. 39
    # the shipped table fines every automatic article of the multa group within the bounds
    table = load_policy(POLICY).fines.table
    for article in LEI_179:
        if article.automatic and article.group == "multa":
            assert 1 <= table[article.code] <= 5000, article.code


def test_terms_are_art_41s_payment_only():
    text = " ".join(LINES)
    assert "devera ser efetuatbo o respectivo pagamento no prazo de - 30(trinta) dias" in text
    assert TERMS.pagamento.days == 30 and not TERMS.pagamento.business_days and TERMS.pagamento.basis == "art. 41"
    assert (TERMS.notificacao, TERMS.defesa, TERMS.recurso) == (None, None, None)  # the law sets none
    assert LAW.recidivism is None


def test_the_shipped_policy_selects_canarana():
    policy = load_policy(POLICY)
    pack = pack_of(policy)
    assert pack.law is LAW and list(pack.catalogue) == ["art. 6º II", "art. 10 § 5º", "art. 13"]
    assert (policy.policy.municipality, policy.policy.state, policy.policy.timezone) == \
        ("Canarana", "MT", "America/Cuiaba")
    assert policy.waiting_time.max_wait_s == 1800  # 30 (trinta) minutos, art. 10 § 5º a and b
    assert policy.terminal_crowding.max_share_pct == 15  # art. 13: "mais de 15% (quinze por cento)"
    assert policy.interruption.max_interruption_s == 72 * 3600  # art. 6º II: "72(setenta e duas) horas"
    assert pack.rules_for(Scope.SERVICE_DAY) == [pack.rule(code) for code in ("art. 6º II", "art. 10 § 5º", "art. 13")]
    # art. 6º II is not in the fines table: rescisão, never a fine (art. 39 does not reach it)
    assert "art. 6º II" not in policy.fines.table


def test_an_infraction_without_a_fine_in_the_table_is_refused():
    # the law leaves each fine to the Prefeitura's table (art. 39 § único): never a guess
    policy = load_policy(POLICY)
    bare = msgspec.structs.replace(policy, fines=msgspec.structs.replace(policy.fines, table={}))
    args = dict(identity=("x",), operator_id="OP1", service_date=dt.date(2026, 12, 1),
                occurred_at=dt.datetime(2026, 12, 1, 6, tzinfo=policy.tz), description="x", evidence={})
    assert make_infraction("art. 10 § 5º", policy, **args).fine_ufir == 100
    with pytest.raises(PolicyError, match="no fine for 'art. 10 § 5º'"):
        make_infraction("art. 10 § 5º", bare, **args)
    high = msgspec.structs.replace(policy, fines=msgspec.structs.replace(policy.fines, table={"art. 10 § 5º": 5001}))
    with pytest.raises(PolicyError, match="outside the law's 1..5000 VR"):
        make_infraction("art. 10 § 5º", high, **args)
