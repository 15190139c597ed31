"""The Kafka commands without a broker: one line naming the address, exit 2, within 10 s."""

from __future__ import annotations

import socket
import time

import pytest
import typer
from cli_helpers import assert_bad_input, fiscaliza

from fiscaliza.commands.kafka import require_broker


@pytest.fixture
def unused_address() -> str:
    """A 127.0.0.1 port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"127.0.0.1:{port}"


def _timed(*args, env=None):
    started = time.monotonic()
    result = fiscaliza(*args, env=env)
    return result, time.monotonic() - started


def test_worker_without_a_broker_names_the_address_in_one_line_within_10_s(unused_address):
    result, elapsed = _timed("worker", env={"FISCALIZA_KAFKA_BOOTSTRAP": unused_address})
    assert_bad_input(result, unused_address, "no Kafka broker answered")
    assert elapsed < 10, elapsed


def test_publish_without_a_broker_names_the_address_in_one_line_within_10_s(unused_address, tmp_path):
    tachograph = tmp_path / "tachograph.jsonl"
    tachograph.write_text('{"vehicle_id": "JN-2013", "ts": "2026-12-01T06:00:00-03:00", "lat": -19.76, '
                          '"lon": -40.39, "speed_kmh": 0}\n', encoding="utf-8")
    result, elapsed = _timed("publish", tachograph, "--topic", "tachograph", "--bootstrap", unused_address)
    assert_bad_input(result, unused_address)
    assert elapsed < 10, elapsed
    result, elapsed = _timed("publish", "--end-of-input", "--bootstrap", unused_address)
    assert_bad_input(result, unused_address)
    assert elapsed < 10, elapsed


def test_every_address_is_named_when_none_answers(unused_address, capsys):
    other = "127.0.0.1:1"
    with pytest.raises(typer.Exit) as failure:
        require_broker(f"{unused_address},kafka://{other}", within_s=2)
    assert failure.value.exit_code == 2
    assert capsys.readouterr().err == f"fiscaliza: error: no Kafka broker answered at {unused_address}, {other}\n"


def test_one_listening_address_is_enough(unused_address):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        require_broker(f"{unused_address},127.0.0.1:{listener.getsockname()[1]}", within_s=2)


def test_an_address_without_a_port_is_refused():
    with pytest.raises(typer.Exit):
        require_broker("localhost")


def test_ingest_to_a_topic_without_a_broker_names_the_address_in_one_line(unused_address, tmp_path):
    from pathlib import Path

    metro = Path(__file__).resolve().parents[2].parent / "shared" / "realdata" / "metrotransit-gtfs-rt-2019-05-01"
    fleet = tmp_path / "fleet.csv"
    fleet.write_text("vehicle_id,plate,operator_id\n1001,,MT\n", encoding="utf-8")
    result = fiscaliza("ingest", "gtfs-rt", "--file", metro / "vehicle-positions.pb", "--fleet", fleet,
                       "--topic", "tachograph", "--bootstrap", unused_address)
    assert_bad_input(result, unused_address, "no Kafka broker answered")
