"""Running the catalogue's rules over facts (rules.evaluate)."""

import dataclasses
import datetime as dt

from kernel.policy import load_policy
from rules.evaluate import detect_live
from rules.joao_neiva.anexo_i import LAW
from rules.joao_neiva.pack import CATALOGUE
from rules.model import InsufficientEvidence, Live
from rules.pack import Pack

DATE = dt.date(2026, 12, 1)


def test_detect_live_runs_the_moments_rules_only_in_catalogue_order_each_guarded():
    def fails(facts, policy, **_):
        raise ValueError("bad facts")

    def finds(facts, policy, **_):
        return [("found", facts)]

    running = CATALOGUE["B-04"]
    assert running.live == Live.RUNNING_TRIP and CATALOGUE["D-11"].live != Live.RUNNING_TRIP
    pack = Pack(law=LAW, catalogue={"B-04": dataclasses.replace(running, detect=fails),
                                    "D-11": dataclasses.replace(CATALOGUE["D-11"], detect=finds),
                                    "B-04b": dataclasses.replace(running, code="B-04b", detect=finds)})
    found = detect_live(Live.RUNNING_TRIP, "the facts", pack, load_policy(), DATE)
    # B-04's failure is recorded as insufficient evidence and the next rule still runs; D-11
    # is judged at another moment (the arrival), so it is not run here
    assert len(found) == 2
    assert isinstance(found[0], InsufficientEvidence) and found[0].code == "B-04"
    assert "bad facts" in found[0].reason and found[0].service_date == DATE
    assert found[1] == ("found", "the facts")
