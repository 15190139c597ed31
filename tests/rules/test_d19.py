"""D-19 — in service, the catraca silent for more than 600 s or reporting `fault`;
triggers the retention of the vehicle (art. 44, III). One record per vehicle and day.

Facts are hand-made: catraca readings decoded from their JSON contract, the in-service
intervals given directly (no trips). Silence is counted only while in service.
"""

import dataclasses
import datetime as dt
import json
from zoneinfo import ZoneInfo

from kernel.policy import load_policy
from rules.d19 import RETENTION, detect, silences
from rules.facts import VehicleDayFacts, catraca_day
from rules.model import Infraction, InsufficientEvidence
from telemetry import CatracaReading, decode_catraca

POLICY = load_policy()
TZ = ZoneInfo("America/Sao_Paulo")
DATE = dt.date(2026, 12, 1)
T0 = dt.datetime(2026, 12, 1, 6, 0, tzinfo=TZ).timestamp()  # 06:00 local
SERVICE = ((T0, T0 + 3600),)  # in service 06:00 .. 07:00


def reading(offset_s, counter=100, status="ok", seal_intact=True, vehicle="V1"):
    ts = dt.datetime.fromtimestamp(T0 + offset_s, TZ).isoformat()
    decoded = decode_catraca(json.dumps({"vehicle_id": vehicle, "ts": ts, "counter": counter,
                                         "seal_intact": seal_intact, "status": status}))
    assert isinstance(decoded, CatracaReading), decoded
    return decoded


def every_minute(start_s, end_s):
    """A reading every 60 s from start_s to end_s inclusive (a healthy catraca)."""
    return [reading(s) for s in range(start_s, end_s + 1, 60)]


def facts(readings, in_service=SERVICE, vehicle="V1", date=DATE):
    readings = sorted(readings, key=lambda r: r.epoch)
    return VehicleDayFacts(
        vehicle_id=vehicle, operator_id="OP1", date=date, tz=TZ, fixes=(), speed_limits_kmh=(),
        catraca=catraca_day(readings, None, POLICY.d19.max_silence_s), trips=(), in_service=tuple(in_service),
    )


def test_healthy_catraca_in_service_yields_nothing():
    assert detect(facts(every_minute(-600, 4200)), POLICY) == []  # 60 s <= 600 s between readings


# --- silence -----------------------------------------------------------------------

def test_silence_of_601s_in_service_yields_infraction():
    readings = every_minute(0, 600) + every_minute(1201, 3600)  # 1201 - 600 = 601 s without a message
    found = detect(facts(readings), POLICY)
    assert len(found) == 1  # 601 s > 600 s
    rec = found[0]
    assert (rec.code, rec.group, rec.fine_ufir, rec.status) == ("D-19", "D", 200, "confirmed")  # group D = 200 UFIR
    assert rec.evidence["measures"] == [RETENTION]  # art. 44, III
    assert "art. 44, III" in RETENTION
    assert rec.evidence["silences"] == [{"from": "2026-12-01T06:10:00-03:00", "to": "2026-12-01T06:20:01-03:00",
                                         "seconds": 601.0}]  # 06:10:00 + 601 s = 06:20:01
    assert rec.evidence["max_silence_s"] == 600
    assert rec.occurred_at == dt.datetime(2026, 12, 1, 6, 10, tzinfo=TZ)  # the silence starts at T0 + 600 s
    assert (rec.vehicle_id, rec.operator_id, rec.service_date) == ("V1", "OP1", DATE)


def test_silence_of_600s_in_service_yields_nothing():
    readings = every_minute(0, 600) + every_minute(1200, 3600)  # 1200 - 600 = 600 s
    assert detect(facts(readings), POLICY) == []  # 600 s is not more than 600 s


def test_silence_straddling_start_of_service_yields_nothing():
    # last reading 10 min before service starts, next 5 min after: 300 s in service
    readings = [reading(-600)] + every_minute(300, 3600)
    assert detect(facts(readings), POLICY) == []  # 300 - 0 = 300 s <= 600 s (the 600 s before don't count)


def test_silence_straddling_start_of_service_for_601s_in_service_yields_infraction():
    readings = [reading(-600)] + every_minute(601, 3600)
    found = detect(facts(readings), POLICY)
    assert len(found) == 1  # 601 - 0 = 601 s in service > 600 s
    assert found[0].evidence["silences"][0]["from"] == "2026-12-01T06:00:00-03:00"  # counted from service start
    assert found[0].evidence["silences"][0]["seconds"] == 601.0


def test_silence_straddling_end_of_service_yields_nothing():
    # last reading 5 min before service ends at 07:00, next 10 min after
    readings = every_minute(0, 3300) + [reading(4200)]
    assert detect(facts(readings), POLICY) == []  # 3600 - 3300 = 300 s <= 600 s


def test_silence_across_a_break_between_services_yields_nothing():
    # in service 06:00-06:30 and 06:40-07:00; silent from 06:25 to 06:45
    service = ((T0, T0 + 1800), (T0 + 2400, T0 + 3600))
    readings = every_minute(0, 1500) + every_minute(2700, 3600)
    # 1800 - 1500 = 300 s, then 2700 - 2400 = 300 s: only 600 s in service, in two parts of 300 s
    assert detect(facts(readings, in_service=service), POLICY) == []


def test_silent_catraca_for_a_whole_service_yields_infraction():
    # one message at 05:50, then none during service 06:00 .. 07:00
    found = detect(facts([reading(-600)]), POLICY)
    assert len(found) == 1  # 3600 s > 600 s
    assert found[0].evidence["silences"][0]["seconds"] == 3600.0


def test_no_catraca_message_all_day_yields_insufficient_evidence():
    # the input may simply not carry the catraca stream: no accusation on missing data
    [found] = detect(facts([]), POLICY)
    assert isinstance(found, InsufficientEvidence)
    assert found.vehicle_id == facts([]).vehicle_id


def test_silence_outside_service_yields_nothing():
    # silent for 2 h before service and 1 h after, healthy in service
    readings = [reading(-7800)] + every_minute(-600, 3600) + [reading(7200)]
    assert detect(facts(readings), POLICY) == []


def test_silences_lists_in_service_stretches_over_the_limit():
    readings = [reading(-600)] + every_minute(700, 1000) + every_minute(1700, 2000)
    # in service 0..3600: 0 -> 700 = 700 s, 1000 -> 1700 = 700 s, 2000 -> 3600 = 1600 s
    assert silences(facts(readings), 600) == [(T0, T0 + 700), (T0 + 1000, T0 + 1700), (T0 + 2000, T0 + 3600)]


# --- fault -------------------------------------------------------------------------

def test_fault_in_service_yields_infraction():
    readings = every_minute(0, 3600)
    readings[5] = reading(300, status="fault")  # 06:05
    found = detect(facts(readings), POLICY)
    assert len(found) == 1
    assert found[0].evidence["faults"] == ["2026-12-01T06:05:00-03:00"]  # T0 + 300 s
    assert found[0].evidence["silences"] == []  # 60 s between readings
    assert found[0].evidence["measures"] == [RETENTION]  # art. 44, III
    assert found[0].occurred_at == dt.datetime(2026, 12, 1, 6, 5, tzinfo=TZ)


def test_fault_outside_service_yields_nothing():
    readings = [reading(-300, status="fault")] + every_minute(0, 3600) + [reading(3660, status="fault")]
    assert detect(facts(readings), POLICY) == []  # 05:55 and 07:01 are outside 06:00 .. 07:00


def test_fault_with_no_service_yields_nothing():
    assert detect(facts([reading(300, status="fault")], in_service=()), POLICY) == []  # never in service


# --- one record per vehicle and day -------------------------------------------------

def test_silence_and_faults_on_one_day_yields_infraction_once():
    readings = every_minute(0, 600) + every_minute(1300, 3600)  # silent 600 -> 1300 = 700 s
    readings += [reading(120, status="fault"), reading(2400, status="fault")]
    found = detect(facts(readings), POLICY)
    assert len(found) == 1  # one record per vehicle and service day
    assert len(found[0].evidence["silences"]) == 1 and len(found[0].evidence["faults"]) == 2
    assert found[0].occurred_at == dt.datetime(2026, 12, 1, 6, 2, tzinfo=TZ)  # the earliest: fault at T0 + 120
    assert found[0].evidence["interval_epoch"] == [T0 + 120, T0 + 2400]  # first fault .. last fault


def test_same_facts_yields_infraction_with_same_id():
    a = detect(facts([reading(-600)]), POLICY)
    b = detect(facts([reading(300, status="fault")] + every_minute(0, 3600)), POLICY)
    assert a[0].infraction_id == b[0].infraction_id  # identity: date and vehicle
    assert detect(facts([reading(-600)]), POLICY) == a  # same facts, same record
    other_day = detect(facts([reading(-600)], date=dt.date(2026, 12, 2)), POLICY)
    assert other_day[0].infraction_id != a[0].infraction_id


# --- a catraca clock off by minutes --------------------------------------------------------

def test_a_silence_after_the_days_last_reading_within_a_clock_offset_yields_insufficient_evidence():
    # the last reading at 06:48: 720 s to the end of service at 07:00 is over the 600 s
    # limit, but within it plus the 900 s a device clock may be off (stream.max_clock_jump_s):
    # a catraca 12 min behind shows exactly this
    [record] = detect(facts(every_minute(0, 2880)), POLICY)
    assert isinstance(record, InsufficientEvidence) and "defasagem de relógio" in record.reason
    assert record.evidence["silences"][0]["seconds"] == 720.0


def test_a_silence_after_the_days_last_reading_beyond_limit_and_clock_offset_yields_infraction():
    # the last reading at 06:34:59: 1501 s > 600 + 900 s to the end of service
    [record] = detect(facts(every_minute(0, 2040) + [reading(2099)]), POLICY)
    assert isinstance(record, Infraction) and record.evidence["silences"][0]["seconds"] == 1501.0


def test_a_silence_between_two_readings_needs_no_clock_margin_yields_infraction():
    # 06:10 to 06:22, 720 s between two readings: the catraca's own clock measured it
    readings = every_minute(0, 600) + every_minute(1320, 3600)
    [record] = detect(facts(readings), POLICY)
    assert isinstance(record, Infraction)


# --- a faulty clock (engine.clocks): what its rejected messages fill is excused, no more ----

def test_a_silence_the_clock_faulted_readings_fill_yields_insufficient_evidence():
    # 06:10 to 06:22 silent (720 s > 600 s), but readings received 06:10-06:22 were rejected
    # for their clock: the catraca spoke, at times its clock did not say
    readings = every_minute(0, 600) + every_minute(1320, 3600)
    day = dataclasses.replace(facts(readings), clock_faults=((T0 + 600, T0 + 1320),))
    [record] = detect(day, POLICY)
    assert isinstance(record, InsufficientEvidence)


def test_one_clock_faulted_reading_inside_a_long_silence_yields_infraction():
    # 06:10 to 06:26 silent (960 s); one reading received at 06:18 was rejected for its clock:
    # placed there, it leaves 480 + 480 s, within 600 s each... so the silence is filled
    readings = every_minute(0, 600) + every_minute(1560, 3600)
    day = dataclasses.replace(facts(readings), clock_faults=((T0 + 1080, T0 + 1080),))
    assert isinstance(detect(day, POLICY)[0], InsufficientEvidence)
    # ...but received at 06:12 it leaves 06:12 to 06:26, 840 s > 600 s: the catraca was
    # silent all the same, and one bad message does not erase the D-19
    day = dataclasses.replace(facts(readings), clock_faults=((T0 + 720, T0 + 720),))
    [record] = detect(day, POLICY)
    assert isinstance(record, Infraction) and record.status == "confirmed"
