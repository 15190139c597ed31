"""The operations room: `ops sink` fills the live tables Grafana reads."""

from __future__ import annotations

from typing import Annotated

import typer

from fiscaliza.commands.common import (
    DbOption,
    FeedOption,
    IdleExitOption,
    current_settings,
    db_url,
    fail,
    shown_url,
    stream_settings,
)

ops_app = typer.Typer(help="The operations room's live tables.", no_args_is_help=True)


@ops_app.command("sink")
def ops_sink(
    feed: FeedOption = None,
    db: DbOption = None,
    metrics_port: Annotated[int, typer.Option(help="port of its Prometheus /metrics (0: off)")] = 6067,
    idle_exit: IdleExitOption = None,
) -> None:
    """Consume vehicle-status, trips and infractions into the live tables Grafana reads,
    and measure the workers' consumer lag from Kafka's offsets (SIGTERM stops)."""
    import signal

    from prometheus_client import CollectorRegistry, start_http_server
    from sqlalchemy.exc import SQLAlchemyError

    from dockets.db import make_engine
    from gtfs import load_feed
    from ops.db import migrate
    from ops.sink import run_ops_sink

    feed = current_settings().static.inputs(feed=feed).feed
    loaded = load_feed(feed)
    settings = stream_settings()
    try:
        engine = make_engine(db_url(db))
        migrate(engine)
    except (SQLAlchemyError, OSError) as exc:
        fail(f"cannot open the live tables in {shown_url(db)}: {str(exc).splitlines()[0]}")
    registry = CollectorRegistry()
    if metrics_port > 0:
        start_http_server(metrics_port, registry=registry)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    report = run_ops_sink(engine, settings.bootstrap, {r.route_id: r.agency_id for r in loaded.routes.values()},
                          timezone=loaded.timezone.key, workers_group=settings.app_id, registry=registry, idle_exit_s=idle_exit,
                          should_stop=lambda: bool(stopping))
    print("linhas gravadas: " + ", ".join(f"{topic} {count}" for topic, count in report.rows.items())
          + f"; {report.rejected} rejeitadas")



def register(app: typer.Typer) -> None:
    app.add_typer(ops_app, name="ops")
