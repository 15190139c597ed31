"""B-04 (atrasar ou adiantar horário durante a operação) on hand-made tracks over the tiny feed.

Shape L runs 3000 m east from stop A (UTM 356000, 7815000) to the corner B, then
4000 m north to C. Trip T-0600 (route T, direction 0) is scheduled: A dep 06:00:00,
B arr 06:10:00 dep 06:10:30, C arr 06:25:00, all timepoints, on Tuesday 2026-12-01
(America/Sao_Paulo, UTC-3). Trip detection and matching are the real ones
(trips.detect_trips, trips.matching.match_service_day_full).

The time at B is when the bus leaves B's 40 m radius (against 06:10:30); at C, when it
enters C's (against 06:25:00). Every track dwells 60 s at B and leaves at 8 m/s, so it
is 40 m out 5 s after the dwell ends; it runs the last 400 m to C at 10 m/s. Pings come
every 10 s at :05, :15, ... and at every knot, so each crossing falls strictly between two
pings on a stretch of constant speed and its interpolated time is exact.
Ping ids are "v1@<seconds after 06:00>".
"""

from tiny_trip import DATE, FEED, POLICY, at, facts_of, track

from gtfs import scheduled_trips
from rules.b04 import detect
from rules.model import Infraction, InsufficientEvidence
from trips import Fix

T0600 = next(t for t in scheduled_trips(FEED, DATE) if t.trip_id == "T-0600")
SB = T0600.stops[1].shape_dist_m  # 3000 m
SC = T0600.stops[2].shape_dist_m  # 7000 m


def run(dep: float = 0, b: float = 0, c: float = 0, *, drop=()) -> list[Fix]:
    """Leave A's 100 m zone `dep` s after 06:00:00, B's 40 m radius `b` s after 06:10:30,
    reach C's 40 m radius `c` s after 06:25:00, then stand at C 60 s."""
    dwell_end = 625 + b  # 40 m at 8 m/s = 5 s: out of B's radius at 630 + b
    reach_c = 1500 + c
    knots = [(dep - 65, 0), (dep - 10, 0), (dep, 100),  # stand at A; 100 m at 10 m/s
             (dwell_end - 60, SB), (dwell_end, SB), (dwell_end + 25, SB + 200),  # dwell at B, leave at 8 m/s
             (reach_c - 36, SC - 400), (reach_c + 4, SC), (reach_c + 64, SC)]  # last 400 m at 10 m/s
    return track(knots, drop=drop)


def test_on_schedule_everywhere_yields_nothing():
    facts = facts_of(run())
    # left A's zone at 06:00:00 against 06:00:00 = 0 s
    assert facts.realized.departure_deviation_s == 0.0
    assert detect(facts, POLICY) == []


def test_departed_on_time_and_301_s_late_at_b_yields_infraction():
    fixes = run(b=301)
    facts = facts_of(fixes)
    [record] = detect(facts, POLICY)
    assert isinstance(record, Infraction)
    assert (record.code, record.group, record.fine_ufir, record.status) == ("B-04", "B", 100, "confirmed")
    assert (record.operator_id, record.route_id, record.direction_id) == ("OP1", "T", 0)
    assert (record.trip_id, record.vehicle_id, record.service_date) == ("T-0600", "v1", DATE)
    # dwell ends at 625 + 301 = 926 s; 40 m at 8 m/s later: 931 s = 06:15:31
    assert record.occurred_at == at(931)
    # the departure was on time: 06:00:00 - 06:00:00 = 0 s
    assert record.evidence["departure_deviation_s"] == 0.0
    assert (record.evidence["max_early_s"], record.evidence["max_late_s"]) == (60.0, 300.0)
    b, c = record.evidence["timepoints"]
    # 06:15:31 - 06:10:30 = 301 s > 300 s, between the ping at the dwell's end (926 s, 0 m
    # past B) and the next (935 s, 9 × 8 = 72 m past B): 926 + 9 × 40 / 72 = 931 s
    assert b == {"stop_id": "B", "event": "partida", "scheduled": "2026-12-01T06:10:30-03:00",
                 "observed": "2026-12-01T06:15:31-03:00", "deviation_s": 301.0, "pings": ["v1@926", "v1@935"]}
    # C reached on time: 1500 s after 06:00:00 = 06:25:00
    assert (c["stop_id"], c["event"], c["deviation_s"]) == ("C", "chegada", 0.0)
    assert "atrasou 5.0 min no ponto de controle B" in record.description  # 301 s / 60 = 5.0 min
    # located at the ping nearest in time to 931 s: 935 s (4 s) rather than 926 s (5 s)
    nearest = next(f for f in fixes if f.msg_id == "v1@935")
    assert record.lat is not None and record.lon is not None
    assert (record.lat, record.lon) == (round(nearest.lat, 7), round(nearest.lon, 7))


def test_departed_on_time_and_299_s_late_at_b_yields_nothing():
    # out of B's radius at 630 + 299 = 929 s: 06:15:29 - 06:10:30 = 299 s <= 300 s
    facts = facts_of(run(b=299))
    assert detect(facts, POLICY) == []


def test_departed_on_time_and_61_s_early_at_b_yields_infraction():
    [record] = detect(facts_of(run(b=-61)), POLICY)
    assert isinstance(record, Infraction)
    assert (record.code, record.status, record.trip_id) == ("B-04", "confirmed", "T-0600")
    b, _ = record.evidence["timepoints"]
    # out of B's radius at 630 - 61 = 569 s = 06:09:29; 06:09:29 - 06:10:30 = -61 s < -60 s
    assert (b["stop_id"], b["observed"], b["deviation_s"]) == ("B", "2026-12-01T06:09:29-03:00", -61.0)
    # dwell ends at 625 - 61 = 564 s; bracketed by 565 s (1 × 8 = 8 m past B) and 575 s
    # (11 × 8 = 88 m): 565 + 10 × (40 - 8) / (88 - 8) = 569 s
    assert b["pings"] == ["v1@565", "v1@575"]
    assert record.occurred_at == at(569)
    assert "adiantou 1.0 min" in record.description  # 61 s / 60 = 1.0 min


def test_departed_on_time_and_301_s_late_at_final_stop_yields_infraction():
    [record] = detect(facts_of(run(c=301)), POLICY)
    assert isinstance(record, Infraction)
    b, c = record.evidence["timepoints"]
    assert b["deviation_s"] == 0.0  # out of B's radius at 630 s = 06:10:30
    # within C's 40 m radius at 1500 + 301 = 1801 s = 06:30:01; 06:30:01 - 06:25:00 = 301 s > 300 s
    assert (c["stop_id"], c["event"], c["scheduled"], c["observed"], c["deviation_s"]) == (
        "C", "chegada", "2026-12-01T06:25:00-03:00", "2026-12-01T06:30:01-03:00", 301.0)
    assert record.occurred_at == at(1801)


def test_departed_400_s_late_yields_nothing():
    # left A's zone at 06:06:40: 400 s late > 300 s is D-13's business, though it is then
    # 420 s late at B and at C
    facts = facts_of(run(dep=400, b=420, c=420))
    assert facts.realized.departure_deviation_s == 400.0
    assert detect(facts, POLICY) == []


def test_timepoint_crossing_bracketed_by_150_s_gap_yields_insufficient_evidence():
    # the pings between 565 s (arriving at B) and 715 s are lost: B's 40 m radius is left at
    # 630 s inside a gap of 715 - 565 = 150 s > 120 s; C is reached on time
    fixes = run(drop=[(565, 715)])
    [record] = detect(facts_of(fixes), POLICY)
    assert isinstance(record, InsufficientEvidence)
    assert (record.code, record.operator_id, record.route_id) == ("B-04", "OP1", "T")
    assert (record.trip_id, record.vehicle_id, record.service_date) == ("T-0600", "v1", DATE)
    b, c = record.evidence["timepoints"]
    assert b == {"stop_id": "B", "event": "partida", "scheduled": "2026-12-01T06:10:30-03:00",
                 "observed": None, "reason": "intervalo de 150 s entre registros"}
    assert (c["stop_id"], c["deviation_s"]) == ("C", 0.0)


def test_same_facts_twice_yield_the_same_infraction_id():
    first = detect(facts_of(run(b=301)), POLICY)
    second = detect(facts_of(run(b=301)), POLICY)
    assert len(first) == len(second) == 1
    # identity: (service date, T-0600, v1) on both runs
    assert first[0].infraction_id == second[0].infraction_id
    assert first == second
