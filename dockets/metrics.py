"""The docket store's metrics for the operations room (#14): autos by stage and deadlines
overdue or falling due, counted in the database at each scrape (the docket sink serves
them on its own port, inside the stack: the web app's public address does not)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from dockets import workflow
from dockets.calendar import BusinessCalendar
from dockets.store import Docket


class DocketCollector:
    def __init__(self, sessions: sessionmaker[Session], calendar: BusinessCalendar,
                 today: Callable[[], dt.date]) -> None:
        self._sessions, self._calendar, self._today = sessions, calendar, today

    def collect(self) -> Iterable[GaugeMetricFamily]:
        today = self._today()
        # due: ends today or on the next business day (the alert's "one business day")
        due_by = self._calendar.add_business_days(today, 1)
        by_stage = {stage.value: 0 for stage in workflow.Stage}
        overdue = dict.fromkeys(workflow.DEADLINE_LABELS.values(), 0)
        due = dict.fromkeys(workflow.DEADLINE_LABELS.values(), 0)
        with self._sessions() as session:
            by_stage.update(session.execute(select(Docket.stage, func.count()).group_by(Docket.stage)).all())
            rows = session.execute(select(Docket.next_deadline_label, Docket.next_deadline)
                                   .where(Docket.next_deadline.is_not(None))).all()
        for label, deadline in rows:
            if deadline < today:
                overdue[label] = overdue.get(label, 0) + 1
            elif deadline <= due_by:
                due[label] = due.get(label, 0) + 1
        stages = GaugeMetricFamily("fiscaliza_dockets", "Autos de infração by stage", labels=["stage"])
        for stage, count in sorted(by_stage.items()):
            stages.add_metric([stage], count)
        deadlines = GaugeMetricFamily("fiscaliza_docket_deadlines",
                                      "Running deadlines overdue, or ending by the next business day",
                                      labels=["deadline", "when"])
        for when, counts in (("overdue", overdue), ("next_business_day", due)):
            for label, count in sorted(counts.items()):
                deadlines.add_metric([label, when], count)
        return [stages, deadlines]

    def describe(self) -> Iterable[GaugeMetricFamily]:
        return []


def docket_registry(sessions: sessionmaker[Session], calendar: BusinessCalendar,
                    today: Callable[[], dt.date]) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(DocketCollector(sessions, calendar, today))
    return registry
