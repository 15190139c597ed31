"""Feeds broken the way a new user's feed is, each made from the João Neiva sample (two
agencies, VNV and TRD) in a test's directory: one column dropped, or one cell changed."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

from samples import joao_neiva


def _rewrite(path: Path, change) -> None:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows(change(rows))


def sample_copy(directory: Path) -> Path:
    feed = directory / "feed"
    shutil.copytree(joao_neiva()[0], feed)
    return feed


def without_column(directory: Path, table: str, column: str) -> Path:
    """The sample with `column` of `table`.txt dropped (header and every row)."""
    feed = sample_copy(directory)

    def drop(rows):
        i = rows[0].index(column)
        return [row[:i] + row[i + 1:] for row in rows]

    _rewrite(feed / f"{table}.txt", drop)
    return feed


def with_cell(directory: Path, table: str, row: int, column: str, value: str) -> Path:
    """The sample with the cell of `column` on CSV row `row` (header = 1) of `table`.txt set to `value`."""
    feed = sample_copy(directory)

    def change(rows):
        rows[row - 1][rows[0].index(column)] = value
        return rows

    _rewrite(feed / f"{table}.txt", change)
    return feed
