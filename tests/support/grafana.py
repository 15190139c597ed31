"""Grafana's interpolation of the dashboards' variables and macros, as the tests run a
panel's query outside Grafana."""

from __future__ import annotations

import re


def interpolate(text: str, *, operator: str = ".*", route: str = ".*", time_range: str = "1d",
                time_filter: str | None = None) -> str:
    """The operator and line variables as regexes ("all": .*), `$__range` as a duration and
    `$__timeFilter(column)` as `time_filter` (a BETWEEN clause on the column)."""
    for name, value in (("operator", operator), ("route", route)):
        text = text.replace("${" + name + ":regex}", value).replace("$" + name, value)
    text = text.replace("$__range", time_range)
    if time_filter is not None:
        text = re.sub(r"\$__timeFilter\(([\w.]+)\)", lambda m: f"{m.group(1)} {time_filter}", text)
    return text
