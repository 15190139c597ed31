"""Canarana's pack: Lei 179/1991 and the provisions the telemetry proves.

Explicit, as João Neiva's: an article is enforced automatically iff listed here.

- art. 6º II: a line without a realized trip for more than the policy's 72 h while it had
  scheduled departures (rules.line_interruption): the operator stage keeps each line's
  last realized departure across days (rules.facts.LineService). Its penalty is rescisão
  (art. 6º), so the record is a finding for the Órgão with fine 0, never an auto.
- art. 10 § 5º: the mean waiting time per line and period (rules.waiting_time).
- art. 13: more than the policy's 15 % of a line's vehicles (those that ran it that day)
  standing at one of its terminals at once, for longer than the policy's grace
  (rules.terminal_crowding), from the realized trips' arrivals and next departures.
"""

from __future__ import annotations

from rules import line_interruption, terminal_crowding, waiting_time
from rules.canarana.lei_179_1991 import LAW
from rules.model import Rule
from rules.pack import Pack

CATALOGUE: dict[str, Rule] = {
    "art. 6º II": line_interruption.rule("art. 6º II"),
    "art. 10 § 5º": waiting_time.rule("art. 10 § 5º"),
    "art. 13": terminal_crowding.rule("art. 13"),
}

PACK = Pack(law=LAW, catalogue=CATALOGUE)
