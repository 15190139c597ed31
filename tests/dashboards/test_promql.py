"""The live dashboard's PromQL evaluated by Prometheus' own engine (promtool test rules)
on hand-written series: what a panel shows, not only that it names exported metrics."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml
from grafana import interpolate

from dashboards.build import build


def _expr(title: str) -> str:
    [panel] = [p for text in build().values() for p in json.loads(text)["panels"] if p["title"] == title]
    return interpolate(panel["targets"][0]["expr"])


def _evaluate(tmp_path, series: dict[str, str], expr: str, at: str, expected: list[dict]) -> subprocess.CompletedProcess:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool missing: install the Debian package prometheus (scripts/test does)", pytrace=False)
    test = {"rule_files": [], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": [{"series": s, "values": v} for s, v in series.items()],
                       "promql_expr_test": [{"expr": expr, "eval_time": at, "exp_samples": expected}]}]}
    (tmp_path / "panel_test.yml").write_text(yaml.safe_dump(test, allow_unicode=True))
    return subprocess.run([promtool, "test", "rules", "panel_test.yml"], cwd=tmp_path, capture_output=True, text=True)


def test_realized_over_scheduled_is_per_service_day_in_event_time_not_trips_detected_by_the_wall_clock(tmp_path):
    """A backfill at x120: in 2 min of wall clock the worker detects 90 trips of line 101
    (fiscaliza_trips_detected_total), but the service day it is in (event time) has 15 of
    them so far, against 30 due by then. The panel shows 15 / 30 = 50 %, summing the
    workers' realized (each counts its own vehicles) over the due count every worker
    gives alike (before: increase() of the trips detected over the panel's range, 300 %)."""
    line = 'operator="VNV", route="101", direction="0"'
    series = {f'fiscaliza_trips_detected_total{{{line}, instance="w1"}}': "0 40 60",
              f'fiscaliza_trips_detected_total{{{line}, instance="w2"}}': "0 20 30",
              f'fiscaliza_trips_realized_so_far{{{line}, instance="w1"}}': "0 8 12",
              f'fiscaliza_trips_realized_so_far{{{line}, instance="w2"}}': "0 2 3",
              f'fiscaliza_trips_scheduled_so_far{{{line}, instance="w1"}}': "30 30 30",
              f'fiscaliza_trips_scheduled_so_far{{{line}, instance="w2"}}': "30 30 30"}
    expr = _expr("Viagens realizadas / programadas até agora (hoje)")
    done = _evaluate(tmp_path, series, expr, "2m", [{"labels": '{route="101", direction="0"}', "value": 0.5}])
    assert done.returncode == 0, done.stdout + done.stderr


def test_art45_so_far_shows_no_figure_for_an_operator_with_no_day_of_the_month_closed(tmp_path):
    """At the month's first hours no day has closed: the gauge is there at 0, and the panel
    shows nothing for that operator rather than 0 %, which reads as failing the art. 45's
    98 %. An operator with a day closed shows its figure (VNV: 2 days, 96.5 %)."""
    series = {'fiscaliza_month_efficiency_ratio{operator="TRD"}': "0 0 0",
              'fiscaliza_month_days_closed{operator="TRD"}': "0 0 0",
              'fiscaliza_month_efficiency_ratio{operator="VNV"}': "0.965 0.965 0.965",
              'fiscaliza_month_days_closed{operator="VNV"}': "2 2 2"}
    expr = _expr("Art. 45: eficiência do mês até agora")
    done = _evaluate(tmp_path, series, expr, "2m", [{"labels": '{operator="VNV"}', "value": 0.965}])
    assert done.returncode == 0, done.stdout + done.stderr
