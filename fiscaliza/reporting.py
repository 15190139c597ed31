"""Terminal output: progress bars and the readable summaries of replay and demo."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress
from rich.table import Table

from fiscaliza.money import brl
from gtfs.schedule import frequency_windows, scheduled_trips


class Progress:
    """A progress bar on stderr; silent when stderr is not a terminal (CI logs)."""

    def __init__(self, label: str):
        self._label = label
        self._bar = RichProgress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=Console(stderr=True), transient=True, disable=not sys.stderr.isatty(),
        )
        self._task = None

    def __enter__(self) -> "Progress":
        self._bar.__enter__()
        self._task = self._bar.add_task(self._label, total=None)
        return self

    def __exit__(self, *exc) -> None:
        self._bar.__exit__(*exc)

    def update(self, done: int, total: int) -> None:
        self._bar.update(self._task, completed=done, total=total)


def schedule_counts(result) -> Counter:
    """Scheduled trips (timetabled) or expected departures (headway) per route and direction."""
    counts: Counter = Counter()
    for date in result.service_dates:
        for trip in scheduled_trips(result.feed, date):
            counts[(trip.route_id, trip.direction_id)] += 1
        for window in frequency_windows(result.feed, date):
            counts[(window.route_id, window.direction_id)] += window.expected_departures
    return counts


def print_replay_summary(result, out: Path, console: Console | None = None) -> None:
    console = console or Console()
    scheduled = schedule_counts(result)
    realized = Counter((t.route_id, t.direction_id) for t in result.trips)
    matched = Counter((t.route_id, t.direction_id) for t in result.trips if t.trip_id is not None)
    dates = ", ".join(d.isoformat() for d in result.service_dates) or "none"
    table = Table(title=f"Viagens por linha e sentido — dias de operação: {dates}")
    for column in ("linha", "sentido", "programadas", "realizadas", "casadas com a programação"):
        table.add_column(column, justify="right" if column != "linha" else "left")
    for key in sorted(set(scheduled) | set(realized)):
        route, direction = key
        name = result.feed.routes[route].long_name if route in result.feed.routes else ""
        table.add_row(f"{route} {name}".strip(), str(direction), str(scheduled[key]), str(realized[key]),
                      str(matched[key]))
    console.print(table)
    if no_data(result):
        console.print("[bold]SEM DADOS:[/bold] nenhuma mensagem aceita nos arquivos de entrada (vazios, ou todas "
                      "rejeitadas): não houve o que apurar, e a ausência de infrações nada prova.")
    else:
        print_infractions(result, console)
    if result.insufficient:
        codes = Counter(f.code for f in result.insufficient)
        listed = ", ".join(f"{code}: {count}" for code, count in sorted(codes.items()))
        console.print(f"Fatos não comprovados pela telemetria (sem autuação): {len(result.insufficient)} ({listed})")
    reasons = Counter(r.reason for r in result.rejected)
    rejected = ", ".join(f"{reason}: {count}" for reason, count in sorted(reasons.items())) or "nenhuma"
    console.print(f"Mensagens lidas: {result.messages}; rejeitadas: {len(result.rejected)} ({rejected})")
    console.print(f"Arquivos: {out / 'trips.jsonl'}, {out / 'infractions.jsonl'}, {out / 'rejected.jsonl'}, "
                  f"{out / 'insufficient_evidence.jsonl'}")


def no_data(result) -> bool:
    """No message was accepted: an empty input, or every message rejected."""
    return result.messages == 0 or len(result.rejected) >= result.messages


STATUS_PT = {"confirmed": "confirmada(s)", "exempt_art45": "isenta(s) pelo art. 45",
             "justified": "justificada(s)", "provisional": "provisória(s)"}


def print_infractions(result, console: Console) -> None:
    """Infractions per code: how many, in which status, and the fines due (confirmed only)."""
    if not result.infractions:
        console.print("Infrações: nenhuma.")
        return
    ufir = result.policy.policy.ufir_brl
    table = Table(title=f"Infrações por código (UFIR = {brl(ufir)}; só as confirmadas são devidas)")
    for column in ("código", "registros", "situação", "multa devida (UFIR)", "multa devida (R$)"):
        table.add_column(column, justify="left" if column in ("código", "situação") else "right")
    by_code: dict[str, list] = {}
    for infraction in result.infractions:
        by_code.setdefault(infraction.code, []).append(infraction)
    total = 0
    for code, records in sorted(by_code.items()):
        status = Counter(i.status for i in records)
        due = sum(i.fine_ufir for i in records if i.status == "confirmed")
        total += due
        situation = ", ".join(f"{count} {STATUS_PT[name]}" for name, count in sorted(status.items()))
        table.add_row(code, str(len(records)), situation, str(due), brl(due * ufir))
    table.add_row("total", str(len(result.infractions)), "", str(total), brl(total * ufir))
    console.print(table)
