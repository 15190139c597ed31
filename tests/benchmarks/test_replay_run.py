"""The windowed replay's pure pieces (benchmarks/replay_run.py): a window's parsing and how
the stream is cut into engine calls around the windows."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from zoneinfo import ZoneInfo

from benchmarks.replay_run import Window, next_call, released_counts

DAY = dt.date(2026, 12, 1)
SAO_PAULO = ZoneInfo("America/Sao_Paulo")


def message(epoch: float):
    return SimpleNamespace(body=SimpleNamespace(epoch=epoch))


def calls(epochs: list[float], batch: int, bounds: list[tuple[float, float, int]]) -> list[tuple[list[float], int | None]]:
    stream, pending, out = iter(map(message, epochs)), [], []
    while True:
        call, inside = next_call(pending, stream, batch, bounds)
        if not call:
            return out
        out.append(([m.body.epoch for m in call], inside))


def test_a_window_is_read_as_written_and_placed_on_the_local_day():
    window = Window.parse("07:15-07:30@13")
    assert window == Window(dt.time(7, 15), dt.time(7, 30), 13)
    assert window.label() == "07:15-07:30@13"
    start, end = window.epochs(DAY, SAO_PAULO)
    assert dt.datetime.fromtimestamp(start, SAO_PAULO).isoformat() == "2026-12-01T07:15:00-03:00"
    assert end - start == 15 * 60


def test_without_windows_calls_are_batches_of_the_stream():
    assert calls([1, 2, 3, 4, 5], 2, []) == [([1, 2], None), ([3, 4], None), ([5], None)]


def test_a_call_stops_at_a_windows_edges_and_takes_the_windows_batch_inside():
    # window [10, 20) at 2 a call, window [20, 30) at 5 a call; 4 a call outside
    epochs = [1, 2, 3, 4, 5, 9, 10, 11, 12, 19, 20, 21, 29, 30, 31]
    assert calls(epochs, 4, [(10, 20, 2), (20, 30, 5)]) == [
        ([1, 2, 3, 4], None), ([5, 9], None), ([10, 11], 0), ([12, 19], 0), ([20, 21, 29], 1), ([30, 31], None)]


def test_nothing_is_lost_or_repeated_around_the_windows():
    epochs = [float(e) for e in range(100)]
    cut = calls(epochs, 7, [(13, 41, 3), (60, 61, 1)])
    assert [e for call, _ in cut for e in call] == epochs
    assert all(13 <= e < 41 for call, inside in cut if inside == 0 for e in call)
    assert [call for call, inside in cut if inside == 1] == [[60.0]]


def test_a_window_releases_the_messages_of_its_span_less_the_allowed_lateness():
    # windows [1000, 1060) and [1060, 1120) with 600 s of lateness release [400, 460) and
    # [460, 520): of 399, 400, 459, 460, 519, 520 that is 400 and 459, then 460 and 519
    assert released_counts([399.0, 400.0, 459.0, 460.0, 519.0, 520.0], [(400.0, 460.0), (460.0, 520.0)]) == [2, 2]
