"""The live run's pure pieces (benchmarks/live_run.py): moving the sample day and its
timetable to "now"."""

from __future__ import annotations

import csv
import datetime as dt
import json

import pytest

from benchmarks.live_run import shifted_feed, shifted_lines
from samples import joao_neiva

BRT = dt.timezone(dt.timedelta(hours=-3))


def _rows(path):
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_feed_moves_every_scheduled_time_and_runs_the_weekday_service_on_the_day(tmp_path):
    feed, _ = joao_neiva()
    moved = shifted_feed(feed, tmp_path / "feed", -3600, 6)  # an hour earlier, on a Sunday
    before, after = _rows(feed / "stop_times.txt"), _rows(moved / "stop_times.txt")
    assert len(before) == len(after)
    first_before, first_after = before[0], after[0]
    h, m, s = (int(x) for x in first_before["departure_time"].split(":"))
    assert first_after["departure_time"] == f"{h - 1:02d}:{m:02d}:{s:02d}"
    assert first_after["trip_id"] == first_before["trip_id"]
    frequencies = {(r["trip_id"], r["start_time"]) for r in _rows(moved / "frequencies.txt")}
    assert ("201-DU-0-FREQ", "05:00:00") in frequencies
    calendar = {r["service_id"]: r for r in _rows(moved / "calendar.txt")}
    assert calendar["DU"]["sunday"] == "1" and calendar["DU"]["monday"] == "1"
    assert calendar["SAB"]["sunday"] == "0" and calendar["SAB"]["saturday"] == "1"


def test_a_time_that_would_fall_before_midnight_is_refused(tmp_path):
    feed, _ = joao_neiva()
    with pytest.raises(SystemExit, match="before midnight"):
        shifted_feed(feed, tmp_path / "feed", -6 * 3600, 6)


def test_the_lines_in_the_stretch_are_moved_in_event_order_and_the_rest_left_out(tmp_path):
    t0 = dt.datetime(2026, 12, 1, 6, 40, tzinfo=BRT)
    ping = tmp_path / "tachograph.jsonl"
    catraca = tmp_path / "catraca.jsonl"
    ping.write_text("\n".join(json.dumps({"vehicle_id": v, "ts": (t0 + dt.timedelta(seconds=s)).isoformat()})
                              for v, s in (("A", 20), ("B", -5), ("A", 600))) + "\nnot json\n")
    catraca.write_text(json.dumps({"vehicle_id": "B", "ts": (t0 + dt.timedelta(seconds=10)).isoformat()}) + "\n")
    lines = shifted_lines({"tachograph": ping, "catraca": catraca}, t0.timestamp(), t0.timestamp() + 300, 1000.0)
    assert [(topic, vehicle) for _, topic, vehicle, _ in lines] == [("catraca", "B"), ("tachograph", "A")]
    epoch, _, _, raw = lines[1]
    assert epoch == t0.timestamp() + 1020
    moved = dt.datetime.fromisoformat(json.loads(raw)["ts"])
    assert moved.timestamp() == epoch and moved.utcoffset() == dt.timedelta(hours=-3)
