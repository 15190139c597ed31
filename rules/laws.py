"""Every law fiscaliza knows, by the code a policy selects it with.

Explicit on purpose, as the catalogues are: a municipality is served if and only if its
law is listed here and its pack in `rules.packs`. Kept apart from the packs because the
records' constructor (`rules.model`) needs the articles, and the packs import the
detectors that import it.
"""

from __future__ import annotations

from kernel.policy import Policy, PolicyError
from rules.canarana.lei_179_1991 import LAW as CANARANA
from rules.conselheiro_lafaiete.lei_4_1948 import LAW as CONSELHEIRO_LAFAIETE
from rules.joao_neiva.anexo_i import LAW as JOAO_NEIVA
from rules.law import Law

LAWS: dict[str, Law] = {law.code: law for law in (JOAO_NEIVA, CONSELHEIRO_LAFAIETE, CANARANA)}


def law_named(code: str) -> Law:
    try:
        return LAWS[code]
    except KeyError:
        raise PolicyError(f"unknown law code {code!r}; known: {', '.join(sorted(LAWS))}") from None


def law_of(policy: Policy) -> Law:
    return law_named(policy.policy.code)
