"""The Kafka side: `topics create`, `publish` and the Faust `worker`."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from fiscaliza.commands.common import (
    BootstrapOption,
    FeedOption,
    FleetOption,
    GeofencesOption,
    PolicyOption,
    engine_inputs,
    fail,
    stream_settings,
)

BROKER_CHECK_S = 8.0  # all addresses together: the user hears within 10 s, not after the client's retries


def require_broker(bootstrap: str, within_s: float = BROKER_CHECK_S) -> None:
    """Fail in one line (exit 2) when no bootstrap address accepts a connection, naming
    them: Kafka's clients retry for half a minute and end in a traceback."""
    addresses = [address.strip().removeprefix("kafka://") for address in bootstrap.split(",") if address.strip()]
    deadline = time.monotonic() + within_s
    for index, address in enumerate(addresses):
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            fail(f"Kafka bootstrap address {address!r} is not HOST:PORT")
        share = (deadline - time.monotonic()) / (len(addresses) - index)
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=max(share, 0.1)):
                return
        except OSError:
            continue
    fail(f"no Kafka broker answered at {', '.join(addresses)}")


topics_app = typer.Typer(help="Kafka topics of fiscaliza.", no_args_is_help=True)


@topics_app.command("create")
def topics_create(
    bootstrap: BootstrapOption = None,
    partitions: Annotated[Optional[int], typer.Option(help="partitions per topic (env FISCALIZA_PARTITIONS)")] = None,
    replication: Annotated[Optional[int], typer.Option(help="replication factor (env FISCALIZA_REPLICATION)")] = None,
) -> None:
    """Create the topics (inputs, trips, the compacted infractions change log, dead letters)."""
    from streams.admin import create_topics

    settings = stream_settings()
    count = partitions or settings.partitions
    factor = replication or settings.replication
    if count <= 0 or factor <= 0:
        fail("--partitions and --replication must be positive")
    outcome = create_topics(bootstrap or settings.bootstrap, count, factor)
    for name, what in outcome.items():
        print(f"{name}: {what}")


def publish(
    file: Annotated[Optional[Path], typer.Argument(help="JSON Lines file")] = None,
    topic: Annotated[Optional[str], typer.Option(help="tachograph, catraca or occurrences")] = None,
    speed: Annotated[Optional[float], typer.Option(help="replay at the recorded pace, N times faster")] = None,
    end_of_input: Annotated[bool, typer.Option("--end-of-input", help="mark the end of a finite input "
                                               "(the workers then close every period it covered)")] = False,
    bootstrap: BootstrapOption = None,
) -> None:
    """Load a JSON Lines file onto a topic, as fast as possible or at the recorded pace."""
    from fiscaliza.reporting import Progress
    from streams.admin import publish as send
    from streams.admin import publish_end_of_input

    settings = stream_settings()
    bootstrap = bootstrap or settings.bootstrap
    if end_of_input:
        require_broker(bootstrap)
        count = publish_end_of_input(bootstrap, ack_timeout_s=settings.publish_timeout_s)
        print(f"end of input marked on {count} partitions")
        return
    if file is None or topic is None:
        fail("publish needs a FILE and --topic (or --end-of-input)")
    if speed is not None and speed <= 0:
        fail("--speed must be positive")
    require_broker(bootstrap)
    with Progress(f"Publicando em {topic}") as progress:
        result = send(bootstrap, topic, file, speed, progress.update, ack_timeout_s=settings.publish_timeout_s)
    print(f"{result.sent} messages sent to {topic}"
          + (f" ({result.unkeyed} without a key: malformed, the workers dead-letter them)" if result.unkeyed else ""))


def worker(
    feed: FeedOption = None,
    fleet: FleetOption = None,
    policy: PolicyOption = None,
    geofences: GeofencesOption = None,
    loglevel: Annotated[str, typer.Option(help="debug, info, warning or error")] = "info",
) -> None:
    """Run a Faust worker: the engine on the Kafka topics (stop with SIGTERM)."""
    from engine.loading import load_context
    from streams.worker import run_worker

    inputs = engine_inputs(feed, fleet, policy, geofences)
    if loglevel not in ("debug", "info", "warning", "error"):
        fail("--loglevel must be debug, info, warning or error")
    context = load_context(inputs)  # a bad feed is named before any broker is looked for
    require_broker(stream_settings().bootstrap)
    run_worker(context, stream_settings(), loglevel)



def register(app: typer.Typer) -> None:
    app.command()(publish)
    app.command()(worker)
    app.add_typer(topics_app, name="topics")
