"""art. 6º II (Canarana, Lei 179/1991) — a line's service interrupted for more than 72 h.

Feed: tests/gtfs/fixtures/tiny (UTC-3). Route T (operator OP1) runs on weekdays (service
WD, Tue 2026-12-01 .. Mon 12-07; not Tue 12-08) at 06:00, 07:00 and 23:50, on Saturdays and
Tue 12-08 (service SA) at 08:00; nothing on Sundays. The policy is Canarana's: 72 h =
259200 s, match window 1800 s. The days are closed one after the other, each with the
line's service the previous ones left (`advance_lines`), as the operator stage does.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

from tiny_day import at, detected, insufficient, pings

from kernel.policy import load_policy
from rules import line_interruption
from rules.model import CONFIRMED, Infraction

CODE = "art. 6º II"
RULE = line_interruption.rule(CODE)
CANARANA = load_policy(Path(line_interruption.__file__).parents[1] / "kernel" / "policies" / "canarana.toml")


def day(n: int) -> dt.date:
    return dt.date(2026, 12, n)


def close_days(tiny, days: dict[int, list], silent: tuple[int, ...] = ()) -> dict[int, list]:
    """Close Dec `first`..`last` in order; `days` gives each day's realized trips, `silent`
    the days the operator's fleet sent no telemetry at all. The findings on route T by day."""
    lines, out = {}, {}
    for n in range(min(days), max(days) + 1):
        reporting = () if n in silent else None
        facts = tiny.facts(days.get(n, []), date=day(n), reporting=reporting)
        facts = dataclasses.replace(facts, line_service=lines)
        out[n] = [f for f in RULE.detect(facts, CANARANA) if f.route_id == "T"]
        lines = line_interruption.advance_lines(lines, facts, CANARANA)
    return out


def test_no_trip_from_tuesday_to_friday_yields_infraction(tiny):
    # T ran Tue 06:00 only: the first unserved departure is Tue 07:00 (> 06:00 + 30 min).
    # Thu 23:50 − Tue 07:00 = 64,8 h <= 72: nothing yet. Fri 23:50 − Tue 07:00 = 88,8 h > 72
    found = close_days(tiny, {1: [detected("V1", "T", 0, at(6, 0))], 4: []})
    assert found[1] == found[2] == found[3] == []
    [record] = found[4]
    assert isinstance(record, Infraction)
    assert (record.code, record.group, record.fine_ufir, record.status) == (CODE, "rescisão", 0, CONFIRMED)
    assert record.service_date == day(4)
    assert record.evidence["interrupted_since"] == "2026-12-01T07:00:00-03:00"
    assert record.evidence["last_realized_departure"] == "2026-12-01T06:00:00-03:00"
    assert record.evidence["last_unserved_departure"] == "2026-12-04T23:50:00-03:00"
    assert record.evidence["interruption_s"] == 319800.0  # 3 d 16 h 50 min
    assert record.evidence["arithmetic"] == \
        "2026-12-04T23:50:00-03:00 − 2026-12-01T07:00:00-03:00 = 88,8 h > 72 h"
    # the moment it went past 72 h: Tue 07:00 + 72 h
    assert record.occurred_at.isoformat() == "2026-12-04T07:00:00-03:00"
    assert "rescisão" in record.legal_basis and "sem multa" in record.description


def test_an_interruption_is_recorded_once_yields_infraction(tiny):
    # Fri records it; Sat 08:00 still unserved is the same interruption: no second record
    found = close_days(tiny, {1: [detected("V1", "T", 0, at(6, 0))], 5: []})
    assert [len(found[n]) for n in range(1, 6)] == [0, 0, 0, 1, 0]


def test_the_line_running_again_yields_nothing(tiny):
    # T ran again Thu 06:00: Fri's 07:00 and 23:50 are 17 h 50 min after it at most
    found = close_days(tiny, {1: [detected("V1", "T", 0, at(6, 0))], 3: [detected("V1", "T", 0, at(6, 0, date=day(3)))],
                              4: []})
    assert all(f == [] for f in found.values())


def test_exactly_72_hours_across_a_sunday_yields_nothing(tiny):
    # T ran Fri 23:50 (its last of the day); owed next Sat 08:00 (SA), nothing Sunday, Mon
    # 06:00–23:50 (WD), Tue 12-08 08:00 (SA): Tue 08:00 − Sat 08:00 = 72 h, not above 72 h.
    # Only time the line owed service counts: the Sunday adds nothing
    found = close_days(tiny, {4: [detected("V1", "T", 0, at(23, 50, date=day(4)))], 8: []})
    assert all(f == [] for f in found.values())


# --- sensor faults -----------------------------------------------------------------------


def test_a_telemetry_outage_does_not_fake_an_interruption_yields_nothing(tiny):
    # the fleet sent nothing Wed and Thu (absence of telemetry is not absence of service):
    # the proven interruption restarts Fri 06:00 (Fri 23:50 − 06:00 = 17,8 h); across the
    # silent days it would be 88,8 h: insufficient evidence, never the finding
    found = close_days(tiny, {1: [detected("V1", "T", 0, at(6, 0))], 4: []}, silent=(2, 3))
    assert [f for n in found for f in found[n] if isinstance(f, Infraction)] == []
    [record] = insufficient(found[4])
    assert record.evidence["days_without_observation"] == ["2026-12-02", "2026-12-03"]
    assert record.evidence["interrupted_since_unproven"] == "2026-12-01T07:00:00-03:00"
    assert record.evidence["proven_since"] == "2026-12-04T06:00:00-03:00"


def test_a_fleet_seen_only_in_stray_minutes_does_not_fake_an_interruption_yields_nothing(tiny):
    # a device powered up once a day (one minute at noon) is not a fleet on the air: the
    # departures are not observable (fewer than trips.min_reporting_minutes), same verdict
    lines, found = {}, []
    for n in range(1, 5):
        reporting = None if n in (1, 4) else pings(at(12, 0, date=day(n)), at(12, 0, date=day(n)), 60)
        facts = tiny.facts([detected("V1", "T", 0, at(6, 0))] if n == 1 else [], date=day(n), reporting=reporting)
        facts = dataclasses.replace(facts, line_service=lines)
        found += [f for f in RULE.detect(facts, CANARANA) if f.route_id == "T"]
        lines = line_interruption.advance_lines(lines, facts, CANARANA)
    assert [f for f in found if isinstance(f, Infraction)] == [] and len(insufficient(found)) == 1


def test_a_policy_without_the_section_yields_nothing(tiny):
    facts = tiny.facts([], date=day(4))
    assert RULE.detect(facts, tiny.policy) == []  # João Neiva's: no [interruption]
