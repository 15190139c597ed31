"""The provisioned dashboards are the generated ones, and chart metrics that exist."""

import json
import re
from pathlib import Path

import pytest

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
    for text in [build()["fiscaliza-workers.json"]]:
        for panel in json.loads(text)["panels"]:
            for target in panel["targets"]:
                names = set(re.findall(r"\bfiscaliza_\w+", target["expr"]))
                assert names and names <= EXPORTED, names
                assert target["refId"] == "A"


def _sql_panels():
    return [p for p in json.loads(build()["fiscaliza-autos.json"])["panels"]]


def test_the_autos_dashboard_reads_the_dockets_database():
    panels = _sql_panels()
    assert len(panels) == 5
    for panel in panels:
        assert panel["datasource"]["uid"] == "dockets"
        assert [t["datasource"]["uid"] for t in panel["targets"]] == ["dockets"]


@pytest.mark.postgres
def test_every_sql_panel_runs_on_the_migrated_postgis_store(pg_sessions):
    """Each panel's SQL, with Grafana's time macro expanded as Grafana does, on the real schema
    with one docket in it: it runs and returns rows."""
    import sqlalchemy as sa

    from dockets.service import ensure_operators, ingest

    record = {"infraction_id": "a" * 32, "code": "D-11", "group": "D", "fine_ufir": 200, "status": "confirmed",
              "operator_id": "TRD", "route_id": "201", "direction_id": 1, "trip_id": "201-DU-1-FREQ",
              "vehicle_id": "JN-2014", "service_date": "2026-12-01", "occurred_at": "2026-12-01T13:25:49-03:00",
              "lat": -19.7673062, "lon": -40.4002203, "description": "desvio", "legal_basis": "D-11", "evidence": {}}
    with pg_sessions.begin() as session:
        ensure_operators(session, {"TRD": "Transportes Rio Doce"})
        ingest(session, [record], plates={}, ufir_brl=1.0641)
    with pg_sessions() as session:
        for panel in _sql_panels():
            sql = re.sub(r"\$__timeFilter\(([\w.]+)\)",
                         r"\1 BETWEEN '2026-11-01T00:00:00Z' AND '2026-12-31T00:00:00Z'", panel["targets"][0]["rawSql"])
            rows = session.execute(sa.text(sql)).all()
            if panel["title"].startswith("Prazos"):
                assert rows == []  # a draft has no deadline running
            else:
                assert rows, panel["title"]
