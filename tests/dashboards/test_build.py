"""The provisioned dashboards are the generated ones, and chart metrics that exist."""

import json
import re
from pathlib import Path

import faust.sensors.prometheus as faust_prometheus

from dashboards.build import OUT, build

# Faust's Prometheus sensor names its metrics "{prefix}_{name}"; the worker's prefix is "fiscaliza".
EXPORTED = {f"fiscaliza_{n}" for n in re.findall(r'f"\{app_name\}_(\w+)"', Path(faust_prometheus.__file__).read_text())}


def test_committed_dashboards_are_the_generated_ones():
    # regenerate with: python -m dashboards.build
    for name, text in build().items():
        assert (OUT / name).read_text(encoding="utf-8") == text, name


def test_every_panel_queries_metrics_the_workers_export():
    assert "fiscaliza_messages_received_per_topic" in EXPORTED
    for text in build().values():
        for panel in json.loads(text)["panels"]:
            for target in panel["targets"]:
                names = set(re.findall(r"\bfiscaliza_\w+", target["expr"]))
                assert names and names <= EXPORTED, names
                assert target["refId"] == "A"
