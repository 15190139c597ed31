"""A law for the shared detectors' tests (rules.turn_back, rules.unmarked_stop,
rules.other_line): the articles of Conselheiro Lafaiete's Lei 4/1948 they were written
for, filed under the codes that law writes them with, and the shipped policy naming it
with their optional sections. The pack's real law lives in rules.conselheiro_lafaiete; this one only lets
`make_infraction` find the articles."""

from __future__ import annotations

import msgspec
import pytest

from kernel.policy import OtherLine, TurnBack, UnmarkedStop, load_policy
from rules import laws
from rules.law import Article, Law, law_articles

TURN_BACK = "art. 14 § único"
UNMARKED_STOP = "art. 19 § único"
OTHER_LINE = "art. 17"

LAW = Law(
    code="teste-detectores-partilhados",
    title="Lei de teste (artigos da Lei 4/1948 de Conselheiro Lafaiete)",
    fine_unit="UFIR",
    articles=law_articles((
        Article(TURN_BACK, "Os ônibus deverão sempre percorrer em seu itinerário, toda a extensão da linha ou "
                "ramal a que servirem, não podendo, em caso algum, retroceder antes de atingido o ponto terminal "
                "da mesma linha, salvo determinação em contrário da autoridade do trânsito, por motivo imperioso.",
                True, "multa", 100, "Art. 14, parágrafo único"),
        Article(UNMARKED_STOP, "É expressamente proibida a parada para receber ou deixar passageiros fora dos "
                "pontos predeterminados.", True, "multa", 100, "Art. 19, parágrafo único"),
        Article(OTHER_LINE, "Os veículos de um concessionário não poderão, salvo expressa autorização da "
                "Prefeitura, transitar em outra linha conduzindo passageiro.", True, "multa", 200, "Art. 17"),
    )),
)

# turn back: 200 m behind (> 2 x the 50 m corridor), 3 fixes, silences up to 120 s;
# unmarked stop: at most 3 km/h, more than 80 m from every stop (> 50 m corridor),
# 3 pings over at least 20 s, at most 60 s apart; other line: at least 2 boardings, the
# catraca silent at most 600 s after the departure and before the arrival
SHIPPED = load_policy()
POLICY = msgspec.structs.replace(
    SHIPPED, policy=msgspec.structs.replace(SHIPPED.policy, code=LAW.code),
    turn_back=TurnBack(min_reversal_m=200, min_consecutive_pings=3, max_ping_gap_s=120),
    unmarked_stop=UnmarkedStop(max_speed_kmh=3, min_stop_distance_m=80, min_consecutive_pings=3,
                               min_duration_s=20, max_ping_gap_s=60),
    other_line=OtherLine(min_boardings=2, max_silence_s=600))


def known(monkeypatch: pytest.MonkeyPatch) -> Law:
    """The test law known to rules.laws for the test's duration."""
    monkeypatch.setitem(laws.LAWS, LAW.code, LAW)
    return LAW
