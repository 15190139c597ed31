"""Who drives what: the runs of a service date assigned to the fleet's vehicles."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

from gtfs.model import Feed, ScheduledStop
from gtfs.schedule import frequency_windows, scheduled_trips, service_day_start
from kernel.errors import FiscalizaError
from kernel.fleet import Vehicle


class PlanError(FiscalizaError, ValueError):
    pass


@dataclass(frozen=True)
class Run:
    """One trip to drive: stop times as epochs, on a shape."""

    trip_id: str
    route_id: str
    direction_id: int
    shape_id: str
    block_id: str | None
    service_date: dt.date
    stops: tuple[ScheduledStop, ...]  # times shifted to epoch seconds
    headway_based: bool
    # Driven out of service, by other streets, to be at the far terminal in time
    # (a departure that is not run but whose vehicle is still needed there).
    deadhead: bool = False
    # Not run and not driven either: the vehicle stands powered on where it is (its one
    # stop) over the run's times, reporting (a bus held at a terminal, an interrupted line).
    idle: bool = False

    @property
    def departure(self) -> float:
        return self.stops[0].departure_s

    @property
    def arrival(self) -> float:
        return self.stops[-1].arrival_s

    @property
    def origin(self) -> str:
        return self.stops[0].stop_id

    @property
    def destination(self) -> str:
        return self.stops[-1].stop_id

    def shifted(self, seconds: float, from_index: int = 0) -> "Run":
        """Stops from `from_index` on happen `seconds` later (the departure from
        stop `from_index` is delayed: the vehicle waits there)."""
        stops = tuple(
            s if i < from_index else replace(
                s,
                arrival_s=s.arrival_s + (seconds if i > from_index else 0),
                departure_s=s.departure_s + seconds,
            )
            for i, s in enumerate(self.stops)
        )
        return replace(self, stops=stops)

    def parked_at(self, stop: ScheduledStop) -> "Run":
        """This run not run: the vehicle stands at `stop` from its departure to its arrival."""
        at = (replace(stop, arrival_s=self.departure, departure_s=self.departure),
              replace(stop, arrival_s=self.arrival, departure_s=self.arrival))
        return replace(self, stops=at, deadhead=True, idle=True)


@dataclass(frozen=True)
class Duty:
    vehicle_id: str
    runs: tuple[Run, ...]


MIN_LAYOVER_S = 120


def plan_day(feed: Feed, date: dt.date, fleet: dict[str, Vehicle], skip_departures=frozenset()) -> list[Duty]:
    """Runs of `date` as vehicle duties. `skip_departures` holds (trip_id, epoch)
    pairs of headway departures not run in service (frequency shortfall): the
    vehicle deadheads to the other terminal instead."""
    start = service_day_start(date, feed.timezone).timestamp()
    runs: list[Run] = []
    for trip in scheduled_trips(feed, date):
        runs.append(_run(trip.trip_id, feed, date, trip.stops, start, trip.block_id, headway=False))
    for window in frequency_windows(feed, date):
        template = feed.trips[window.trip_id]
        for departure in range(window.start_s, window.end_s, window.headway_s):
            shift = departure - template.departure_s
            stops = tuple(replace(s, arrival_s=s.arrival_s + shift, departure_s=s.departure_s + shift)
                          for s in template.stops)
            run = _run(window.trip_id, feed, date, stops, start, None, headway=True)
            if (window.trip_id, start + departure) in skip_departures:
                run = replace(run, deadhead=True)
            runs.append(run)
    return assign(runs, feed, fleet)


def _run(trip_id, feed, date, stops, start, block_id, *, headway) -> Run:
    template = feed.trips[trip_id]
    shifted = tuple(replace(s, arrival_s=start + s.arrival_s, departure_s=start + s.departure_s) for s in stops)
    return Run(trip_id, template.route_id, template.direction_id, template.shape_id, block_id, date,
               shifted, headway)


def assign(runs: list[Run], feed: Feed, fleet: dict[str, Vehicle]) -> list[Duty]:
    """Blocks go whole to one vehicle each; other runs are chained at terminals."""
    free_by_operator: dict[str, list[str]] = {}
    for vehicle in sorted(fleet.values(), key=lambda v: v.vehicle_id):
        free_by_operator.setdefault(vehicle.operator_id, []).append(vehicle.vehicle_id)
    duties: dict[str, list[Run]] = {}

    def take(operator: str) -> str:
        pool = free_by_operator.get(operator, [])
        if not pool:
            raise PlanError(f"operator {operator} has too few vehicles in the fleet for this schedule")
        return pool.pop(0)

    blocks: dict[str, list[Run]] = {}
    loose: list[Run] = []
    for run in runs:
        (blocks.setdefault(run.block_id, []) if run.block_id else loose).append(run)
    for block_id, block_runs in sorted(blocks.items(), key=lambda kv: min(r.departure for r in kv[1])):
        block_runs.sort(key=lambda r: r.departure)
        duties[take(feed.operator_of(block_runs[0].route_id))] = block_runs
    # Greedy chaining: a run goes to the vehicle standing longest at its origin.
    loose.sort(key=lambda r: (r.departure, r.route_id, r.direction_id))
    for run in loose:
        operator = feed.operator_of(run.route_id)
        waiting = [
            (rs[-1].arrival, vid) for vid, rs in duties.items()
            if rs[-1].destination == run.origin and rs[-1].arrival + MIN_LAYOVER_S <= run.departure
            and not rs[-1].block_id and fleet[vid].operator_id == operator
        ]
        vehicle = min(waiting)[1] if waiting else take(operator)
        duties.setdefault(vehicle, []).append(run)
    return [Duty(vid, tuple(rs)) for vid, rs in sorted(duties.items())]
