"""Late data is judged, not dropped (engine.late): what a vehicle-day judged again sends,
and the policy's bounds on how late and how often.

Context: the João Neiva sample policy (lateness 600 s; a day judged again up to 2 days
late, 3 times); a C-01 of bus JN-1011 on 2026-12-01 at 07:07.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import msgspec

from engine.late import LateDay, keeps, rejudged_changes, with_late
from kernel.policy import load_policy
from rules.model import CONFIRMED, PROVISIONAL, WITHDRAWN, make_infraction

TZ = ZoneInfo("America/Sao_Paulo")
DAY = dt.date(2026, 12, 1)
POLICY = load_policy()
RULES = POLICY.stream


def at(hh, mm):
    return dt.datetime(2026, 12, 1, hh, mm, tzinfo=TZ)


def c01(minute=7, pings=2, status=CONFIRMED):
    return make_infraction("C-01", POLICY, identity=("JN-1011", at(7, minute)), status=status, operator_id="VNV",
                           vehicle_id="JN-1011", service_date=DAY, occurred_at=at(7, minute), description="…",
                           evidence={"pings": pings})


def sent(*records, moment=at(7, 20)):
    return {r.infraction_id: r for r in (msgspec.structs.replace(r, detected_at=moment) for r in records)}


def test_the_bounds_come_from_the_policy():
    assert (RULES.rejudge_max_late_s, RULES.rejudge_max_times) == (2 * 86400, 3)


def test_a_late_message_within_two_days_of_its_vehicles_newest_is_kept():
    newest = at(18, 0).timestamp()
    assert keeps(None, newest - 86400, newest, RULES.rejudge_max_late_s, RULES.rejudge_max_times) is None


def test_one_later_than_the_bound_is_not_kept_and_says_which_bound():
    newest = at(18, 0).timestamp()
    why = keeps(None, newest - 2 * 86400 - 1, newest, RULES.rejudge_max_late_s, RULES.rejudge_max_times)
    assert "stream.rejudge_max_late_s" in why


def test_a_day_judged_again_three_times_takes_no_more_late_messages():
    day = LateDay(kept=40, newest=at(9, 0).timestamp(), rejudged=3)
    why = keeps(day, at(9, 5).timestamp(), at(18, 0).timestamp(), RULES.rejudge_max_late_s, RULES.rejudge_max_times)
    assert "stream.rejudge_max_times" in why
    assert keeps(msgspec.structs.replace(day, rejudged=2), at(9, 5).timestamp(), at(18, 0).timestamp(),
                 RULES.rejudge_max_late_s, RULES.rejudge_max_times) is None


def test_each_late_message_is_counted_and_waits_for_the_rejudgment():
    day = with_late(with_late(None, at(9, 0).timestamp()), at(8, 0).timestamp())
    assert (day.kept, day.newest, day.waiting, day.rejudged) == (2, at(9, 0).timestamp(), True, 0)


def test_an_unchanged_record_is_not_sent_again():
    before = sent(c01())
    out, after = rejudged_changes(before, [c01()], at(9, 0).timestamp(), TZ)
    assert out == [] and after == before


def test_a_changed_record_is_sent_again_with_the_same_id_and_its_first_detected_at():
    # the late pings make the episode longer: 2 pings -> 5, same episode start, same id
    [update], after = rejudged_changes(sent(c01(pings=2)), [c01(pings=5)], at(9, 0).timestamp(), TZ)
    assert (update.infraction_id, update.evidence["pings"], update.detected_at) == \
        (c01().infraction_id, 5, at(7, 20))
    assert after == {update.infraction_id: update}


def test_a_new_fact_is_sent_detected_when_judged_again():
    [new], _ = rejudged_changes(sent(c01()), [c01(), c01(minute=40)], at(9, 0).timestamp(), TZ)
    assert (new.occurred_at, new.detected_at) == (at(7, 40), at(9, 0))


def test_a_record_the_rejudgment_no_longer_finds_is_withdrawn_once():
    [gone], after = rejudged_changes(sent(c01(status=PROVISIONAL)), [], at(9, 0).timestamp(), TZ)
    assert (gone.status, gone.detected_at) == (WITHDRAWN, at(7, 20))
    again, _ = rejudged_changes(after, [], at(10, 0).timestamp(), TZ)
    assert again == []


def test_a_record_withdrawn_within_the_rejudgment_and_never_sent_is_not_sent():
    out, _ = rejudged_changes({}, [c01(status=WITHDRAWN)], at(9, 0).timestamp(), TZ)
    assert out == []
