"""The adapters' pure core: a source fix to a tachograph message or a rejection with its reason."""

from datetime import datetime, timedelta, timezone

import pytest

from ingest.fixes import FleetIndex, Repeat, Sent, SourceFix, Trail, admit, distance_m
from kernel.fleet import Vehicle
from telemetry.validation import Rejection

FLEET = FleetIndex.of({"101": Vehicle("101", "ABC-1234", "OP"), "102": Vehicle("102", "XYZ9876", "OP")})
NOON = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)


def fix(keys=("101",), lat=-19.74, lon=-40.38, ts=NOON, speed=None, route=None) -> SourceFix:
    return SourceFix("snap.pb#1", "raw entity", keys, lat, lon, ts, speed, route)


@pytest.mark.parametrize(("keys", "expected"), [
    (("101",), "101"),  # vehicle_id
    (("nope", "102"), "102"),  # the id unknown, the label is a vehicle_id
    (("nope", "label", "abc 1234"), "101"),  # the plate, without case, spaces or hyphen
])
def test_a_vehicle_is_found_by_id_label_or_plate(keys, expected):
    outcome, _ = admit(fix(keys), FLEET, {})
    assert isinstance(outcome, Sent) and outcome.message["vehicle_id"] == expected


@pytest.mark.parametrize(("source", "reason"), [
    (fix(keys=()), "no_vehicle"),
    (fix(keys=("999", "999", "QQQ0000")), "unknown_vehicle"),
    (fix(lat=None, lon=None), "no_position"),
    (fix(ts=None), "no_timestamp"),
    (fix(lat=95.0), "out_of_range"),
    (fix(speed=-3.0), "invalid_speed"),
    (fix(ts=datetime(1970, 1, 1, tzinfo=timezone.utc)), "out_of_range"),
])
def test_what_cannot_be_mapped_is_rejected_with_its_reason(source, reason):
    outcome, trail = admit(source, FLEET, {})
    assert isinstance(outcome, Rejection), outcome
    assert (outcome.reason, outcome.location, outcome.raw, trail) == (reason, "snap.pb#1", "raw entity", None)


def test_a_reported_speed_is_kept_and_marked_reported():
    outcome, _ = admit(fix(speed=36.0, route="2-110"), FLEET, {})
    assert outcome.message == {"vehicle_id": "101", "ts": "2026-03-02T12:00:00+00:00", "lat": -19.74, "lon": -40.38,
                               "speed_kmh": 36.0, "speed_source": "reported", "route_id": "2-110"}


def test_a_missing_speed_is_derived_from_the_displacement_since_the_fix_before():
    first, trail = admit(fix(), FLEET, {})
    # 0.01° of latitude is 1 111.95 m; in 100 s that is 11.12 m/s = 40.03 km/h
    later, _ = admit(fix(lat=-19.73, ts=NOON + timedelta(seconds=100)), FLEET, {"101": trail})
    assert (first.message["speed_kmh"], first.message["speed_source"]) == (0.0, "derived")
    assert later.message["speed_source"] == "derived"
    assert later.message["speed_kmh"] == pytest.approx(distance_m(-19.74, -40.38, -19.73, -40.38) / 100 * 3.6, abs=0.01)
    assert later.message["speed_kmh"] == pytest.approx(40.03, abs=0.01)


def test_without_its_own_time_the_header_time_is_used_and_the_message_says_so():
    header = NOON + timedelta(seconds=30)
    outcome, _ = admit(fix(ts=None), FLEET, {}, header_ts=header)
    assert outcome.message["ts"] == header.isoformat() and outcome.message["ts_source"] == "feed_header"
    own, _ = admit(fix(), FLEET, {}, header_ts=header)
    assert own.message["ts"] == NOON.isoformat() and "ts_source" not in own.message


def test_a_position_already_sent_is_a_repeat_and_another_one_at_that_time_a_conflict():
    _, trail = admit(fix(), FLEET, {})
    again, unchanged = admit(fix(), FLEET, {"101": trail})
    other, _ = admit(fix(lat=-19.7), FLEET, {"101": trail})
    assert isinstance(again, Repeat) and unchanged is None
    assert isinstance(other, Rejection) and other.reason == "conflicting_duplicate"


def test_the_trail_forgets_what_is_hours_behind_and_rejects_it_as_stale():
    trail = Trail().with_fix(NOON.timestamp(), -19.74, -40.38)
    trail = trail.with_fix((NOON + timedelta(hours=4)).timestamp(), -19.75, -40.38)
    assert len(trail.sent) == 1
    outcome, _ = admit(fix(), FLEET, {"101": trail})
    assert isinstance(outcome, Rejection) and outcome.reason == "stale"
