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
    worker = faust.Worker(app, loglevel=loglevel, quiet=True, redirect_stdouts=False,
                          logging_config=logging_config(loglevel))
    worker.execute_from_commandline()
