"""art. 42 A — a regular trip suspended: D-22's detector filed under Lei 4/1948.

Feed: tests/gtfs/fixtures/tiny (see tests/rules/test_d22.py): on Tuesday 2026-12-01 OP1
has 5 scheduled timetabled trips (T-0600, T-0700, T-2350, E-TPL@36000, E-TPL@37800).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import msgspec
import pytest
from tiny_day import ALL_RUN, SHAPES, at, detected, insufficient, pings

from kernel.policy import load_policy
from rules import d22
from rules.conselheiro_lafaiete import art42a
from rules.facts import CutShortPass
from rules.model import CONFIRMED, PROVISIONAL, Infraction, infraction_record

POLICY_FILE = Path(__file__).resolve().parents[3] / "kernel" / "policies" / "conselheiro-lafaiete.toml"


@pytest.fixture(scope="module")
def lafaiete():
    return load_policy(POLICY_FILE)


def infractions(findings) -> dict[str, Infraction]:
    return {f.evidence["scheduled_key"]: f for f in findings if isinstance(f, Infraction)}


def test_day_with_no_realized_trip_yields_infraction_per_scheduled_trip(tiny, lafaiete):
    found = infractions(art42a.detect(tiny.facts([]), lafaiete))
    assert sorted(found) == ["E-TPL@36000", "E-TPL@37800", "T-0600", "T-0700", "T-2350"]
    assert {f.code for f in found.values()} == {"art. 42 A"}
    # no art. 45 in Lei 4/1948: confirmed at day close, not provisional for a month close
    assert {f.status for f in found.values()} == {CONFIRMED}
    assert {f.fine_ufir for f in found.values()} == {20}  # Cr$ 20,00 per trip, in the law's unit
    assert {f.group for f in found.values()} == {"A"}
    record = found["T-0600"]
    assert record.legal_basis.startswith("Lei Municipal nº 4/1948 (Conselheiro Lafaiete), art. 42, letra A")
    assert "viagem regulamentar que for suspensa" in record.legal_basis


def test_same_facts_as_d22_differ_only_in_law_yields_infraction(tiny, lafaiete):
    # one trip missing (T-0700): the same finding as João Neiva's D-22 but for code, id,
    # status, fine, group, legal basis and the policy version in the evidence
    facts = tiny.facts([t for t in ALL_RUN if t.departed_at != at(7, 0)])
    [ours] = art42a.detect(facts, lafaiete)
    [theirs] = d22.detect(facts, tiny.policy)
    differ = {k for k, v in infraction_record(ours).items() if infraction_record(theirs)[k] != v}
    assert differ == {"infraction_id", "code", "status", "fine_ufir", "group", "legal_basis", "evidence"}
    assert {k for k in ours.evidence if ours.evidence[k] != theirs.evidence[k]} == {"policy_version"}
    assert (theirs.code, theirs.status, theirs.fine_ufir) == ("D-22", PROVISIONAL, 200)  # JN unchanged


def test_every_scheduled_trip_matched_yields_nothing(tiny, lafaiete):
    assert art42a.detect(tiny.facts(ALL_RUN), lafaiete) == []  # 5 scheduled, 5 matched


def test_fleet_not_heard_yields_nothing_but_insufficient_evidence(tiny, lafaiete):
    # OP1 reports only 10:00-11:00: T-0600, T-0700 and T-2350 cannot be told from missing data
    facts = tiny.facts([detected("V1", "E", 1, at(10, 0)), detected("V1", "E", 1, at(10, 30))],
                       reporting=pings(at(10, 0), at(11, 0), 60))
    found = art42a.detect(facts, lafaiete)
    assert infractions(found) == {}
    assert {f.code for f in insufficient(found)} == {"art. 42 A"}
    assert len(insufficient(found)) == 3


def test_d22_records_of_joao_neiva_are_unchanged(tiny):
    # the default code and status are D-22's: the call JN's pack makes
    facts = tiny.facts([])
    assert [msgspec.to_builtins(f) for f in d22.detect(facts, tiny.policy)] == [
        msgspec.to_builtins(f) for f in d22.detect(facts, tiny.policy, code="D-22", status=PROVISIONAL)]


# --- one act, one accusation: the trip a turned-back pass was running (art. 14 § único) ----


def turned_back(vehicle: str, route: str, direction: int, departed_at: float) -> CutShortPass:
    """A pass the turn-back rule recorded (rules.turn_back), as the engine tells it."""
    return CutShortPass(vehicle, route, direction, SHAPES[(route, direction)], departed_at, "art. 14 § único")


def test_trip_a_turned_back_pass_was_running_yields_nothing(tiny, lafaiete):
    # T-0700 (T, direction 1) not realized: V1 left at 07:02 and turned back. 07:02 - 07:00
    # = 120 s <= the 1800 s match window: the pass was running T-0700, which art. 14 §
    # único accuses (Cr$ 20,00 per trip): not also a trip suspended (Cr$ 20,00 again)
    facts = replace(tiny.facts([t for t in ALL_RUN if t.departed_at != at(7, 0)]),
                    cut_short=(turned_back("V1", "T", 1, at(7, 2)),))
    assert art42a.detect(facts, lafaiete) == []


def test_trip_no_turned_back_pass_was_running_yields_infraction(tiny, lafaiete):
    # T-0600 (direction 0) and T-0700 (direction 1) not realized; passes turned back on
    # direction 1 at 07:02 (120 s from T-0700) and at 07:45 (2700 s > 1800 s from T-0700,
    # and T-0700 is taken): only T-0700 is covered; T-0600, another direction, is accused
    facts = replace(tiny.facts([t for t in ALL_RUN if t.departed_at not in (at(6, 0), at(7, 0))]),
                    cut_short=(turned_back("V1", "T", 1, at(7, 2)), turned_back("V3", "T", 1, at(7, 45))))
    found = infractions(art42a.detect(facts, lafaiete))
    assert sorted(found) == ["T-0600"]
    assert (found["T-0600"].code, found["T-0600"].status, found["T-0600"].fine_ufir) == ("art. 42 A", CONFIRMED, 20)


def test_trip_a_turned_back_pass_departed_too_far_from_yields_infraction(tiny, lafaiete):
    # T-0700 not realized; the only pass turned back left at 07:31: 1860 s > 1800 s apart
    facts = replace(tiny.facts([t for t in ALL_RUN if t.departed_at != at(7, 0)]),
                    cut_short=(turned_back("V1", "T", 1, at(7, 31)),))
    assert sorted(infractions(art42a.detect(facts, lafaiete))) == ["T-0700"]


def test_one_turned_back_pass_covers_one_trip_and_the_other_unrun_yields_infraction(tiny, lafaiete):
    # E-TPL@36000 (10:00) and E-TPL@37800 (10:30) both not realized; one pass left at 10:12
    # and turned back: 720 s from 10:00, 1080 s from 10:30, both within 1800 s. One pass
    # runs one trip: it is paired with the nearer, 10:00; the 10:30 is suppressed
    facts = replace(tiny.facts([t for t in ALL_RUN if t.route_id != "E"]),
                    cut_short=(turned_back("V2", "E", 1, at(10, 12)),))
    assert sorted(infractions(art42a.detect(facts, lafaiete))) == ["E-TPL@37800"]


def test_one_departure_told_on_two_shapes_of_the_line_covers_one_trip_and_the_other_yields_infraction(
        tiny, lafaiete):
    # as the test above, but V2's one departure at 10:12 is told cut short twice, along two
    # shapes of line E from the same origin (the same reversal, fined once): still one bus,
    # one trip covered (10:00, 720 s away); the 10:30 (1080 s) is suppressed
    facts = replace(tiny.facts([t for t in ALL_RUN if t.route_id != "E"]),
                    cut_short=(turned_back("V2", "E", 1, at(10, 12)),
                               CutShortPass("V2", "E", 1, "another-shape", at(10, 12), "art. 14 § único")))
    assert sorted(infractions(art42a.detect(facts, lafaiete))) == ["E-TPL@37800"]


def test_pass_still_running_matched_live_covers_no_other_trip_and_the_other_yields_infraction(tiny, lafaiete):
    # while the day runs, V2's pass that left at 10:02 is a departure still running, matched
    # live to 10:00 (120 s); turned back, it covers no other trip: the 10:30, not run, is
    # accused (1680 s from 10:02 would be within the window, but one pass is one trip)
    facts = replace(tiny.facts([detected("V2", "E", 1, at(10, 2))]), cut_short=(turned_back("V2", "E", 1, at(10, 2)),))
    found = infractions(art42a.detect(facts, lafaiete))
    assert "E-TPL@36000" not in found and "E-TPL@37800" in found


def test_joao_neivas_d22_reads_no_turned_back_pass_yields_infraction(tiny):
    # D-22 as João Neiva's pack calls it is unchanged: its law has no turn-back rule, and
    # a pass told as cut short (none is, under JN's pack) covers nothing there
    facts = replace(tiny.facts([t for t in ALL_RUN if t.departed_at != at(7, 0)]),
                    cut_short=(turned_back("V1", "T", 1, at(7, 2)),))
    [d22_record] = d22.RULE.detect(facts, tiny.policy)  # the rule João Neiva's pack runs
    assert (d22_record.code, d22_record.trip_id) == ("D-22", "T-0700")


def test_judged_live_yields_only_the_trips_whose_match_window_has_passed(tiny, lafaiete):
    # nothing run, judged at 10:30: due at departure + 1800 s are T-0600 (06:30), T-0700
    # (07:30) and E-TPL@36000 (10:30); E-TPL@37800 (11:00) and T-2350 are not yet
    facts = tiny.facts([])
    live = infractions(art42a.detect(facts, lafaiete, due_by=at(10, 30)))
    assert sorted(live) == ["E-TPL@36000", "T-0600", "T-0700"]
    closed = infractions(art42a.detect(facts, lafaiete))
    assert live == {key: closed[key] for key in live}
