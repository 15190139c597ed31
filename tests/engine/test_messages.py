"""The messages between the stages cross Kafka as JSON (streams.app): what one stage
sends, the other reads back the same."""

import msgspec

from engine.messages import Heartbeat, OperatorInput
from rules.facts import SensorRuns


def test_a_heartbeat_with_the_vehicles_sensor_runs_reads_back_the_same():
    beat = Heartbeat(0, 1.8e9, 1.7e9, 1.8e9 + 600, {"VNV": [30_000_000]}, coverage={
        "JN-1011": SensorRuns(tachograph=((1.8e9, 1.8e9 + 300.5),), boarding=((1.8e9 + 60, 1.8e9 + 60),))})
    decoded = msgspec.json.Decoder(OperatorInput).decode(msgspec.json.encode(beat))
    assert decoded == beat
    assert decoded.coverage["JN-1011"].tachograph == ((1.8e9, 1.8e9 + 300.5),)


def test_a_heartbeat_of_an_older_vehicle_stage_reads_as_no_runs():
    # a worker not yet upgraded sends no `coverage`: nothing heard, not a decoding error
    old = b'{"type":"heartbeat","source":0,"watermark":null,"first_event":null,"max_event":null,"reporting":{}}'
    assert msgspec.json.Decoder(OperatorInput).decode(old).coverage == {}
