"""Worker logs are JSON lines an operations team can query."""

import io
import json
import logging
import logging.config

from streams.logs import JsonFormatter, logging_config


def test_a_log_record_is_one_json_object_with_its_extras():
    record = logging.LogRecord("fiscaliza.worker", logging.WARNING, __file__, 1, "late %s", ("JN-1011",), None)
    record.partition = 3
    entry = json.loads(JsonFormatter().format(record))
    assert (entry["level"], entry["logger"], entry["message"], entry["partition"]) == (
        "warning", "fiscaliza.worker", "late JN-1011", 3)
    assert entry["ts"].endswith("+00:00")


def test_the_worker_configuration_writes_json_lines():
    config = logging_config("info")
    stream = io.StringIO()
    config["handlers"]["stderr"]["stream"] = stream
    logging.config.dictConfig(config)
    try:
        logging.getLogger("fiscaliza.test").info("ready")
        assert json.loads(stream.getvalue().strip())["message"] == "ready"
    finally:
        logging.config.dictConfig({"version": 1, "disable_existing_loggers": False})
