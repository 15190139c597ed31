"""Every rule pack, by the code a policy names it with (`[policy] code`)."""

from __future__ import annotations

from kernel.policy import Policy, PolicyError
from rules.canarana.pack import PACK as CANARANA
from rules.conselheiro_lafaiete.pack import PACK as CONSELHEIRO_LAFAIETE
from rules.joao_neiva.pack import PACK as JOAO_NEIVA
from rules.laws import LAWS
from rules.pack import Pack

PACKS: dict[str, Pack] = {pack.code: pack for pack in (JOAO_NEIVA, CONSELHEIRO_LAFAIETE, CANARANA)}
assert PACKS.keys() == LAWS.keys(), "every law has its pack"


def pack_of(policy: Policy) -> Pack:
    """The pack a policy names, refused where the policy lacks a section one of its rules
    reads. The loaders' one entry point: the engine's (engine.loading, which hands the pack
    on in its Context) and those of the readers that load a policy for its law's catalogue
    (the web's settings, the demo); nothing in the engine looks a pack up."""
    try:
        pack = PACKS[policy.policy.code]
    except KeyError:
        raise PolicyError(f"unknown law code {policy.policy.code!r} in the policy; "
                          f"known: {', '.join(sorted(PACKS))}") from None
    for code, rule in pack.catalogue.items():
        for section in sorted(rule.requires):
            if getattr(policy, section) is None:
                raise PolicyError(f"the policy's law {pack.code!r} enforces {code}, whose thresholds are the "
                                  f"policy's [{section}] section: the policy has none")
    return pack
