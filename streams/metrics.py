"""The worker's domain metrics for the operations room (#14), on the registry Faust's own
sensors use (`/metrics` of the worker's web port).

Every series is created at start with its labels bound (routes and directions from the
feed, operators from its agencies, codes from the catalogue, statuses, sources and
reasons), so a counter's first increment shows in `rate()` and a line with no bus
shows 0, not "no data". Infractions count distinct records: an `infraction_id` is
counted once as it enters each status, and its latency once, at its first emission;
the re-emissions that grow its evidence (or keep it on the change log) are not new
infractions. No label ever names a vehicle: a city of 13,000 buses would be
13,000 series per metric. What is per vehicle (in service, silent) is counted at scrape
time over the statuses this worker holds, for the partitions it owns.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily

from engine.messages import TripDetected, VehicleDayRevised
from engine.sends import Sends
from engine.status import VehicleStatus
from engine.triplog import TripLog
from engine.values import Context
from gtfs.schedule import expected_trips, gtfs_seconds_to_datetime, scheduled_trips
from rules.model import STATUSES, Infraction
from telemetry.validation import REASON_CODES, SOURCES

# The engine's own rejections (engine/vehicle.py, engine/operator.py), after decoding's.
ENGINE_REASONS = ("unknown_vehicle", "implausible", "future", "clock_offset", "duplicate", "conflicting_duplicate",
                  "late", "position_fault", "engine_error")
TRIP_STATUSES = ("matched", "unmatched")  # to a scheduled trip, or not
INPUTS = ("tachograph", "catraca")
# Departure against the schedule, s: D-13's tolerance is minutes, either way.
DEVIATION_BUCKETS = (-900, -600, -300, -180, -120, -60, 0, 60, 120, 180, 300, 600, 900, 1800)
# Fitted to DESIGN.md's Timing table: a vehicle-status within seconds of its ping; a
# legal record once the watermark (the allowed lateness, 600 s, behind the input) passes
# the end of its evidence, so around 10 min, finely around it; a backlog up to 2 h.
LATENCY_BUCKETS = (1, 2, 5, 10, 30, 60, 120, 300, 450, 540, 600, 660, 720, 900, 1200, 1800, 2700, 3600, 5400, 7200)
OUTPUTS = ("infractions", "trips", "vehicle-status")
SILENT_AFTER_S = 600.0  # the operations room's "not reporting": 10 min without a position
KEEP_INFRACTIONS_DAYS = 62  # an id's last status is kept this long: a D-22 settles at month close


@dataclass(frozen=True)
class _Seen:
    """The latest status of a vehicle, reduced to what the gauges count."""
    operator_id: str
    route_id: str
    direction: str
    in_service: bool
    at: float  # event time of its newest position
    catraca_silent: bool
    headway_ratio: float | None  # observed over scheduled headway of its running trip (None between trips)


class WorkerMetrics:
    def __init__(self, registry: CollectorRegistry, ctx: Context, partitions: int, *,
                 owns_vehicle: Callable[[str], bool] = lambda vehicle_id: True,
                 clock: Callable[[], float] | None = time.time, silent_after_s: float = SILENT_AFTER_S) -> None:
        """`clock`: the wall clock of a live worker; None for recorded or simulated input
        (backfill), where "now" is the newest event time seen. It times the latency and says
        whether it is service hours (the pipeline's alerts: telemetry stopped before the
        morning must still raise them); what is compared with the buses is counted at event
        time, so a worker catching up on yesterday's input compares it with yesterday's
        timetable."""
        self._owns_vehicle, self._silent_after_s = owns_vehicle, silent_after_s
        self._newest_event = 0.0
        self._newest_by_source: dict[str, float] = {}
        self._lateness_s = ctx.policy.stream.allowed_lateness_s
        self._clock = clock if clock is not None else (lambda: self._newest_event)
        operators = sorted(ctx.feed.agencies)
        lines = sorted({(r.route_id, str(d)) for r in ctx.feed.routes.values() for d in (0, 1)})
        self.watermark = Gauge("fiscaliza_partition_watermark_seconds",
                               "Newest event time per partition and input (Unix s): its age is how far behind "
                               "the telemetry is", ["partition", "source"], registry=registry)
        self.trips = Counter("fiscaliza_trips", "Realized trips, matched to a scheduled trip or not",
                             ["operator", "route", "direction", "status"], registry=registry)
        self.detected = Counter("fiscaliza_trips_detected",
                                "Trips seen arriving, live (the trips output waits for the day's final matching)",
                                ["operator", "route", "direction"], registry=registry)
        self.deviation = Histogram("fiscaliza_departure_deviation_seconds",
                                   "Departure of each realized trip against its scheduled departure",
                                   ["route"], buckets=DEVIATION_BUCKETS, registry=registry)
        self.infractions = Counter("fiscaliza_infractions",
                                   "Infractions (distinct infraction_id) entering each status, by code: a re-emission "
                                   "in the same status is not counted", ["code", "status"], registry=registry)
        self.rejected = Counter("fiscaliza_rejected", "Messages sent to the dead-letter topic, by input and reason",
                                ["source", "reason"], registry=registry)
        self.month_efficiency = Gauge("fiscaliza_month_efficiency_ratio",
                                      "Art. 45 so far this month: realized over programmed km of the closed days",
                                      ["operator"], registry=registry)
        self.month_days = Gauge("fiscaliza_month_days_closed",
                                "Service days of the month closed with telemetry (what the efficiency is over)",
                                ["operator"], registry=registry)
        self.latency = Histogram("fiscaliza_emission_latency_seconds",
                                 "Wall clock at emission minus the event time that made the output possible "
                                 "(an infraction at its first emission only)",
                                 ["output"], buckets=LATENCY_BUCKETS, registry=registry)
        # late data judged, not dropped (engine.late): how much comes late, how often a day is judged again
        self.late_kept = Counter("fiscaliza_late_messages_kept",
                                 "Messages beyond the allowed lateness kept for their vehicle-day's re-judgment",
                                 registry=registry)
        self.rejudged = Counter("fiscaliza_vehicle_days_rejudged",
                                "Vehicle-days judged again from their raw input after late messages came",
                                registry=registry)
        # the worker's own check on its Kafka consumer (streams.ledger): should stay at zero
        self.passed_over = Counter("fiscaliza_input_offsets_passed_over",
                                   "Input offsets the Kafka consumer passed over; the worker read back the records "
                                   "there (none where retention deleted them) and processed them in their place, or "
                                   "sought the consumer back to them at a partition's end",
                                   ["topic"], registry=registry)
        for partition in range(partitions):
            for source in INPUTS:
                self.watermark.labels(str(partition), source)
        operator_of_route = {r.route_id: r.agency_id for r in ctx.feed.routes.values()}
        self._operator_of_route = operator_of_route
        for route, direction in lines:
            for status in TRIP_STATUSES:
                self.trips.labels(operator_of_route.get(route, ""), route, direction, status)
            self.detected.labels(operator_of_route.get(route, ""), route, direction)
        for route in sorted({route for route, _ in lines}):
            self.deviation.labels(route)
        for code in sorted(ctx.pack.catalogue):
            for status in STATUSES:
                self.infractions.labels(code, status)
        for source in SOURCES:
            for reason in (*REASON_CODES, *ENGINE_REASONS):
                self.rejected.labels(source, reason)
        for output in OUTPUTS:
            self.latency.labels(output)
        for operator in operators:
            self.month_efficiency.labels(operator)
            self.month_days.labels(operator)
        self._operators, self._lines = operators, lines
        self._feed, self._fleet = ctx.feed, ctx.fleet
        self._timetables: dict[dt.date, list[tuple[float, float, tuple[str, str, str]]]] = {}
        self._seen: dict[str, _Seen] = {}
        self._infraction_status: dict[str, tuple[str, dt.date]] = {}  # id -> (status last counted, service date)
        self._newest_infraction_date: dt.date | None = None
        # service date -> trip (vehicle, departure to the second, as the trips output keys it)
        # -> its line and departure: a trip told twice is one trip, and a vehicle-day judged again replaces
        # what was told of it
        self._realized: dict[dt.date, dict[tuple[str, int], tuple[tuple[str, str, str], float]]] = {}
        registry.register(_FleetCollector(self))

    # --- what a batch sent --------------------------------------------------------------

    def observe(self, sends: Sends, now: float | None = None) -> None:
        now = self._clock() if now is None else now
        self.late_kept.inc(sends.late_kept)
        self.rejudged.inc(sends.rejudged)
        for rejection in sends.rejected:
            self.rejected.labels(rejection.source, rejection.reason).inc()
        for finding in sends.findings:
            if isinstance(finding, Infraction):
                self._count_infraction(finding, now)
        for trip in sends.trips:
            operator = self._operator_of_route.get(trip.route_id, "")
            status = "matched" if trip.trip_id is not None else "unmatched"
            self.trips.labels(operator, trip.route_id, str(trip.direction_id), status).inc()
            if trip.departure_deviation_s is not None:
                self.deviation.labels(trip.route_id).observe(trip.departure_deviation_s)
            self._latency("trips", now, trip.arrived_at)
        for message in sends.to_operators:
            if isinstance(message, TripDetected):
                trip = message.trip
                self.detected.labels(message.operator_id, trip.route_id, str(trip.direction_id)).inc()
                self._count_realized(message.operator_id, trip)
            elif isinstance(message, VehicleDayRevised):
                self._revise_realized(message)
        for month in sends.months:  # in order: the last closed day's figure stays
            self.month_efficiency.labels(month.operator_id).set(month.efficiency_pct / 100)
            self.month_days.labels(month.operator_id).set(month.days_closed)
        for status in sends.statuses:
            self._latency("vehicle-status", now, self._see(status))

    def _count_infraction(self, infraction: Infraction, now: float) -> None:
        """Once per id and status entered; the latency at the id's first emission."""
        before = self._infraction_status.get(infraction.infraction_id)
        if before is not None and before[0] == infraction.status:
            return
        self._infraction_status[infraction.infraction_id] = (infraction.status, infraction.service_date)
        self.infractions.labels(infraction.code, infraction.status).inc()
        if before is None:
            self._latency("infractions", now, infraction.detected_at)
        if self._newest_infraction_date is None or infraction.service_date > self._newest_infraction_date:
            # once a day: an id settles at its month's close at the latest, what is older can go
            self._newest_infraction_date = infraction.service_date
            oldest = infraction.service_date - dt.timedelta(days=KEEP_INFRACTIONS_DAYS)
            self._infraction_status = {i: kept for i, kept in self._infraction_status.items() if kept[1] >= oldest}

    def _count_realized(self, operator_id: str, trip) -> None:
        self._count_trip(trip.vehicle_id, operator_id, trip.route_id, trip.direction_id, trip.departed_at)

    def _count_trip(self, vehicle_id: str, operator_id: str, route_id: str, direction_id: int,
                    departed_at: float) -> None:
        """A trip seen arriving, on the service date of its departure (event time); once,
        however often it is told (a batch sent again after a crash tells it again)."""
        date = _service_date(departed_at, self._feed)
        self._realized.setdefault(date, {})[(vehicle_id, int(departed_at))] = \
            ((operator_id, route_id, str(direction_id)), departed_at)
        while len(self._realized) > 3:
            self._realized.pop(min(self._realized))

    def recount_realized(self, stored: Iterable[tuple[str, Iterable[TripLog]]]) -> None:
        """After a (re)assignment, the trips realized so far of the vehicles this worker now
        owns, from their stored state (vehicle, arrived trips of the days not matched yet:
        the trips its vehicle stage told, kept in the changelogged vehicles table): a
        restarted worker, or one given a partition, counts the day's trips told before it
        came, not from zero. What it counted of a vehicle it no longer owns is forgotten (its
        new owner counts it). A day already matched is no longer in the state: a vehicle
        that changed owner after its day closed is no longer counted in that day (today's
        trips are matched once the day is over)."""
        for trips in self._realized.values():
            for key in [key for key in trips if not self._owns_vehicle(key[0])]:
                del trips[key]
        for vehicle_id, logs in stored:
            vehicle = self._fleet.get(vehicle_id)
            if vehicle is None or not self._owns_vehicle(vehicle_id):
                continue
            for log in logs:
                self._count_trip(vehicle_id, vehicle.operator_id, log.route_id, log.direction_id, log.departed_at)

    def _revise_realized(self, message: VehicleDayRevised) -> None:
        """A vehicle-day judged again (engine.late): its trips replace those told of the
        vehicle in [start, end), as the operator stage takes them, so a trip it no longer
        finds (the trips output's `withdrawn`) is no longer counted, and one whose departure
        was read again counts once, at its new departure. Told by the vehicle stage, as the
        trips it replaces: the worker that owns the vehicle counts both."""
        for trips in self._realized.values():
            for key in [key for key, (_, departed_at) in trips.items() if key[0] == message.vehicle_id
                        and message.start <= departed_at < message.end]:
                del trips[key]
        for trip in message.trips:
            self._count_realized(message.operator_id, trip)

    def observe_passed_over(self, passed: list[tuple[str, int, int]]) -> None:
        for topic, start, end in passed:
            self.passed_over.labels(topic).inc(end - start)

    def observe_watermarks(self, partition: int, max_events: dict[str, float]) -> None:
        for source, event_time in max_events.items():
            self.watermark.labels(str(partition), source).set(event_time)
            self._newest_event = max(self._newest_event, event_time)
            self._newest_by_source[source] = max(self._newest_by_source.get(source, 0.0), event_time)

    def _latency(self, output: str, now: float, event_time: dt.datetime | float | None) -> None:
        if event_time is None:
            return
        if isinstance(event_time, dt.datetime):
            event_time = event_time.timestamp()
        self.latency.labels(output).observe(max(0.0, now - event_time))

    def _see(self, status: VehicleStatus) -> float:
        """Keep the vehicle's latest status for the gauges; its event time."""
        at = dt.datetime.fromisoformat(status.ts).timestamp()
        ratio = (status.headway_s / status.scheduled_headway_s
                 if status.headway_s is not None and status.scheduled_headway_s and status.route_id is not None
                 else None)
        self._seen[status.vehicle_id] = _Seen(
            status.operator_id, status.route_id or "", "" if status.direction_id is None else str(status.direction_id),
            status.in_service, at, status.catraca_silent_since is not None, ratio)
        return at

    # --- counted at scrape time -----------------------------------------------------------

    def fleet_counts(self) -> FleetCounts:
        """Per operator and line, over the vehicles of the partitions this worker owns:
        in service; reporting and silent per input. Scheduled now, from the timetable (and
        the headway windows' expected departures). Realized and scheduled so far on the
        service date in event time, both up to the watermark: a trip is seen arriving once
        the watermark passes its arrival, so what is due is what the timetable has arrived
        by then (due at the newest event, 10 min ahead, the panel showed 8 of 9 trips of a
        line whose every trip had run). Per line, the tightest and the widest headway ratio of
        its reporting buses on a trip: facts of the buses' latest statuses, whichever order
        the partitions brought them in (the latest ratio of any bus was that order's)."""
        # at event time, never the wall clock: the statuses (the live view) are at their
        # pings' time, so a worker catching up on yesterday's input compared yesterday's
        # buses with today's timetable (LinhaSemOnibus for a line that ran)
        now = self._newest_event
        until = self._watermark(now)
        line_keys = [(self._operator_of_route.get(route, ""), route, direction) for route, direction in self._lines]
        realized = dict.fromkeys(line_keys, 0)
        if until > 0:
            for line, _ in self._realized.get(_service_date(until, self._feed), {}).values():
                realized[line] = realized.get(line, 0) + 1
        counts = FleetCounts(in_service=dict.fromkeys(line_keys, 0), scheduled=self._scheduled_now(now, line_keys),
                             scheduled_by_the_clock=sum(self._scheduled_now(self._clock(), line_keys).values()),
                             scheduled_so_far=self._scheduled_so_far(until, line_keys), realized_so_far=realized,
                             reporting={(o, source): 0 for o in self._operators for source in INPUTS},
                             silent={(o, source): 0 for o in self._operators for source in INPUTS},
                             tightest_headway={}, widest_headway={})
        # silent against the newest position seen, not the clock: statuses come out once
        # the input is in order, up to the allowed lateness behind it (the pipeline as a
        # whole stopping is the watermark's alert)
        newest = max((seen.at for seen in self._seen.values()), default=now)
        for vehicle_id, seen in self._seen.items():
            if not self._owns_vehicle(vehicle_id):
                continue
            operator = seen.operator_id
            if seen.in_service:
                key = (operator, seen.route_id, seen.direction)
                counts.in_service[key] = counts.in_service.get(key, 0) + 1
            tachograph = "silent" if newest - seen.at > self._silent_after_s else "reporting"
            if seen.headway_ratio is not None and tachograph == "reporting":
                line = (seen.route_id, seen.direction)
                counts.tightest_headway[line] = min(counts.tightest_headway.get(line, seen.headway_ratio),
                                                    seen.headway_ratio)
                counts.widest_headway[line] = max(counts.widest_headway.get(line, seen.headway_ratio),
                                                  seen.headway_ratio)
            catraca = "silent" if seen.catraca_silent else "reporting"
            for source, state in (("tachograph", tachograph), ("catraca", catraca)):
                bucket = getattr(counts, state)
                bucket[(operator, source)] = bucket.get((operator, source), 0) + 1
        return counts

    def _scheduled_now(self, now: float, line_keys) -> dict[tuple[str, str, str], int]:
        """Scheduled trips running at `now`, the newest event time (today's and
        yesterday's service dates: trips run past midnight), per line: when the live view
        is, which does not wait for the watermark (DESIGN.md, Timing)."""
        scheduled = dict.fromkeys(line_keys, 0)
        if now <= 0:
            return scheduled
        today = dt.datetime.fromtimestamp(now, self._feed.timezone).date()
        for date in (today - dt.timedelta(days=1), today):
            for departure, arrival, key in self._timetable(date):
                if departure <= now < arrival:
                    scheduled[key] = scheduled.get(key, 0) + 1
        return scheduled

    def _watermark(self, now: float) -> float:
        """The engine's watermark over this worker's partitions: the slowest input's newest
        event less the allowed lateness (0 before any event)."""
        newest = min(self._newest_by_source.values()) if self._newest_by_source else now
        return newest - self._lateness_s if newest > 0 else 0.0

    def _scheduled_so_far(self, until: float, line_keys) -> dict[tuple[str, str, str], int]:
        """Trips of the service date of `until` scheduled to have arrived by then, per line."""
        so_far = dict.fromkeys(line_keys, 0)
        if until <= 0:
            return so_far
        for _, arrival, key in self._timetable(dt.datetime.fromtimestamp(until, self._feed.timezone).date()):
            if arrival <= until:
                so_far[key] = so_far.get(key, 0) + 1
        return so_far

    def _timetable(self, date: dt.date) -> list[tuple[float, float, tuple[str, str, str]]]:
        if date not in self._timetables:
            if len(self._timetables) > 3:  # yesterday and today are what is asked
                self._timetables.pop(min(self._timetables))
            tz = self._feed.timezone
            self._timetables[date] = [
                (gtfs_seconds_to_datetime(date, trip.departure_s, tz).timestamp(),
                 gtfs_seconds_to_datetime(date, trip.arrival_s, tz).timestamp(),
                 (self._operator_of_route.get(trip.route_id, ""), trip.route_id, str(trip.direction_id)))
                for trip in (*scheduled_trips(self._feed, date), *expected_trips(self._feed, date))]
        return self._timetables[date]


@dataclass
class FleetCounts:
    in_service: dict[tuple[str, str, str], int]  # (operator, route, direction) -> vehicles
    scheduled: dict[tuple[str, str, str], int]  # (operator, route, direction) -> trips running at the newest event
    scheduled_by_the_clock: int  # trips the timetable runs at the worker's clock: whether it is service hours
    scheduled_so_far: dict[tuple[str, str, str], int]  # -> today's trips due to have arrived by the watermark
    realized_so_far: dict[tuple[str, str, str], int]  # -> today's trips seen arriving (by their departure's date)
    reporting: dict[tuple[str, str], int]  # (operator, input) -> vehicles
    silent: dict[tuple[str, str], int]
    # (route, direction) -> the smallest and the largest observed over scheduled headway of
    # the line's reporting buses on a trip: whether any pair bunches, whether a gap opened
    tightest_headway: dict[tuple[str, str], float]
    widest_headway: dict[tuple[str, str], float]


def _service_date(epoch: float, feed) -> dt.date:
    """The date in the feed's timezone: what "today" is for the series counted per day."""
    return dt.datetime.fromtimestamp(epoch, feed.timezone).date()


class _FleetCollector:
    def __init__(self, metrics: WorkerMetrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterable[GaugeMetricFamily]:
        counts = self._metrics.fleet_counts()
        families = []
        for name, help_text, by_line in (
                ("fiscaliza_vehicles_in_service", "Vehicles running a trip (or just arrived)", counts.in_service),
                ("fiscaliza_trips_scheduled_now", "Trips the timetable has running at the newest event (event "
                 "time, as the vehicles in service)", counts.scheduled),
                ("fiscaliza_trips_scheduled_so_far", "Trips of today's service date due to have arrived by the "
                 "watermark (event time)", counts.scheduled_so_far),
                ("fiscaliza_trips_realized_so_far", "Trips of today's service date seen arriving by the watermark, "
                 "by the date of their departure (event time)", counts.realized_so_far)):
            family = GaugeMetricFamily(name, help_text, labels=["operator", "route", "direction"])
            for labels, count in sorted(by_line.items()):
                family.add_metric(list(labels), count)
            families.append(family)
        families.append(GaugeMetricFamily(
            "fiscaliza_trips_scheduled_by_the_clock", "Trips the timetable has running at the worker's clock (the "
            "newest event in a backfill): service hours for the pipeline's alerts, even with no telemetry",
            value=counts.scheduled_by_the_clock))
        headway = GaugeMetricFamily(
            "fiscaliza_headway_ratio", "Observed over scheduled headway of the line's reporting buses on a trip: the "
            "tightest (bunching) and the widest (gapping) of this worker's buses; the policy's [headway] bounds say "
            "bunched and gapped", labels=["route", "direction", "bound"])
        for bound, by_line in (("tightest", counts.tightest_headway), ("widest", counts.widest_headway)):
            for (route, direction), ratio in sorted(by_line.items()):
                headway.add_metric([route, direction, bound], ratio)
        families.append(headway)
        for name, help_text, by_input in (
                ("fiscaliza_vehicles_silent", "Vehicles whose input stopped: no position for 10 min, or a catraca "
                 "past D-19's limit", counts.silent),
                ("fiscaliza_vehicles_reporting", "Vehicles whose input is flowing", counts.reporting)):
            family = GaugeMetricFamily(name, help_text, labels=["operator", "input"])
            for labels, count in sorted(by_input.items()):
                family.add_metric(list(labels), count)
            families.append(family)
        return families

    def describe(self) -> Iterable[GaugeMetricFamily]:
        return []
