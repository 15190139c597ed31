"""art. 13 (Canarana, Lei 179/1991) — more than 15 % of a line's vehicles standing at one of
its terminals at once.

Feed: tests/gtfs/fixtures/tiny (UTC-3), Tuesday 2026-12-01. Route T runs A → C (dir 0) and
C → A (dir 1), 25 min a trip (tiny_day.RUN_S). The policy is Canarana's: share 15 %, grace
1200 s = 20 min, fleet silence 300 s. A vehicle stands at C from its arrival there to its
next departure from C. With n vehicles on the line, at most floor(15 × n / 100) may stand
together.
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


def line(v2_leaves: tuple[int, int], others: int = 5):
    """V1 arrives at C 06:25 and leaves 07:30; V2 arrives 06:35 and leaves at `v2_leaves`;
    `others` more vehicles run one A → C trip each in the afternoon (the line's vehicles
    that day, none standing with them: their last arrival closes no stay)."""
    trips = [detected("V1", "T", 0, at(6, 0)), detected("V1", "T", 1, at(7, 30)),
             detected("V2", "T", 0, at(6, 10)), detected("V2", "T", 1, at(*v2_leaves))]
    return trips + [detected(f"W{i}", "T", 0, at(14, 5 * i)) for i in range(others)]


def infractions(findings) -> list[Infraction]:
    return [f for f in findings if isinstance(f, Infraction)]


def test_allowed_is_the_floor_of_the_share():
    # 15 % of 7 = 1,05 -> 1; of 14 = 2,1 -> 2; of 6 = 0,9 -> 0 (any one vehicle is too many)
    assert [terminal_crowding.allowed(RULES.max_share_pct, n) for n in (7, 14, 6, 20)] == [1, 2, 0, 3]


def test_two_of_seven_standing_25_minutes_yields_infraction(tiny):
    # 7 vehicles (V1, V2, W0..W4): 15 % × 7 = 1,05, at most 1. V1 stands at C 06:25–07:30, V2
    # 06:35–07:00: 2 together over [06:35, 07:00) = 1500 s > grace 1200 s
    [record] = infractions(RULE.detect(tiny.facts(line((7, 0))), CANARANA))
    assert (record.code, record.route_id, record.operator_id, record.status) == (CODE, "T", "OP1", CONFIRMED)
    assert record.evidence["terminal_stop_id"] == "C"
    assert record.evidence["episode"] == ["2026-12-01T06:35:00-03:00", "2026-12-01T07:00:00-03:00"]
    assert record.evidence["duration_s"] == 1500.0
    assert record.evidence["line_vehicle_count"] == 7 and record.evidence["max_vehicles"] == 1
    assert record.evidence["peak"] == 2
    assert record.evidence["arithmetic"] == "15% de 7 veículos = 1,05: no máximo 1; presentes 2 > 1"
    assert [p["vehicle_id"] for p in record.evidence["present"]] == ["V1", "V2"]
    assert record.fine_ufir == 100  # the policy's [fines] table, VR
    assert record.group == "multa" and "art. 13" in record.legal_basis
    assert record.occurred_at.isoformat() == "2026-12-01T06:35:00-03:00"
    assert record.description.startswith("Linha T: 2 dos 7 veículos da linha no terminal C ao mesmo tempo "
                                          "de 06:35 a 07:00")


def test_one_of_four_standing_past_the_grace_yields_infraction(tiny):
    # 4 vehicles: 15 % × 4 = 0,6, at most 0 — V1 alone at C 06:25–07:30 = 3900 s > 1200 s;
    # V2 at C 06:35–06:50 also overlaps, the peak is 2
    findings = infractions(RULE.detect(tiny.facts(line((6, 50), others=2)), CANARANA))
    assert [(r.evidence["episode"][0], r.evidence["peak"]) for r in findings] == \
        [("2026-12-01T06:25:00-03:00", 2)]


def test_layover_shorter_than_the_grace_yields_nothing(tiny):
    # 7 vehicles, at most 1: V2 at C 06:35–06:50 overlaps V1 for 900 s <= 1200 s: a layover
    assert RULE.detect(tiny.facts(line((6, 50))), CANARANA) == []


def test_two_of_fourteen_yields_nothing(tiny):
    # 14 vehicles: 15 % × 14 = 2,1, at most 2: V1 and V2 together for 25 min are within it
    assert RULE.detect(tiny.facts(line((7, 0), others=12)), CANARANA) == []


def test_a_policy_without_the_section_yields_nothing(tiny):
    assert RULE.detect(tiny.facts(line((7, 0))), tiny.policy) == []  # João Neiva's


def test_a_shorter_grace_from_the_policy_yields_infraction(tiny):
    # the grace is the policy's: at 600 s the 900-s overlap of the layover case is crowding
    policy = msgspec.structs.replace(CANARANA, terminal_crowding=msgspec.structs.replace(RULES, grace_s=600))
    [record] = infractions(RULE.detect(tiny.facts(line((6, 50))), policy))
    assert record.evidence["duration_s"] == 900.0


# --- sensor faults -----------------------------------------------------------------------


def test_a_clock_fault_silencing_the_fleet_does_not_fake_crowding_yields_nothing(tiny):
    # the fleet's messages of 06:40–07:20 were rejected (a device clock behind: clock fault),
    # 40 min > 300 s: V1 and V2 may have run trips unseen — the stays are unproven
    reporting = pings(at(0, 0), at(6, 40), 60) + pings(at(7, 20), at(23, 59), 60)
    findings = RULE.detect(tiny.facts(line((7, 0)), reporting=reporting), CANARANA)
    assert infractions(findings) == []
    [record] = insufficient(findings)
    assert [p["vehicle_id"] for p in record.evidence["unproven"]] == ["V1", "V2"]


def test_a_gps_gap_does_not_fake_crowding_yields_nothing(tiny):
    # V2's telemetry broke off while at C: it was seen on C → A from 06:45 after a silence,
    # so it may have left at 06:40 — not counted as standing; V1 alone is 1, not more than 1
    gap = unfollowed("V2", "T", 1, at(6, 40), at(6, 45))
    findings = RULE.detect(tiny.facts(line((7, 0)), unfollowed=[gap]), CANARANA)
    assert findings == []
