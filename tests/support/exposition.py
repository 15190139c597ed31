"""The sample names fiscaliza's processes expose on /metrics, as Prometheus records them:
the worker (Faust's sensors and streams.metrics), the ops sink and the docket sink, each
registry rendered by prometheus-client and parsed back."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

# A counter's samples end in _total (its family name alone matches nothing), a histogram's
# in _bucket, _count and _sum.
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_count", "_sum", "_created"),
            "gauge": ("",), "summary": ("", "_count", "_sum", "_created")}


def exported_names(context, tmp_path: Path) -> set[str]:
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    from dockets.calendar import BusinessCalendar
    from dockets.db import open_store
    from dockets.metrics import docket_registry
    from kernel.settings import StreamSettings
    from ops.sink import SinkMetrics
    from rules.joao_neiva.anexo_i import LAW
    from streams.app import create_app

    worker = create_app(context, StreamSettings(web_port=6066)).fiscaliza_registry
    ops = CollectorRegistry()
    SinkMetrics(ops)
    dockets = docket_registry(open_store(f"sqlite:///{tmp_path / 'metrics.sqlite3'}"),
                              BusinessCalendar.for_municipality("ES", law=LAW), lambda: dt.date(2026, 12, 2))
    return {family.name + suffix for registry in (worker, ops, dockets)
            for family in text_string_to_metric_families(generate_latest(registry).decode())
            for suffix in SUFFIXES.get(family.type, ("",))}
