"""Canarana's pack: Lei 179/1991 and the provisions the telemetry proves.

Explicit, as João Neiva's: an article is enforced automatically iff listed here.

- art. 10 § 5º: the mean waiting time per line and period (rules.waiting_time).

Next (issue #18, part 2), recorded by fiscal agents until then:
- art. 13 (no more than 15 % of a line's vehicles standing at any of its terminals): needs
  each line's vehicles (the fleet allotted to it, or those that ran it that day) and the
  vehicles standing in each terminal zone over time, i.e. a service-day detector over the
  vehicles' terminal dwell intervals (rules.facts.in_service_from already places the
  standing after each arrival) and a policy setting for the share and for how long a
  stay counts as "permanência";
- art. 6º II (a line's service interrupted for more than 72 h without the Prefeitura's
  authorization): spans service days, so it needs the operator stage's memory of each
  line's last realized departure across days and an authorization occurrence kind; the
  penalty is rescisão (art. 6º), so it is a finding for the Órgão, never a fine.
"""

from __future__ import annotations

from rules import waiting_time
from rules.canarana.lei_179_1991 import LAW
from rules.model import Rule
from rules.pack import Pack

CATALOGUE: dict[str, Rule] = {
    "art. 10 § 5º": waiting_time.rule("art. 10 § 5º"),
}

PACK = Pack(law=LAW, catalogue=CATALOGUE)
