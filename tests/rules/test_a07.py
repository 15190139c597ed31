"""A-07 (descumprir pontos de parada) on hand-made tracks over the tiny feed.

Shape L runs 3000 m east from stop A (UTM 356000, 7815000) to the corner B, then
4000 m north to C; the stops are A, B and C. Trip T-0600 (route T, direction 0) is
scheduled to leave A at 06:00:00 on Tuesday 2026-12-01 (America/Sao_Paulo, UTC-3).
Every track stands at A, leaves the 100 m terminal zone at 06:00:00, runs the shape and
stands at C; trip detection and matching are the real ones
(trips.detect_trips, trips.matching.match_service_day_full). Ping ids are "v1@<seconds after 06:00>".

A path that cuts B's corner with one ping `a` m before B and the next `b` m after it
passes B at the height of the right triangle: a × b / √(a² + b²). Two pings on the shape
moving forward are read along the shape, though: the bus drove round the corner and passed
B whatever the chord says. A-07 accuses only where pings off the corridor show the bus went
elsewhere.
"""

import math

import msgspec
from tiny_trip import DATE, POLICY, S, at, facts_of, measured_facts_of, track

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


def test_cutting_the_corner_between_two_pings_on_the_shape_yields_nothing():
    # 50 × 67.1 / √(50² + 67.1²) = 40.1 m > 40 m from B as a straight chord, but both pings
    # are on the shape, 10 s apart, forward: the bus drove round the corner (the São Paulo
    # traces' 55° corner gave 10 false A-07 read as chords)
    after = past_b(40.1)
    assert round(after, 1) == 67.1
    assert detect(facts_of(corner_cut(50, after)), POLICY) == []


def detour_past_b() -> list[Fix]:
    """Run the east leg at 10 m/s, 150 m south of it (off the 50 m corridor) from 230 s to
    274 s (2840 m along), then the next ping, at 320 s, is on the north leg 300 m past B:
    the pair brackets B, one of its pings off the corridor, 46 s apart (<= 60 s)."""
    return track([(-70, 0), (-10, 0), (0, 100), (274, 2840), (320, 3300), (690, 7000), (750, 7000)],
                 off=[(230, 274, 150)], drop=[(274, 320)])


def test_a_detour_that_bypasses_the_stop_yields_infraction():
    fixes = detour_past_b()
    facts = facts_of(fixes)
    [record] = detect(facts, POLICY)
    assert isinstance(record, Infraction)
    assert (record.code, record.group, record.fine_ufir, record.status) == ("A-07", "A", 50, "confirmed")
    assert (record.operator_id, record.route_id, record.direction_id) == ("OP1", "T", 0)
    assert (record.trip_id, record.vehicle_id, record.service_date) == ("T-0600", "v1", DATE)
    # the straight path from (2840 m east, 150 m south) to 300 m north of B passes
    # |160 × 450 − 150 × 160| / √(160² + 450²) = 100.5 m from B > 40 m; the closest ping
    # is the off-corridor one at 274 s, √(160² + 150²) = 219.3 m from B (< 300 m)
    [missed] = record.evidence["missed_stops"]
    assert (missed["stop_id"], missed["nearest_m"]) == ("B", 100.5)
    assert missed["closest_ping"] == "v1@274" and missed["pings"] == ["v1@274", "v1@320"]
    assert record.evidence["unverifiable_stops"] == []
    assert (record.evidence["stop_radius_m"], record.evidence["max_interpolation_gap_s"]) == (40.0, 60.0)
    assert record.evidence["departed_at"] == "2026-12-01T06:00:00-03:00"
    closest = next(f for f in fixes if f.msg_id == "v1@274")
    assert record.occurred_at == at(274)
    assert (record.lat, record.lon) == (round(closest.lat, 7), round(closest.lon, 7))


def test_one_gps_jump_off_the_corridor_next_to_the_stop_yields_nothing():
    # the ping at 290 s (100 m before B) jumps 400 m east of the shape, its neighbours are on
    # it: a lone fix off the corridor is a multipath jump, not a path; the pair around it
    # (280 s and 300 s, 20 s apart, forward on the shape) brackets B
    fixes = track(UNIFORM)
    k = next(i for i, f in enumerate(fixes) if f.msg_id == "v1@290")
    fixes[k] = msgspec.structs.replace(fixes[k], x=fixes[k].x + 400)
    assert detect(facts_of(fixes), POLICY) == []


def test_stop_inside_a_90_s_gap_along_the_shape_yields_nothing():
    # at 10 m/s the pings at 250 s (2600 m) and 340 s (3500 m) bracket B (3000 m), both on
    # the shape, forward, 90 s <= 300 s (trips.max_coverage_gap_s) apart: driven along it
    assert detect(facts_of(track(UNIFORM, drop=[(250, 340)])), POLICY) == []


def test_stop_in_a_90_s_gap_into_pings_off_the_corridor_yields_insufficient_evidence():
    # the same gap, but the pings at 340 s and 350 s lie 80 m east of the north leg (off the
    # 50 m corridor): 90 s > 60 s is too long to trust the straight path, and nothing shows
    # where the bus went: B can be neither passed nor missed
    fixes = track(UNIFORM, drop=[(250, 340)])
    fixes = [msgspec.structs.replace(f, x=f.x + 80) if f.msg_id in ("v1@340", "v1@350") else f for f in fixes]
    [record] = detect(facts_of(fixes), POLICY)
    assert isinstance(record, InsufficientEvidence)
    assert (record.code, record.operator_id, record.route_id) == ("A-07", "OP1", "T")
    assert (record.trip_id, record.vehicle_id, record.service_date) == ("T-0600", "v1", DATE)
    # the nearest short segment ends at the ping at 2600 m: 3000 - 2600 = 400 m from B
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


def test_stop_between_pings_61_s_apart_on_the_shape_yields_nothing():
    # the same chord 31.8 m from B, 61 s > 60 s apart: not interpolated as a straight line,
    # but both pings are on the shape and move forward 90 m in 61 s: driven along it
    assert detect(facts_of(slow_past_b(61)), POLICY) == []


def test_same_facts_twice_yield_the_same_infraction_id():
    first = detect(facts_of(detour_past_b()), POLICY)
    second = detect(facts_of(detour_past_b()), POLICY)
    assert len(first) == len(second) == 1
    # identity: (service date, T-0600, v1, departure epoch) on both runs
    assert first[0].infraction_id == second[0].infraction_id
    assert first == second


def test_the_measures_the_engine_hands_over_give_the_verdict_the_fixes_give():
    # at an arrival the engine gives A-07 each fix's distance and progress as its track memo
    # took them (trips.memo.Along); an evidence bundle re-runs the rule on the fixes alone:
    # the same records, to the last digit of nearest_m (a missed stop; a stop unverifiable)
    unsure = track(UNIFORM, drop=[(250, 340)])
    unsure = [msgspec.structs.replace(f, x=f.x + 80) if f.msg_id in ("v1@340", "v1@350") else f for f in unsure]
    for fixes in (detour_past_b(), unsure, corner_cut(50, past_b(39.9))):
        from_fixes = detect(facts_of(fixes), POLICY)
        assert detect(measured_facts_of(fixes), POLICY) == from_fixes
    assert [type(r) for r in detect(facts_of(detour_past_b()), POLICY)] == [Infraction]
    assert [type(r) for r in detect(facts_of(unsure), POLICY)] == [InsufficientEvidence]
