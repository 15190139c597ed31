"""Autos of one drive (art. 10 of João Neiva's code: the penalties of two infractions
"aplicar-se-ão concomitantemente"): which autos are of the same conduct, and the words
by which each names the other and says which duty it protects (pure functions)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from rules.law import AutoForm


@dataclass(frozen=True)
class Facts:
    """What makes two autos one drive: the same vehicle on the same trip, at overlapping times."""

    code: str
    vehicle_id: str | None
    service_date: dt.date
    route_id: str | None
    direction_id: int | None
    trip_id: str | None
    interval: tuple[float, float] | None  # the infraction's interval (epoch seconds)


def facts_of(docket) -> Facts:
    epochs = (docket.infraction or {}).get("evidence", {}).get("interval_epoch")
    interval = (float(epochs[0]), float(epochs[-1])) if epochs else None
    return Facts(docket.code, docket.vehicle_id, docket.service_date, docket.route_id, docket.direction_id,
                 docket.trip_id, interval)


def same_drive(a: Facts, b: Facts, form: AutoForm) -> bool:
    """Two infractions of different codes the law's auto form pairs (each protects a duty
    of its own), by one vehicle on one trip, whose intervals overlap."""
    duties = dict(form.duties)
    if a.code == b.code or a.code not in duties or b.code not in duties:
        return False
    if a.vehicle_id is None or a.interval is None or b.interval is None:
        return False
    if (a.vehicle_id, a.service_date, a.route_id, a.direction_id, a.trip_id) != \
            (b.vehicle_id, b.service_date, b.route_id, b.direction_id, b.trip_id):
        return False
    return a.interval[0] <= b.interval[1] and b.interval[0] <= a.interval[1]


def note(form: AutoForm, code: str, others: Iterable[tuple[str, str]]) -> str:
    """The sentence an auto adds to its description naming the autos of the same drive,
    each as (label, code): both apply, and why."""
    others = list(others)
    if not others or not form.concurrence:
        return ""
    duty = dict(form.duties)
    named = "; ".join(f"auto nº {label} ({other})" for label, other in others)
    protects = [f"este auto ({code}) protege {duty[code]}"] + \
               [f"o auto nº {label} ({other}), {duty[other]}" for label, other in others]
    return (f"Da mesma viagem do veículo resulta também o {named}. {form.concurrence} "
            f"Cada penalidade protege um dever distinto: {'; '.join(protects)}")
