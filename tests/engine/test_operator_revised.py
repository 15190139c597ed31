"""A vehicle-day judged again after late messages (engine.late) reaches the service day too
(issue #33 item 5): the operator stage swaps what the live stream told of that vehicle-day
for what the re-judgment found (`VehicleDayRevised`) and judges the day again. A trip the
late backlog proves is a trip run for D-12, D-13, D-22 and art. 45, whatever order the
messages came in: no fine stands on a departure that only arrived late.

Driven directly (tests/support/operator_run.py) on the sample network's schedule: line 201
by headway (06:00-09:00 every 15 min), line 101 every 30 min in each direction.
"""

from __future__ import annotations

import datetime as dt

import pytest

from engine.messages import Heartbeat, TripDetected, VehicleDayRevised
from engine.routing import judges_a_day
from operator_run import DAY, Run, at, eleven_of_twelve, sample_context, trip
from rules.facts import SensorRuns
from rules.model import Infraction
from telemetry import Occurrence


@pytest.fixture(scope="module")
def context(tmp_path_factory):
    return sample_context(tmp_path_factory.mktemp("revised"))


def operating_day(context) -> tuple[float, float]:
    """The vehicle-day a re-judgment reads back: 03:00 to 03:00 (the policy's cutover)."""
    cutover = dt.time(3, 0)
    start = dt.datetime.combine(DAY, cutover, context.feed.timezone)
    return start.timestamp(), (start + dt.timedelta(days=1)).timestamp()


def revised(context, operator: str, vehicle: str, trips, seen_from: float, seen_to: float) -> VehicleDayRevised:
    start, end = operating_day(context)
    return VehicleDayRevised(operator, vehicle, start, end, trips, [], [],
                             SensorRuns(tachograph=((seen_from, seen_to),)),
                             list(range(int(seen_from // 60), int(seen_to // 60) + 1)))


def short_window_day(context) -> tuple[Run, Infraction]:
    """Line 201 direction 0, 06:00-09:00 every 15 min: ceil(10,800 / 900) = 12 departures
    required; live, JN-2011's 11 (one every 16 min from 06:00) and nothing from JN-2012,
    whose tachograph's backlog is still on its way. The day closes with a D-12."""
    run = eleven_of_twelve(context)
    run.beat(at(context, 9, 0, 30))
    run.beat(at(context, 9, 30), final=True)
    [(d12, _)] = run.records("D-12", direction=0)
    assert d12.status == "confirmed"
    return run, d12


def test_a_late_backlog_that_proves_the_missing_departure_yields_the_d12_withdrawn(context):
    run, d12 = short_window_day(context)
    # JN-2012's day judged again: it left at 08:44, inside the window: 11 + 1 = 12 departures
    # (its sensors heard 05:55-08:59, as the fleet's were live: the next window is not touched)
    late_trip = trip("JN-2012", "201", 0, at(context, 8, 44), at(context, 8, 58))
    out = run.stage.handle("TRD", revised(context, "TRD", "JN-2012", [late_trip], at(context, 5, 55),
                                          at(context, 8, 59)), [])
    [again] = [r for r in out.findings if isinstance(r, Infraction) and r.code == "D-12"]
    assert again.status == "withdrawn"
    assert (again.infraction_id, again.detected_at) == (d12.infraction_id, d12.detected_at)
    # the trip is a realized trip of the day now, matched to its frequency window
    assert [(t.vehicle_id, t.trip_id) for t in out.trips] == [("JN-2012", "201-DU-0-FREQ")]


def test_a_revised_day_that_proves_nothing_new_yields_nothing(context):
    run, _ = short_window_day(context)
    # JN-2012's day judged again finds no trip: the day is as it was judged
    out = run.stage.handle("TRD", revised(context, "TRD", "JN-2012", [], at(context, 5, 55), at(context, 8, 59)), [])
    assert (out.findings, out.trips) == ([], [])


def test_the_same_trip_told_live_and_again_in_the_revision_changes_nothing(context):
    run, _ = short_window_day(context)
    # JN-2011's day judged again finds the same 11 trips it told live, its sensors heard when
    # the live stream had heard them (05:55-06:00)
    mine = [trip("JN-2011", "201", 0, at(context, 6, 0) + k * 16 * 60, at(context, 6, 0) + k * 16 * 60 + 900)
            for k in range(11)]
    out = run.stage.handle("TRD", revised(context, "TRD", "JN-2011", mine, at(context, 5, 55), at(context, 6, 0)), [])
    assert (out.findings, out.trips, out.months) == ([], [], [])


def line_101_day(context, live_trips, late: tuple[str, list] | None = None) -> Run:
    """Line 101's day with the fleet heard 05:30-10:05: `live_trips` told live, then the day
    closed (and its month: the input ends); `late`, a vehicle's trips its day judged again
    found, told after the close."""
    run = Run(context, "VNV")
    run.beat(at(context, 5, 30), reporting_from=at(context, 5, 30))
    for detected in live_trips:
        run.stage.on_detected(TripDetected("VNV", detected))
    run.beat(at(context, 10, 5), reporting_from=at(context, 5, 30), final=True)
    if late is not None:
        vehicle, trips = late
        out = run.stage.handle("VNV", revised(context, "VNV", vehicle, trips, at(context, 5, 30),
                                              at(context, 10, 5)), [])
        run.sent += [(f, None) for f in out.findings if isinstance(f, Infraction)]
        run.revised_out = out
    return run


def standing(run: Run) -> dict[str, tuple]:
    """The records standing at the end (not withdrawn: a record sent and then withdrawn is
    kept, never deleted), each as it stands but for when it was first sent (a record only
    the late data proves is first sent when it comes)."""
    final = {r.infraction_id: (r.code, r.trip_id, r.status, r.fine_ufir, r.evidence) for r, _ in run.sent}
    return {k: record for k, record in final.items() if record[2] != "withdrawn"}


OFF = ("JN-1011", "101", 0, (9, 20), (9, 45))  # for 09:00: 1,200 s late (limit 300 s): off schedule
ON_TIME = ("JN-1012", "101", 0, (6, 0, 20), (6, 25))  # for 06:00: 20 s late, on time


def made(context, spec):
    vehicle, route, direction, departed, arrived = spec
    return trip(vehicle, route, direction, at(context, *departed), at(context, *arrived))


def test_a_late_backlog_with_an_on_time_trip_yields_the_d13_fine_lowered(context):
    # live, JN-1011's off-schedule trip is the line's only one: 1 off of 1 = 100 %,
    # 200 x (1 + floor(100 / 10)) = 2,200 UFIR
    run = line_101_day(context, [made(context, OFF)], late=("JN-1012", [made(context, ON_TIME)]))
    # (sent at the close, before the late trip: the records sent after it carry no watermark)
    first = [r for r, watermark in run.records("D-13") if watermark is not None][-1]
    assert (first.status, first.fine_ufir) == ("confirmed", 2200)
    # JN-1012's backlog proves its 06:00 trip, on time: 1 off of 2 = 50 %,
    # 200 x (1 + floor(50 / 10)) = 1,200 UFIR, same id, first detected_at kept
    [again] = [r for r in run.revised_out.findings if isinstance(r, Infraction) and r.code == "D-13"]
    assert (again.status, again.fine_ufir) == ("confirmed", 1200)
    assert (again.infraction_id, again.detected_at) == (first.infraction_id, first.detected_at)
    # the D-22 of 06:00 (nothing seen leaving for it) is withdrawn
    [d22] = [r for r in run.revised_out.findings if r.code == "D-22" and r.trip_id == "101-DU-0-0600"]
    assert d22.status == "withdrawn"
    # the trip is realized, and the month (closed: the input ended) counts its km as realized
    assert [t.trip_id for t in run.revised_out.trips] == ["101-DU-0-0600"]
    [month] = run.revised_out.months
    assert month.month_closed and month.realized_km > 0
    # all of it as if the trip had been heard live
    assert standing(run) == standing(line_101_day(context, [made(context, ON_TIME), made(context, OFF)]))


def test_a_late_backlog_with_an_off_schedule_trip_yields_the_d13_it_proves(context):
    # live, JN-1012's on-time 06:00 trip alone: no D-13
    run = line_101_day(context, [made(context, ON_TIME)], late=("JN-1011", [made(context, OFF)]))
    # JN-1011's backlog proves its 09:20 trip for 09:00: 1 off of 2 = 50 %, 1,200 UFIR, a new
    # record found when the day is judged again
    [d13] = [r for r, _ in run.records("D-13")]
    assert (d13.status, d13.fine_ufir) == ("confirmed", 1200)
    assert standing(run) == standing(line_101_day(context, [made(context, ON_TIME), made(context, OFF)]))


def test_a_day_judged_again_keeps_what_an_occurrence_justifies(context):
    # a road closure on line 101 from 05:50 to 06:40 justifies the 06:00 D-22s (nothing left
    # for 06:00 in either direction); JN-1012's backlog then proves a trip at 09:20
    closure = Occurrence(id="interdicao", kind="road_closure", route_id="101",
                         start=dt.datetime.fromtimestamp(at(context, 5, 50), context.feed.timezone),
                         end=dt.datetime.fromtimestamp(at(context, 6, 40), context.feed.timezone))
    run = Run(context, "VNV")
    run.occurrences = [closure]
    run.beat(at(context, 5, 30), reporting_from=at(context, 5, 30))
    run.beat(at(context, 10, 5), reporting_from=at(context, 5, 30), final=True)
    justified = {r.trip_id for r, _ in run.records("D-22") if r.status == "justified"}
    assert {"101-DU-0-0600", "101-DU-1-0600"} <= justified
    late = trip("JN-1012", "101", 0, at(context, 9, 20), at(context, 9, 45))
    out = run.stage.handle("VNV", revised(context, "VNV", "JN-1012", [late], at(context, 5, 30), at(context, 10, 5)),
                           [closure])
    # judged again with the occurrence, those stay justified: none is sent again accusing
    assert not [r for r in out.findings if isinstance(r, Infraction) and r.trip_id in justified
                and r.status != "justified"]


def test_the_workers_hand_the_occurrences_to_a_day_judged_again_as_to_a_heartbeat(context):
    start, end = operating_day(context)
    assert judges_a_day(revised(context, "VNV", "JN-1012", [], start, start + 60))
    assert judges_a_day(Heartbeat(0, end, start, end, {}))
    assert not judges_a_day(TripDetected("VNV", trip("JN-1011", "101", 0, start + 3600)))


@pytest.mark.parametrize("read_anew_s, withdrawn", [(0.4, False), (5.0, True)])
def test_a_trip_whose_departure_is_read_anew_is_sent_again_and_withdrawn_only_under_another_second(
        context, read_anew_s, withdrawn):
    # live, JN-2011's last departure was read at 08:40:00; its day judged again reads it
    # 0.4 s or 5 s later. The trips output names a trip by its vehicle and its departure to
    # the second: 08:40:00.4 is still 08:40:00, the same trip sent again (withdrawing it
    # would delete the trip just sent); 08:40:05 is another, and 08:40:00 goes out withdrawn
    run, _ = short_window_day(context)
    departures = [at(context, 6, 0) + k * 16 * 60 for k in range(11)]
    departures[-1] += read_anew_s
    mine = [trip("JN-2011", "201", 0, departed, departed + 900) for departed in departures]
    out = run.stage.handle("TRD", revised(context, "TRD", "JN-2011", mine, at(context, 5, 55), at(context, 6, 0)), [])
    [again] = out.trips
    assert again.departed_at.timestamp() == at(context, 8, 40, read_anew_s)
    assert [t.departed_at.timestamp() for t in out.trips_withdrawn] == ([at(context, 8, 40)] if withdrawn else [])
