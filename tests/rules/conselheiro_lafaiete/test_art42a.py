"""art. 42 A — a regular trip suspended: D-22's detector filed under Lei 4/1948.

Feed: tests/gtfs/fixtures/tiny (see tests/rules/test_d22.py): on Tuesday 2026-12-01 OP1
has 5 scheduled timetabled trips (T-0600, T-0700, T-2350, E-TPL@36000, E-TPL@37800).
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from tiny_day import ALL_RUN, at, detected, insufficient, pings

from kernel.policy import load_policy
from rules import d22
from rules.conselheiro_lafaiete import art42a
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
