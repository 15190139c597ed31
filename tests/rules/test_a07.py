"""A-07 (descumprir pontos de parada) on hand-made tracks over the tiny feed.

Shape L runs 3000 m east from stop A (UTM 356000, 7815000) to the corner B, then
4000 m north to C; the stops are A, B and C. Trip T-0600 (route T, direction 0) is
scheduled to leave A at 06:00:00 on Tuesday 2026-12-01 (America/Sao_Paulo, UTC-3).
Every track stands at A, leaves the 100 m terminal zone at 06:00:00, runs the shape and
stands at C; trip detection and matching are the real ones
(trips.detect_trips, trips.matching.match_service_day_full). Ping ids are "v1@<seconds after 06:00>".

A path that cuts B's corner with one ping `a` m before B and the next `b` m after it
passes B at the height of the right triangle: a × b / √(a² + b²).
"""

import math

from tiny_trip import DATE, POLICY, S, at, facts_of, track

from rules.a07 import detect
from rules.model import Infraction, InsufficientEvidence
from trips import Fix


def corner_cut(before: float, after: float) -> list[Fix]:
    """Leave A's zone at 06:00; the ping at 290 s is `before` m short of B along the shape,
    the next, at 300 s, `after` m past it; then 10 m/s to C and stand there 60 s."""
    t_end = 300 + (4000 - after) / 10
    return track([(-70, 0), (-10, 0), (0, 100), (290, 3000 - before), (300, 3000 + after),
                  (t_end, 7000), (t_end + 60, 7000)])


def past_b(height: float, before: float = 50.0) -> float:
    """How far past B the next ping must be for the chord to pass `height` m from B."""
    return height * before / math.sqrt(before**2 - height**2)


UNIFORM = [(-70, 0), (-10, 0), (0, 100), (690, 7000), (750, 7000)]  # 10 m/s: B (3000 m) at 290 s


def test_following_the_shape_yields_nothing():
    # every stop is on the path: A and C where the bus stands, B on the ping at 290 s
    assert detect(facts_of(track(UNIFORM)), POLICY) == []


def test_cutting_the_corner_39_9_m_from_stop_yields_nothing():
    after = past_b(39.9)
    # 50 × 66.2 / √(50² + 66.2²) = 39.9 m <= 40 m
    assert round(after, 1) == 66.2
    assert detect(facts_of(corner_cut(50, after)), POLICY) == []


def test_cutting_the_corner_40_1_m_from_stop_yields_infraction():
    after = past_b(40.1)
    # 50 × 67.1 / √(50² + 67.1²) = 40.1 m > 40 m
    assert round(after, 1) == 67.1
    fixes = corner_cut(50, after)
    facts = facts_of(fixes)
    [record] = detect(facts, POLICY)
    assert isinstance(record, Infraction)
    assert (record.code, record.group, record.fine_ufir, record.status) == ("A-07", "A", 50, "confirmed")
    assert (record.operator_id, record.route_id, record.direction_id) == ("OP1", "T", 0)
    assert (record.trip_id, record.vehicle_id, record.service_date) == ("T-0600", "v1", DATE)
    # nearest approach 40.1 m; the closest ping is the one 50 m before B (the other is 67.1 m past it)
    assert record.evidence["missed_stops"] == [{"stop_id": "B", "nearest_m": 40.1, "closest_ping": "v1@290"}]
    assert record.evidence["unverifiable_stops"] == []
    assert (record.evidence["stop_radius_m"], record.evidence["max_interpolation_gap_s"]) == (40.0, 60.0)
    assert record.evidence["departed_at"] == "2026-12-01T06:00:00-03:00"
    # located at the closest ping: 290 s after 06:00:00 = 06:04:50, where it reported being
    closest = next(f for f in fixes if f.msg_id == "v1@290")
    assert record.occurred_at == at(290)
    assert record.lat is not None and record.lon is not None
    assert (record.lat, record.lon) == (round(closest.lat, 7), round(closest.lon, 7))


def test_stop_inside_a_90_s_gap_yields_insufficient_evidence():
    # at 10 m/s the pings at 250 s (2600 m) and 340 s (3500 m) bracket B (3000 m): 340 - 250 = 90 s > 60 s
    fixes = track(UNIFORM, drop=[(250, 340)])
    [record] = detect(facts_of(fixes), POLICY)
    assert isinstance(record, InsufficientEvidence)
    assert (record.code, record.operator_id, record.route_id) == ("A-07", "OP1", "T")
    assert (record.trip_id, record.vehicle_id, record.service_date) == ("T-0600", "v1", DATE)
    # nearest usable segment ends at the ping at 2600 m: 3000 - 2600 = 400 m from B
    assert record.evidence == {
        "stops": [{"stop_id": "B", "nearest_m": 400.0, "gap_s": 90.0, "pings": ["v1@250", "v1@340"]}],
        "max_interpolation_gap_s": 60.0,
    }


def slow_past_b(gap: float) -> list[Fix]:
    """Reach 45 m short of B at 280 s, creep to 45 m past it with no ping for `gap` s,
    then 10 m/s to C and stand there 60 s."""
    t_end = 280 + gap + (7000 - 3045) / 10
    return track([(-70, 0), (-10, 0), (0, 100), (280, 2955), (280 + gap, 3045), (t_end, 7000), (t_end + 60, 7000)],
                 drop=[(280, 280 + gap)])


def test_stop_between_pings_60_s_apart_yields_nothing():
    # pings 45 m before and 45 m after B (both > 40 m), 60 s apart (<= 60 s): the chord
    # between them passes 45 × 45 / √(45² + 45²) = 31.8 m from B <= 40 m
    fixes = slow_past_b(60)
    assert [f.msg_id for f in fixes if 270 <= f.t - S <= 350] == ["v1@270", "v1@280", "v1@340", "v1@350"]
    assert detect(facts_of(fixes), POLICY) == []


def test_stop_between_pings_61_s_apart_yields_insufficient_evidence():
    # the same chord 31.8 m from B, but 61 s > 60 s between its pings: not interpolated
    [record] = detect(facts_of(slow_past_b(61)), POLICY)
    assert isinstance(record, InsufficientEvidence)
    # the nearest usable segment ends at the ping 45 m short of B
    assert record.evidence["stops"] == [{"stop_id": "B", "nearest_m": 45.0, "gap_s": 61.0,
                                         "pings": ["v1@280", "v1@341"]}]


def test_same_facts_twice_yield_the_same_infraction_id():
    first = detect(facts_of(corner_cut(50, past_b(40.1))), POLICY)
    second = detect(facts_of(corner_cut(50, past_b(40.1))), POLICY)
    assert len(first) == len(second) == 1
    # identity: (service date, T-0600, v1, departure epoch) on both runs
    assert first[0].infraction_id == second[0].infraction_id
    assert first == second
