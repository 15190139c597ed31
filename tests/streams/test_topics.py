"""The topics' configurations, without a broker."""

from streams.admin import topic_configs
from streams.topics import TOPICS


def test_the_telemetry_inputs_are_stamped_by_the_broker_on_receipt():
    # engine.clocks checks a device's clock against the record's time: on the inputs it is
    # the broker's (LogAppendTime), never the producer's, which the sender controls
    for name in ("tachograph", "catraca"):
        assert topic_configs(TOPICS[name])["message.timestamp.type"] == "LogAppendTime"
    # the engine's own outputs keep the producer's time
    assert "message.timestamp.type" not in topic_configs(TOPICS["infractions"])
