"""Art. 45 — the month close: the efficiency exemption for suppressed trips (D-22).

"A empresa que operar suas linhas com índice de eficiência igual ou superior a 98%
da quilometragem programada para o mês, estará isenta de multa de supressão de
viagem, desde que a supressão de viagem não tenha ocorrido no início da operação."

Per operator and month: efficiency = programmed km of the realized trips /
programmed km of the month, over the days with evidence. A day with service scheduled
and no telemetry at all from the operator's fleet shows neither that the service ran
nor that it did not: it is left out of both sides and listed (`days_without_telemetry`),
never counted as a day of 0 % (README, "Art. 45 and days without telemetry"). At or above `min_efficiency` every provisional D-22
becomes `exempt_art45`, except the suppression of the first scheduled trip of the
day of its route and direction, which becomes `confirmed`; below, all are confirmed.
Justified D-22 stay justified.

A month whose days the engine did not all close (`month_complete: false`: the input
began or ended inside it) confirms nothing: the km of the days not seen may change the
efficiency, so a D-22 it would confirm stays `provisional` (DESIGN.md: not yet settled;
it never becomes a docket), its evidence saying why. An exemption stands: it accuses no
one, and a D-22 of a month not seen whole is at most not due.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from kernel.policy import Policy
from rules.model import CONFIRMED, EXEMPT_ART45, PROVISIONAL, Infraction

EFFICIENCY_ROUNDING = 1e-9


@dataclass(frozen=True)
class MonthKm:
    """Programmed metres of an operator's month, and of the trips it realized."""

    programmed_m: float = 0.0
    realized_m: float = 0.0
    service_dates: tuple[str, ...] = ()  # the days counted
    without_telemetry: tuple[str, ...] = ()  # the days left out: no telemetry at all

    def add(self, programmed_m: float, realized_m: float, service_date: str) -> "MonthKm":
        return MonthKm(self.programmed_m + programmed_m, self.realized_m + realized_m,
                       tuple(sorted(set(self.service_dates) | {service_date})), self.without_telemetry)

    @property
    def efficiency(self) -> float:
        return self.realized_m / self.programmed_m if self.programmed_m else 1.0


def close_month(suppressions: list[Infraction], km: MonthKm, month: str, days_in_month: int,
                policy: Policy) -> list[Infraction]:
    """The final state of the month's D-22 of one operator."""
    # Sums of float metres may land a hair under an exact 98 %: rounding, not service.
    exempt = km.efficiency >= policy.art45.min_efficiency - EFFICIENCY_ROUNDING
    complete = len(km.service_dates) + len(km.without_telemetry) >= days_in_month
    closed = []
    for infraction in suppressions:
        if infraction.status != PROVISIONAL:
            closed.append(infraction)
            continue
        start_of_operation = bool(infraction.evidence.get("start_of_operation"))
        status = EXEMPT_ART45 if exempt and not start_of_operation else CONFIRMED
        if status == CONFIRMED and not complete:
            status = PROVISIONAL  # a month not seen whole cannot confirm
        closed.append(msgspec.structs.replace(infraction, status=status, evidence={
            **infraction.evidence,
            "art45": {
                "month": month,
                "programmed_km": round(km.programmed_m / 1000, 3),
                "realized_km": round(km.realized_m / 1000, 3),
                "efficiency_pct": round(100 * km.efficiency, 3),
                "min_efficiency_pct": round(100 * policy.art45.min_efficiency, 3),
                "exempt": exempt,
                "start_of_operation": start_of_operation,
                "service_dates_considered": list(km.service_dates),
                "days_without_telemetry": list(km.without_telemetry),
                "month_complete": complete,
                **({} if status != PROVISIONAL else {
                    "unsettled": "mês observado em parte: a supressão só é confirmada no fechamento de um "
                                 "mês cujos dias foram todos observados"}),
            },
        }))
    return closed
