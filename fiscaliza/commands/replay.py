"""`replay`, `simulate` and `demo`: the engine over files, no broker needed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from fiscaliza.commands.common import fail, parse_date


def replay(
    feed: Annotated[Path, typer.Option(help="GTFS feed: a directory or a .zip")],
    fleet: Annotated[Path, typer.Option(help="fleet.csv: vehicle_id,plate,operator_id[,capacity]")],
    tachograph: Annotated[Path, typer.Option(help="tachograph JSON Lines")],
    out: Annotated[Path, typer.Option(help="output directory (created if needed)")],
    catraca: Annotated[Optional[Path], typer.Option(help="catraca JSON Lines")] = None,
    occurrences: Annotated[Optional[Path], typer.Option(help="occurrences JSON Lines")] = None,
    policy: Annotated[Optional[Path], typer.Option(help="policy TOML (default: João Neiva)")] = None,
    geofences: Annotated[Optional[Path], typer.Option(help="GeoJSON geofence overrides")] = None,
) -> None:
    """Replay telemetry files through the engine; write trips, infractions and rejections."""
    from fiscaliza.replay import ReplayInputs, write_outputs
    from fiscaliza.replay import replay as run_replay
    from fiscaliza.reporting import Progress, no_data, print_replay_summary

    inputs = ReplayInputs(feed, fleet, tachograph, catraca, occurrences, policy, geofences)
    with Progress("Replaying") as progress:
        result = run_replay(inputs, progress=progress.update)
    write_outputs(result, out)
    if no_data(result):
        print(f"fiscaliza: aviso: sem dados: {result.messages} mensagens lidas, nenhuma aceita", file=sys.stderr)
    print_replay_summary(result, out)


def simulate(
    out: Annotated[Path, typer.Option(help="output directory")],
    start: Annotated[str, typer.Option(help="first service date, YYYY-MM-DD")],
    end: Annotated[Optional[str], typer.Option(help="last service date (default: start)")] = None,
    feed: Annotated[Optional[Path], typer.Option(help="GTFS feed (default: the João Neiva sample)")] = None,
    fleet: Annotated[Optional[Path], typer.Option(help="fleet.csv (default: the sample's)")] = None,
    seed: Annotated[int, typer.Option(help="random seed: the same seed gives the same files")] = 1,
    fault: Annotated[Optional[list[str]], typer.Option(help="inject a detector fault (repeatable)")] = None,
    input_fault: Annotated[Optional[list[str]], typer.Option(help="inject an input fault (repeatable)")] = None,
    ping_interval: Annotated[int, typer.Option(help="seconds between tachograph pings")] = 10,
    gps_noise: Annotated[float, typer.Option(help="GPS noise, metres (standard deviation)")] = 3.0,
    doors: Annotated[bool, typer.Option(
        "--doors", help="door sensors: every ping reports doors_open (needed by --fault unmarked_stop)")] = False,
    receipts: Annotated[bool, typer.Option(
        "--receipts", help="every message carries received_at, the AVL platform's receipt (its true time + 2 s)")]
        = False,
) -> None:
    """Write simulated tachograph and catraca JSON Lines for a feed and date range."""
    from fiscaliza.demo import simulate_files
    from fiscaliza.reporting import Progress
    from simulator import FAULTS, INPUT_FAULTS, LAW_FAULTS

    first = parse_date(start, "--start")
    last = parse_date(end, "--end") if end else first
    if last < first:
        fail(f"--end {last} is before --start {first}")
    if ping_interval <= 0 or gps_noise < 0:
        fail("--ping-interval must be positive and --gps-noise not negative")
    for name in fault or []:
        if name not in FAULTS and name not in LAW_FAULTS:
            fail(f"unknown --fault {name!r}; choose from {', '.join([*FAULTS, *LAW_FAULTS])}")
    for name in input_fault or []:
        if name not in INPUT_FAULTS:
            fail(f"unknown --input-fault {name!r}; choose from {', '.join(INPUT_FAULTS)}")
    from simulator import SimulationSettings

    settings = SimulationSettings(first, last, seed, tuple(fault or ()), tuple(input_fault or ()),
                                  ping_interval, gps_noise, doors=doors, receipts=receipts)
    try:
        with Progress("Simulating") as progress:
            result = simulate_files(feed, fleet, settings, out, progress=progress.update)
    except OSError as exc:
        fail(f"cannot write to {out}: {exc.strerror}")
    print(f"{result.pings} tachograph pings, {result.catraca_readings} catraca readings, "
          f"{result.runs} runs over {len(result.dates)} service day(s)")
    print(f"wrote {result.tachograph}, {result.catraca} and {result.manifest}")


def demo(
    out: Annotated[Optional[Path], typer.Option(
        help="where to write the demo's files (default: fiscaliza-demo/CITY, one folder per city)")] = None,
    date: Annotated[Optional[str], typer.Option(
        help="service date to simulate (default: the last service day before today)")] = None,
    seed: Annotated[int, typer.Option(help="random seed")] = 7,
    city: Annotated[str, typer.Option(
        help="the sample network and shipped policy: joao-neiva, conselheiro-lafaiete or canarana")] = "joao-neiva",
) -> None:
    """Simulate a day of a city's sample network with faults, replay it, summarize."""
    from fiscaliza.demo import default_demo_day, demo_city, demo_folder, run_demo
    from simulator import SimulationError

    chosen = demo_city(city)  # an unknown city: one line, exit 2 (a DemoError)
    folder = demo_folder(out, chosen)  # another city's demo there: one line, exit 2 (a DemoError)
    day = parse_date(date, "--date") if date else default_demo_day(chosen)
    try:
        run_demo(folder, day, seed, chosen)
    except SimulationError as exc:
        fail(f"--date {day}: {exc}")



def register(app: typer.Typer) -> None:
    app.command()(replay)
    app.command()(simulate)
    app.command()(demo)
