"""A rule pack: what a municipality's policy selects by its `code`.

The pack holds the law (its articles as printed, fine unit), the catalogue of the
automatic detectors that law's articles can be proven by, and the terms its procedure
runs on. Detection itself (trips, matching, corridors, episodes, the detectors) is
shared: a pack lists and configures detectors, it never forks them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rules.law import Law
from rules.model import Rule, Scope


@dataclass(frozen=True)
class Pack:
    law: Law
    # code -> its automatic detector; a code is enforced automatically iff listed here
    catalogue: Mapping[str, Rule]

    @property
    def code(self) -> str:
        return self.law.code

    def rules_for(self, scope: Scope) -> list[Rule]:
        return [rule for rule in self.catalogue.values() if rule.scope == scope]

    def rule(self, code: str) -> Rule:
        return self.catalogue[code]
