"""`fiscaliza demo`: a simulated day of the João Neiva sample, replayed and summarized."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from rich.console import Console

from fiscaliza.fleet import load_fleet
from fiscaliza.replay import ReplayInputs, replay, write_outputs
from fiscaliza.reporting import Progress, print_replay_summary
from fiscaliza.samples import joao_neiva
from gtfs import load_feed
from simulator import SimulationSettings, simulate

DEMO_FAULTS = ("detour", "late_departure", "suppressed_trip", "speeding", "broken_seal")
DEMO_INPUT_FAULTS = ("malformed", "duplicates", "out_of_order")


def simulate_files(feed_path: Path | None, fleet_path: Path | None, settings: SimulationSettings, out: Path,
                   progress=None):
    """Simulate onto `out`; feed and fleet default to the João Neiva sample."""
    sample_feed, sample_fleet = joao_neiva()
    feed = load_feed(feed_path or sample_feed)
    fleet = load_fleet(fleet_path or sample_fleet, operators=set(feed.agencies))
    return simulate(feed, fleet, settings, out, progress=progress)


def run_demo(out: Path, date: dt.date, seed: int) -> None:
    console = Console()
    feed_path, fleet_path = joao_neiva()
    telemetry_dir, results_dir = out / "telemetry", out / "replay"
    settings = SimulationSettings(date, date, seed, DEMO_FAULTS, DEMO_INPUT_FAULTS)
    console.print(f"[bold]fiscaliza demo[/bold] — rede de exemplo de João Neiva, {date.isoformat()}")
    with Progress("Simulando telemetria") as progress:
        simulated = simulate_files(feed_path, fleet_path, settings, telemetry_dir, progress=progress.update)
    console.print(f"Simulados {simulated.pings} registros de tacógrafo e {simulated.catraca_readings} de catraca "
                  f"({simulated.runs} viagens executadas). Falhas injetadas:")
    for fault in simulated.injected:
        target = fault.get("trip_id") or ""
        vehicle = fault.get("vehicle_id") or ""
        console.print(f"  • {fault['fault']} {target} {vehicle}".rstrip())
    inputs = ReplayInputs(feed=feed_path, fleet=fleet_path, tachograph=simulated.tachograph,
                          catraca=simulated.catraca)
    with Progress("Reprocessando") as progress:
        result = replay(inputs, progress=progress.update)
    write_outputs(result, results_dir)
    print_replay_summary(result, results_dir, console)
