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
