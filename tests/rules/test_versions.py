"""A message received in two versions is judged on both (rules.versions; issue #33 item 4).

C-01 over hand-made facts (tests/rules/test_c01.py's straight road): the bus drives at the
speeds the kept version reports, the other version of some pings says something else.
The limit is 60 km/h + 7 tolerance; the other version's speed is set aside when it
differs from the GPS displacement by more than speed_agreement_kmh (20 km/h).
"""

import dataclasses

import msgspec
import test_d21
from test_c01 import POLICY, facts, pings

from rules import c01, d21
from rules.evaluate import finish, safe_detect
from rules.joao_neiva.pack import PACK
from rules.model import Infraction, InsufficientEvidence
from rules.versions import (
    CatracaVersion,
    OtherVersion,
    judged_on_both_catraca_versions,
    judged_on_both_versions,
    kept_reading,
    kept_version,
    swapped,
    version_key,
)


def _judged(day, versions):
    def detect(rule, other):
        return safe_detect(rule, other, POLICY, other.date)

    def finished(records):
        return finish(records, (), PACK, POLICY, None)

    return judged_on_both_versions(c01.detect(day, POLICY), day, versions, [c01.RULE], POLICY, finished, detect)


def _other(fix, **changes):
    """The other version of `fix`, keyed as the engine keys it."""
    return {version_key(fix.t, fix.msg_id): OtherVersion(msgspec.structs.replace(fix, **changes), ("aa", "bb"))}


def test_a_slower_version_the_gps_contradicts_leaves_the_speeding_yields_infraction():
    # 80 km/h for 20 s: the fixes cover 80 km/h's distance. The other version of both
    # speeding pings says 50 km/h: |50 - 80| = 30 > 20 km/h, so the GPS sets it aside
    day = facts(pings((0, 50), (10, 80), (20, 80), (30, 50)))
    versions = {**_other(day.fixes[1], speed_kmh=50.0), **_other(day.fixes[2], speed_kmh=50.0)}
    [record] = _judged(day, versions)
    assert isinstance(record, Infraction) and record.status == "confirmed"
    assert record.evidence["conflicting_versions_verdict"] == "a outra versão é contrariada pelo deslocamento " \
                                                              "medido pelo GPS"
    assert [v["speeds_kmh"] for v in record.evidence["conflicting_versions"]] == [[80.0, 50.0], [80.0, 50.0]]
    assert record.infraction_id == c01.detect(day, POLICY)[0].infraction_id


def test_two_versions_both_over_the_limit_yields_infraction():
    # 80 and 78 km/h: both over 67, both within 20 km/h of the displacement (80)
    day = facts(pings((0, 50), (10, 80), (20, 80), (30, 50)))
    [record] = _judged(day, _other(day.fixes[2], speed_kmh=78.0))
    assert isinstance(record, Infraction)
    assert record.evidence["conflicting_versions_verdict"] == "as duas versões comprovam a infração"


def test_a_slower_version_the_gps_agrees_with_yields_nothing_but_insufficient_evidence():
    # the kept version says 75 km/h; the other 62 km/h (under 67). Each fix is where 75
    # and 62 km/h's mean drives, so the displacement (about 68 km/h) is within 20 km/h
    # of both: the facts cannot tell which is true
    day = facts(pings((0, 50), (10, 75), (20, 75), (30, 50), moving=68.0))
    versions = {**_other(day.fixes[1], speed_kmh=62.0), **_other(day.fixes[2], speed_kmh=62.0)}
    [record] = _judged(day, versions)
    assert isinstance(record, InsufficientEvidence) and record.code == "C-01"
    assert record.evidence["conflicting_versions_verdict"] == "só uma versão comprova a infração"
    assert record.evidence["infraction_id"] == c01.detect(day, POLICY)[0].infraction_id
    assert "duas versões" in record.reason


def test_a_record_only_the_other_version_supports_is_found_yields_infraction():
    # facts that kept the slower version (a message already taken when its faster copy
    # came): the other version, over the limit and matching the displacement, is judged
    # the other way round: found, and the slow one set aside by the GPS
    fast = facts(pings((0, 50), (10, 80), (20, 80), (30, 50)))
    slow = dataclasses.replace(fast, fixes=tuple(msgspec.structs.replace(f, speed_kmh=50.0) if k in (1, 2) else f
                                                 for k, f in enumerate(fast.fixes)))
    assert c01.detect(slow, POLICY) == []
    versions = {**_other(slow.fixes[1], speed_kmh=80.0), **_other(slow.fixes[2], speed_kmh=80.0)}
    [record] = _judged(slow, versions)
    assert isinstance(record, Infraction) and record.infraction_id == c01.detect(fast, POLICY)[0].infraction_id
    assert record.evidence["conflicting_versions_counted"] == "a versão de menor velocidade"


def test_a_record_citing_no_message_in_two_versions_is_left_as_it_is():
    day = facts(pings((0, 50), (10, 80), (20, 80), (30, 50), (400, 40)))
    assert _judged(day, _other(day.fixes[4], speed_kmh=41.0)) == c01.detect(day, POLICY)


def test_the_version_kept_is_chosen_by_content_whatever_the_order():
    a, b = pings((0, 80), (10, 50))
    b = msgspec.structs.replace(b, t=a.t)
    assert kept_version(a, "x", b, "y") == kept_version(b, "y", a, "x") == (a, "x", b, "y")
    same = msgspec.structs.replace(b, speed_kmh=80.0)
    assert kept_version(a, "y", same, "x")[0] is same  # equal speeds: the lower digest


def test_the_key_of_a_message_ignores_the_offset_its_time_was_written_with():
    assert version_key(1.0, "JN-1/2026-12-01T12:00:00-03:00#7") == version_key(1.0, "JN-1/2026-12-01T15:00:00+00:00#7")
    assert version_key(1.0, "JN-1/2026-12-01T12:00:00-03:00#7") != version_key(1.0, "JN-1/2026-12-01T12:00:00-03:00#8")
    day = facts(pings((0, 50)))
    assert swapped(day, {}) is None and swapped(day, _other(pings((5, 50))[0])) is None


# --- catraca readings in two versions (rules.versions: judged_on_both_catraca_versions) ---
# D-21 over tests/rules/test_d21.py's hand-made readings, in service 06:00-07:00 local.

def _catraca(readings_a, readings_b, version):
    """Each version's D-21 records judged together (the day's own facts take `readings_a`)."""
    policy = test_d21.POLICY
    return judged_on_both_catraca_versions(d21.detect(test_d21.facts(readings_a), policy),
                                           d21.detect(test_d21.facts(readings_b), policy), [version], test_d21.TZ)


def test_a_counter_set_back_only_the_other_version_shows_yields_insufficient_evidence_naming_both():
    # 100, then 120 or 150, then 130, 140: with 120 the count only rises; with 150 it falls
    # to 130 and carries on below 150 (140 < 150), a confirmed D-21 on that version alone.
    # Its neighbours agree with 120, but they are the same counter: nothing independent
    # refutes 150, so the record is insufficient evidence, whichever version the facts took
    reading = test_d21.reading
    low, high = reading(600, 120), reading(600, 150)
    common = [reading(0, 100), reading(1200, 130), reading(1800, 140)]
    for kept, other in ((low, high), (high, low)):
        [(record, world)] = _catraca([*common, kept], [*common, other], CatracaVersion(kept, other, ("aa", "bb")))
        assert isinstance(record, InsufficientEvidence) and record.code == "D-21" and "duas versões" in record.reason
        assert world == (1 if kept is low else 0)
        assert record.evidence["conflicting_versions"] == [{
            "msg_id": "V1/2026-12-01T06:10:00-03:00", "digests": ["aa", "bb"],
            "differing": [f"contador: {kept.counter} / {other.counter}"]}]


def test_a_seal_both_versions_show_broken_later_yields_infraction_told_as_both_versions_support_it():
    # 06:10 broken in one version only, 06:30 broken in both: D-21 on both versions. The
    # record published is the one that cites no reading in two versions (06:30, the other
    # version's facts), confirmed, naming both
    reading = test_d21.reading
    broken, intact = reading(600, 110, seal_intact=False), reading(600, 110)
    common = [reading(0, 100), reading(1800, 130, seal_intact=False)]
    [(record, world)] = _catraca([*common, broken], [*common, intact], CatracaVersion(broken, intact, ("aa", "bb")))
    assert isinstance(record, Infraction) and record.status == "confirmed" and world == 1
    assert record.occurred_at.isoformat() == "2026-12-01T06:30:00-03:00"
    assert record.evidence["conflicting_versions_verdict"] == "as duas versões comprovam a infração"
    assert record.evidence["conflicting_versions"][0]["differing"] == ["lacre: violado / intacto"]


def test_the_version_the_facts_take_is_the_same_whatever_the_order():
    reading = test_d21.reading
    fault, ok = reading(600, 110, status="fault"), reading(600, 110, seal_intact=False)
    assert kept_reading(fault, "bb", ok, "aa") == kept_reading(ok, "aa", fault, "bb") == \
        CatracaVersion(fault, ok, ("bb", "aa"))  # a fault first, then a broken seal, then the lower digest
    low, high = reading(600, 110), reading(600, 111)
    assert kept_reading(low, "bb", high, "aa") == kept_reading(high, "aa", low, "bb") == \
        CatracaVersion(high, low, ("aa", "bb"))
