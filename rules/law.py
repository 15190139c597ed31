"""A municipality's law as fiscaliza reads it: its infractions as the law prints them.

Every law names its infractions its own way (João Neiva's Anexo I by code, "D-11";
Conselheiro Lafaiete's Lei 4/1948 by article and letter, "art. 42 A"), fines them in its
own unit (UFIR, cruzeiros of 1948 mapped by the policy, Canarana's VR) and groups them
its own way. An `Article` is one infraction in those terms; a `Law` is the set a policy
selects by its `code`. Nothing here knows any particular municipality.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Article:
    code: str  # as the law writes it, e.g. "D-11", "art. 19 § único"
    text: str  # the law's words (OCR damage restored, listed in the law's module)
    automatic: bool  # detected from telemetry (True) or recorded by a fiscal agent
    group: str  # the law's class of the infraction (João Neiva: the group letter)
    fine: int  # in the law's fine unit (Law.fine_unit); where the law sets a range, its floor
    legal_basis: str  # the dispositivo, pt-BR, as an auto de infração cites it
    category: str = ""  # the law's own heading, where it has one ("pessoal de operação")
    # the ceiling where the law sets a range for the authority to grade (Conselheiro
    # Lafaiete's art. 42 B: Cr$ 5,00 to Cr$ 30,00); None: the fine is fixed
    fine_max: int | None = None


@dataclass(frozen=True)
class Term:
    """A procedural deadline as the law sets it."""
    days: int
    business_days: bool  # dias úteis (True) or calendar days
    basis: str  # the dispositivo that sets it, pt-BR: "art. 7º"
    act: str | None = None  # the act it limits, where the law names more than its kind: "recurso ao Prefeito"
    counted_from: str | None = None  # where the law counts it from otherwise than its kind: "da notificação"


@dataclass(frozen=True)
class Terms:
    """The deadlines an auto de infração runs on; None where the law sets none."""
    notificacao: Term | None  # the auto sent to the operator, from its lavratura
    defesa: Term | None  # the written defence, from the ciência
    recurso: Term | None  # the appeal, from the decision (or the notification where no defence stage exists)
    pagamento: Term  # the payment of the fine
    # the payment once the appeal is denied, where the law gives it its own term
    # (Conselheiro Lafaiete: 5 days, art. 42 § 4º); None: `pagamento`
    pagamento_apos_recurso: Term | None = None
    # what stops the payment term while the defence can still be filed, in the law's words
    # (João Neiva, art. 8º, I: "salvo se apresentar defesa"); None: the law says nothing
    pagamento_unless: str | None = None


@dataclass(frozen=True)
class Recidivism:
    """A fine multiplied when the operator was fined for the same article before."""
    factor: int  # 2: "em dôbro"
    basis: str  # the dispositivo, pt-BR
    # how far back an upheld infraction counts: from the policy where the law is silent


@dataclass(frozen=True)
class AutoForm:
    """What an auto de infração cites of its law, pt-BR; empty where the law says nothing."""
    basis: str  # the auto's legal basis, in its header: "Lei Municipal nº 867/1998, Anexo I — ..., art. 5º"
    liability: str  # why the operator answers for it: "art. 1º do Código Disciplinar"
    fine: str  # how the fine is set, `{group}` the article's group: "Grupo {group} (art. 3º)"
    equipment: str = ""  # the article letting the vehicle's equipment prove it: "art. 6º"
    copies: str = ""  # "3 vias de igual teor (art. 5º, § 1º)"
    cumulation: str = ""  # "Cometidas duas ou mais infrações, aplica-se a penalidade de cada uma (art. 10)."
    signature: str = ""  # what the operator's signature means
    deadlines_note: str = ""  # what the terms alone do not say (from when payment runs, suspension)
    # Two infractions of one drive, both applied (João Neiva, art. 10): the law's words for
    # it, and the duty each code that may come in such a pair protects ("o itinerário fixado").
    concurrence: str = ""
    duties: tuple[tuple[str, str], ...] = ()  # (code, duty)


@dataclass(frozen=True, eq=False)  # one object per law (rules.laws): compared and hashed by identity
class Law:
    code: str  # the name a policy selects it by: `[policy] code`
    title: str  # "Lei Municipal nº 867/1998 (João Neiva)"
    fine_unit: str  # "UFIR", "VR", ...
    articles: Mapping[str, Article] = field(default_factory=dict)
    terms: Terms | None = None
    recidivism: Recidivism | None = None
    auto: AutoForm | None = None
    amnesty: str | None = None  # the article that lets the Prefeito grant an anistia; None: the law has none
    # The article giving a judicial challenge suspensive effect on the payment (João Neiva:
    # art. 8º, III). None: only a court's own order suspends it, and the page cites none.
    judicial_suspension: str | None = None
    # (least, most) where the law sets only the bounds of its fines and leaves each
    # article's to a table the Prefeitura sets (Canarana, art. 39): that table is the
    # policy's `[fines]`, and Article.fine is never charged. None: Article.fine is the law's.
    fine_range: tuple[int, int] | None = None

    def article(self, code: str) -> Article:
        return self.articles[code]


def law_articles(articles: tuple[Article, ...]) -> dict[str, Article]:
    """The articles by code, refusing a code printed twice (a copy-paste in a law module)."""
    by_code: dict[str, Article] = {}
    for article in articles:
        if article.code in by_code:
            raise ValueError(f"article {article.code} listed twice")
        by_code[article.code] = article
    return by_code
