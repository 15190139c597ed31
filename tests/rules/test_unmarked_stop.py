"""Stopping outside the marked stops (rules.unmarked_stop; Conselheiro Lafaiete's art. 19 §
único) on hand-made pings over the tiny feed.

Shape L runs 3000 m east from stop A (a terminal, 100 m zone) to stop B at the corner,
then 4000 m north to stop C (terminal). Pings are placed by their progress along L (and
metres south of it); the day's facts carry every ping as the door rule reads it (the
engine keeps only the standing-with-doors-open ones and the ping after each: the same
runs). Thresholds (tests/rules/shared_law.py): at most 3 km/h, more than 80 m from every
stop, 3 pings over at least 20 s, at most 60 s apart. Ping ids are "v1@<seconds after 06:00>".
"""

import pytest
import shapely
from shared_law import POLICY, UNMARKED_STOP, known
from tiny_trip import DATE, GEOFENCES, LINE_L, PROJECTOR, TZ, S, at

from rules.facts import CatracaDay, DoorFix, VehicleDayFacts
from rules.model import Infraction, InsufficientEvidence
from rules.unmarked_stop import detect
from trips import Fix


@pytest.fixture(autouse=True)
def _law(monkeypatch):
    known(monkeypatch)


def day(pings) -> VehicleDayFacts:
    """pings: (seconds after 06:00, metres along L, metres south of it, km/h, doors_open)."""
    doors = []
    for t, along, south, speed, open_ in pings:
        point = shapely.line_interpolate_point(LINE_L, along)
        x, y = point.x, point.y - south
        lon, lat = PROJECTOR.to_lonlat([x], [y])
        fix = Fix(S + t, x, y, speed, "T", f"v1@{t:g}", float(lat[0]), float(lon[0]), open_)
        distance, stop_ids = GEOFENCES.nearest_stop([x], [y])
        excused = bool(GEOFENCES.in_any_terminal([x], [y])[0] or not GEOFENCES.on_any_corridor([x], [y])[0])
        doors.append(DoorFix(fix, float(distance[0]), stop_ids[0], excused))
    return VehicleDayFacts("v1", "OP1", DATE, TZ, tuple(d.fix for d in doors), (60.0,) * len(doors), CatracaDay(),
                           (), (), tuple(doors), any(d.fix.doors_open is not None for d in doors))


def stop(along: float, *, south: float = 0.0, speed: float = 0.0, doors=True, times=(0, 10, 20)):
    """Moving at 36 km/h before and after (doors shut, or unreported with `doors=None`);
    standing at `along` for `times`."""
    moving = None if doors is None else False
    return [(-10, along - 100, 0.0, 36.0, moving)] + [(t, along, south, speed, doors) for t in times] \
        + [(times[-1] + 10, along + 100, 0.0, 36.0, moving)]


def test_doors_open_3_pings_over_20_s_1500_m_from_the_stops_yields_infraction():
    [record] = detect(day(stop(1500)), POLICY, UNMARKED_STOP)
    assert isinstance(record, Infraction)
    assert (record.code, record.fine_ufir, record.status, record.vehicle_id) == (UNMARKED_STOP, 100, "confirmed", "v1")
    assert record.occurred_at == at(0)
    evidence = record.evidence
    # 1500 m along L: 1500 m from A (0 m) and from B (3000 m)
    assert evidence["nearest_stop_m"] == 1500.0 and evidence["nearest_stop_id"] in {"A", "B"}
    # pings at 0, 10 and 20 s: 3 pings over 20 s
    assert [p["msg_id"] for p in evidence["pings"]] == ["v1@0", "v1@10", "v1@20"]
    assert evidence["duration_s"] == 20.0 and evidence["interval_epoch"] == [S, S + 20]


def test_one_ping_with_the_doors_open_yields_nothing():
    # a sensor glitch: 1 ping < 3
    assert detect(day(stop(1500, times=(0,))), POLICY, UNMARKED_STOP) == []


def test_doors_open_3_pings_over_19_s_yields_nothing():
    # 0, 9.5 and 19 s: 19 s < 20 s
    assert detect(day(stop(1500, times=(0, 9.5, 19))), POLICY, UNMARKED_STOP) == []


def test_doors_open_50_m_past_stop_b_yields_nothing():
    # 3050 m along L is 50 m north of B (the corner): 50 m <= 80 m, at the marked stop
    assert detect(day(stop(3050)), POLICY, UNMARKED_STOP) == []


def test_doors_open_while_rolling_at_10_kmh_yields_nothing():
    # 10 km/h > 3 km/h: not standing (the doors of a bus pulling in)
    assert detect(day(stop(1500, speed=10.0)), POLICY, UNMARKED_STOP) == []


def test_doors_open_in_a_terminal_zone_yields_nothing():
    # 90 m along L: 90 m from A (> 80 m) but inside A's 100 m terminal zone
    assert detect(day(stop(90)), POLICY, UNMARKED_STOP) == []


def test_doors_open_off_every_corridor_yields_nothing():
    # 200 m south of L (corridor 50 m): a garage or a yard, not a line's street
    assert detect(day(stop(1500, south=200.0)), POLICY, UNMARKED_STOP) == []


def test_no_door_sensor_yields_nothing():
    # pings without doors_open: nothing can be claimed, and nothing is recorded
    facts = day(stop(1500, doors=None))
    assert not facts.doors_reported
    assert detect(facts, POLICY, UNMARKED_STOP) == []


def test_silence_of_70_s_inside_the_stop_yields_insufficient_evidence():
    # pings at 0, 70 and 80 s: 70 s > 60 s between the first two
    [record] = detect(day(stop(1500, times=(0, 70, 80))), POLICY, UNMARKED_STOP)
    assert isinstance(record, InsufficientEvidence)
    assert record.evidence["longest_silence_s"] == 70.0


def test_two_stops_yield_two_infractions():
    pings = stop(1500) + [(t + 200, along + 1000, south, speed, d) for t, along, south, speed, d in stop(1500)]
    records = detect(day(pings), POLICY, UNMARKED_STOP)
    assert [r.occurred_at for r in records] == [at(0), at(200)]
