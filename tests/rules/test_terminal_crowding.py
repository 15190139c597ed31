"""art. 13 (Canarana, Lei 179/1991) — more than 15 % of a line's vehicles standing at one of
its terminals at once.

Feed: tests/gtfs/fixtures/tiny (UTC-3), Tuesday 2026-12-01. Route T runs A → C (dir 0) and
C → A (dir 1), 25 min a trip (tiny_day.RUN_S). The policy is Canarana's: share 15 %, grace
1800 s = 30 min, fleet silence 300 s. A vehicle stands at C from its arrival there to its
next departure from C, and counts from 30 min after its arrival. With n vehicles on the
line, at most floor(15 × n / 100) may stand together past it. T's only timetabled
departure from C is 07:00 (T-0700, match window 30 min, on time: 60 s early .. 300 s late).
"""

from __future__ import annotations

from pathlib import Path

import msgspec
from tiny_day import at, detected, insufficient, pings, unfollowed

from kernel.policy import load_policy
from rules import terminal_crowding
from rules.model import CONFIRMED, Infraction

CODE = "art. 13"
RULE = terminal_crowding.rule(CODE)
CANARANA = load_policy(Path(terminal_crowding.__file__).parents[1] / "kernel" / "policies" / "canarana.toml")
RULES = CANARANA.terminal_crowding


def line(v2_leaves: tuple[int, int], v1_leaves: tuple[int, int] = (7, 45), others: int = 5,
         v2_from: tuple[int, int] = (6, 10)):
    """V1 arrives at C 06:25 (left A 06:00) and leaves at `v1_leaves`; V2 leaves A at
    `v2_from` (arrives 06:35) and leaves C at `v2_leaves`; `others` more vehicles run one
    A → C trip each in the afternoon (the line's vehicles that day; their last arrival
    closes no stay)."""
    trips = [detected("V1", "T", 0, at(6, 0)), detected("V1", "T", 1, at(*v1_leaves)),
             detected("V2", "T", 0, at(*v2_from)), detected("V2", "T", 1, at(*v2_leaves))]
    return trips + [detected(f"W{i}", "T", 0, at(14, 5 * i)) for i in range(others)]


def infractions(findings) -> list[Infraction]:
    return [f for f in findings if isinstance(f, Infraction)]


def test_allowed_is_the_floor_of_the_share():
    # 15 % of 7 = 1,05 -> 1; of 14 = 2,1 -> 2; of 6 = 0,9 -> 0 (any one vehicle is too many)
    assert [terminal_crowding.allowed(RULES.max_share_pct, n) for n in (7, 14, 6, 20)] == [1, 2, 0, 3]


def test_two_of_seven_standing_past_the_grace_yields_infraction(tiny):
    # 7 vehicles (V1, V2, W0..W4): 15 % × 7 = 1,05, at most 1. V1 at C 06:25–07:45, counted
    # from 06:55; V2 06:35–07:35 (35 min after T-0700: no scheduled departure of its own),
    # counted from 07:05: 2 together over [07:05, 07:35) = 1800 s
    [record] = infractions(RULE.detect(tiny.facts(line((7, 35))), CANARANA))
    assert (record.code, record.route_id, record.operator_id, record.status) == (CODE, "T", "OP1", CONFIRMED)
    assert record.evidence["terminal_stop_id"] == "C"
    assert record.evidence["episode"] == ["2026-12-01T07:05:00-03:00", "2026-12-01T07:35:00-03:00"]
    assert record.evidence["duration_s"] == 1800.0
    assert record.evidence["line_vehicle_count"] == 7 and record.evidence["max_vehicles"] == 1
    assert record.evidence["peak"] == 2
    assert record.evidence["arithmetic"] == "15% de 7 veículos = 1,05: no máximo 1; presentes 2 > 1"
    assert [p["vehicle_id"] for p in record.evidence["present"]] == ["V1", "V2"]
    assert record.evidence["present"][1] == {"vehicle_id": "V2", "arrived_at": "2026-12-01T06:35:00-03:00",
                                             "departed_at": "2026-12-01T07:35:00-03:00"}
    assert record.fine_ufir == 100  # the policy's [fines] table, VR
    assert record.group == "multa" and "art. 13" in record.legal_basis
    assert record.occurred_at.isoformat() == "2026-12-01T07:05:00-03:00"
    assert record.description.startswith("Linha T: 2 dos 7 veículos da linha no terminal C ao mesmo tempo "
                                          "de 07:05 a 07:35 (30 min), parados há mais de 30 min")


def test_one_of_four_standing_past_the_grace_yields_infraction(tiny):
    # 4 vehicles: 15 % × 4 = 0,6, at most 0 — V1 alone at C from 06:25 + 30 min = 06:55 to
    # 07:45 is one too many; V2 (06:35–06:50, 15 min) never stood past the grace
    [record] = infractions(RULE.detect(tiny.facts(line((6, 50), others=2)), CANARANA))
    assert (record.evidence["episode"], record.evidence["peak"]) == \
        (["2026-12-01T06:55:00-03:00", "2026-12-01T07:45:00-03:00"], 1)


def test_a_short_layover_during_the_episode_is_not_listed_as_present(tiny):
    # 4 vehicles, at most 0: V1 alone past the grace over [06:55, 07:45). V2 stood at C
    # 07:00–07:15 inside that episode, but 15 min, never past the grace: not present
    [record] = infractions(RULE.detect(tiny.facts(line((7, 15), others=2, v2_from=(6, 35))), CANARANA))
    assert record.evidence["episode"] == ["2026-12-01T06:55:00-03:00", "2026-12-01T07:45:00-03:00"]
    assert [p["vehicle_id"] for p in record.evidence["present"]] == ["V1"]


def test_layover_shorter_than_the_grace_yields_nothing(tiny):
    # 7 vehicles, at most 1: V2 at C 06:35–06:50 = 900 s <= 1800 s: a layover; V1 alone
    assert RULE.detect(tiny.facts(line((6, 50))), CANARANA) == []


def test_two_of_fourteen_yields_nothing(tiny):
    # 14 vehicles: 15 % × 14 = 2,1, at most 2: V1 and V2 together past the grace are within it
    assert RULE.detect(tiny.facts(line((7, 35), others=12)), CANARANA) == []


def test_a_layover_the_timetable_sets_yields_nothing(tiny):
    # V2 left A 06:00 with V1 (arrives C 06:25) and leaves C on time for T-0700: 07:00 −
    # 06:25 = 35 min > 30, the approved timetable holds it there, not the operator. Counted,
    # it would stand with V1 over [06:55, 07:00): 2 > 1. V1 alone, 1 <= 1
    assert RULE.detect(tiny.facts(line((7, 0), v2_from=(6, 0))), CANARANA) == []


def held_at_a(t0600_run_by: str | None):
    """V1 arrives at A 05:25 (left C 05:00, matched to nothing) and leaves A on time for
    T-2350: 23:50 − 05:25 > 30 min. T-0600, A's departure in between, is run by
    `t0600_run_by` (it arrives at C 06:25, its last arrival), or by nobody."""
    trips = [detected("V1", "T", 1, at(5, 0)), detected("V1", "T", 0, at(23, 50))]
    return trips + ([detected(t0600_run_by, "T", 0, at(6, 0))] if t0600_run_by else [])


def test_a_bus_held_while_a_departure_from_there_goes_unrun_yields_infraction(tiny):
    # nobody ran T-0600 while V1 stood at A: V1 could have; the stay is the operator's, not
    # the timetable's, though V1 then left on time for T-2350. 1 vehicle: at most 0
    [record] = infractions(RULE.detect(tiny.facts(held_at_a(None)), CANARANA))
    assert (record.evidence["terminal_stop_id"], record.evidence["episode"]) == \
        ("A", ["2026-12-01T05:55:00-03:00", "2026-12-01T23:50:00-03:00"])
    assert record.evidence["not_counted_timetable"] == []


def test_a_bus_waiting_for_its_departure_while_another_runs_the_one_between_yields_nothing(tiny):
    # V2 ran T-0600: every departure from A while V1 stood there was run, V1 left on time
    # for T-2350: the timetable's stay
    findings = RULE.detect(tiny.facts(held_at_a("V2")), CANARANA)
    assert findings == []


def test_only_the_stays_own_blocks_unrun_departure_takes_the_stay_from_the_timetable(tiny):
    # T-0600 (block B1, from A at 06:00) went unrun while V1 stood at A 05:25-23:50: it
    # ties V1 to A only if V1's work is B1's; another block's (or none) says nothing of where
    # V1 was (a split shift in the garage), and the timetable's stay stands
    facts = tiny.facts(held_at_a(None))
    start, end = at(5, 25), at(23, 50)
    assert terminal_crowding.unrun_departures(facts, "T", "A", start, end, "B1") == [at(6, 0)]
    assert terminal_crowding.unrun_departures(facts, "T", "A", start, end, "B2") == []
    assert terminal_crowding.unrun_departures(facts, "T", "A", start, end, None) == []
    # and the stay of the record above carries V1's block, from the trip it left on
    [stay] = [s for s in terminal_crowding.stays(facts.trips, CANARANA) if s.vehicle_id == "V1"]
    assert stay.block_id == "B1"


def test_a_policy_without_the_section_yields_nothing(tiny):
    assert RULE.detect(tiny.facts(line((7, 35))), tiny.policy) == []  # João Neiva's


def test_a_shorter_grace_from_the_policy_yields_infraction(tiny):
    # the grace is the policy's: at 600 s V2 (06:35–06:50, left 10 min early for T-0700: not
    # the timetable's) counts from 06:45 and V1 from 06:35: together over [06:45, 06:50) = 300 s
    policy = msgspec.structs.replace(CANARANA, terminal_crowding=msgspec.structs.replace(RULES, grace_s=600))
    [record] = infractions(RULE.detect(tiny.facts(line((6, 50))), policy))
    assert record.evidence["duration_s"] == 300.0


# --- sensor faults -----------------------------------------------------------------------


def test_a_clock_fault_silencing_the_fleet_does_not_fake_crowding_yields_nothing(tiny):
    # the fleet's messages of 06:40–07:20 were rejected (a device clock behind: clock fault),
    # 40 min > 300 s: V1 and V2 may have run trips unseen — the stays are unproven
    reporting = pings(at(0, 0), at(6, 40), 60) + pings(at(7, 20), at(23, 59), 60)
    findings = RULE.detect(tiny.facts(line((7, 35)), reporting=reporting), CANARANA)
    assert infractions(findings) == []
    [record] = insufficient(findings)
    assert [p["vehicle_id"] for p in record.evidence["unproven"]] == ["V1", "V2"]


def test_a_gps_gap_does_not_fake_crowding_yields_nothing(tiny):
    # V2's telemetry broke off while at C: it was seen on C → A from 06:45 after a silence,
    # so it may have left at 06:40 — not counted as standing; V1 alone is 1, not more than 1
    gap = unfollowed("V2", "T", 1, at(6, 40), at(6, 45))
    findings = RULE.detect(tiny.facts(line((7, 35)), unfollowed=[gap]), CANARANA)
    assert findings == []


def test_a_bus_seen_leaving_the_terminal_and_back_stood_there_only_since_yields_nothing(tiny):
    # the stays of the first test, but V2's pings show it leaving C after its 06:35 arrival
    # (to refuel, say) and back in C's zone at 07:10 (its departure's at_origin_since): it
    # stood there 07:10–07:35, 25 min, never past the 30 min grace. V1 alone, 1 <= 1
    trips = line((7, 35))
    trips[3] = msgspec.structs.replace(trips[3], at_origin_since=at(7, 10))
    assert RULE.detect(tiny.facts(trips), CANARANA) == []
    # back at 07:00 instead, it stands past the grace from 07:30: with V1, 2 > 1 over
    # [07:30, 07:35)
    trips[3] = msgspec.structs.replace(trips[3], at_origin_since=at(7, 0))
    [record] = infractions(RULE.detect(tiny.facts(trips), CANARANA))
    assert record.evidence["episode"] == ["2026-12-01T07:30:00-03:00", "2026-12-01T07:35:00-03:00"]
