"""`fiscaliza worker`: start a Faust worker with a readable banner."""

from __future__ import annotations

import logging
import sys

import faust

from engine.values import Context
from kernel.settings import StreamSettings
from streams.admin import StreamError, create_changelog_topics
from streams.app import create_app
from streams.logs import logging_config

log = logging.getLogger(__name__)


def banner(ctx: Context, settings: StreamSettings) -> str:
    routes = ", ".join(sorted(ctx.feed.routes))
    return "\n".join([
        "fiscaliza worker",
        f"  kafka      {settings.bootstrap}  (app id {settings.app_id}, {settings.partitions} partitions, "
        f"store {settings.store})",
        f"  policy     {ctx.policy.policy.name} — version {ctx.policy.version}",
        f"  feed       {len(ctx.feed.routes)} routes ({routes}), {len(ctx.feed.trips)} trips, "
        f"EPSG:{ctx.feed.epsg}, {ctx.feed.timezone.key}",
        f"  fleet      {len(ctx.fleet)} vehicles of {len({v.operator_id for v in ctx.fleet.values()})} operators",
        f"  lateness   {ctx.policy.stream.allowed_lateness_s:.0f} s",
    ])


def run_worker(ctx: Context, settings: StreamSettings, loglevel: str = "info") -> None:
    """Run until SIGTERM/SIGINT; Faust stops the agents and commits offsets on the way out."""
    app = create_app(ctx, settings)
    print(banner(ctx, settings), file=sys.stderr, flush=True)
    try:
        create_changelog_topics(settings.bootstrap, app, settings.replication)
    except StreamError as exc:  # Kafka not up yet: Faust creates them itself, as it waits for it
        log.warning("changelog topics not created before start: %s", exc)
    worker_for(app, loglevel).execute_from_commandline()


class Worker(faust.Worker):
    """`faust.Worker` without its terminal spinner. At a log level of WARNING or above
    Faust keeps the spinner and, to turn it at every log record, sets the root logger to
    DEBUG for the worker's whole life (`faust.Worker.on_setup_root_logger`): every debug
    record of aiokafka and Faust is then made and dropped, 5-6 % of a worker's CPU (py-spy,
    BENCHMARKS.md session 25). Here the root logger keeps the level asked for."""

    def on_setup_root_logger(self, logger: logging.Logger, level: int) -> None:
        self.spinner = None


def worker_for(app: faust.App, loglevel: str) -> Worker:
    """The worker process of `app`: JSON log lines on stderr at `loglevel`."""
    return Worker(app, loglevel=loglevel, quiet=True, redirect_stdouts=False, logging_config=logging_config(loglevel))
