"""The operations room's alert rules (#14 part 4), with Prometheus' own tools (Debian's
package prometheus, which scripts/test installs): the rules load, each alert fires when it
should and only then (deploy/prometheus/alerts_test.yml), and every metric they read is
one the workers export."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus"


def _promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.fail("promtool missing: install the Debian package prometheus (scripts/test does)", pytrace=False)
    return path


def test_the_rules_load():
    done = subprocess.run([_promtool(), "check", "rules", "alerts.yml"], cwd=RULES, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_each_alert_fires_when_it_should_and_only_then():
    done = subprocess.run([_promtool(), "test", "rules", "alerts_test.yml"], cwd=RULES, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    tested = set(re.findall(r"alertname: (\w+)", (RULES / "alerts_test.yml").read_text()))
    alerts = {rule["alert"] for group in yaml.safe_load((RULES / "alerts.yml").read_text())["groups"]
              for rule in group["rules"] if "alert" in rule}
    assert alerts == tested  # every alert has its unit test


def test_every_metric_the_rules_read_is_exported(demo_day, tmp_path):
    from exposition import exported_names

    exported = exported_names(demo_day.context, tmp_path)
    for group in yaml.safe_load((RULES / "alerts.yml").read_text())["groups"]:
        for rule in group["rules"]:
            names = set(re.findall(r"\bfiscaliza_\w+", rule["expr"]))
            assert names <= exported, (rule.get("alert", rule.get("record")), names - exported)


def test_prometheus_loads_the_rules_in_the_stack(tmp_path):
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    mounts = compose["services"]["prometheus"]["volumes"]
    assert "./deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro" in mounts
    config = yaml.safe_load((RULES / "prometheus.yml").read_text())
    assert config["rule_files"] == ["/etc/prometheus/alerts.yml"]
    # the configuration as the container sees it: the rule file where compose mounts it
    config["rule_files"] = [str(RULES / "alerts.yml")]
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    done = subprocess.run([_promtool(), "check", "config", str(tmp_path / "prometheus.yml")], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def _catching_up(context, drop: tuple[str, int] | None = None) -> tuple[list[dict], dict]:
    """The gauges LinhaSemOnibus reads, scraped once a minute from a live worker catching up
    on 1 Dec a day and 2 h late (its wall clock on 2 Dec), 04:00 to 12:00 of the events: each
    scheduled trip of the day run by a bus of its own, in service from its departure to its
    arrival (with `drop`, a line and direction whose buses never ran). Its input series for
    promtool, and per line the minutes (from the first sample) the alert's condition held."""
    import datetime as dt

    import msgspec
    from prometheus_client import CollectorRegistry

    from engine.sends import Sends
    from engine.status import VehicleStatus
    from gtfs.schedule import expected_trips, gtfs_seconds_to_datetime, scheduled_trips
    from streams.metrics import WorkerMetrics

    tz, date = context.feed.timezone, dt.date(2026, 12, 1)
    operator_of = {r.route_id: r.agency_id for r in context.feed.routes.values()}
    template = VehicleStatus(vehicle_id="", operator_id="", ts="", lat=0.0, lon=0.0, speed_kmh=0.0, in_service=False,
                             route_id=None, direction_id=None, trip_id=None, progress=None, departed_at=None,
                             schedule_deviation_s=None, off_route_m=None, off_route_since=None,
                             catraca_silent_since=None)
    statuses = []
    for n, trip in enumerate((*scheduled_trips(context.feed, date), *expected_trips(context.feed, date))):
        if (trip.route_id, trip.direction_id) == drop:
            continue
        for seconds, running in ((trip.departure_s, True), (trip.arrival_s, False)):
            statuses.append(msgspec.structs.replace(
                template, vehicle_id=f"bus-{n}", operator_id=operator_of[trip.route_id], in_service=running,
                route_id=trip.route_id, direction_id=trip.direction_id,
                ts=gtfs_seconds_to_datetime(date, seconds, tz).isoformat()))
    statuses.sort(key=lambda s: dt.datetime.fromisoformat(s.ts))
    first = dt.datetime.combine(date, dt.time(4, 0), tz).timestamp()
    wall = [0.0]
    metrics = WorkerMetrics(CollectorRegistry(), context, 4, clock=lambda: wall[0])
    values: dict[tuple[str, tuple], list[int]] = {}
    held: dict[tuple, list[int]] = {}
    for minute in range(8 * 60 + 1):
        event_now = first + minute * 60
        wall[0] = event_now + 26 * 3600
        metrics.observe(Sends(statuses=[s for s in statuses
                                        if event_now - 60 < dt.datetime.fromisoformat(s.ts).timestamp() <= event_now]))
        metrics.observe_watermarks(0, {"tachograph": event_now})
        counts = metrics.fleet_counts()
        for name, by_line in (("fiscaliza_trips_scheduled_now", counts.scheduled),
                              ("fiscaliza_vehicles_in_service", counts.in_service)):
            for line, count in by_line.items():
                values.setdefault((name, line), []).append(count)
        for line, scheduled in counts.scheduled.items():
            if scheduled and not counts.in_service.get(line):
                held.setdefault(line, []).append(minute)
    series = [{"series": f'{name}{{instance="worker-1:6066", operator="{o}", route="{r}", direction="{d}"}}',
               "values": " ".join(str(v) for v in counts_by_minute)}
              for (name, (o, r, d)), counts_by_minute in sorted(values.items())]
    return series, held


def _run_alert_test(tmp_path, series: list[dict], checks: list[dict]) -> subprocess.CompletedProcess:
    tests = {"rule_files": [str(RULES / "alerts.yml")], "evaluation_interval": "1m",
             "tests": [{"interval": "1m", "input_series": series, "alert_rule_test": checks}]}
    (tmp_path / "catching_up_test.yml").write_text(yaml.safe_dump(tests, allow_unicode=True))
    return subprocess.run([_promtool(), "test", "rules", "catching_up_test.yml"], cwd=tmp_path, capture_output=True,
                          text=True)


def test_a_worker_catching_up_on_yesterday_raises_linha_sem_onibus_for_no_line_that_ran(demo_day, tmp_path):
    # before: trips scheduled now were read at the live worker's wall clock (2 Dec) and
    # compared with the buses of the events it was catching up on (1 Dec, 26 h behind): at
    # 04:00 of the events, 06:00 by the clock, every line was scheduled and none had a bus
    series, held = _catching_up(demo_day.context)
    checks = [{"eval_time": f"{minutes}m", "alertname": "LinhaSemOnibus", "exp_alerts": []}
              for minutes in range(20, 8 * 60 + 1, 10)]
    done = _run_alert_test(tmp_path, series, checks)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not held  # not for a minute: every line scheduled had a bus, at event time


def test_a_worker_catching_up_still_raises_linha_sem_onibus_for_a_line_that_did_not_run(demo_day, tmp_path):
    # the other side of the test above: the alert is not silenced, it fires at event time
    drop = ("101", 1)
    series, held = _catching_up(demo_day.context, drop)
    [(line, minutes)] = held.items()
    operator, route, direction = line
    assert (route, int(direction)) == drop
    # the alert's `for: 15m`: the first minute the condition has held for 15 min
    due = next(m for m in minutes if all(m - k in minutes for k in range(16)))
    rule = next(r for g in yaml.safe_load((RULES / "alerts.yml").read_text())["groups"] for r in g["rules"]
                if r.get("alert") == "LinhaSemOnibus")
    labels = {"operator": operator, "route": route, "direction": direction}
    annotations = {key: re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], text)
                   for key, text in rule["annotations"].items()}
    checks = [{"eval_time": f"{due - 1}m", "alertname": "LinhaSemOnibus", "exp_alerts": []},
              {"eval_time": f"{due}m", "alertname": "LinhaSemOnibus",
               "exp_alerts": [{"exp_labels": {**rule["labels"], **labels}, "exp_annotations": annotations}]}]
    done = _run_alert_test(tmp_path, series, checks)
    assert done.returncode == 0, done.stdout + done.stderr
