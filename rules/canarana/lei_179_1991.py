"""Lei Municipal nº 179/1991 (Canarana, MT): the provisions fiscaliza enforces or records.

The law is a regulation, not a disciplinary code: it has no list of infractions. Art. 39
fines "qualquer infração deste Regulamento, para a qual não esteja cominada penalidade
especial" with 1 to 5.000 VR, each kind's amount in a table the Prefeitura draws up,
publishes and revises (parágrafo único). So:

- codes are the dispositivo as the law numbers it: "art. " + the article as printed
  (ordinal up to 9, "art. 6º"; cardinal from 10, "art. 13"), then " § 5º" for a
  paragraph and " II" for an inciso ("art. 6º II"); the caput alone is "art. 10";
- group is the penalty the law attaches: "multa" (art. 39) or "rescisão" (arts. 5º and
  6º: "sob pena de rescisão do contrato de concessão", a penalidade especial, so art. 39
  does not fine them: a finding for the Órgão, never a fine — recorded with fine 0, of
  which the docket sink makes no auto);
- category is the chapter the provision stands in;
- automatic: proven from the telemetry by the pack's detectors (rules.canarana.pack):
  art. 6º II (rules.line_interruption, across service days), art. 10 § 5º
  (rules.waiting_time) and art. 13 (rules.terminal_crowding); art. 10 is a fiscal's;
- fines: the law sets only the bounds (LAW.fine_range); each article's fine is the
  policy's `[fines]` table, which `rules.model.make_infraction` charges and refuses to
  guess where the table lacks it. Article.fine is 0 and never charged;
- terms: the law sets only the payment, 30 calendar days from the publication of the
  fine or the notification (art. 41). It sets no deadline for notifying, for a defence
  or for an appeal: None, as Terms allows.

The waiting-time rule is art. 10 § 5º, not art. 11: in the printed law § 5º follows
art. 10's § 4º (a page break between them), and the article after § 6º is printed
"Art. 21" between art. 10 and art. 12 — the OCR's reading of "Art. 11" (a second
"Art. 21", on the lighting of the vehicles, comes in its place after art. 20).

The text comes from an OCR of the published law. Every correction is listed in
OCR_CORRECTIONS (printed fragment -> restored text); the tests
(tests/rules/canarana/test_lei_179_1991.py) check every text against the law file letter
for letter once those corrections are applied. Accents the OCR dropped are restored
only inside the fragments listed.
"""

from __future__ import annotations

from rules.law import Article, AutoForm, Law, Term, Terms, law_articles

TITLE = "Lei Municipal nº 179/1991 (Canarana)"

# Art. 39: "multa ao concessionário que variará de 1VR a 5.000VR".
FINE_RANGE_VR = (1, 5000)

MULTA, RESCISAO = "multa", "rescisão"
CAPITULO_II = "Capítulo II – Da concessão para exploração dos serviços de transportes coletivos"
CAPITULO_III = "Capítulo III – Do plano e da rede municipal de transportes coletivos"

# Printed (OCR) fragment -> restored text.
OCR_CORRECTIONS: dict[str, str] = {
    # art. 6º II: "setente"; the inciso ends in ";" (inciso III follows), not ":"
    "72(setente e duas) horas:": "72(setenta e duas) horas;",
    # art. 10: a word split at the line's end
    "autori- zação": "autorização",
    # art. 10 § 5º: a stray accent and comma; "espe-/ra:" split at the line's end with
    # the colon read as "s"; a speck read as an apostrophe
    "horários, apróvados": "horários aprovados",
    "espe ras": "espera:",
    "de ' maior": "de maior",
    # art. 13: dropped accents, "m" read as "n", ")" as "0", "s" as "g"
    "sera pernitida a permanencia": "será permitida a permanência",
    "cento0 dog": "cento) dos",
}


def _article(code: str, group: str, category: str, automatic: bool, basis: str, text: str) -> Article:
    penalty = ("multa conforme art. 39 e a tabela da Prefeitura (art. 39, parágrafo único)" if group == MULTA
               else "pena de rescisão do contrato de concessão")
    return Article(code=code, text=text, automatic=automatic, group=group, fine=0,
                   legal_basis=f"{TITLE}, {basis}; {penalty}", category=category)


LEI_179: tuple[Article, ...] = (
    _article("art. 6º II", RESCISAO, CAPITULO_II, True, "art. 6º, inciso II",
             "interromper o serviço de qualquer de suas linhas, sem a autorização da Prefeitura Municipal, "
             "por espaço superior a 72(setenta e duas) horas;"),
    _article("art. 10", MULTA, CAPITULO_III, False, "art. 10, caput",
             "O itinerário e horário dos veículos das linhas de transporte coletivo só poderão ser alterados "
             "com a autorização prévia da Prefeitura."),
    _article("art. 10 § 5º", MULTA, CAPITULO_III, True, "art. 10, § 5º",
             "Os horários aprovados deverão garantir, em cada linha, uma frequência de veículos e um "
             "oferecimento tal de lugares que proporcione ao passageiro um tempo médio de espera: "
             "a) inferior a 30(trinta) minutos, nos períodos de maior movimento, e a 30(trinta)minutos "
             "fora desses períodos, na zona urbana do Município; b) inferior a 30(trinta)minutos, nos "
             "demais casos."),
    _article("art. 13", MULTA, CAPITULO_III, True, "art. 13, caput",
             "Não será permitida a permanência de mais de 15% (quinze por cento) dos veículos de cada "
             "linha em qualquer dos pontos terminais."),
)

ARTICLES: dict[str, Article] = law_articles(LEI_179)

# Art. 41: "no prazo de 30(trinta) dias, a contar da publicação ou notificação".
TERMS = Terms(notificacao=None, defesa=None, recurso=None, pagamento=Term(30, False, "art. 41"))

# What the auto cites: art. 40 gives the Prefeitura the imposition of fines, on the results
# of its inspection; art. 39 fines the concessionaire by the Prefeitura's table.
AUTO = AutoForm(
    basis="Lei Municipal nº 179/1991 (Canarana), arts. 39 a 41",
    liability="art. 39: multa ao concessionário",
    fine="tabela de multas da Prefeitura (art. 39, parágrafo único)",
    deadlines_note="Esgotado o prazo para pagamento, a multa será enviada à cobrança executiva "
                   "(art. 41, parágrafo único).",
)

LAW = Law(code="canarana", title=TITLE, fine_unit="VR", articles=ARTICLES, terms=TERMS,
          fine_range=FINE_RANGE_VR, auto=AUTO)
