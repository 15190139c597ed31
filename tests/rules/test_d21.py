"""D-21 — the catraca's seal broken, or its counter going backwards, while in service.

One record per vehicle and service day. Facts are hand-made: catraca readings decoded
from their JSON contract, the in-service intervals given directly (no trips).
"""

import datetime as dt
import json
from zoneinfo import ZoneInfo

from kernel.policy import load_policy
from rules.d21 import detect
from rules.facts import VehicleDayFacts, catraca_day
from rules.model import Infraction, InsufficientEvidence
from telemetry import CatracaReading, decode_catraca

POLICY = load_policy()
TZ = ZoneInfo("America/Sao_Paulo")
DATE = dt.date(2026, 12, 1)
T0 = dt.datetime(2026, 12, 1, 6, 0, tzinfo=TZ).timestamp()  # 06:00 local
SERVICE = ((T0, T0 + 3600),)  # in service 06:00 .. 07:00


def reading(offset_s, counter, seal_intact=True, status="ok", vehicle="V1"):
    ts = dt.datetime.fromtimestamp(T0 + offset_s, TZ).isoformat()
    decoded = decode_catraca(json.dumps({"vehicle_id": vehicle, "ts": ts, "counter": counter,
                                         "seal_intact": seal_intact, "status": status}))
    assert isinstance(decoded, CatracaReading), decoded
    return decoded


def facts(readings, in_service=SERVICE, previous_counter=None, vehicle="V1", date=DATE):
    return VehicleDayFacts(
        vehicle_id=vehicle, operator_id="OP1", date=date, tz=TZ, fixes=(), speed_limits_kmh=(),
        catraca=catraca_day(readings, previous_counter, POLICY.d19.max_silence_s), trips=(),
        in_service=tuple(in_service),
    )


# --- the seal --------------------------------------------------------------------

def test_seal_broken_in_service_yields_infraction():
    found = detect(facts([reading(0, 100), reading(600, 110, seal_intact=False)]), POLICY)
    assert len(found) == 1
    rec = found[0]
    assert (rec.code, rec.group, rec.fine_ufir, rec.status) == ("D-21", "D", 200, "confirmed")  # group D = 200 UFIR
    assert rec.occurred_at == dt.datetime(2026, 12, 1, 6, 10, tzinfo=TZ)  # T0 + 600 s = 06:10
    assert (rec.vehicle_id, rec.operator_id, rec.service_date) == ("V1", "OP1", DATE)
    assert (rec.route_id, rec.trip_id) == (None, None)  # no trip in the facts
    assert rec.evidence["facts"] == [{"fact": "lacre violado", "ts": "2026-12-01T06:10:00-03:00",
                                      "counter": 110, "seal_intact": False,
                                      "msg_id": "V1/2026-12-01T06:10:00-03:00"}]  # the reading, as evidence cites it
    assert rec.evidence["in_service"] == [["2026-12-01T06:00:00-03:00", "2026-12-01T07:00:00-03:00"]]


def test_two_broken_seal_readings_yields_infraction_once():
    found = detect(facts([reading(600, 110, seal_intact=False), reading(1200, 120, seal_intact=False)]), POLICY)
    assert len(found) == 1  # one record per vehicle and service day
    assert len(found[0].evidence["facts"]) == 2  # both readings kept as evidence
    assert found[0].occurred_at == dt.datetime(2026, 12, 1, 6, 10, tzinfo=TZ)  # the first: T0 + 600 s
    assert found[0].evidence["interval_epoch"] == [T0 + 600, T0 + 1200]


def test_seal_broken_outside_service_yields_nothing():
    readings = [reading(-600, 90, seal_intact=False),  # 05:50, before service starts at 06:00
                reading(600, 100),  # in service, intact
                reading(3601, 110, seal_intact=False)]  # 07:00:01, 1 s after service ends at 07:00
    assert detect(facts(readings), POLICY) == []


def test_seal_broken_at_the_edges_of_service_yields_infraction():
    # the interval is closed: a reading exactly at 07:00 (T0 + 3600) is in service
    assert len(detect(facts([reading(3600, 110, seal_intact=False)]), POLICY)) == 1
    assert len(detect(facts([reading(0, 110, seal_intact=False)]), POLICY)) == 1  # exactly at 06:00


def test_seal_broken_with_no_service_yields_nothing():
    assert detect(facts([reading(600, 110, seal_intact=False)], in_service=()), POLICY) == []  # never in service


# --- the counter -----------------------------------------------------------------

def test_counter_going_backwards_in_service_yields_infraction():
    # 100, then 90, then 95: it went back and carried on from there (95 < 100)
    found = detect(facts([reading(0, 100), reading(600, 90), reading(1200, 95)]), POLICY)
    assert len(found) == 1  # 90 < 100
    assert found[0].evidence["facts"][0]["fact"] == "contador voltou de 100 para 90"
    assert found[0].evidence["facts"][0]["next_counter"] == 95
    assert found[0].occurred_at == dt.datetime(2026, 12, 1, 6, 10, tzinfo=TZ)  # T0 + 600 s


def test_counter_below_previous_day_yields_infraction():
    found = detect(facts([reading(0, 490), reading(600, 495)], previous_counter=500), POLICY)
    assert len(found) == 1  # first reading 490 < 500, the last counter of the day before; then 495 < 500
    assert found[0].evidence["facts"][0]["fact"] == "contador voltou de 500 para 490"
    assert found[0].occurred_at == dt.datetime(2026, 12, 1, 6, 0, tzinfo=TZ)  # T0 + 0 s


def test_counter_below_reading_before_service_yields_infraction():
    # 100 at 05:50 (out of service), 90 at 06:10 (in service): the in-service message goes back
    found = detect(facts([reading(-600, 100), reading(600, 90), reading(900, 91)]), POLICY)
    assert len(found) == 1 and isinstance(found[0], Infraction)  # 90 < 100, then 91 < 100


def test_counter_equal_yields_nothing():
    assert detect(facts([reading(0, 100), reading(600, 100), reading(1200, 100)]), POLICY) == []  # 100 = 100
    assert detect(facts([reading(0, 500)], previous_counter=500), POLICY) == []  # 500 = 500 of the day before


def test_counter_going_up_yields_nothing():
    assert detect(facts([reading(0, 100), reading(600, 101)], previous_counter=99), POLICY) == []  # 99 < 100 < 101


def test_counter_going_backwards_outside_service_yields_nothing():
    # 100 at 07:10 then 90 at 07:20, both after service ended at 07:00
    assert detect(facts([reading(0, 80), reading(4200, 100), reading(4800, 90)]), POLICY) == []


def test_no_previous_counter_yields_nothing():
    assert detect(facts([reading(0, 5)], previous_counter=None), POLICY) == []  # nothing to compare to


# --- one record per vehicle and day -------------------------------------------------

def test_seal_and_counter_on_one_day_yields_infraction_once():
    found = detect(facts([reading(0, 100), reading(600, 90), reading(1200, 95, seal_intact=False)]), POLICY)
    assert len(found) == 1  # counter back (06:10) and seal broken (06:20): one record
    assert [f["fact"] for f in found[0].evidence["facts"]] == ["contador voltou de 100 para 90", "lacre violado"]
    assert found[0].occurred_at == dt.datetime(2026, 12, 1, 6, 10, tzinfo=TZ)  # the first fact


def test_same_vehicle_and_day_yields_infraction_with_same_id():
    a = detect(facts([reading(600, 110, seal_intact=False)]), POLICY)
    b = detect(facts([reading(1800, 90), reading(2400, 91)], previous_counter=100), POLICY)
    assert a[0].infraction_id == b[0].infraction_id  # identity: date and vehicle, not the fact
    again = detect(facts([reading(600, 110, seal_intact=False)]), POLICY)
    assert again == a  # same facts, same record


def test_other_day_or_vehicle_yields_infraction_with_other_id():
    base = detect(facts([reading(600, 110, seal_intact=False)]), POLICY)[0].infraction_id
    other_day = detect(facts([reading(600, 110, seal_intact=False)], date=dt.date(2026, 12, 2)), POLICY)
    other_vehicle = detect(facts([reading(600, 110, seal_intact=False, vehicle="V2")], vehicle="V2"), POLICY)
    assert len({base, other_day[0].infraction_id, other_vehicle[0].infraction_id}) == 3


def test_no_readings_yields_nothing():
    assert detect(facts([]), POLICY) == []  # D-21 needs a message that shows the violation


# --- sensor faults that look like a counter going back -------------------------------

def test_counter_rolling_over_a_register_yields_nothing():
    # policy d21: sizes 65,536, 100,000, 1,000,000, ...; margin 1 %
    assert detect(facts([reading(0, 999_998), reading(600, 0)]), POLICY) == []  # 999,998 >= 990,000; 0 < 10,000
    assert detect(facts([reading(0, 65_535), reading(600, 2)]), POLICY) == []  # 65,535 >= 64,880.64; 2 < 655.36
    assert detect(facts([reading(0, 5)], previous_counter=99_999), POLICY) == []  # over the night, 5-digit display


def test_counter_falling_outside_a_roll_over_yields_infraction():
    # 500,000 is not in the top 1 % of any size (1,000,000's starts at 990,000; 100,000 < 500,000)
    [rec] = detect(facts([reading(0, 500_000), reading(600, 0), reading(1200, 4)]), POLICY)
    assert rec.evidence["facts"][0] == {"fact": "contador voltou de 500000 para 0", "ts": "2026-12-01T06:10:00-03:00",
                                        "counter": 0, "seal_intact": True, "msg_id": "V1/2026-12-01T06:10:00-03:00",
                                        "previous_counter": 500_000, "next_counter": 4}
    # from the top of 1,000,000 but to 500,000, not to its bottom 1 % (< 10,000)
    found = detect(facts([reading(0, 999_998), reading(600, 500_000), reading(1200, 500_003)]), POLICY)
    assert len(found) == 1 and isinstance(found[0], Infraction)
    assert rec.evidence["counter_moduli"] == list(POLICY.d21.counter_moduli)


def test_a_catraca_clock_running_behind_interleaves_its_readings_and_yields_nothing():
    # the true sequence 100 (06:00), 110 (06:05), then the clock falls 5 min behind: 120
    # is stamped 06:00 again, 130 06:05. In time order: 100, 120, 110, 130. Before, the
    # dip 120 -> 110 was a D-21; the next reading (130) is back above 120: two clocks
    readings = [reading(0, 100), reading(0, 120), reading(300, 110), reading(300, 130), reading(600, 140)]
    assert detect(facts(readings), POLICY) == []


def test_a_counter_going_back_at_the_days_last_reading_is_insufficient_evidence():
    # 100 then 90, and nothing after: a set-back, or a clock behind whose next reading
    # would have come back above 100; nobody can tell
    [record] = detect(facts([reading(0, 100), reading(600, 90)]), POLICY)
    assert isinstance(record, InsufficientEvidence) and "relógio de catraca atrasado" in record.reason
    assert record.evidence["readings"][0]["previous_counter"] == 100


def test_implausible_counters():
    from rules.d21 import implausible
    # beyond the largest register (2^32 = 4,294,967,296): no reading at all
    assert "além de qualquer registro" in implausible(None, T0, 10**30, POLICY)
    assert implausible(None, T0, 4_294_967_295, POLICY) is None
    # 60 passages a minute (policy): +61 in 60 s is too fast, +60 is not
    assert "passagens por minuto" in implausible((T0, 100), T0 + 60, 161, POLICY)
    assert implausible((T0, 100), T0 + 60, 160, POLICY) is None
    # under a minute counts as one: +60 in 10 s is allowed; after 2 h, +7,200 (= 60 x 120) too
    assert implausible((T0, 100), T0 + 10, 160, POLICY) is None
    assert implausible((T0, 100), T0 + 7200, 7300, POLICY) is None
    # a counter going down is not a rate question (D-21 judges it)
    assert implausible((T0, 100), T0 + 60, 5, POLICY) is None
