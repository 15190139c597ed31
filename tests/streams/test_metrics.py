"""The worker's domain metrics (#14 part 1): every series there from the start, counts
that follow what the engine sent, never a per-vehicle label. Read back through
prometheus-client's own exposition, as Prometheus scrapes it."""

from __future__ import annotations

import datetime as dt

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from engine.sends import Sends
from rules.joao_neiva.pack import CATALOGUE
from rules.model import STATUSES
from streams.metrics import WorkerMetrics


def samples(registry) -> dict[tuple[str, frozenset], float]:
    text = generate_latest(registry).decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(registry, name: str, **labels) -> float:
    return samples(registry)[(name, frozenset(labels.items()))]


@pytest.fixture
def fresh(demo_day):
    registry = CollectorRegistry()
    clock = [dt.datetime(2026, 12, 1, 23, 0, tzinfo=dt.UTC).timestamp()]
    return registry, WorkerMetrics(registry, demo_day.context, 4, clock=lambda: clock[0]), clock


def test_every_series_exists_at_zero_before_anything_happens(fresh, demo_day):
    # before: the trips counter was created lazily, so a first burst never showed in rate()
    registry, _, _ = fresh
    routes = demo_day.context.feed.routes.values()
    for route in routes:
        for direction in ("0", "1"):
            for status in ("matched", "unmatched"):
                assert value(registry, "fiscaliza_trips_total", operator=route.agency_id, route=route.route_id,
                             direction=direction, status=status) == 0
            assert value(registry, "fiscaliza_vehicles_in_service", operator=route.agency_id,
                         route=route.route_id, direction=direction) == 0
    for code in CATALOGUE:
        for status in STATUSES:
            assert value(registry, "fiscaliza_infractions_total", code=code, status=status) == 0
    assert value(registry, "fiscaliza_rejected_total", source="tachograph", reason="late") == 0
    for partition in range(4):
        assert value(registry, "fiscaliza_partition_watermark_seconds", partition=str(partition),
                     source="catraca") == 0


def test_counts_follow_what_the_engine_sent(fresh, demo_day):
    registry, metrics, _ = fresh
    result = demo_day.result
    metrics.observe(Sends(rejected=result.rejected, findings=result.infractions, trips=result.trips,
                          statuses=result.statuses))
    by_code = {}
    for infraction in result.infractions:
        by_code[(infraction.code, infraction.status)] = by_code.get((infraction.code, infraction.status), 0) + 1
    for (code, status), count in by_code.items():
        assert value(registry, "fiscaliza_infractions_total", code=code, status=status) == count
    assert sum(v for (name, _), v in samples(registry).items() if name == "fiscaliza_trips_total") == len(result.trips)
    deviations = [t for t in result.trips if t.departure_deviation_s is not None]
    assert sum(v for (name, _), v in samples(registry).items()
               if name == "fiscaliza_departure_deviation_seconds_count") == len(deviations)
    assert sum(v for (name, _), v in samples(registry).items()
               if name == "fiscaliza_rejected_total") == len(result.rejected)
    assert value(registry, "fiscaliza_emission_latency_seconds_count", output="trips") == len(result.trips)


def test_no_series_names_a_vehicle(fresh, demo_day):
    # 13,000 buses would be 13,000 series per metric
    registry, metrics, _ = fresh
    result = demo_day.result
    metrics.observe(Sends(rejected=result.rejected, findings=result.infractions, trips=result.trips,
                          statuses=result.statuses))
    vehicles = set(demo_day.context.fleet)
    for (_, labels) in samples(registry):
        assert not {value for _, value in labels} & vehicles


def test_vehicles_in_service_and_silent_are_counted_for_owned_partitions_only(demo_day):
    import msgspec

    registry = CollectorRegistry()
    # the day's last statuses, every other one put in service on its line (at midnight none runs)
    statuses = [msgspec.structs.replace(s, in_service=True, route_id="201", direction_id=i % 2) if i % 2 else s
                for i, s in enumerate(demo_day.result.statuses)]
    newest = max(dt.datetime.fromisoformat(s.ts).timestamp() for s in statuses)
    owned = {s.vehicle_id for s in statuses[: len(statuses) // 2]}
    # one owned vehicle last seen 11 min before the newest position of all: silent; the wall
    # clock, an hour later, does not make the others silent (statuses lag the input)
    quiet = sorted(owned)[0]
    statuses = [msgspec.structs.replace(s, ts=dt.datetime.fromtimestamp(newest - 660, dt.UTC).isoformat())
                if s.vehicle_id == quiet else s for s in statuses]
    at = {s.vehicle_id: dt.datetime.fromisoformat(s.ts).timestamp() for s in statuses}
    metrics = WorkerMetrics(registry, demo_day.context, 4, owns_vehicle=owned.__contains__,
                            clock=lambda: newest + 3600)
    metrics.observe(Sends(statuses=statuses))
    counted = [s for s in statuses if s.vehicle_id in owned]
    silent = sum(v for (name, labels), v in samples(registry).items()
                 if name == "fiscaliza_vehicles_silent" and ("input", "tachograph") in labels)
    reporting = sum(v for (name, labels), v in samples(registry).items()
                    if name == "fiscaliza_vehicles_reporting" and ("input", "tachograph") in labels)
    seen_newest = max(at.values())  # of every vehicle this worker saw
    expected = sum(1 for s in counted if seen_newest - at[s.vehicle_id] > 600)
    assert silent == expected >= 1 and reporting == len(counted) - expected
    running = sum(v for (name, _), v in samples(registry).items() if name == "fiscaliza_vehicles_in_service")
    assert running == sum(1 for s in counted if s.in_service) > 0


def test_headway_is_the_tightest_and_widest_of_a_lines_reporting_buses_whatever_their_order(demo_day):
    # before: the latest ratio of any bus of the line, so the order the partitions brought
    # the statuses in decided what the panel showed
    import msgspec

    base = demo_day.result.statuses[0]
    newest = dt.datetime.fromisoformat(base.ts)

    def bus(vehicle: str, route: str, direction: int, headway_s: float | None, minutes_behind: int = 0):
        return msgspec.structs.replace(base, vehicle_id=vehicle, route_id=route, direction_id=direction,
                                       in_service=True, headway_s=headway_s, scheduled_headway_s=900,
                                       ts=(newest - dt.timedelta(minutes=minutes_behind)).isoformat())

    statuses = [bus("A", "201", 0, 450.0), bus("B", "201", 0, 1350.0), bus("C", "201", 0, 900.0),
                bus("D", "201", 0, 90.0, minutes_behind=11),  # silent: its reading is stale
                bus("E", "201", 1, None),  # between trips: no headway
                bus("F", "101", 1, 1800.0), bus("G", "101", 1, 990.0, minutes_behind=10)]
    shown = []
    for order in (statuses, statuses[::-1]):
        registry = CollectorRegistry()
        WorkerMetrics(registry, demo_day.context, 4, clock=None).observe(Sends(statuses=order))
        shown.append({tuple(dict(labels)[k] for k in ("route", "direction", "bound")): v
                      for (name, labels), v in samples(registry).items() if name == "fiscaliza_headway_ratio"})
    assert shown[0] == shown[1] == {("201", "0", "tightest"): 0.5, ("201", "0", "widest"): 1.5,
                                    ("101", "1", "tightest"): 1.1, ("101", "1", "widest"): 2.0}


def test_watermarks_are_per_partition_and_input(fresh):
    registry, metrics, _ = fresh
    metrics.observe_watermarks(2, {"tachograph": 1_796_169_600.0, "catraca": 1_796_169_000.0})
    assert value(registry, "fiscaliza_partition_watermark_seconds", partition="2", source="tachograph") == 1_796_169_600
    assert value(registry, "fiscaliza_partition_watermark_seconds", partition="2", source="catraca") == 1_796_169_000


def test_trips_scheduled_now_follow_the_timetable_of_the_hour(demo_day):
    from zoneinfo import ZoneInfo

    from gtfs.schedule import expected_trips, scheduled_trips

    tz = ZoneInfo("America/Sao_Paulo")
    trips = scheduled_trips(demo_day.context.feed, dt.date(2026, 12, 1)) \
        + expected_trips(demo_day.context.feed, dt.date(2026, 12, 1))
    # the wall clock a day later: a worker catching up; the timetable is read at event time
    wall = dt.datetime(2026, 12, 2, 15, 0, tzinfo=tz).timestamp()
    registry = CollectorRegistry()
    metrics = WorkerMetrics(registry, demo_day.context, 4, clock=lambda: wall)

    def scheduled() -> dict[tuple[str, str], float]:
        return {(dict(labels)["route"], dict(labels)["direction"]): v for (name, labels), v in samples(registry).items()
                if name == "fiscaliza_trips_scheduled_now"}

    assert set(scheduled().values()) == {0}  # before any event
    metrics.observe_watermarks(0, {"tachograph": dt.datetime(2026, 12, 1, 3, 0, tzinfo=tz).timestamp()})
    # before the first departure of the day
    assert min(t.departure_s for t in trips) > 3 * 3600 and set(scheduled().values()) == {0}
    at = dt.datetime(2026, 12, 1, 8, 0, tzinfo=tz)
    metrics.observe_watermarks(0, {"tachograph": at.timestamp()})
    seconds = 8 * 3600  # 08:00 on the service date (no DST in 2026)
    expected = {}
    for trip in trips:
        if trip.departure_s <= seconds < trip.arrival_s:
            key = (trip.route_id, str(trip.direction_id))
            expected[key] = expected.get(key, 0) + 1
    assert expected and {k: v for k, v in scheduled().items() if v} == expected
    # before: the frequency-based line was left out, so LinhaSemOnibus could never fire for it
    assert expected[("201", "0")] > 0


def test_service_hours_follow_the_workers_clock_even_with_no_telemetry(demo_day):
    # the pipeline's alerts (TelemetriaParada, OperadoraSemTacografo) are gated on service
    # hours: telemetry that stopped overnight must still alert in the morning, so these are
    # read at the clock while the trips compared with the buses wait for the events
    from zoneinfo import ZoneInfo

    from gtfs.schedule import expected_trips, scheduled_trips

    tz = ZoneInfo("America/Sao_Paulo")
    date = dt.date(2026, 12, 1)
    wall = [dt.datetime(2026, 12, 1, 8, 0, tzinfo=tz).timestamp()]
    registry = CollectorRegistry()
    metrics = WorkerMetrics(registry, demo_day.context, 4, clock=lambda: wall[0])
    metrics.observe_watermarks(0, {"tachograph": dt.datetime(2026, 11, 30, 23, 0, tzinfo=tz).timestamp()})
    running = sum(t.departure_s <= 8 * 3600 < t.arrival_s for t in (*scheduled_trips(demo_day.context.feed, date),
                                                                     *expected_trips(demo_day.context.feed, date)))
    assert running and value(registry, "fiscaliza_trips_scheduled_by_the_clock") == running
    assert sum(v for (name, _), v in samples(registry).items() if name == "fiscaliza_trips_scheduled_now") == 0
    wall[0] = dt.datetime(2026, 12, 1, 3, 0, tzinfo=tz).timestamp()  # before the first departure
    assert value(registry, "fiscaliza_trips_scheduled_by_the_clock") == 0


def test_trips_seen_arriving_are_counted_live_against_those_due_so_far(demo_day):
    from zoneinfo import ZoneInfo

    from engine.messages import TripDetected
    from gtfs.schedule import scheduled_trips
    from trips.model import DetectedTrip

    tz = ZoneInfo("America/Sao_Paulo")
    at = dt.datetime(2026, 12, 1, 8, 0, tzinfo=tz)
    registry = CollectorRegistry()
    metrics = WorkerMetrics(registry, demo_day.context, 4, clock=lambda: at.timestamp())
    metrics.observe_watermarks(0, {"tachograph": at.timestamp()})
    arrived = DetectedTrip("JN-2014", "201", 1, "s", at.timestamp() - 3000, at.timestamp() - 60, 0.97, "a", "b")
    metrics.observe(Sends(to_operators=[TripDetected("TRD", arrived), TripDetected("TRD", arrived)]))
    assert value(registry, "fiscaliza_trips_detected_total", operator="TRD", route="201", direction="1") == 2
    # told twice (a batch sent again after a crash), one trip realized
    assert value(registry, "fiscaliza_trips_realized_so_far", operator="TRD", route="201", direction="1") == 1
    due = {}
    for trip in scheduled_trips(demo_day.context.feed, dt.date(2026, 12, 1)):
        if trip.arrival_s <= 8 * 3600 - 600:  # arrived by the watermark: 08:00 less the allowed lateness
            key = (trip.route_id, str(trip.direction_id))
            due[key] = due.get(key, 0) + 1
    assert due
    for (route, direction), count in due.items():
        operator = demo_day.context.feed.routes[route].agency_id
        assert value(registry, "fiscaliza_trips_scheduled_so_far", operator=operator, route=route,
                     direction=direction) == count


def test_the_months_art45_efficiency_so_far_per_operator(demo_day):
    from engine.status import month_efficiency

    registry = CollectorRegistry()
    metrics = WorkerMetrics(registry, demo_day.context, 4)
    assert value(registry, "fiscaliza_month_days_closed", operator="TRD") == 0  # nothing closed: no alarm
    # 2 days closed: 96.5 of 100 km realized, so 0.965 (under art. 45's 98 %)
    metrics.observe(Sends(months=[month_efficiency("TRD", "2026-12", 100_000.0, 96_500.0, ["2026-12-01", "2026-12-02"],
                                                   [], dt.date(2026, 12, 2), 0.98, month_closed=False)]))
    assert value(registry, "fiscaliza_month_efficiency_ratio", operator="TRD") == pytest.approx(0.965)
    assert value(registry, "fiscaliza_month_days_closed", operator="TRD") == 2


def _infraction(demo_day, code: str):
    return next(i for i in demo_day.result.infractions if i.code == code)


def test_an_infraction_is_counted_once_per_status_it_enters_never_per_re_emission(fresh, demo_day):
    # before: "D-21 confirmed 29/h" was 23 re-emissions of one infraction as its evidence grew
    import msgspec

    registry, metrics, clock = fresh
    first = msgspec.structs.replace(_infraction(demo_day, "D-22"), status="provisional")
    grown = [msgspec.structs.replace(first, evidence={**first.evidence, "version": n}) for n in range(23)]
    metrics.observe(Sends(findings=[first, *grown[:10]]))
    metrics.observe(Sends(findings=grown[10:]))
    assert value(registry, "fiscaliza_infractions_total", code="D-22", status="provisional") == 1
    metrics.observe(Sends(findings=[msgspec.structs.replace(first, status="exempt_art45")] * 3))
    assert value(registry, "fiscaliza_infractions_total", code="D-22", status="exempt_art45") == 1
    assert value(registry, "fiscaliza_infractions_total", code="D-22", status="provisional") == 1
    # another id is another infraction
    metrics.observe(Sends(findings=[msgspec.structs.replace(first, infraction_id="other")]))
    assert value(registry, "fiscaliza_infractions_total", code="D-22", status="provisional") == 2


def test_infraction_latency_is_observed_at_the_first_emission_only(fresh, demo_day):
    # before: every re-emission was timed again, so the p95 grew with the evidence (3,510-13,500 s)
    import msgspec

    registry, metrics, clock = fresh
    first = _infraction(demo_day, "D-22")
    detected = first.detected_at.timestamp()
    metrics.observe(Sends(findings=[first]), now=detected + 630)
    metrics.observe(Sends(findings=[msgspec.structs.replace(first, evidence={"grown": True})] * 5),
                    now=detected + 9000)
    assert value(registry, "fiscaliza_emission_latency_seconds_count", output="infractions") == 1
    assert value(registry, "fiscaliza_emission_latency_seconds_sum", output="infractions") == pytest.approx(630)
    # 630 s falls in (600, 660]: the p95 is read within a minute, not within 600-1,800 s
    assert value(registry, "fiscaliza_emission_latency_seconds_bucket", output="infractions", le="600.0") == 0
    assert value(registry, "fiscaliza_emission_latency_seconds_bucket", output="infractions", le="660.0") == 1


def test_latency_buckets_span_the_timing_table_from_1_s_to_2_h(fresh):
    from streams.metrics import LATENCY_BUCKETS

    registry, _, _ = fresh
    bounds = sorted(float(dict(labels)["le"]) for (name, labels) in samples(registry)
                    if name == "fiscaliza_emission_latency_seconds_bucket" and ("output", "trips") in labels)
    assert bounds[0] == 1 and bounds[-2] == 7200 and bounds[-1] == float("inf")
    assert list(LATENCY_BUCKETS) == sorted(LATENCY_BUCKETS)


def test_realized_and_scheduled_so_far_are_per_service_day_in_event_time(demo_day):
    # before: increase() of trips detected over the panel's range counted by the wall clock
    # of detection: a backfill at x120 showed line 101 at 846 %
    from zoneinfo import ZoneInfo

    from engine.messages import TripDetected
    from gtfs.schedule import expected_trips, scheduled_trips
    from trips.model import DetectedTrip

    tz = ZoneInfo("America/Sao_Paulo")
    event_now = dt.datetime(2026, 12, 2, 8, 0, tzinfo=tz).timestamp()
    registry = CollectorRegistry()
    wall = dt.datetime(2026, 12, 4, 15, 0, tzinfo=tz).timestamp()  # two days later: a backfill
    metrics = WorkerMetrics(registry, demo_day.context, 4, clock=lambda: wall)
    metrics.observe_watermarks(0, {"tachograph": event_now})
    yesterday = DetectedTrip("JN-2013", "101", 0, "s", event_now - 86400, event_now - 86400 + 1800, 0.97, "a", "b")
    today = [DetectedTrip(vehicle, "101", 0, "s", event_now - 3600, event_now - 1800, 0.97, "a", "b")
             for vehicle in ("JN-2013", "JN-2014")]
    metrics.observe(Sends(to_operators=[TripDetected("TRD", yesterday)] * 4
                          + [TripDetected("TRD", trip) for trip in today]))
    assert value(registry, "fiscaliza_trips_realized_so_far", operator="TRD", route="101", direction="0") == 2
    assert value(registry, "fiscaliza_trips_realized_so_far", operator="TRD", route="201", direction="0") == 0
    due = {}
    date = dt.date(2026, 12, 2)
    for trip in (*scheduled_trips(demo_day.context.feed, date), *expected_trips(demo_day.context.feed, date)):
        if trip.arrival_s <= 8 * 3600 - 600:  # arrived by the watermark
            key = (trip.route_id, str(trip.direction_id))
            due[key] = due.get(key, 0) + 1
    assert due[("101", "0")] and due[("201", "0")]  # the frequency-based line is due too
    for (route, direction), count in due.items():
        operator = demo_day.context.feed.routes[route].agency_id
        assert value(registry, "fiscaliza_trips_scheduled_so_far", operator=operator, route=route,
                     direction=direction) == count


def test_late_messages_kept_and_vehicle_days_judged_again_are_counted(fresh):
    # engine.late: the ops room sees how much came late and how often a day was judged again
    registry, metrics, _ = fresh
    assert value(registry, "fiscaliza_late_messages_kept_total") == 0
    assert value(registry, "fiscaliza_vehicle_days_rejudged_total") == 0
    metrics.observe(Sends(late_kept=120))
    metrics.observe(Sends(late_kept=30, rejudged=1))
    assert value(registry, "fiscaliza_late_messages_kept_total") == 150
    assert value(registry, "fiscaliza_vehicle_days_rejudged_total") == 1


def test_offsets_the_consumer_passed_over_are_counted_by_topic(fresh):
    # streams.ledger: read back, so nothing is lost, but the on-call engineer sees them
    registry, metrics, _ = fresh
    metrics.observe_passed_over([("tachograph", 600, 780), ("day-matched", 94, 95)])
    metrics.observe_passed_over([("tachograph", 10, 12)])
    assert value(registry, "fiscaliza_input_offsets_passed_over_total", topic="tachograph") == 182
    assert value(registry, "fiscaliza_input_offsets_passed_over_total", topic="day-matched") == 1


def test_a_line_whose_every_trip_ran_is_at_its_due_count(demo_day):
    # before: due counted at the newest event (10:00) and trips seen as the watermark (09:50)
    # passed their arrival: at 10:00 of the demo day, every trip run, the live-data test saw
    # 8 of 9 trips of line 101 and 14 of 15 of line 201
    from zoneinfo import ZoneInfo

    from engine.messages import TripDetected
    from trips.model import DetectedTrip

    tz = ZoneInfo("America/Sao_Paulo")
    newest = dt.datetime(2026, 12, 1, 9, 59, 59, tzinfo=tz).timestamp()
    watermark = newest - 600  # the slowest input's newest event less the allowed lateness
    registry = CollectorRegistry()
    metrics = WorkerMetrics(registry, demo_day.context, 4, clock=None)
    metrics.observe_watermarks(0, {"tachograph": newest, "catraca": newest + 30})
    seen = [t for t in demo_day.result.trips if t.arrived_at.timestamp() <= watermark]
    metrics.observe(Sends(to_operators=[TripDetected(
        demo_day.context.feed.routes[t.route_id].agency_id,
        DetectedTrip(t.vehicle_id, t.route_id, t.direction_id, t.shape_id, t.departed_at.timestamp(),
                     t.arrived_at.timestamp(), t.coverage, "a", "b")) for t in seen]))
    lines = {(t.route_id, str(t.direction_id)) for t in seen}
    assert len(lines) == 4 and len(seen) == 2 * 8 + 2 * 14  # 101: 8 a direction; 201: 14
    for route, direction in lines:
        operator = demo_day.context.feed.routes[route].agency_id
        labels = {"operator": operator, "route": route, "direction": direction}
        realized = value(registry, "fiscaliza_trips_realized_so_far", **labels)
        assert realized == sum((t.route_id, str(t.direction_id)) == (route, direction) for t in seen)
        assert value(registry, "fiscaliza_trips_scheduled_so_far", **labels) == realized


class _TripsTable:
    """The trips output as the ops sink keeps it (ops/sink.py): a record replaces the one
    with its key, a withdrawn one is deleted."""

    def __init__(self) -> None:
        self.rows: dict = {}

    def take(self, trips, withdrawn) -> None:
        from trips.model import trip_key

        for trip in trips:
            self.rows[trip_key(trip)] = trip
        for trip in withdrawn:
            self.rows.pop(trip_key(trip), None)


def _line_201_day_judged_again(context, workers):
    """Line 201 direction 0 on the sample network's 1 Dec: JN-2011's 11 trips and JN-2012's
    3, told live (one of them twice), the day closed; then JN-2011's day judged again from
    its late backlog: its last departure read 5 s later, its 6th trip no longer found.
    `workers(vehicle_id)`: the metrics of the worker owning that vehicle's partition (its
    vehicle stage's sends); `workers(None)`: the operator's (the trips output). The trips
    table the operator stage's output leaves."""
    from engine.messages import TripDetected, VehicleDayRevised
    from operator_run import Run, at, trip
    from rules.facts import SensorRuns

    run = Run(context, "TRD")
    table = _TripsTable()
    live = {"JN-2011": [trip("JN-2011", "201", 0, at(context, 6, 0) + k * 960, at(context, 6, 15) + k * 960)
                        for k in range(11)],
            "JN-2012": [trip("JN-2012", "201", 0, at(context, 6, 8) + k * 960, at(context, 6, 23) + k * 960)
                        for k in range(3)]}
    run.beat(at(context, 6, 0), reporting_from=at(context, 5, 55))
    for vehicle, trips in live.items():
        told = [TripDetected("TRD", t) for t in trips]
        told.append(told[0])  # told again: a batch sent again after a crash
        for message in told:
            run.stage.on_detected(message)
        workers(vehicle).observe(Sends(to_operators=told))
    for watermark, final in ((at(context, 9, 0, 30), False), (at(context, 9, 30), True)):
        out = run.stage.handle("TRD", _heartbeat(run, watermark, final), [])
        table.take(out.trips, out.trips_withdrawn)
        workers(None).observe(Sends(trips=out.trips, trips_withdrawn=out.trips_withdrawn))
    assert len(table.rows) == 14  # the day closed: every trip in the table
    again = [*live["JN-2011"][:5], *live["JN-2011"][6:10],
             trip("JN-2011", "201", 0, at(context, 8, 40, 5), at(context, 8, 55, 5))]
    start = dt.datetime.combine(dt.date(2026, 12, 1), dt.time(3, 0), context.feed.timezone).timestamp()
    revised = VehicleDayRevised("TRD", "JN-2011", start, start + 86400, again, [], [],
                                SensorRuns(tachograph=((at(context, 5, 55), at(context, 9, 30)),)), [])
    workers("JN-2011").observe(Sends(to_operators=[revised], rejudged=1))
    out = run.stage.handle("TRD", revised, [])
    assert out.trips and len(out.trips_withdrawn) == 2  # the last one under its old second, and the 6th
    table.take(out.trips, out.trips_withdrawn)
    workers(None).observe(Sends(trips=out.trips, trips_withdrawn=out.trips_withdrawn))
    return table


def _heartbeat(run, watermark: float, final: bool):
    from engine.messages import Heartbeat
    from rules.facts import SensorRuns

    minutes = list(range(int(run.first // 60), int(watermark // 60) + 1))
    seen = {v: SensorRuns(tachograph=((run.first, watermark),)) for v in run.vehicles}
    return Heartbeat(0, watermark, run.first, watermark + 600, {"TRD": minutes}, final, seen)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    from operator_run import sample_context

    return sample_context(tmp_path_factory.mktemp("metrics-sample"))


def test_a_day_judged_again_counts_the_trips_the_trips_table_has_by_the_latest_records(sample):
    # before: each trip told was counted, twice if told twice, and a vehicle-day judged
    # again was not followed: 16 where the table has 13 (a trip told twice, a trip the
    # re-judgment no longer finds)
    from operator_run import at

    registry = CollectorRegistry()
    metrics = WorkerMetrics(registry, sample, 4, clock=None)
    metrics.observe_watermarks(0, {"tachograph": at(sample, 10, 0)})
    table = _line_201_day_judged_again(sample, lambda vehicle: metrics)
    assert len(table.rows) == 13
    assert value(registry, "fiscaliza_trips_realized_so_far", operator="TRD", route="201", direction="0") \
        == sum((t.route_id, t.direction_id) == ("201", 0) for t in table.rows.values())


def test_workers_count_their_own_vehicles_trips_so_their_sum_is_the_trips_table(sample):
    # the dashboards sum realized over the workers: each counts the trips its vehicle stage
    # told (the vehicles of its partitions), and a day judged again reaches the worker that
    # owns the vehicle, not the one whose operator stage sends the trips output
    from kernel.partitioning import partition_of
    from operator_run import at

    partitions = 4
    owner = {partition_of("JN-2011", partitions): 0, partition_of("JN-2012", partitions): 1}
    assert len(owner) == 2  # the two vehicles on two workers
    registries = [CollectorRegistry(), CollectorRegistry()]
    metrics = [WorkerMetrics(r, sample, partitions, clock=None) for r in registries]
    for worker in metrics:
        worker.observe_watermarks(0, {"tachograph": at(sample, 10, 0)})
    operator_worker = owner[partition_of("JN-2012", partitions)]  # not the one that judged JN-2011 again

    def workers(vehicle):
        return metrics[operator_worker if vehicle is None else owner[partition_of(vehicle, partitions)]]

    table = _line_201_day_judged_again(sample, workers)
    counted = [value(r, "fiscaliza_trips_realized_so_far", operator="TRD", route="201", direction="0")
               for r in registries]
    assert sum(counted) == len(table.rows) == 13
    assert counted[owner[partition_of("JN-2011", partitions)]] == 10  # 11 told, 1 no longer found
