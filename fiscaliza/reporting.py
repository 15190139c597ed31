"""Terminal output: progress bars and the readable summaries of replay and demo."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.padding import Padding
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress
from rich.table import Table

from gtfs.schedule import frequency_windows, scheduled_trips
from kernel.money import brl, fine_brl
from rules.laws import law_of


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


def word_safe_widths(cells: list[list[str]], available: int, no_wrap: Sequence[bool] = ()) -> list[int]:
    """Content widths for a table's columns (`cells`: each column's header and cells) within
    `available` characters, never narrower than a column's longest word: rich, short of
    room, folds a word in the middle ("concessionári / o"), which a summary of the law must
    not. Each column starts at its widest line; the widest column still above its longest
    word gives up a character until the table fits (or every column is at its longest word:
    then the table is wider than the terminal, its words whole). A `no_wrap` column keeps
    its widest line."""
    widths = [max((len(line) for cell in column for line in cell.splitlines()), default=1) for column in cells]
    longest_word = [widths[i] if i < len(no_wrap) and no_wrap[i] else
                    max((len(word) for cell in column for word in cell.split()), default=1)
                    for i, column in enumerate(cells)]
    while sum(widths) > available:
        shrinkable = [i for i, w in enumerate(widths) if w > longest_word[i]]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda i: widths[i])
        widths[widest] -= 1
    return widths


def print_table(console: Console, table: Table) -> None:
    """`table` at widths that keep every word whole at the console's width (`word_safe_widths`)."""
    columns = table.columns
    cells = [[str(column.header), *(str(cell) for cell in column.cells)] for column in columns]
    edges = len(columns) + 1 if table.show_edge else len(columns) - 1
    _, right, _, left = Padding.unpack(table.padding)
    padding = (left + right) * len(columns)
    widths = word_safe_widths(cells, console.width - edges - padding, [column.no_wrap for column in columns])
    for column, width in zip(columns, widths, strict=True):
        column.width = width
    console.print(table)


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
    dates = ", ".join(f"{d:%d/%m/%Y}" for d in result.service_dates) or "nenhum"
    table = Table(title=f"Viagens por linha e sentido — dias de operação: {dates}")
    for column in ("linha", "sentido", "programadas", "realizadas", "casadas com a programação"):
        table.add_column(column, justify="right" if column != "linha" else "left")
    headsigns = {(t.route_id, t.direction_id): t.headsign for t in result.feed.trips.values() if t.headsign}
    for key in sorted(set(scheduled) | set(realized)):
        route, direction = key
        name = result.feed.routes[route].long_name if route in result.feed.routes else ""
        towards = f"{direction} → {headsigns[key]}" if key in headsigns else str(direction)
        table.add_row(f"{route} {name}".strip(), towards, str(scheduled[key]), str(realized[key]),
                      str(matched[key]))
    print_table(console, table)
    if no_data(result):
        console.print("[bold]SEM DADOS:[/bold] nenhuma mensagem aceita nos arquivos de entrada (vazios, ou todas "
                      "rejeitadas): não houve o que apurar, e a ausência de infrações nada prova.")
    else:
        print_infractions(result, console)
    if result.insufficient:
        codes = Counter(f.code for f in result.insufficient)
        listed = ", ".join(f"{code}: {count}" for code, count in sorted(codes.items()))
        console.print(f"Fatos não comprovados pela telemetria (sem autuação): {len(result.insufficient)} ({listed})")
    reasons: Counter = Counter()
    for reason, count in result.rejected.reasons.items():
        reasons[REASONS_PT.get(reason, reason)] += count
    rejected = ", ".join(f"{reason}: {count}" for reason, count in sorted(reasons.items())) or "nenhuma"
    console.print(f"Mensagens lidas: {result.messages}; rejeitadas: {len(result.rejected)} ({rejected})")
    console.print(f"Arquivos: {out / 'trips.jsonl'}, {out / 'infractions.jsonl'}, {out / 'rejected.jsonl'}, "
                  f"{out / 'insufficient_evidence.jsonl'}")


def no_data(result) -> bool:
    """No message was accepted: an empty input, or every message rejected."""
    return result.messages == 0 or len(result.rejected) >= result.messages


STATUS_PT = {"confirmed": "confirmada(s)", "exempt_art45": "isenta(s) pelo art. 45",
             "justified": "justificada(s)", "provisional": "provisória(s)", "withdrawn": "retirada(s)"}
# The rejection reasons, for a reader of the summary (the files keep the stable codes).
REASONS_PT = {
    "invalid_json": "JSON inválido", "not_an_object": "não é um objeto JSON", "missing_field": "campo ausente",
    "wrong_type": "tipo errado", "out_of_range": "fora da faixa", "timestamp_without_offset": "horário sem fuso",
    "invalid_timestamp": "horário inválido", "invalid_value": "valor inválido",
    "end_before_start": "fim antes do início", "unknown_vehicle": "veículo fora da frota",
    "implausible": "implausível (defeito do sensor)", "future": "datada no futuro",
    "clock_offset": "relógio do dispositivo defasado", "duplicate": "duplicada",
    "conflicting_duplicate": "duplicada com conteúdo diferente", "late": "atrasada demais",
    "position_fault": "posição impossível (defeito do GPS)", "engine_error": "erro interno",
    "too_long": "longa demais",
}


def _status_pt(name: str, records) -> str:
    """An art. 45 exemption decided on an incomplete month is provisional, and says so."""
    if name == "exempt_art45" and any(not r.evidence.get("art45", {}).get("month_complete", True) for r in records
                                      if r.status == name):
        return "isenta(s) pelo art. 45, provisória(s): mês incompleto"
    return STATUS_PT.get(name, name)


def print_infractions(result, console: Console) -> None:
    """Infractions per code: how many, in which status, and the fines due (confirmed only)."""
    if not result.infractions:
        console.print("Infrações: nenhuma.")
        return
    ufir = result.policy.policy.ufir_brl
    law = law_of(result.policy)
    unit = law.fine_unit  # the law's fine unit (UFIR, VR, ...) and its value in reais from the policy
    ufir_text = f"R$ {ufir:.4f}".replace(".", ",")
    table = Table(title=f"Infrações por código — multa prevista das confirmadas ({unit} = {ufir_text}), devida só "
                        "quando o auto for lavrado e a decisão final")
    for column in ("código", "infração", "nº", "situação", unit, "R$"):
        if column == "infração":  # the law's words in full, wrapped: a cut text can change its meaning
            table.add_column(column)
        else:
            table.add_column(column, justify="left" if column in ("código", "situação") else "right",
                             no_wrap=column in (unit, "R$"))
    by_code: dict[str, list] = {}
    for infraction in result.infractions:
        by_code.setdefault(infraction.code, []).append(infraction)
    # each auto's fine is rounded to the cent on its own (as the auto states it), and the
    # sums add those: rounding a sum could differ by a cent from the autos it sums
    total, total_brl = 0, 0
    for code, records in sorted(by_code.items()):
        status = Counter(i.status for i in records)
        confirmed = [i for i in records if i.status == "confirmed"]
        due = sum(i.fine_ufir for i in confirmed)
        due_brl = sum(fine_brl(i.fine_ufir, ufir) for i in confirmed)
        total, total_brl = total + due, total_brl + due_brl
        situation = ", ".join(f"{count} {_status_pt(name, records)}" for name, count in sorted(status.items()))
        article = law.articles.get(code)
        table.add_row(code, article.text if article else "", str(len(records)), situation, str(due), brl(due_brl))
    table.add_row("total", "", str(len(result.infractions)), "", str(total), brl(total_brl))
    print_table(console, table)
    operators = Table(title="Por operadora — multa prevista das confirmadas")
    for column in ("operadora", "infrações", "confirmadas", unit, "R$"):
        operators.add_column(column, justify="left" if column == "operadora" else "right",
                             no_wrap=column in (unit, "R$"))
    for operator in sorted({i.operator_id for i in result.infractions}):
        mine = [i for i in result.infractions if i.operator_id == operator]
        confirmed = [i for i in mine if i.status == "confirmed"]
        due = sum(i.fine_ufir for i in confirmed)
        due_brl = sum(fine_brl(i.fine_ufir, ufir) for i in confirmed)
        name = result.feed.agencies[operator].name if operator in result.feed.agencies else operator
        operators.add_row(f"{operator} — {name}", str(len(mine)), str(len(confirmed)), str(due), brl(due_brl))
    print_table(console, operators)
