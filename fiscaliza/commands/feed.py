"""`feed check`: a GTFS feed against the reference rules and this project's needs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

feed_app = typer.Typer(help="The GTFS feed.", no_args_is_help=True)


@feed_app.command("check")
def feed_check(
    feed: Annotated[Path, typer.Argument(help="GTFS feed: a directory or a .zip")],
    fleet: Annotated[Optional[Path], typer.Option(
        help="fleet.csv: its operators must be agency_ids of the feed")] = None,
) -> None:
    """Check a feed: the GTFS reference rules (MobilityData's), a shape for every trip,
    agency_id on every route when there are several agencies, times that parse, and the
    fleet's operators in agency.txt. One line per error and warning; errors: exit 1."""
    from gtfs.check import check_feed
    from kernel.fleet import load_fleet

    operators = None
    if fleet is not None:
        operators = {v.vehicle_id: v.operator_id for v in load_fleet(fleet).values()}
    report = check_feed(feed, operators, fleet.name if fleet else "fleet.csv")
    for problem in report.problems:
        print(f"{'erro' if problem.severity == 'error' else 'aviso'}: {problem.line()}")
    errors, warnings = len(report.errors), len(report.warnings)
    print(f"{feed}: {errors} erro(s), {warnings} aviso(s)"
          + ("" if errors else ": o feed pode ser usado"))
    if errors:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(feed_app, name="feed")
