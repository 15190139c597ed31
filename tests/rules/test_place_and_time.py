"""Art. 5 III: an auto states the place, the date and the time of the infraction. Where a
rule names a tachograph record, the place and the time must be that one record's: a
position taken seconds later lets the operator say the bus was never there then."""

import datetime as dt
import json


def test_each_auto_states_the_place_and_time_of_one_same_record(demo_day):
    pings = {}
    for line in demo_day.inputs.tachograph.read_text().splitlines():
        try:
            ping = json.loads(line)
            pings.setdefault(dt.datetime.fromisoformat(ping["ts"]).timestamp(), set()).add((ping["lat"], ping["lon"]))
        except (ValueError, KeyError, TypeError):
            continue  # the demo's malformed lines
    checked = []
    for record in demo_day.records():
        if record["code"] not in ("C-01", "D-11", "A-07"):  # the rules that point at one record
            continue
        at = dt.datetime.fromisoformat(record["occurred_at"]).timestamp()
        assert (record["lat"], record["lon"]) in pings.get(at, set()), record["code"]
        checked.append(record["code"])
    # the demo day's speeding and detour (whose bypassed stops make the A-07)
    assert sorted(checked) == ["A-07", "C-01", "D-11"]
