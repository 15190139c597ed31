"""The provisioned dashboards are the generated ones, and chart metrics that exist."""

import json
import re

import pytest

from dashboards.build import OUT, build


@pytest.fixture(scope="module")
def exported(demo_day, tmp_path_factory) -> set[str]:
    """The sample names the worker's, ops sink's and docket sink's /metrics expose."""
    from exposition import exported_names

    return exported_names(demo_day.context, tmp_path_factory.mktemp("exposition"))


def test_committed_dashboards_are_the_generated_ones():
    # regenerate with: python -m dashboards.build
    for name, text in build().items():
        assert (OUT / name).read_text(encoding="utf-8") == text, name


def test_every_panel_queries_metrics_the_workers_export(exported):
    # before: names matched against Faust's source, so "fiscaliza_messages_received_per_topic"
    # passed while Prometheus only has fiscaliza_messages_received_per_topic_total
    assert "fiscaliza_messages_received_per_topic_total" in exported
    assert "fiscaliza_messages_received_per_topic" not in exported
    prometheus_panels = [p for text in build().values() for p in json.loads(text)["panels"]
                         if p["datasource"]["uid"] == "prometheus"]
    assert len(prometheus_panels) >= 12
    for panel in prometheus_panels:
        for target in panel["targets"]:
            names = set(re.findall(r"\bfiscaliza_\w+", target["expr"]))
            assert (names or target["expr"].startswith("sum by (job) (up{")) and names <= exported, \
                (panel["title"], names - exported)
            assert target["refId"] == "A"
    for text in build().values():  # the variables' label_values() queries too
        for variable in json.loads(text).get("templating", {}).get("list", []):
            names = set(re.findall(r"\bfiscaliza_\w+", variable["query"]))
            assert names and names <= exported, (variable["name"], names - exported)


def test_the_live_and_compliance_dashboards_filter_by_operator_and_line():
    for name in ("fiscaliza-live.json", "fiscaliza-compliance.json"):
        board = json.loads(build()[name])
        assert [v["name"] for v in board["templating"]["list"]] == ["operator", "route"]
        for panel in board["panels"]:
            query = panel["targets"][0].get("expr") or panel["targets"][0]["rawSql"]
            # a line is chosen among the operator's (the Linha variable reads them per Operadora)
            assert any(v in query for v in ("$operator", "${operator:regex}", "$route", "${route:regex}")), \
                (name, panel["title"])


def test_rebalances_are_counted_from_assignments_not_the_in_progress_gauge():
    # before: increase() of fiscaliza_total_rebalances, a gauge of rebalances in progress (0 through two)
    exprs = [t["expr"] for p in json.loads(build()["fiscaliza-workers.json"])["panels"] for t in p["targets"]]
    assert not any("fiscaliza_total_rebalances" in e for e in exprs)
    assert any("fiscaliza_assignment_operations_total" in e for e in exprs)


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
    from ops.db import migrate

    migrate(pg_sessions.kw["bind"])  # as `fiscaliza dockets migrate` does: the live tables too
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


@pytest.mark.postgres
def test_every_live_sql_panel_returns_rows_on_fresh_live_tables(pg_sessions, demo_day):
    """The live dashboard's SQL on the migrated live tables holding a moment of service:
    buses that reported a minute ago (one off its itinerary), one silent for 20 min,
    today's trips, and the demo day's infractions as if out 5 min ago."""
    import datetime as dt

    import msgspec
    import sqlalchemy as sa

    from ops.db import migrate
    from ops.rows import row_of
    from ops.sink import write_batch

    engine = pg_sessions.kw["bind"]
    migrate(engine)
    now = dt.datetime.now(dt.UTC)
    local_today = now.astimezone(demo_day.context.feed.timezone).date()
    statuses = demo_day.result.statuses
    fresh = [msgspec.structs.replace(s, ts=(now - dt.timedelta(minutes=1)).isoformat(), in_service=True)
             for s in statuses[1:]]
    fresh[0] = msgspec.structs.replace(fresh[0], off_route_m=155.3, off_route_since=now.isoformat())
    fresh[1] = msgspec.structs.replace(fresh[1], headway_s=500.0, scheduled_headway_s=900, vehicle_ahead="JN-2011",
                                       headway_state="bunched")
    silent = msgspec.structs.replace(statuses[0], ts=(now - dt.timedelta(minutes=20)).isoformat())
    trips = [msgspec.structs.replace(t, service_date=local_today, departed_at=now - dt.timedelta(hours=1, minutes=i),
                                     arrived_at=now - dt.timedelta(minutes=i)) for i, t in enumerate(demo_day.result.trips)]
    from rules.model import infraction_record
    from trips.model import trip_record

    infractions = [msgspec.structs.replace(i, occurred_at=now - dt.timedelta(minutes=15),
                                           detected_at=now - dt.timedelta(minutes=5))
                   for i in demo_day.result.infractions]
    write_batch(engine, {
        "vehicle-status": [row_of("vehicle-status", msgspec.json.encode(s), "x", {}) for s in [*fresh, silent]],
        "trips": [row_of("trips", msgspec.json.encode(trip_record(t)), "x", {}) for t in trips],
        "infractions": [row_of("infractions", msgspec.json.encode(infraction_record(i)), "x", {})
                        for i in infractions]})
    panels = [p for p in json.loads(build()["fiscaliza-live.json"])["panels"] if p["datasource"]["uid"] == "dockets"]
    assert len(panels) == 6
    from grafana import interpolate

    with engine.connect() as connection:
        for panel in panels:
            rows = connection.execute(sa.text(interpolate(panel["targets"][0]["rawSql"]))).all()
            assert rows, panel["title"]
        # the Operadora variable narrows the map to that company's buses
        only = interpolate(panels[0]["targets"][0]["rawSql"], operator="VNV")
        assert {row.operadora for row in connection.execute(sa.text(only))} == {"VNV"}


@pytest.mark.postgres
def test_every_compliance_sql_panel_returns_rows_on_the_demo_days_records(pg_sessions, demo_day):
    import msgspec
    import sqlalchemy as sa
    from grafana import interpolate

    from ops.db import migrate
    from ops.rows import row_of
    from ops.sink import record_feed, write_batch
    from rules.model import infraction_record

    engine = pg_sessions.kw["bind"]
    migrate(engine)
    record_feed(engine, demo_day.context.feed.timezone.key)
    from telemetry import Rejection, to_builtins

    copy = Rejection(source="tachograph", reason="conflicting_duplicate", detail="duas versões", location="t.jsonl:2",
                     raw='{"vehicle_id": "JN-1011", "ts": "2026-12-01T10:00:00-03:00", "seq": 7}')
    write_batch(engine, {"rejected": [row_of("rejected", msgspec.json.encode(to_builtins(copy)), "x", {})],
                         "infractions": [row_of("infractions", msgspec.json.encode(infraction_record(i)), "x", {})
                                         for i in demo_day.result.infractions],
                         "month-efficiency": [row_of("month-efficiency", msgspec.json.encode(m), "x", {})
                                              for m in demo_day.result.months]})
    panels = [p for p in json.loads(build()["fiscaliza-compliance.json"])["panels"] if p["datasource"]["uid"] == "dockets"]
    assert len(panels) == 6
    with engine.connect() as connection:
        for panel in panels:
            sql = interpolate(panel["targets"][0]["rawSql"],
                              time_filter="BETWEEN '2026-11-01T00:00:00Z' AND '2026-12-31T00:00:00Z'")
            assert connection.execute(sa.text(sql)).all(), panel["title"]


@pytest.mark.postgres
def test_infractions_per_day_are_counted_on_the_feeds_day_not_utcs(pg_sessions, demo_day):
    """1 Dec's 22:07 in João Neiva is 01:07 of 2 Dec in UTC: the panel counts it on 1 Dec,
    the feed's day (before: date_trunc in the session's UTC put it on 2 Dec)."""
    import datetime as dt

    import sqlalchemy as sa
    from grafana import interpolate

    from ops.db import migrate
    from ops.rows import row_of
    from ops.sink import record_feed, write_batch

    engine = pg_sessions.kw["bind"]
    migrate(engine)
    record_feed(engine, demo_day.context.feed.timezone.key)
    d13 = demo_day.record("D-13")
    late_evening = {**d13, "infraction_id": "1" * 32, "occurred_at": "2026-12-01T22:07:00-03:00"}
    next_morning = {**d13, "infraction_id": "2" * 32, "occurred_at": "2026-12-02T00:30:00-03:00",
                    "service_date": "2026-12-01"}  # past midnight: a day of the clock, not the service day
    write_batch(engine, {"infractions": [row_of("infractions", json.dumps(r).encode(), "x", {})
                                         for r in (late_evening, next_morning)]})
    sql = interpolate(json.loads(build()["fiscaliza-compliance.json"])["panels"][0]["targets"][0]["rawSql"],
                      time_filter="BETWEEN '2026-11-01T00:00:00Z' AND '2026-12-31T00:00:00Z'")
    with engine.connect() as connection:
        rows = [(row.time, row.metric, row[2]) for row in connection.execute(sa.text(sql))]
    local = dt.timezone(dt.timedelta(hours=-3))
    assert rows == [(dt.datetime(2026, 12, 1, tzinfo=local), "D-13", 1),
                    (dt.datetime(2026, 12, 2, tzinfo=local), "D-13", 1)]


@pytest.mark.postgres
def test_the_map_shows_a_bus_that_arrived_in_layover_not_running(pg_sessions, demo_day):
    """JN-2013 and JN-2014 stood at the terminal 30 min after departing, progress 1, speed 0:
    the map said "em viagem" (#28 item 2). The engine's layover_since says it arrived."""
    import datetime as dt

    import msgspec
    import sqlalchemy as sa
    from grafana import interpolate

    from ops.db import migrate
    from ops.rows import row_of
    from ops.sink import write_batch

    engine = pg_sessions.kw["bind"]
    migrate(engine)
    now = dt.datetime.now(dt.UTC)
    base = demo_day.result.statuses[0]
    running = msgspec.structs.replace(base, vehicle_id="JN-2011", ts=now.isoformat(), in_service=True,
                                      route_id="201", direction_id=0, progress=0.4,
                                      departed_at=(now - dt.timedelta(minutes=5)).isoformat(),
                                      off_route_m=None, off_route_since=None, layover_since=None)
    arrived = msgspec.structs.replace(running, vehicle_id="JN-2013", progress=1.0, speed_kmh=0.0,
                                      departed_at=(now - dt.timedelta(minutes=30)).isoformat(),
                                      layover_since=(now - dt.timedelta(minutes=15)).isoformat())
    parked = msgspec.structs.replace(running, vehicle_id="JN-2012", in_service=False, route_id=None,
                                     direction_id=None, progress=None, departed_at=None)
    write_batch(engine, {"vehicle-status": [row_of("vehicle-status", msgspec.json.encode(s), "x", {})
                                            for s in (running, arrived, parked)]})
    [panel] = [p for p in json.loads(build()["fiscaliza-live.json"])["panels"] if p["title"] == "Ônibus agora"]
    with engine.connect() as connection:
        shown = {row[0]: row[-1] for row in connection.execute(sa.text(interpolate(panel["targets"][0]["rawSql"])))}
    assert shown == {"JN-2011": "em viagem", "JN-2013": "no terminal, entre viagens", "JN-2012": "fora de serviço"}


@pytest.mark.postgres
def test_the_buses_that_bunch_or_gap_are_listed_on_a_timetabled_line_too(pg_sessions, demo_day):
    """Line 101 runs by timetable, every 30 min: a bus 12 min behind the one ahead is
    bunched, one 45 min behind gapped, 30 min regular (Swiftly's 75 % and 125 %); the map
    and the panel of buses bunched or gapped say so (before: no headway on line 101)."""
    import datetime as dt

    import msgspec
    import sqlalchemy as sa
    from grafana import interpolate

    from ops.db import migrate
    from ops.rows import row_of
    from ops.sink import write_batch

    engine = pg_sessions.kw["bind"]
    migrate(engine)
    now = dt.datetime.now(dt.UTC)
    base = msgspec.structs.replace(demo_day.result.statuses[0], ts=now.isoformat(), in_service=True, route_id="101",
                                   direction_id=0, progress=0.3, off_route_m=None, off_route_since=None,
                                   layover_since=None, scheduled_headway_s=1800)
    buses = [msgspec.structs.replace(base, vehicle_id=vehicle, headway_s=minutes * 60.0, vehicle_ahead=ahead,
                                     headway_state=state, departed_at=(now - dt.timedelta(minutes=i)).isoformat())
             for i, (vehicle, minutes, ahead, state) in enumerate((("JN-1011", 12, "JN-1012", "bunched"),
                                                                   ("JN-1012", 45, "JN-1013", "gapped"),
                                                                   ("JN-1013", 30, "JN-1011", "regular")))]
    write_batch(engine, {"vehicle-status": [row_of("vehicle-status", msgspec.json.encode(s), "x", {}) for s in buses]})
    panels = {p["title"]: p["targets"][0]["rawSql"] for p in json.loads(build()["fiscaliza-live.json"])["panels"]
              if p["datasource"]["uid"] == "dockets"}
    with engine.connect() as connection:
        listed = connection.execute(sa.text(interpolate(panels["Ônibus agrupados ou com buraco agora"]))).all()
        on_map = {row[0]: row._mapping["espaçamento"]
                  for row in connection.execute(sa.text(interpolate(panels["Ônibus agora"])))}
    assert [tuple(row)[:7] for row in listed] == [
        ("101", 0, "JN-1012", "buraco", "JN-1013", 45, 30), ("101", 0, "JN-1011", "agrupado", "JN-1012", 12, 30)]
    assert on_map == {"JN-1011": "agrupado", "JN-1012": "buraco", "JN-1013": "regular"}


def test_the_headway_panel_draws_the_policys_bunched_and_gapped_bounds():
    from kernel.policy import load_policy

    headway = load_policy().headway
    [panel] = [p for p in json.loads(build()["fiscaliza-live.json"])["panels"]
               if p["title"] == "Espaçamento observado / programado"]
    steps = panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert [s["value"] for s in steps] == [None, headway.bunched_max_ratio, headway.gapped_min_ratio]
    assert (headway.bunched_max_ratio, headway.gapped_min_ratio) == (0.75, 1.25)
    assert "75 %" in panel["description"] and "125 %" in panel["description"]


@pytest.mark.postgres
def test_deadlines_fall_due_on_the_feeds_day_not_utcs(pg_sessions):
    """'Prazos vencendo' counts a week from today in the feed's timezone: a zone whose date
    differs from UTC's right now (UTC+14 from 10:00 UTC, UTC-12 before) gives the zone's date
    (before: the session's current_date, UTC's)."""
    import datetime as dt
    import zoneinfo

    import sqlalchemy as sa

    from dashboards.build import FEED_TODAY
    from ops.db import migrate
    from ops.sink import record_feed

    engine = pg_sessions.kw["bind"]
    migrate(engine)
    utc_now = dt.datetime.now(dt.UTC)
    zone = "Etc/GMT-14" if utc_now.hour >= 10 else "Etc/GMT+12"
    record_feed(engine, zone)
    with engine.connect() as connection:
        today = connection.execute(sa.text(f"SELECT {FEED_TODAY}")).scalar()
    zone_today = dt.datetime.now(zoneinfo.ZoneInfo(zone)).date()
    assert today == zone_today != dt.datetime.now(dt.UTC).date()
    deadlines = next(p for p in json.loads(build()["fiscaliza-autos.json"])["panels"] if p["title"].startswith("Prazos"))
    assert f"next_deadline <= {FEED_TODAY} + 7" in deadlines["targets"][0]["rawSql"]
