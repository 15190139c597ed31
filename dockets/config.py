"""What the dockets take from the enforcement policy: the calendar and the issuer."""

from __future__ import annotations

from dockets.calendar import BusinessCalendar
from kernel.policy import Policy
from rules.laws import law_of


def calendar_for(policy: Policy) -> BusinessCalendar:
    """Business days of the municipality (national, its state's and its own holidays) and
    the terms of its law."""
    general = policy.policy
    return BusinessCalendar.for_municipality(general.state, municipal_holidays=general.municipal_holidays,
                                             law=law_of(policy),
                                             recidivism_window_days=policy.fines.recidivism_window_days
                                             if policy.fines is not None else None)


ORGAN = "Órgão Gerencial do Transporte Coletivo"


def issuer_name(policy: Policy) -> str:
    return f"Prefeitura Municipal de {policy.policy.municipality} — {ORGAN}"


def municipality_name(policy: Policy) -> str:
    """The municipality as the pages' header names it."""
    return f"Prefeitura Municipal de {policy.policy.municipality} — {policy.policy.state}"
