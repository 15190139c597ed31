"""The live section's pure pieces (benchmarks/live_pace.py): percentiles, the stream's
order, and the matching of records to the message that completed their evidence."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.live_pace import (
    SentLog,
    d11_verdict,
    first_emissions,
    in_event_order,
    per_code,
    percentile,
    status_latencies,
    trip_latencies,
)
from kernel.partitioning import partition_of

T0 = 1796115600.0  # 2026-12-01T07:00:00-03:00


def iso(epoch: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(epoch, dt.timezone(dt.timedelta(hours=-3))).isoformat()


@pytest.mark.parametrize("values", [[3.0], [5.0, 1.0], [4.0, 1.0, 9.0, 2.0, 7.0], list(np.linspace(0, 1, 137) ** 2)])
@pytest.mark.parametrize("q", [0.0, 0.5, 0.9, 0.99, 1.0])
def test_percentile_is_numpys_linear_quantile(values, q):
    assert percentile(values, q) == pytest.approx(float(np.quantile(values, q)))


def test_percentile_of_nothing_is_an_error():
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_the_stream_is_in_event_time_order_and_a_bad_line_stays_beside_its_predecessor(tmp_path):
    tacho = tmp_path / "t.jsonl"
    catraca = tmp_path / "c.jsonl"
    ping = {"vehicle_id": "V1", "lat": -23.5, "lon": -46.6, "speed_kmh": 10.0}
    tacho.write_text("\n".join([json.dumps({**ping, "ts": iso(T0 + 20)}), json.dumps({**ping, "ts": iso(T0)}),
                                "{not json", json.dumps({**ping, "ts": iso(T0 + 40)})]) + "\n")
    catraca.write_text(json.dumps({"vehicle_id": "V1", "ts": iso(T0 + 10), "counter": 5, "seal_intact": True,
                                   "status": "ok"}) + "\n")
    lines = in_event_order({"tachograph": tacho, "catraca": catraca})
    assert [(line.epoch - T0, line.topic, line.key) for line in lines] == [
        (0, "tachograph", "V1"), (0, "tachograph", None), (10, "catraca", "V1"), (20, "tachograph", "V1"),
        (40, "tachograph", "V1")]
    assert lines[1].raw == b"{not json"
    assert in_event_order({"tachograph": tacho}, T0 + 10, T0 + 40)[0].epoch == T0 + 20


def sent_log(rows) -> SentLog:
    log = SentLog()
    for epoch, topic, key, partition, wall in rows:
        log.add(T0 + epoch, topic, key, partition, True, wall)
    return log


# two partitions (A's 0, D's 1); partition 1's catraca lags (its watermark is held by it)
LOG = sent_log([
    (0, "tachograph", "A", 0, 100.0), (0, "catraca", "A", 0, 100.1), (0, "tachograph", "D", 1, 100.2),
    (0, "catraca", "D", 1, 100.3),
    (600, "tachograph", "A", 0, 110.0), (600, "catraca", "A", 0, 110.1), (600, "tachograph", "D", 1, 110.2),
    (630, "tachograph", "A", 0, 110.5), (660, "catraca", "A", 0, 111.0), (700, "tachograph", "D", 1, 111.7),
    (900, "catraca", "D", 1, 115.0), (1300, "tachograph", "A", 0, 121.7), (1300, "catraca", "A", 0, 121.8),
])


def test_a_vehicles_evidence_is_its_first_message_at_or_after_detected_at():
    assert LOG.vehicle_reached("A", T0 + 600) == 110.0
    assert LOG.vehicle_reached("A", T0 + 601) == 110.5
    assert LOG.vehicle_reached("D", T0 + 650) == 111.7
    assert LOG.vehicle_reached("D", T0 + 901) is None
    assert LOG.vehicle_reached("C", T0) is None


def test_the_watermark_waits_for_the_slowest_input_of_the_partition_and_of_every_partition():
    assert LOG.watermark_passed(T0, 600, partition=0) == 110.1  # both of A's inputs at 600
    assert LOG.watermark_passed(T0 + 30, 600, partition=0) == 111.0  # tachograph 630, catraca 660
    # partition 1's catraca is at 0 until 900 s: D's tachograph at 700 does not move it
    assert LOG.watermark_passed(T0 + 100, 600, partition=1) == 115.0
    # over every partition: the slowest, partition 1 until 900 s, then partition 0 (A's 630 and 660)
    assert LOG.watermark_passed(T0 + 30, 600) == 115.0
    assert LOG.watermark_passed(T0 + 100, 600) == 121.8
    assert LOG.watermark_passed(T0 + 101, 600) is None
    assert LOG.stream_reached(T0 + 650) == 111.0


def record(code, vehicle, occurred, detected, iid=None):
    return {"infraction_id": iid or f"{code}-{vehicle}-{occurred}", "code": code, "vehicle_id": vehicle,
            "occurred_at": iso(T0 + occurred), "detected_at": iso(T0 + detected)}


def test_each_record_counts_once_at_its_first_emission():
    first = record("D-11", "A", 0, 600, iid="x")
    again = {**first, "status": "confirmed"}
    assert first_emissions([(130.0, again), (120.0, first)]) == [(120.0, first)]


def test_per_code_measures_from_the_evidence_and_from_the_watermark():
    assert {key: partition_of(key, 2) for key in "AD"} == {"A": 0, "D": 1}  # murmur2, as in LOG
    records = [
        (122.5, record("D-11", "A", 400, 600)),  # evidence: A's ping at 600 (110.0); A's watermark: 1300 (121.8)
        (125.0, record("D-11", "A", 400, 600)),  # the same record again: not counted
        (116.0, record("D-13", "D", 10, 20)),  # operator's: the stream at 620 (A's 630: 110.5); every partition
        # past 20 once D's catraca reaches 900 (115.0: partition 0 at 100, partition 1 at 30)
    ]
    out = per_code(records, LOG, 600, 2)
    assert out["D-11"] == {"count": 1, "wall_p50_s": 12.5, "wall_p99_s": 12.5, "event_p50_s": 200.0,
                           "event_p99_s": 200.0, "after_watermark_p50_s": 0.7, "after_watermark_p99_s": 0.7}
    assert out["D-13"]["wall_p50_s"] == 5.5 and out["D-13"]["after_watermark_p50_s"] == 1.0
    assert out["D-13"]["event_p50_s"] == 10.0


def test_a_trip_is_timed_from_its_arrival_ping():
    events = [(112.5, {"type": "trip_detected", "trip": {"last_msg_id": f"A/{iso(T0 + 630)}#7"}}),
              (113.0, {"type": "heartbeat"})]
    assert trip_latencies(events, LOG) == [pytest.approx(2.0)]


def test_a_status_is_timed_from_its_ping_once_at_its_first_record():
    statuses = [(112.0, {"vehicle_id": "A", "ts": iso(T0 + 630)}), (111.0, {"vehicle_id": "A", "ts": iso(T0 + 630)}),
                (110.4, {"vehicle_id": "A", "ts": iso(T0 + 600)}), (130.0, {"vehicle_id": "D", "ts": iso(T0 + 2000)})]
    # A at 630 published at 110.5, first record 111.0; A at 600 published at 110.0; D never sent at 2000
    assert sorted(status_latencies(statuses, LOG)) == [pytest.approx(0.4), pytest.approx(0.5)]


def test_the_d11_verdict_says_when_the_lateness_makes_the_target_impossible():
    latency = {"pace": 60.0, "lateness_s": 600.0, "lateness_floor_s": 10.0,
               "per_code": {"D-11": {"count": 3, "wall_p99_s": 10.9}}}
    text = d11_verdict(latency)
    assert "missed" in text and "impossible at pace x60" in text and "10.0 s" in text
    fast = {**latency, "pace": 600.0, "lateness_floor_s": 1.0, "per_code": {"D-11": {"count": 3, "wall_p99_s": 1.5}}}
    assert "met" in d11_verdict(fast) and "impossible" not in d11_verdict(fast)
