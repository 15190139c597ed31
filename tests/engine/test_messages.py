"""The messages between the stages cross Kafka as JSON (streams.app): what one stage
sends, the other reads back the same."""

import msgspec

from engine.messages import Heartbeat, LiveDeparture, OperatorInput, TripDeparted
from rules.facts import SensorRuns
from trips.model import DetectedTrip


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


def test_a_departure_seen_live_reads_back_as_live_never_as_the_legal_departure():
    # the same fields as TripDeparted: only its kind tells the operator stage it is no evidence
    trip = DetectedTrip("JN-1011", "101", 0, "101-0", 1.8e9, 1.8e9, 0.0, "", "")
    decoder = msgspec.json.Decoder(OperatorInput)
    live = decoder.decode(msgspec.json.encode(LiveDeparture("VNV", trip)))
    assert type(live) is LiveDeparture and live.trip == trip
    assert type(decoder.decode(msgspec.json.encode(TripDeparted("VNV", trip)))) is TripDeparted
