"""Recidivism (reincidência): a fine multiplied when the operator was fined for the same article before.

Conselheiro Lafaiete's art. 42 § 1º: "As multas serão cobradas em dôbro, nos casos de
reincidência". The law says what (the law's `Recidivism.factor`) but not how far back:
the policy's window does (`[fines] recidivism_window_days`). An earlier infraction counts
only once upheld (its docket procedente: a fine imposed, not one still contested or
archived), only of the same operator and the same article, and only when it occurred
within the window before this one: at most `window` earlier, never at the same instant
or later. Pure: the caller brings the operator's history; dockets decide what is upheld.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from rules.law import Law


@dataclass(frozen=True)
class Prior:
    """An earlier infraction of an operator, as its docket stands."""
    operator_id: str
    code: str
    occurred_at: dt.datetime
    upheld: bool  # its docket judged procedente (the fine imposed)
    ref: object = None  # the caller's handle on it (a docket's id), returned with it


def recurrence(law: Law, code: str, operator_id: str, occurred_at: dt.datetime,
               history: Iterable[Prior], window: dt.timedelta) -> Prior | None:
    """The latest upheld infraction that makes this one a recidivist's, or None."""
    if law.recidivism is None:
        return None
    earlier = [p for p in history
               if p.upheld and p.operator_id == operator_id and p.code == code
               and occurred_at - window <= p.occurred_at < occurred_at]
    return max(earlier, key=lambda p: p.occurred_at, default=None)


def fine_with_recidivism(law: Law, code: str, operator_id: str, occurred_at: dt.datetime,
                         history: Iterable[Prior], window: dt.timedelta, fine: int | None = None) -> int:
    """The fine due, in the law's unit: `fine` (the article's, unless given: an escalated
    or graded one) multiplied by the law's factor when it is a recidivist's."""
    base = law.article(code).fine if fine is None else fine
    found = recurrence(law, code, operator_id, occurred_at, history, window)
    return base if found is None else base * law.recidivism.factor
