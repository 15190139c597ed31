"""João Neiva's pack: Anexo I and the codes the telemetry proves.

Explicit on purpose (no registration by import side effects): a code is enforced
automatically if and only if it is listed here. Anexo I's other codes are recorded
by fiscal agents.
"""

from __future__ import annotations

from rules import a07, b04, c01, d11, d12, d13, d19, d21, d22
from rules.joao_neiva.anexo_i import LAW
from rules.model import Rule
from rules.pack import Pack

CATALOGUE: dict[str, Rule] = {
    "A-07": a07.RULE,
    "B-04": b04.RULE,
    "C-01": c01.RULE,
    "D-11": d11.RULE,
    "D-12": d12.RULE,
    "D-13": d13.RULE,
    "D-19": d19.RULE,
    "D-21": d21.RULE,
    "D-22": d22.RULE,
}

PACK = Pack(law=LAW, catalogue=CATALOGUE)
