"""art. 42 A — "de Cr$20,00 por viagem regulamentar que for suspensa, salvo os casos de fôrça maior devidamente comprovadas".

A regular trip suspended is a scheduled timetabled trip that no realized trip was matched
to: D-22's detector (rules.d22), configured, not forked: the same facts, the same
insufficient evidence where the fleet was not heard or a vehicle may have run the trip
unseen, the same occurrences as força maior (a road closure, an accident, a breakdown,
another registered one). What differs is the law: the record is filed under "art. 42 A"
and fined Cr$ 20,00 per trip, and Lei 4/1948 has no efficiency exemption like João
Neiva's art. 45, so a closed day's suppressed trip is confirmed, not left provisional
for a month close.

One act, one accusation (non bis in idem): a bus that turned back before the terminal
(art. 14 § único, rules.turn_back) left the rest of its scheduled trip unrun, and art.
14 § único, the specific provision, is the one that fines it (Cr$ 20,00 per trip by
analogy with this letter). So the scheduled trip a turned-back pass was running
(ServiceDayFacts.cut_short_trips: paired by line, direction and departure within the
match window, as realized trips are matched) is not also a trip suspended. The same
holds whatever the turn back's verdict: justified ("salvo determinação da autoridade do
trânsito": the trip was cut short by order, força maior), or unproven (a silence in
which the bus may have reached the terminal: the trip may have been run); the record
of art. 14 § único states the act either way, and this article never accuses the trip
as its own. Any other trip not run is still art. 42 A. While the day runs, the pass is a
departure running (matched live) until its reversal is told, with its record, before the
watermark passes it (engine.operator): in no batching does its trip become an art. 42 A.
"""

from __future__ import annotations

from kernel.policy import Policy
from rules import d22
from rules.facts import ServiceDayFacts
from rules.model import CONFIRMED, Finding, Live, Rule, Scope, duration

CODE = "art. 42 A"


def detect(facts: ServiceDayFacts, policy: Policy, *, due_by: float | None = None) -> list[Finding]:
    return d22.detect(facts, policy, code=CODE, status=CONFIRMED, covered=frozenset(facts.cut_short_trips(policy)),
                      due_by=due_by)


RULE = Rule(
    code=CODE,
    scope=Scope.SERVICE_DAY,
    live=Live.DEPARTURE_DUE,
    detect=detect,
    justified_by=d22.JUSTIFIED_BY,
    runs=d22.__name__,
    summary=lambda p: ("Viagem programada (quadro de horários) sem viagem realizada casada com ela em até "
                       f"{duration(p.trips.match_window_s)} do horário de partida."),
)
