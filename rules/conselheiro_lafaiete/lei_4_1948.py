"""Lei Municipal nº 4/1948 (Conselheiro Lafaiete): the infractions it fines.

The law has no infraction table. Art. 42 fines six kinds of fact, by letter, in
cruzeiros of 1948, and art. 43 resolves what the law does not foresee "por analogia".
An `Article` here is one infraction a docket can cite.

Codes. A code names the dispositivo that describes the conduct, as the law writes it:
"art. N" for an article, "art. N § único" for its sole paragraph, "art. N L" for letter
L of it (the law prints "A)-", "B)-", ...). So art. 42's own letters that describe a fact
are "art. 42 A", "art. 42 C" ... "art. 42 F"; art. 42 B fines "qualquer das letras do
artigo 33", so those infractions are the letters themselves, "art. 33 A" ... "art. 33 G".
`group` is always the letter of art. 42 whose fine applies ("A" ... "F").

Fines. `Article.fine` is in whole cruzeiros of 1948 (`LAW.fine_unit`, "Cr$ de 1948"):
every amount of art. 42 is printed with ",00", so no centavos are needed. A record's
`fine_ufir` (the contract's name, from João Neiva's UFIR) carries that amount in this
unit; the policy's [fines] section maps one cruzeiro of 1948 to reais
(kernel/policies/conselheiro-lafaiete.toml: `brl_per_unit`, by the minimum wage). Art. 42
B is a range, Cr$ 5,00 to 30,00, graded by the Chefe do Serviço do Patrimônio: `fine` is
its floor (what any such infraction surely carries) and `fine_max` its ceiling.

Precepts without a fine of their own, read as follows (art. 43: analogy):
- art. 14 § único (turning back before the terminal): the regular trip is cut short,
  its remainder not run: art. 42 A by analogy, Cr$ 20,00 per trip.
- art. 17 (a vehicle carrying passengers on another line without the Prefeitura's
  authorization): the fact art. 42 F fines as a transfer to a line the vehicle is not
  licensed for: art. 42 F by analogy, Cr$ 200,00.
- art. 19 § único (stopping to take or leave passengers outside the marked stops): the
  drivers' duty of art. 33 A ("parar o ônibus rigorosamente nos pontos predeterminados"),
  so art. 42 B directly, Cr$ 5,00 to 30,00.
The law gives no fine, and no letter of art. 42 fits by analogy, for: changing the
itinerary (art. 14 caput; a detour still runs the trip), departing off the timetable
(art. 7º), the trocadores' duties (art. 34: art. 42 B names only art. 33), the equipment
and signs of arts. 18 and 21-29, the uniform (art. 32), passengers refused (art. 16), the
circulars (art. 35: "penalidades estabelecidas", none named). They are not listed: a
docket without a fine the law sets would be invented. Art. 41's faults cause the
concession's caducidade, not a fine; art. 31's suspension falls on the driver.

Automatic: "art. 42 A" (a regular trip suspended: a scheduled trip with no realized
trip matched, rules.conselheiro_lafaiete.art42a), turning back (art. 14 § único,
rules.turn_back), carrying passengers on another line (art. 17: a realized trip on a
line the fleet file does not license the vehicle for, with boardings counted by the
catraca, rules.other_line) and stopping outside the marked stops (art. 19 § único, from
the tachograph's doors_open, rules.unmarked_stop). The rest are recorded by fiscal
agents.

Terms (art. 42): payment within 15 days of the imposição (§ 2º); appeal to the Prefeito
within 5 days of the publication or the notification (§ 4º); calendar days, the law
says nothing of dias úteis. It sets no defence stage and no deadline to notify.
Recidivism (art. 42 § 1º): fines doubled; the law sets no period, the policy does
(`[fines] recidivism_window_days`; rules.recidivism).

The text comes from an OCR of the published law, badly damaged. The law file is read as
one line (its lines joined by a space; U+FFFE, the OCR's mark of a word broken at a line
end, removed); every correction of a fragment of that text is listed in OCR_CORRECTIONS
(printed fragment -> restored text), and tests/rules/conselheiro_lafaiete/test_lei_4_1948.py
checks every text against the law so restored, letter for letter. Restored are letters
the OCR lost or changed ("no" for "não", "piiblica", "TRNSITO"), split words and the
ordinal "º" read as "2"; spelling the typist may have used ("transito", "publica",
"fôrça") is kept as printed.
"""

from __future__ import annotations

from rules.law import Article, AutoForm, Law, Recidivism, Term, Terms, law_articles

TITLE = "Lei Municipal nº 4/1948 (Conselheiro Lafaiete)"
FINE_UNIT = "Cr$ de 1948"

# Art. 42: the fine of each letter, in cruzeiros of 1948; B is a range (art. 33's letters).
FINES_CR = {"A": 20, "C": 50, "D": 50, "E": 100, "F": 200}
FINE_RANGE_B_CR = (5, 30)

# Printed fragment (the law file's lines joined by a space) -> restored text. Each
# fragment occurs once in the law. Where the damage leaves a guess, the comment says so.
OCR_CORRECTIONS: dict[str, str] = {
    # art. 14 § único
    "deverão pempre percorrer": "deverão sempre percorrer",
    "servirem, no podendo": "servirem, não podendo",
    "AIJTORIDDE DO TRNSITO": "AUTORIDADE DO TRÂNSITO",
    "iinperi0 so.": "imperioso.",
    # art. 17
    "de uni concessionário no pode ro,": "de um concessionário não poderão,",
    "au.torizaço": "autorização",
    # art. 19 § único
    "rece— ber ou aeixar": "receber ou deixar",
    "predetrniinados": "predeterminados",
    # art. 33: letter C printed as "a)"
    "que no impeça o transito na via piiblica": "que não impeça o transito na via pública",
    "partid e bruscas": "partidas bruscas",
    "a)- no conversar": "C)- não conversar",
    "passageirostodos": "passageiros todos",
    # art. 42
    "Cr$20100": "Cr$20,00",
    "do artigo 332 ;": "do artigo 33º ;",
    "Cr$50900": "Cr$50,00",
    "logo de— pois": "logo depois",
    "regular mente, as informaç6es do artigo 112": "regularmente, as informações do artigo 11º",
    "informa çes falsas": "informações falsas",
    # F: "no" restored as "quando o", the wording of letters C, D and E (a guess)
    "de cr$200,00 no concessionário": "de Cr$200,00 quando o concessionário",
    # "rj12,-i" is unreadable: "outros", after art. 17 § único ("transferidos para outra")
    "uni ou mais veículos, para rj12,-i ramais": "um ou mais veículos, para outros ramais",
    "rein cidôncia": "reincidência",
    "impo siço": "imposição",
}


def _basis(dispositivo: str, fine: str) -> str:
    return f"{TITLE}, {dispositivo}; {fine}"


def _art42(letter: str, text: str, automatic: bool = False) -> Article:
    fine = FINES_CR[letter]
    return Article(
        code=f"art. 42 {letter}", text=text, automatic=automatic, group=letter, fine=fine,
        legal_basis=_basis(f"art. 42, letra {letter}", f"multa de Cr$ {fine},00 (art. 42, letra {letter})"))


def _art33(letter: str, text: str) -> Article:
    floor, ceiling = FINE_RANGE_B_CR
    return Article(
        code=f"art. 33 {letter}", text=text, automatic=False, group="B", fine=floor, fine_max=ceiling,
        legal_basis=_basis(f"art. 33, letra {letter}",
                           f"multa de Cr$ {floor},00 a Cr$ {ceiling},00 (art. 42, letra B)"))


LEI_4_1948: tuple[Article, ...] = (
    Article(
        code="art. 14 § único", automatic=True, group="A", fine=FINES_CR["A"],
        text=("Os ônibus deverão sempre percorrer em seu itinerário, toda a extensão da linha ou ramal a que "
              "servirem, não podendo, em caso algum, retroceder antes de atingido o ponto terminal da mesma "
              "linha, salvo determinação em contrário da AUTORIDADE DO TRÂNSITO, por motivo imperioso."),
        legal_basis=_basis("art. 14, § único", "multa de Cr$ 20,00 por viagem (art. 42, letra A), "
                                               "aplicada por analogia (art. 43)")),
    Article(
        code="art. 17", automatic=True, group="F", fine=FINES_CR["F"],
        text=("Os veículos de um concessionário não poderão, salvo expressa autorização da Prefeitura, "
              "transitar em outra linha conduzindo passageiro."),
        legal_basis=_basis("art. 17", "multa de Cr$ 200,00 (art. 42, letra F), aplicada por analogia (art. 43)")),
    Article(
        code="art. 19 § único", automatic=True, group="B", fine=FINE_RANGE_B_CR[0], fine_max=FINE_RANGE_B_CR[1],
        text=("É expressamente proibida a parada para receber ou deixar passageiros fora dos pontos "
              "predeterminados."),
        legal_basis=_basis("art. 19, § único, c/c art. 33, letra A",
                           "multa de Cr$ 5,00 a Cr$ 30,00 (art. 42, letra B)")),
    _art33("A", "parar o ônibus rigorosamente nos pontos predeterminados e por forma tal que não impeça o "
                "transito na via pública"),
    _art33("B", "evitar paradas e partidas bruscas"),
    _art33("C", "não conversar quando estiver o veículo em movimento"),
    _art33("D", "esclarecer aos passageiros todos os assuntos referente ao itinerário"),
    _art33("E", "atender com regularidade todos os sinais de parada"),
    _art33("F", "tratar os passageiros com urbanidade"),
    _art33("G", "não fumar quando em serviço"),
    _art42("A", "de Cr$20,00 por viagem regulamentar que for suspensa, salvo os casos de fôrça maior "
                "devidamente comprovadas", automatic=True),
    _art42("C", "de Cr$50,00 quando o concessionário não providenciar a remoção do carro que se danificar em "
                "via publica, logo depois de terminadas as diligencias periciais"),
    _art42("D", "de Cr$50,00 quando o concessionário não fornecer regularmente, as informações do artigo 11º"),
    _art42("E", "de Cr$100,00 quando o concessionário fornecer informações falsas à Prefeitura"),
    _art42("F", "de Cr$200,00 quando o concessionário transferir, sem prévio conhecimento da Prefeitura, um ou "
                "mais veículos, para outros ramais ou linhas em que não estejam licenciados"),
)

ARTICLES: dict[str, Article] = law_articles(LEI_4_1948)

# Art. 42 §§ 2º and 4º; the law has no defence stage and no deadline to notify.
TERMS = Terms(
    notificacao=None,
    defesa=None,
    recurso=Term(5, False, "art. 42, § 4º", "recurso ao Prefeito",
                 "contados da publicação do ato na imprensa local ou da notificação"),
    pagamento=Term(15, False, "art. 42, § 2º", counted_from="a contar da data da imposição"),
    # "Findo o prazo ou indeferido o recurso o pagamento será feito dentro de 5 dias"
    pagamento_apos_recurso=Term(5, False, "art. 42, § 4º", counted_from="do indeferimento do recurso"),
)

# What the auto cites: art. 36 leaves its form to the process legally established; art. 42
# imposes the fines on the concessionaires "ou seus prepostos".
AUTO = AutoForm(
    basis="Lei Municipal nº 4/1948 (Conselheiro Lafaiete), arts. 36 e 42",
    liability="art. 42: multas impostas aos concessionários ou seus prepostos",
    fine="art. 42, letra {group}",
    deadlines_note="Findo o prazo ou indeferido o recurso, o pagamento será feito dentro de 5 dias, sob pena de ser "
                   "descontado na caução (art. 42, § 4º); multa em dobro nos casos de reincidência (art. 42, § 1º).",
)

LAW = Law(code="conselheiro-lafaiete", title=TITLE, fine_unit=FINE_UNIT, articles=ARTICLES, terms=TERMS,
          recidivism=Recidivism(2, "art. 42, § 1º"), auto=AUTO)
