"""D-11 (deixar de cumprir os itinerários fixados) on hand-made tracks over the tiny feed.

Shape L runs 3000 m east from stop A (UTM 356000, 7815000) to the corner B, then
4000 m north to C. Trip T-0600 (route T, direction 0, block B1) is scheduled to leave
A at 06:00:00 on Tuesday 2026-12-01 (America/Sao_Paulo, UTC-3). Every track stands at
A, leaves the 100 m terminal zone at 06:00:00, runs the shape at 10 m/s except where a
test says otherwise, and stands at C; trip detection and matching are the real ones
(trips.detect_trips, trips.matching.match_service_day_full).

Off-route stretches are drawn on the east leg at exact coordinates (x = 356000 +
progress, y = 7815000 - offset), so that their steps are exact: 12 steps of 25 m are
300.0 m, not 299.99999. Ping ids are "v1@<seconds after 06:00>".
"""

from dataclasses import replace

import numpy as np
from tiny_trip import DATE, POLICY, S, at, facts_of, measured_facts_of, track

from rules.d11 import detect
from rules.model import Infraction, InsufficientEvidence
from trips import Fix


def detour_run(start: float, travel: float, duration: float, *, metres: float = 100.0, drop=()) -> list[Fix]:
    """Leave A's zone at 06:00 at 10 m/s; from `start` m run `travel` m in `duration` s
    `metres` south of the shape; then 10 m/s to C and stand there 60 s."""
    t0 = (start - 100) / 10
    t1 = t0 + duration
    t2 = t1 + (7000 - start - travel) / 10
    knots = [(-70, 0), (-10, 0), (0, 100), (t0, start), (t1, start + travel), (t2, 7000), (t2 + 60, 7000)]
    return track(knots, off=[(t0, t1, metres)], drop=drop)


def ids(fixes, t0, t1):
    return [f.msg_id for f in fixes if t0 <= f.t - S <= t1]


def test_300_m_in_120_s_off_route_yields_infraction():
    fixes = detour_run(1000, 300, 120)
    facts = facts_of(fixes)
    [record] = detect(facts, POLICY)
    assert isinstance(record, Infraction)
    assert (record.code, record.group, record.fine_ufir, record.status) == ("D-11", "D", 200, "confirmed")
    assert (record.operator_id, record.route_id, record.direction_id) == ("OP1", "T", 0)
    assert (record.trip_id, record.vehicle_id, record.service_date) == ("T-0600", "v1", DATE)
    # the first off-route ping: 06:00:00 + (1000 m - 100 m) / 10 m/s = 06:01:30
    assert record.occurred_at == at(90)
    [episode] = record.evidence["episodes"]
    # 12 steps of 25 m between pings at 06:01:30 ... 06:03:30 = 300 m in 120 s
    assert episode["travel_m"] == 300.0
    assert episode["duration_s"] == 120.0
    # drawn at y = 7 815 000 - 100 beside a shape at y = 7 815 000.000 = 100.0 m off
    assert episode["max_distance_m"] == 100.0
    # 120 s / 10 s + 1 = 13 pings, at 90, 100, ..., 210 s after 06:00
    assert episode["pings"] == [f"v1@{s}" for s in range(90, 211, 10)] == ids(fixes, 90, 210)
    assert (episode["from"], episode["to"]) == ("2026-12-01T06:01:30-03:00", "2026-12-01T06:03:30-03:00")
    assert record.evidence["interval_epoch"] == [S + 90, S + 210]
    assert (record.evidence["max_distance_m"], record.evidence["min_travel_m"],
            record.evidence["min_duration_s"]) == (50.0, 300.0, 60.0)
    # located at the farthest off-route ping, with the coordinates it reported
    off_pings = {(round(f.lat, 7), round(f.lon, 7)) for f in fixes if 90 <= f.t - S <= 210}
    assert record.lat is not None and record.lon is not None
    assert (record.lat, record.lon) in off_pings
    assert len(record.evidence["off_route_lonlat"]) == 13


def test_299_m_in_120_s_off_route_yields_nothing():
    # 299 m of travel < 300 m, though 120 s >= 60 s
    assert detect(facts_of(detour_run(1000, 299, 120)), POLICY) == []


def test_600_m_in_60_s_off_route_yields_infraction():
    [record] = detect(facts_of(detour_run(1000, 600, 60)), POLICY)
    assert isinstance(record, Infraction)
    [episode] = record.evidence["episodes"]
    # 6 steps of 100 m between pings at 06:01:30 ... 06:02:30 = 600 m in 60 s
    assert (episode["travel_m"], episode["duration_s"]) == (600.0, 60.0)
    assert episode["pings"] == [f"v1@{s}" for s in range(90, 151, 10)]


def test_600_m_in_59_s_off_route_yields_nothing():
    # first off-route ping at 90 s, last at 149 s: 59 s < 60 s, though 600 m >= 300 m
    fixes = detour_run(1000, 600, 59)
    assert ids(fixes, 90, 149)[-1] == "v1@149"
    assert detect(facts_of(fixes), POLICY) == []


def test_49_m_offset_for_600_m_yields_nothing():
    # 49 m from the shape is not more than 50 m, however long: 600 m in 120 s
    assert detect(facts_of(detour_run(1000, 600, 120, metres=49.0)), POLICY) == []


def test_following_the_shape_yields_nothing():
    fixes = track([(-70, 0), (-10, 0), (0, 100), (690, 7000), (750, 7000)])
    assert detect(facts_of(fixes), POLICY) == []


def test_off_route_episode_broken_by_150_s_ping_gap_yields_insufficient_evidence():
    # 950 m in 190 s at 5 m/s, 100 m off; the pings between 06:01:50 and 06:04:20 are lost.
    # Before the gap: 90..110 s = 100 m in 20 s; after it: 260..280 s = 100 m in 20 s; neither
    # qualifies alone. Bridged: 50 + 50 + 750 + 50 + 50 = 950 m in 280 - 90 = 190 s would,
    # but only across a gap of 260 - 110 = 150 s > 120 s
    fixes = detour_run(1000, 950, 190, drop=[(110, 260)])
    assert ids(fixes, 90, 280) == ["v1@90", "v1@100", "v1@110", "v1@260", "v1@270", "v1@280"]
    [record] = detect(facts_of(fixes), POLICY)
    assert isinstance(record, InsufficientEvidence)
    assert (record.code, record.operator_id, record.route_id) == ("D-11", "OP1", "T")
    assert (record.trip_id, record.vehicle_id, record.service_date) == ("T-0600", "v1", DATE)
    assert record.evidence == {"from": "2026-12-01T06:01:30-03:00", "to": "2026-12-01T06:04:40-03:00",
                               "max_ping_gap_s": 120.0}


def test_off_route_episode_with_120_s_ping_gap_yields_infraction():
    # the same detour losing the pings between 110 s and 230 s: a 120 s gap is not longer
    # than 120 s, so the episode holds: 1000 m to 1950 m = 950 m in 190 s
    fixes = detour_run(1000, 950, 190, drop=[(110, 230)])
    [record] = detect(facts_of(fixes), POLICY)
    assert isinstance(record, Infraction)
    [episode] = record.evidence["episodes"]
    # 2 steps of 50 m, one of 600 m (1100 m -> 1700 m), 5 steps of 50 m = 950 m; 280 - 90 = 190 s
    assert (episode["travel_m"], episode["duration_s"]) == (950.0, 190.0)


def test_same_facts_twice_yield_the_same_infraction_id():
    first = detect(facts_of(detour_run(1000, 300, 120)), POLICY)
    second = detect(facts_of(detour_run(1000, 300, 120)), POLICY)
    assert len(first) == len(second) == 1
    # identity: (service date, T-0600, v1, departure epoch) on both runs
    assert first[0].infraction_id == second[0].infraction_id
    assert first == second


def test_600_m_in_60_s_off_route_over_only_2_pings_yields_insufficient_evidence():
    # the pings between 90 s and 150 s lost: the 2 left 100 m south, 600 m apart, are 600 m
    # and 60 s off route, but 2 < 3 consecutive pings (policy): a multipath jump beside a
    # noisy fix would look the same. Nothing accuses; the record says what was seen.
    fixes = detour_run(1000, 600, 60, drop=[(90, 150)])
    assert ids(fixes, 80, 160) == ["v1@80", "v1@90", "v1@150", "v1@160"]
    [record] = detect(facts_of(fixes), POLICY)
    assert isinstance(record, InsufficientEvidence)
    assert (record.evidence["pings"], record.evidence["min_consecutive_pings"]) == (2, 3)


def test_the_distance_the_engine_measured_is_the_one_read():
    # the engine hands D-11 each fix's distance to the shape as its track memo took it when
    # the fix came (trips.memo.Along): the rule reads that, it does not measure again. The
    # same detour gives the same record either way; a track on the shape whose measures say
    # 80 m off from 100 s to 220 s (1200 m at 10 m/s) is read as off it
    fixes = detour_run(1000, 600, 120)
    assert detect(measured_facts_of(fixes), POLICY) == detect(facts_of(fixes), POLICY) != []
    on_shape = measured_facts_of(track([(-70, 0), (-10, 0), (0, 100), (690, 7000), (750, 7000)]))
    assert detect(on_shape, POLICY) == []
    along = on_shape.measured
    seconds = along.t - S
    told = replace(along, distance=np.where((seconds >= 100) & (seconds <= 220), 80.0, along.distance))
    [record] = detect(replace(on_shape, measured=told), POLICY)
    assert isinstance(record, Infraction)
    assert record.evidence["episodes"][0]["max_distance_m"] == 80.0
