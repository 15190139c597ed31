"""art. 42 A — "de Cr$20,00 por viagem regulamentar que for suspensa, salvo os casos de fôrça maior devidamente comprovadas".

A regular trip suspended is a scheduled timetabled trip that no realized trip was matched
to: D-22's detector (rules.d22), configured, not forked: the same facts, the same
insufficient evidence where the fleet was not heard or a vehicle may have run the trip
unseen, the same occurrences as força maior (a road closure, an accident, a breakdown,
another registered one). What differs is the law: the record is filed under "art. 42 A"
and fined Cr$ 20,00 per trip, and Lei 4/1948 has no efficiency exemption like João
Neiva's art. 45, so a closed day's suppressed trip is confirmed, not left provisional
for a month close.
"""

from __future__ import annotations

from kernel.policy import Policy
from rules import d22
from rules.facts import ServiceDayFacts
from rules.model import CONFIRMED, Finding, Rule, duration

CODE = "art. 42 A"


def detect(facts: ServiceDayFacts, policy: Policy) -> list[Finding]:
    return d22.detect(facts, policy, code=CODE, status=CONFIRMED)


RULE = Rule(
    code=CODE,
    scope="service_day",
    live="departure_due",
    detect=detect,
    justified_by=d22.JUSTIFIED_BY,
    runs=d22.__name__,
    summary=lambda p: ("Viagem programada (quadro de horários) sem viagem realizada casada com ela em até "
                       f"{duration(p.trips.match_window_s)} do horário de partida."),
)
