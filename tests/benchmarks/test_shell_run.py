"""The worker's core path without a broker (benchmarks/shell_run.py), on the sample day."""

from __future__ import annotations

import datetime as dt

from benchmarks.shell_run import shell_run
from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate

DAY = dt.date(2026, 12, 1)


def test_the_shell_path_takes_every_message_in_takes_of_its_batch(tmp_path):
    feed, fleet = joao_neiva()
    sim = simulate(load_feed(feed), load_fleet(fleet), SimulationSettings(DAY, DAY, seed=3), tmp_path)
    run = shell_run(feed, fleet, sim.tachograph, sim.catraca, batch=13, limit=400)
    # 400 messages, 13 a take: 30 full takes and one of 10
    assert (run["events"], run["takes"], run["batch"]) == (400, 31, 13)
    assert run["cpu_ms_per_event"] > 0 and run["max_rss_mb"] > 0
