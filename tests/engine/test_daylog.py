"""A vehicle's operating day as the vehicle-day rules read it (engine.daylog).

Context: the shipped policy. C-01: speed above the limit + 7 km/h on ≥ 2 consecutive
pings (≤ 30 s apart) spanning ≥ 10 s; episodes less than 300 s apart merge. D-19's
silence limit: 600 s. Fixes here are 10 s apart at 60 km/h limits.
"""

from __future__ import annotations

import datetime as dt
import json

from engine.daylog import DayLog, KeptFix, add_fix, add_reading, over_episodes
from kernel.policy import load_policy
from rules.facts import catraca_day
from telemetry import decode_catraca
from trips.model import Fix

POLICY = load_policy()
TOLERANCE = POLICY.c01.tolerance_kmh  # 7 km/h
T0 = 1_796_121_600.0


def fixes(*speeds, start=0.0, step=10.0):
    return [KeptFix(Fix(T0 + start + k * step, 0.0, 0.0, float(v), None, f"V/{start + k * step:.0f}"), 60.0)
            for k, v in enumerate(speeds)]


def logged(kept):
    log = DayLog("2026-12-01")
    for k in kept:
        add_fix(log, k, TOLERANCE)
    return log


def test_only_fixes_over_the_limit_and_the_one_after_are_kept():
    log = logged(fixes(50, 50, 80, 80, 50, 50, 50))
    # 80 > 60 + 7 at 20 s and 30 s; 50 at 40 s follows the run; the rest is not kept
    assert [k.fix.t - T0 for k in log.kept] == [20, 30, 40]


def test_episode_is_over_300_s_after_its_last_fix_over_the_limit_yields_it():
    log = logged(fixes(80, 80, *([50] * 31)))  # over at 0 and 10 s, then 310 s under
    # last fix over at 10 s; nothing can join it from 10 + 300 = 310 s on
    assert over_episodes(log, POLICY) == {T0 + 10: T0 + 310}


def test_episode_still_able_to_merge_yields_nothing():
    log = logged(fixes(80, 80, *([50] * 29)))  # newest fix at 300 s < 310 s
    assert over_episodes(log, POLICY) == {}


def test_run_still_going_within_the_merge_gap_yields_nothing():
    # over at 0-10 s, under until 190 s, over again from 200 s to the newest fix (330 s):
    # that run may still qualify (it does: 2 pings, 10 s) and join the first
    log = logged(fixes(80, 80, *([50] * 18), *([80] * 14)))
    assert over_episodes(log, POLICY) == {}


def test_single_ping_over_within_the_gap_delays_the_end_until_it_is_over():
    # over at 0-10 s; one ping over at 300 s (< 310 s), under at 310 s: that run cannot
    # qualify (1 ping); the first episode is over once the ping at 310 s shows it ended
    log = logged(fixes(80, 80, *([50] * 28), 80, 50, 50))
    assert over_episodes(log, POLICY) == {T0 + 10: T0 + 310}
    log = logged(fixes(80, 80, *([50] * 28), 80))  # newest fix is the one over, at 300 s
    assert over_episodes(log, POLICY) == {}


def test_an_episode_over_is_yielded_while_a_later_run_over_the_limit_goes_on():
    # over at 0-10 s (over at 310 s), under until 320 s, over again from 330 s: the
    # newest fix is over the limit and the later run may still become an episode, but
    # the first is over. over_episodes skips the day's kept fixes until `merge_gap_s`
    # after its first fix over the limit, not its newest: this fails if it waited for
    # the newest (or last kept) fix over the limit instead
    log = logged(fixes(80, 80, *([50] * 31), 80, 80))
    assert over_episodes(log, POLICY) == {T0 + 10: T0 + 310}
    # and nothing is over before 300 s after the first fix over the limit
    kept_first = logged(fixes(50, 80, 80, *([50] * 29)))  # over at 10-20 s, newest 310 s < 320 s
    assert over_episodes(kept_first, POLICY) == {}


def reading(seconds, counter, *, seal_intact=True, status="ok"):
    ts = dt.datetime.fromtimestamp(T0 + seconds, dt.timezone(dt.timedelta(hours=-3))).isoformat()
    return decode_catraca(json.dumps({"vehicle_id": "V", "ts": ts, "counter": counter,
                                      "seal_intact": seal_intact, "status": status}))


def test_catraca_accumulated_reading_by_reading_equals_the_whole_day():
    readings = [reading(0, 10), reading(60, 12), reading(700, 15),  # 640 s > 600 s: a silence
                reading(760, 14),  # backwards
                reading(820, 16, seal_intact=False), reading(880, 17, status="fault")]
    log = DayLog("2026-12-01", previous_counter=9, counter=9)
    for r in readings:
        add_reading(log, r, POLICY.d19.max_silence_s)
    whole = catraca_day(readings, 9, POLICY.d19.max_silence_s)
    assert log.catraca() == whole
    assert whole.gaps == ((T0 + 60, T0 + 700),)
    assert [(r.counter, before) for r, before in whole.notable] == [(14, 15), (16, 14), (17, 16)]
