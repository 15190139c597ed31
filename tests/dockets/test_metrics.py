"""The docket store's metrics (#14): autos by stage, deadlines overdue or due by the next
business day, as a scrape sees them."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from dockets import workflow
from dockets.metrics import docket_registry
from dockets.service import perform
from dockets.store import Docket


def test_autos_by_stage_and_the_deadlines_that_fall_due(sessions, actors, calendar):
    with sessions.begin() as session:
        # the autos of the demo's detour (D-11, A-07) are lavrados together (art. 10): not these
        ids = session.scalars(select(Docket.id).order_by(Docket.code.in_(("A-07", "D-11")), Docket.id)).all()
        # lavrado Wed 2 Dec: notification due in 5 business days (the 8th is a municipal holiday)
        perform(session, actors["fiscal"], ids[0], workflow.Lavrar(on=dt.date(2026, 12, 2)), calendar)
        perform(session, actors["fiscal"], ids[1], workflow.Lavrar(on=dt.date(2026, 11, 2)), calendar)
        deadlines = {i: session.get(Docket, i).next_deadline for i in ids[:2]}
    day = [dt.date(2026, 12, 2)]
    registry = docket_registry(sessions, calendar, lambda: day[0])
    get = registry.get_sample_value
    assert get("fiscaliza_dockets", {"stage": "lavrado"}) == 2
    assert get("fiscaliza_dockets", {"stage": "rascunho"}) == len(ids) - 2
    assert get("fiscaliza_dockets", {"stage": "pago"}) == 0  # every stage is there
    # the one lavrado a month ago: its notification term ran out
    assert deadlines[ids[1]] < day[0]
    assert get("fiscaliza_docket_deadlines", {"deadline": "Prazo de notificação", "when": "overdue"}) == 1
    assert get("fiscaliza_docket_deadlines", {"deadline": "Prazo de notificação", "when": "next_business_day"}) == 0
    # the business day before the other's deadline: it falls due by the next business day
    day[0] = deadlines[ids[0]] - dt.timedelta(days=1)
    while not calendar.is_business_day(day[0]):
        day[0] -= dt.timedelta(days=1)
    assert get("fiscaliza_docket_deadlines", {"deadline": "Prazo de notificação", "when": "next_business_day"}) == 1
