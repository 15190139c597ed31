"""C-01 — speeding: the tachograph's speed above the zone's limit + 7 km/h tolerance on
at least two consecutive pings (at most 60 s apart) spanning at least 10 s; episodes
less than 300 s apart merge; one record per episode.

Facts are hand-made: one vehicle's pings with the limit at each ping, no trips unless
a test says otherwise (then a real TripFacts over the tiny fixture feed).
"""

import datetime as dt
from functools import cache
from pathlib import Path
from zoneinfo import ZoneInfo

import msgspec
import numpy as np

from gtfs.schedule import service_day
from kernel.policy import load_policy
from rules.c01 import detect, speeding_episodes
from rules.facts import CatracaDay, TripFacts, VehicleDayFacts
from rules.model import InsufficientEvidence
from trips.matching import match_service_day_full
from trips.model import DetectedTrip, Fix

POLICY = load_policy()
TZ = ZoneInfo("America/Sao_Paulo")
DATE = dt.date(2026, 12, 1)
T0 = dt.datetime(2026, 12, 1, 6, 0, tzinfo=TZ).timestamp()  # 06:00 local
TINY = Path(__file__).parents[1] / "gtfs" / "fixtures" / "tiny"


def pings(*spec, vehicle="V1", moving=None):
    """Fixes from (seconds after T0, speed km/h) pairs, on a straight road, each as far
    from the previous one as the speeds reported at both ends drive in that time (or
    at `moving` km/h, the bus's true speed, when the tachograph lies)."""
    x, fixes = 356000.0, []
    for i, (s, v) in enumerate(spec):
        if i:
            before, speed_before = spec[i - 1]
            x += (moving if moving is not None else (speed_before + v) / 2) / 3.6 * (s - before)
        fixes.append(Fix(T0 + s, x, 7815000.0, float(v), None, f"{vehicle}/{i}", -19.755 + i * 1e-4, -40.374))
    return tuple(fixes)


def facts(fixes, limits=None, trips=(), vehicle="V1", date=DATE):
    return VehicleDayFacts(
        vehicle_id=vehicle, operator_id="OP1", date=date, tz=TZ, fixes=tuple(fixes),
        speed_limits_kmh=tuple(limits) if limits is not None else (60.0,) * len(fixes),
        catraca=CatracaDay(), trips=tuple(trips), in_service=(),
    )


@cache
def trip_0600():
    """A real matched trip of route T (T-0600) departing 06:00:00, arriving 06:12:00."""
    from geofences import build_geofences
    from gtfs import load_feed

    feed = load_feed(TINY)
    geofences = build_geofences(feed, POLICY)
    day = service_day(feed, DATE)
    detected = DetectedTrip(vehicle_id="V1", route_id="T", direction_id=0, shape_id="L", departed_at=T0,
                            arrived_at=T0 + 720, coverage=1.0, first_msg_id="V1/0", last_msg_id="V1/9")
    (match,) = match_service_day_full([detected], day, feed.timezone, POLICY.trips)
    return TripFacts(match, itinerary=geofences.itineraries["T:0:L"], operator_id="OP1", fixes=(),
                     tz=feed.timezone, day_start=day.start_epoch)


# --- thresholds ------------------------------------------------------------------

def test_two_pings_10s_apart_at_67_1_kmh_yields_infraction():
    found = detect(facts(pings((0, 50), (10, 67.1), (20, 67.1), (30, 50))), POLICY)
    assert len(found) == 1  # 67.1 > 60 + 7 = 67 on 2 pings, 20 - 10 = 10 s >= 10 s
    rec = found[0]
    assert (rec.code, rec.group, rec.fine_ufir, rec.status) == ("C-01", "C", 150, "confirmed")  # group C = 150 UFIR
    assert rec.occurred_at == dt.datetime(2026, 12, 1, 6, 0, 10, tzinfo=TZ)  # first speeding ping: T0 + 10 s
    assert rec.service_date == DATE and rec.vehicle_id == "V1" and rec.operator_id == "OP1"
    assert rec.evidence["interval_epoch"] == [T0 + 10, T0 + 20]  # from the 2nd to the 3rd ping


def test_two_pings_at_exactly_67_kmh_yields_nothing():
    found = detect(facts(pings((0, 50), (10, 67), (20, 67), (30, 50))), POLICY)
    assert found == []  # 67 is not above 60 + 7 = 67


def test_single_ping_over_limit_yields_nothing():
    found = detect(facts(pings((0, 50), (10, 90), (20, 50), (30, 50))), POLICY)
    assert found == []  # 1 ping over < 2 consecutive pings


def test_two_pings_9s_apart_yields_nothing():
    found = detect(facts(pings((0, 50), (10, 80), (19, 80), (29, 50))), POLICY)
    assert found == []  # 19 - 10 = 9 s < 10 s span


def test_two_over_limit_pings_61s_apart_yields_nothing():
    found = detect(facts(pings((0, 80), (61, 80))), POLICY)
    assert found == []  # 61 - 0 = 61 s > 60 s max gap: not consecutive, two runs of 1 ping


def test_two_over_limit_pings_60s_apart_yields_infraction():
    found = detect(facts(pings((0, 80), (60, 80))), POLICY)
    assert len(found) == 1  # 60 s <= 60 s max gap, span 60 s >= 10 s


def test_three_pings_5s_apart_spanning_10s_yields_infraction():
    found = detect(facts(pings((0, 50), (5, 70), (10, 70), (15, 70), (20, 50))), POLICY)
    assert len(found) == 1  # 3 pings over, 15 - 5 = 10 s >= 10 s
    assert [p["msg_id"] for p in found[0].evidence["pings"]] == ["V1/1", "V1/2", "V1/3"]


def test_ping_at_limit_breaks_run_yields_nothing():
    # over at 0 and 20, exactly 67 at 10: two runs of one ping each
    found = detect(facts(pings((0, 70), (10, 67), (20, 70))), POLICY)
    assert found == []  # 67 is not > 67, so no two consecutive pings over


# --- merging episodes --------------------------------------------------------------

def _two_episodes(gap_s):
    """Episode 1 at 0..10 s, episode 2 starting `gap_s` after episode 1 ends, normal pings between."""
    second = 10 + gap_s
    between = [(s, 50) for s in range(40, second - 20, 30)]
    return pings((0, 80), (10, 80), *between, (second, 75), (second + 10, 75), (second + 20, 50))


def test_episodes_299s_apart_yields_infraction():
    found = detect(facts(_two_episodes(299)), POLICY)
    assert len(found) == 1  # second starts 309 s, first ended 10 s: 309 - 10 = 299 s < 300 s: merged
    assert found[0].evidence["interval_epoch"] == [T0, T0 + 319]  # 0 s .. 309 + 10 = 319 s
    assert len(found[0].evidence["pings"]) == 4  # 2 + 2 speeding pings
    assert found[0].evidence["max_speed_kmh"] == 80.0  # max(80, 80, 75, 75)


def test_episodes_300s_apart_each_yields_infraction():
    found = detect(facts(_two_episodes(300)), POLICY)
    assert len(found) == 2  # 310 - 10 = 300 s, not < 300 s: two episodes
    assert [r.evidence["interval_epoch"] for r in found] == [[T0, T0 + 10], [T0 + 310, T0 + 320]]
    assert found[0].infraction_id != found[1].infraction_id  # one record per episode


def test_speeding_episodes_returns_index_ranges():
    fixes = _two_episodes(300)
    t = np.array([f.t - T0 for f in fixes])
    speed = np.array([f.speed_kmh for f in fixes])
    limit = np.full(len(fixes), 60.0)
    n = len(fixes)
    # pings 0, 1 then n-3, n-2 are the speeding ones (the last ping is at 50 km/h)
    assert speeding_episodes(t, speed, limit, POLICY) == [(0, 1), (n - 3, n - 2)]


# --- zone limits -------------------------------------------------------------------

def test_48_kmh_in_40_kmh_zone_yields_infraction():
    fixes = pings((0, 48), (10, 48))
    found = detect(facts(fixes, limits=(40, 40)), POLICY)
    assert len(found) == 1  # 48 > 40 + 7 = 47
    assert found[0].evidence["limit_kmh"] == 40.0


def test_48_kmh_under_default_60_kmh_limit_yields_nothing():
    found = detect(facts(pings((0, 48), (10, 48)), limits=(60, 60)), POLICY)
    assert found == []  # 48 <= 60 + 7 = 67


def test_47_kmh_in_40_kmh_zone_yields_nothing():
    found = detect(facts(pings((0, 47), (10, 47)), limits=(40, 40)), POLICY)
    assert found == []  # 47 is not above 40 + 7 = 47


def test_entering_40_kmh_zone_at_50_kmh_yields_infraction():
    # 50 km/h throughout; the zone of 40 starts at the second ping
    found = detect(facts(pings((0, 50), (10, 50), (20, 50), (30, 50)), limits=(60, 40, 40, 60)), POLICY)
    assert len(found) == 1  # pings 1 and 2: 50 > 40 + 7 = 47, 20 - 10 = 10 s
    assert found[0].evidence["interval_epoch"] == [T0 + 10, T0 + 20]


# --- the record --------------------------------------------------------------------

def test_evidence_has_max_speed_limit_and_ping_ids_yields_infraction():
    found = detect(facts(pings((0, 50), (10, 70), (20, 84), (30, 75), (40, 55))), POLICY)
    assert len(found) == 1  # pings 1..3 over 67, span 30 - 10 = 20 s >= 10 s
    ev = found[0].evidence
    assert ev["max_speed_kmh"] == 84.0  # max(70, 84, 75)
    assert ev["limit_kmh"] == 60.0
    assert ev["tolerance_kmh"] == 7.0
    assert [p["msg_id"] for p in ev["pings"]] == ["V1/1", "V1/2", "V1/3"]  # only the speeding pings
    assert [p["speed_kmh"] for p in ev["pings"]] == [70.0, 84.0, 75.0]
    assert ev["from"] == "2026-12-01T06:00:10-03:00" and ev["to"] == "2026-12-01T06:00:30-03:00"
    assert ev["policy_version"] == POLICY.version
    # lat/lon of the ping at occurred_at, the episode's first (index 1): one record's place and time
    assert (found[0].lat, found[0].lon) == (round(-19.755 + 1e-4, 7), -40.374)
    assert found[0].occurred_at.isoformat() == ev["from"]
    assert "84 km/h" in found[0].description and "60 km/h" in found[0].description


def test_speeding_outside_a_trip_yields_infraction_without_route_or_trip():
    found = detect(facts(pings((0, 80), (10, 80))), POLICY)
    assert len(found) == 1
    assert (found[0].route_id, found[0].direction_id, found[0].trip_id) == (None, None, None)  # no trip


def test_speeding_during_a_trip_yields_infraction_with_route_and_trip():
    trip = trip_0600()  # 06:00:00 .. 06:12:00
    found = detect(facts(pings((300, 80), (310, 80)), trips=(trip,)), POLICY)
    assert len(found) == 1  # 06:05:00 is inside 06:00 .. 06:12
    assert (found[0].route_id, found[0].direction_id, found[0].trip_id) == ("T", 0, "T-0600")


def test_speeding_after_the_trip_arrived_yields_infraction_without_trip():
    trip = trip_0600()
    found = detect(facts(pings((900, 80), (910, 80)), trips=(trip,)), POLICY)
    assert len(found) == 1  # 06:15:00 > arrival 06:12:00
    assert (found[0].route_id, found[0].trip_id) == (None, None)


def test_same_facts_yields_infraction_with_same_id():
    first = detect(facts(pings((0, 50), (10, 80), (20, 80))), POLICY)
    again = detect(facts(pings((0, 50), (10, 80), (20, 80))), POLICY)
    assert len(first) == 1
    assert first[0].infraction_id == again[0].infraction_id  # deterministic id
    assert first == again  # the whole record


def test_episode_identity_is_stable_when_more_data_arrives_yields_infraction():
    alone = detect(facts(pings((0, 80), (10, 80))), POLICY)
    # the episode goes on for one more ping, and a second episode happens 20 min later
    more = detect(facts(pings((0, 80), (10, 80), (20, 80), (30, 50), (1200, 90), (1210, 90))), POLICY)
    assert len(alone) == 1 and len(more) == 2  # 1200 - 20 = 1180 s >= 300 s: separate episodes
    assert more[0].infraction_id == alone[0].infraction_id  # identity: date, vehicle, episode start
    assert more[1].infraction_id != alone[0].infraction_id


def test_other_vehicle_or_day_yields_infraction_with_other_id():
    base = detect(facts(pings((0, 80), (10, 80))), POLICY)[0].infraction_id
    other_vehicle = detect(facts(pings((0, 80), (10, 80), vehicle="V2"), vehicle="V2"), POLICY)[0].infraction_id
    other_day = detect(facts(pings((0, 80), (10, 80)), date=dt.date(2026, 12, 2)), POLICY)[0].infraction_id
    assert len({base, other_vehicle, other_day}) == 3


def test_fewer_than_two_pings_yields_nothing():
    assert detect(facts(pings((0, 120))), POLICY) == []  # 1 ping < 2
    assert detect(facts(()), POLICY) == []  # no pings


# --- a tachograph that lies accuses no one ---------------------------------------------

def test_two_pings_reporting_999_kmh_on_a_bus_driving_40_kmh_yields_nothing():
    found = detect(facts(pings((0, 40), (10, 999), (20, 999), (30, 40), moving=40)), POLICY)
    # reported 999 km/h between 10 s and 20 s, displaced 40 km/h: |999 - 40| > 20 km/h
    [unproven] = found
    assert isinstance(unproven, InsufficientEvidence) and unproven.code == "C-01"
    assert found[0].evidence["reported_kmh"] == 999 and found[0].evidence["displacement_kmh"] == 40


def test_reported_80_kmh_where_the_bus_drove_55_kmh_yields_nothing():
    found = detect(facts(pings((0, 50), (10, 80), (20, 80), (30, 50), moving=55)), POLICY)
    assert [type(f) for f in found] == [InsufficientEvidence]  # |80 - 55| = 25 > 20 km/h: no infraction


def test_reported_80_kmh_where_the_bus_drove_62_kmh_yields_infraction():
    found = detect(facts(pings((0, 50), (10, 80), (20, 80), (30, 50), moving=62)), POLICY)
    [rec] = found  # |80 - 62| = 18 <= 20 km/h: the displacement bears the tachograph out
    assert rec.fine_ufir == 150 and rec.evidence["displacement_kmh"] == 62


# --- derived speeds ------------------------------------------------------------------

def derived(fixes, *indices):
    """The fixes with the speed of those at `indices` derived from displacement (an
    ingest adapter's speed_source: derived); all of them without indices."""
    chosen = set(indices) if indices else set(range(len(fixes)))
    return tuple(msgspec.structs.replace(f, speed_derived=True) if i in chosen else f for i, f in enumerate(fixes))


def test_reported_80_kmh_for_10_s_yields_infraction():
    found = detect(facts(pings((0, 80), (10, 80))), POLICY)
    assert [r.code for r in found] == ["C-01"]  # 80 > 67 on 2 pings 10 s apart, reported speeds


def test_derived_80_kmh_for_10_s_yields_nothing():
    found = detect(facts(derived(pings((0, 80), (10, 80)))), POLICY)
    # the same episode, its speeds computed from the displacement (which they agree with)
    [insufficient] = found
    assert isinstance(insufficient, InsufficientEvidence) and insufficient.code == "C-01"
    assert "speed_source: derived" in insufficient.reason and "velocidade derivada" in insufficient.reason
    assert insufficient.evidence["derived_pings"] == ["V1/0", "V1/1"]
    assert insufficient.evidence["max_speed_kmh"] == 80.0


def test_one_derived_ping_of_three_over_the_limit_yields_nothing():
    found = detect(facts(derived(pings((0, 50), (5, 80), (10, 80), (15, 80), (20, 50)), 2)), POLICY)
    [insufficient] = found  # pings 1..3 over 67; ping 2's speed is derived: the episode is not proven
    assert isinstance(insufficient, InsufficientEvidence)
    assert insufficient.evidence["derived_pings"] == ["V1/2"]
    assert insufficient.evidence["pings"] == ["V1/1", "V1/2", "V1/3"]


def test_derived_ping_under_the_limit_next_to_the_episode_yields_infraction():
    # the pings at 50 km/h around the episode are derived; the two over the limit are reported
    found = detect(facts(derived(pings((0, 50), (10, 80), (20, 80), (30, 50)), 0, 3)), POLICY)
    assert [r.code for r in found] == ["C-01"] and not isinstance(found[0], InsufficientEvidence)
