"""Conselheiro Lafaiete's pack: Lei 4/1948 and the articles the telemetry proves.

Explicit on purpose, as João Neiva's: an article is enforced automatically if and only
if it is listed here: the suppressed regular trip (art. 42 A), turning back (art. 14 §
único), carrying passengers on another line (art. 17, from the fleet's licensed lines
and the catraca) and stopping outside the marked stops (art. 19 § único).
"""

from __future__ import annotations

from rules import other_line, turn_back, unmarked_stop
from rules.conselheiro_lafaiete import art42a
from rules.conselheiro_lafaiete.lei_4_1948 import LAW
from rules.model import Rule
from rules.pack import Pack

CATALOGUE: dict[str, Rule] = {
    "art. 14 § único": turn_back.rule("art. 14 § único"),
    "art. 17": other_line.rule("art. 17"),
    "art. 19 § único": unmarked_stop.rule("art. 19 § único"),
    "art. 42 A": art42a.RULE,
}

PACK = Pack(law=LAW, catalogue=CATALOGUE)
