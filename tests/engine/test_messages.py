"""The messages between the stages cross Kafka as JSON (streams.app): what one stage
sends, the other reads back the same."""

import msgspec

from engine.messages import Heartbeat, LiveDeparture, OperatorInput, TripDeparted
from gtfs.model import Pattern
from rules.facts import SensorRuns
from trips.model import Departure, DetectedTrip


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


def test_a_departure_told_as_a_trip_crosses_kafka_as_the_stand_in_it_replaces():
    # the operator stage and its stored state read the same bytes as before trips.model.Departure
    pattern = Pattern("101", 0, "101-0", "T1", "T2")
    trip = Departure.of("JN-1011", pattern, 1.8e9 + 12.5, departure_gap_s=20.0, exit_msg_ids=("m1", "m2"),
                        left_at=1.8e9 + 20.0).trip()
    assert msgspec.json.encode(TripDeparted("VNV", trip, ("m2",))) == (
        b'{"type":"trip_departed","operator_id":"VNV","trip":{"vehicle_id":"JN-1011","route_id":"101",'
        b'"direction_id":0,"shape_id":"101-0","departed_at":1800000012.5,"arrived_at":1800000012.5,'
        b'"coverage":0.0,"first_msg_id":"","last_msg_id":"","departure_gap_s":20.0,"exit_msg_ids":["m1","m2"],'
        b'"left_at":1800000020.0,"at_origin_since":null},"conflicted":["m2"]}')
    stand_in = DetectedTrip("JN-1011", "101", 0, "101-0", 1.8e9 + 12.5, 1.8e9 + 12.5, 0.0, "", "",
                            departure_gap_s=20.0, exit_msg_ids=("m1", "m2"), left_at=1.8e9 + 20.0)
    assert msgspec.msgpack.encode(LiveDeparture("VNV", trip)) == msgspec.msgpack.encode(LiveDeparture("VNV", stand_in))
