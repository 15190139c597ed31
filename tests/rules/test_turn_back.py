"""Turning back before the terminal (rules.turn_back; Conselheiro Lafaiete's art. 14 §
único) on hand-made tracks over the tiny feed.

Shape L runs 3000 m east from stop A to the corner B, then 4000 m north to C (7000 m).
Every track stands at A, leaves the 100 m terminal zone at 06:00:00 (progress 100 m) and
runs at 10 m/s unless a test says otherwise, pinging every 10 s; the pass is cut by the
real trips.passes. Thresholds (tests/rules/shared_law.py): 200 m behind the farthest
point on 3 consecutive fixes, silences up to 120 s. Ping ids are "v1@<seconds after 06:00>".
"""

import numpy as np
import pytest
import shapely
from shapely import LineString
from shared_law import POLICY, TURN_BACK, known
from tiny_trip import DATE, GEOFENCES, ITINERARY, LINE_L, PROJECTOR, TZ, S, at

from geofences.zones import CircleZone, Itinerary
from rules.facts import PassFacts
from rules.justification import justify
from rules.model import Infraction, InsufficientEvidence
from rules.turn_back import detect, reversals, rule
from telemetry import Occurrence
from trips import Fix
from trips.passes import itinerary_passes


@pytest.fixture(autouse=True)
def _law(monkeypatch):
    known(monkeypatch)


def drive(knots, *, drop=(), jumps=(), every=10.0, line=LINE_L, speed=None) -> list[Fix]:
    """Pings every `every` s from the first knot to the last; knots are (seconds after
    06:00, metres along the line), progress interpolated (it may go back). The
    tachograph reports the speed of that motion (at a knot, the next stretch's), or
    `speed` km/h throughout. drop: (t0, t1) loses the pings strictly between; jumps: (t,
    metres) moves that ping along the line (a GPS fault: the tachograph is not moved)."""
    kt, kp = (np.array(v, dtype=float) for v in zip(*knots))
    t = np.union1d(np.arange(kt[0], kt[-1] + 1e-9, every), kt)
    for a, b in drop:
        t = t[(t <= a) | (t >= b)]
    p = np.interp(t, kt, kp)
    stretch = np.clip(np.searchsorted(kt, t, side="right") - 1, 0, len(kt) - 2)
    kmh = np.abs(np.diff(kp) / np.diff(kt))[stretch] * 3.6 if speed is None else np.full(len(t), float(speed))
    for when, metres in jumps:
        p[t == when] += metres
    pts = shapely.line_interpolate_point(line, p)
    x, y = shapely.get_x(pts), shapely.get_y(pts)
    lon, lat = PROJECTOR.to_lonlat(x, y)
    return [Fix(S + ti, xi, yi, float(vi), "T", f"v1@{ti:g}", float(la), float(lo))
            for ti, xi, yi, vi, la, lo in zip(t, x, y, kmh, lat, lon)]


def passes_of(fixes, itinerary=ITINERARY) -> list[PassFacts]:
    """The passes of route T direction 0 the engine would judge, as their facts."""
    found = []
    for p in itinerary_passes(fixes, GEOFENCES, POLICY.trips):
        if p.itinerary is not ITINERARY:
            continue
        # A's zone is left at progress 100 m: the crossing is the exit ping's next one here
        found.append(PassFacts("v1", "OP1", itinerary, DATE, TZ, fixes[p.exit + 1].t,
                               tuple(fixes[p.exit:p.end]), p.arrived))
    return found


def judge(fixes):
    return [f for facts in passes_of(fixes) for f in detect(facts, POLICY, TURN_BACK)]


STAND = [(-70, 0), (-10, 0), (0, 100)]
STAND_ROWS = [(-70, 0, 0), (-10, 0, 0)]  # the same, with the tachograph's km/h (track)


def test_reversal_of_300_m_held_on_3_fixes_yields_infraction():
    # 10 m/s to 2000 m (06:03:10), then back at 5 m/s to 1500 m (06:04:50)
    fixes = drive(STAND + [(190, 2000), (290, 1500)])
    [record] = judge(fixes)
    assert isinstance(record, Infraction)
    assert (record.code, record.group, record.fine_ufir, record.status) == (TURN_BACK, "multa", 100, "confirmed")
    assert (record.route_id, record.direction_id, record.vehicle_id, record.service_date) == ("T", 0, "v1", DATE)
    # turned at the farthest fix: 06:00:00 + (2000 - 100) m / 10 m/s = 06:03:10
    assert record.occurred_at == at(190)
    evidence = record.evidence
    # behind by 200 m from 1800 m back: 190 s + 200 m / 5 m/s = 230 s; fixes at 230, 240, 250 s
    assert [p["msg_id"] for p in evidence["pings"]] == [f"v1@{s}" for s in range(190, 251, 10)]
    assert evidence["interval_epoch"] == [S + 190, S + 250]
    # at 250 s: 2000 - 60 s x 5 m/s = 1700 m, 300 m behind, in 60 s
    assert (evidence["farthest_m"], evidence["reversal_m"], evidence["reversal_s"]) == (2000.0, 300.0, 60.0)
    # the tachograph agrees: 18 km/h (5 m/s) from the turn, 60 s x 5 m/s = 300 m driven by 250 s
    assert [(p["speed_kmh"], p["tachograph_m"]) for p in evidence["pings"]][-1] == (18.0, 300.0)
    # 7000 m shape - 2000 m reached = 5000 m short of the terminal
    assert evidence["short_of_terminal_m"] == 5000.0
    assert "retrocedeu 300 m" in record.description and "a 5000 m do terminal" in record.description


def test_reversal_of_199_m_yields_nothing():
    # back from 2000 m to 1801 m (199 m < 200 m), then on to C
    assert judge(drive(STAND + [(190, 2000), (230, 1801), (260, 1801), (780, 7000), (840, 7000)])) == []


def test_gps_jump_of_two_fixes_300_m_back_yields_nothing():
    # 2 fixes 300 m behind (at 200 and 210 s), the rest forward: 2 < 3 consecutive
    fixes = drive(STAND + [(690, 7000), (750, 7000)], jumps=[(200, -300), (210, -300)])
    assert judge(fixes) == []


def test_reversal_then_on_to_the_terminal_yields_infraction():
    # a reversal held is one, whatever follows: back at 5 m/s from 2000 m (190 s) to 1700 m
    # (250 s), forward again to C
    fixes = drive(STAND + [(190, 2000), (250, 1700), (780, 7000), (840, 7000)])
    [record] = judge(fixes)
    assert isinstance(record, Infraction)
    # 200 m behind from 230 s (1800 m): fixes at 230, 240, 250 s
    assert record.evidence["interval_epoch"] == [S + 190, S + 250]
    assert record.evidence["reversal_m"] == 300.0


def test_three_fixes_thrown_500_m_back_by_gps_multipath_yield_insufficient_evidence():
    # GPS multipath, not a turn: the fixes at 200, 210 and 220 s at 2100 - 500 = 1600,
    # 1700 and 1800 m, 400, 300 and 200 m behind the 190 s fix (2000 m), while the
    # tachograph reads 36 km/h (10 m/s) on: the bus drove 100 m from 190 to 200 s, and
    # can be at most 100 + 2 x 50 m (the corridor, for both fixes) = 200 m back, not 400 m
    fixes = drive(STAND + [(690, 7000), (750, 7000)], jumps=[(200, -500), (210, -500), (220, -500)])
    [record] = judge(fixes)
    assert isinstance(record, InsufficientEvidence)
    assert "incompatível com o tacógrafo" in record.reason and "06:03:20 está 400 m atrás" in record.reason
    assert "no máximo 100 m rodados" in record.reason
    assert record.evidence["gps_allowance_m"] == 100.0


def test_multipath_under_a_slow_bus_yields_insufficient_evidence():
    # 2000 m at 190 s, then 18 km/h (5 m/s): a jump of 350 m back holds 3 fixes 200 m
    # behind, 2050 - 350 = 1700, 1750, 1800 m at 200, 210, 220 s. The first step, 300 m in
    # 10 s (108 km/h), is within a bus's physical ceiling (120 km/h): only the tachograph
    # tells it from a turn. At 200 s it says 50 m driven since 190 s: 300 m back is 150 m
    # more than 50 m + the 100 m allowance
    fixes = drive(STAND + [(190, 2000), (1190, 7000), (1250, 7000)],
                  jumps=[(200, -350), (210, -350), (220, -350)])
    [record] = judge(fixes)
    assert isinstance(record, InsufficientEvidence)
    assert "no máximo 50 m rodados" in record.reason and "está 300 m atrás" in record.reason


def test_tachograph_reading_nothing_proves_no_reversal():
    # a genuine-looking reversal (back 300 m at 5 m/s) with the speed stuck at 0: the
    # distance driven cannot be told, nothing accuses
    [record] = judge(drive(STAND + [(190, 2000), (290, 1500)], speed=0))
    assert isinstance(record, InsufficientEvidence)


def test_silence_of_140_s_inside_the_reversal_yields_insufficient_evidence():
    # pings lost between 190 s (2000 m) and 330 s (1500 m): 140 s > 120 s
    fixes = drive(STAND + [(190, 2000), (290, 1500), (390, 1500)], drop=[(190, 330)])
    [record] = judge(fixes)
    assert isinstance(record, InsufficientEvidence)
    assert record.evidence["longest_silence_s"] == 140.0
    assert record.evidence["interval_epoch"] == [S + 190, S + 350]


def test_turning_after_reaching_the_terminal_yields_nothing():
    # C's zone reached at 690 s, then back 1000 m along L: the pass ended at C
    assert judge(drive(STAND + [(690, 7000), (750, 7000), (850, 6000)])) == []


def test_a_full_trip_yields_nothing():
    assert judge(drive(STAND + [(690, 7000), (750, 7000)])) == []


def test_reversal_on_an_out_and_back_shape_yields_nothing():
    # a line 2500 m east and back along the same street to A: the bus seen going back west
    # may be running its second leg forward (GPS cannot tell the two apart); the fixes lie
    # within the corridor of the shape beyond the farthest point reached
    folded = LineString([(356000, 7815000), (358500, 7815000), (356000, 7815000.5)])
    itinerary = Itinerary(ITINERARY.pattern, folded, 50.0, ITINERARY.origin,
                          CircleZone("Z", 356000, 7815000, 100.0), ())
    fixes = drive(STAND + [(190, 2000), (290, 1500)])  # on the first leg, which L shares
    facts = PassFacts("v1", "OP1", itinerary, DATE, TZ, S, tuple(fixes[6:]), False)
    assert detect(facts, POLICY, TURN_BACK) == []
    # the same track on L, which never comes back: a turn back
    assert len(detect(facts.__class__(**{**facts.__dict__, "itinerary": ITINERARY}), POLICY, TURN_BACK)) == 1


def test_reversals_on_arrays():
    # progress 0, 100, 300 (the reach), 90, 80, 70, 500: three fixes 210-230 m behind
    progress = np.array([0, 100, 300, 90, 80, 70, 500], dtype=float)
    on = np.ones(7, bool)
    assert reversals(progress, on, 200, 3, 2) == [(2, 3, 5, 300.0)]
    # the middle one off the corridor alone is noise (1 <= 2): read past, 2 fixes left
    on[4] = False
    assert reversals(progress, on, 200, 3, 2) == []


def test_an_authorized_detour_justifies():
    [record] = judge(drive(STAND + [(190, 2000), (290, 1500)]))
    detour = Occurrence(id="oc-1", kind="authorized_detour", start=at(0), end=at(600), route_id="T")
    justified = justify(record, rule(TURN_BACK).justified_by, [detour], PROJECTOR, POLICY.trips.corridor_m)
    assert justified.status == "justified" and justified.evidence["justified_by"] == ["oc-1"]


def track(rows, *, aside=()) -> list[Fix]:
    """Fixes from (seconds after 06:00, metres along L, tachograph km/h) rows; `aside`:
    (seconds, metres) pushes that fix that far south of L's first leg (off its corridor)."""
    t, p, v = (np.array(c, dtype=float) for c in zip(*rows))
    pts = shapely.line_interpolate_point(LINE_L, p)
    x, y = shapely.get_x(pts), shapely.get_y(pts)
    for when, metres in aside:
        y[t == when] -= metres
    lon, lat = PROJECTOR.to_lonlat(x, y)
    return [Fix(S + ti, xi, yi, vi, "T", f"v1@{ti:g}", float(la), float(lo))
            for ti, xi, yi, vi, la, lo in zip(t, x, y, v, lat, lon)]


def test_a_fix_off_the_corridor_inside_thrown_back_fixes_hides_no_gps_fault():
    # at 36 km/h on, the fixes at 200-230 s thrown 500-650 m back (1600 m at 200 s: 400 m
    # behind the 190 s fix, 2000 m, with 100 m driven); the one at 210 s also 200 m to the
    # side, off the corridor: noise read past (1 <= 2), with no position along the shape —
    # the others still show the fault
    rows = STAND_ROWS + [(s, 100 + 10 * s, 36) for s in range(0, 700, 10)]
    thrown = {200: 500, 210: 550, 220: 600, 230: 650}
    rows = [(s, p - thrown.get(s, 0), v) for s, p, v in rows]
    [record] = judge(track(rows, aside=[(210, 200.0)]))
    assert isinstance(record, InsufficientEvidence) and "está 400 m atrás" in record.reason


def test_a_u_turn_between_sparse_pings_yields_infraction():
    # pings 60 s apart; 2500 m at 240 s at 10 km/h (in the U-turn), then back at 40 km/h:
    # 1893 m at 300 s is 607 m behind, and each interval at its higher speed allows
    # 60 s x 40 km/h = 667 m by then, 1333 m by 360 s (1226 m: 1274 m behind)
    rows = STAND_ROWS + [(0, 100, 36), (60, 700, 36), (120, 1300, 36), (180, 1900, 36), (240, 2500, 10),
                         (300, 1893, 40), (360, 1226, 40), (420, 560, 40)]
    [record] = judge(track(rows))
    assert isinstance(record, Infraction)
    assert record.evidence["pings"][1]["tachograph_m"] == 666.7

