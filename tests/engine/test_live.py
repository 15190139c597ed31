"""The live view at each ping's arrival (engine.live; DESIGN.md, Timing: "The live view
does not wait for the watermark"), on the sample João Neiva network: a bus of line 101
leaves terminal 9001 and drives along its shape, one ping per engine call as a live
worker's takes bring them.

What the live view says of a ping on a whole simulated day is compared with what the
release said of it in tests/engine/test_status.py."""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest

from engine.core import Engine
from engine.messages import VehicleAhead
from engine.values import Message
from engine.vehicle import PartitionState, VehicleStage
from gtfs.projection import Projector
from telemetry import decode

TZ = dt.timezone(dt.timedelta(hours=-3))
START = dt.datetime(2026, 12, 1, 6, 58, tzinfo=TZ)  # line 101's 07:00 trip from 9001 (direction 0)
STEP_S, STEP_M = 10, 100  # 36 km/h


@pytest.fixture
def stage(context):
    states = {}
    return VehicleStage(context, PartitionState(0), states.get, lambda s: states.__setitem__(s.vehicle_id, s),
                        frozenset({"tachograph"}))


def ping(context, at: dt.datetime, metres: float, north_m: float = 0.0, seq: int | None = None,
         vehicle: str = "JN-1012") -> Message:
    """`vehicle` at `metres` along line 101's outbound shape (thrown `north_m` north)."""
    line = context.geofences.itineraries["101:0:101-0"].line
    point = line.interpolate(max(metres, 0.0))
    lon, lat = Projector(context.feed.epsg).to_lonlat([point.x], [point.y + north_m])
    raw = (f'{{"vehicle_id":"{vehicle}","ts":"{at.isoformat()}","lat":{float(lat[0])!r},"lon":{float(lon[0])!r},'
           f'"speed_kmh":36.0{"" if seq is None else f",{chr(34)}seq{chr(34)}:{seq}"}}}')
    location = f"t/{vehicle}/{at.timestamp():.0f}"
    return Message(decode("tachograph", raw.encode(), location), location, raw)


def drive(stage, context, steps: int, since: int = 0):
    """Two minutes standing in the terminal, then along the shape: one ping per call
    (each call's statuses, as the call returns them)."""
    for k in range(since, since + steps):
        at = START + dt.timedelta(seconds=STEP_S * k)
        yield at, stage.ingest([ping(context, at, max(0, k - 12) * STEP_M)]).statuses


def test_a_pings_status_leaves_in_the_call_that_admits_it_before_the_watermark_reaches_it(stage, context):
    for at, statuses in drive(stage, context, 40):
        [status] = statuses
        assert status.ts == at.isoformat()  # stamped with the ping's own time
        assert stage.watermark == at.timestamp() - 600  # the legal records wait 600 s for it
    state = stage._load("JN-1012")
    assert state.pending[-1].t == at.timestamp()  # not released: the legal path has not seen it
    assert state.track is None
    assert status.in_service and (status.route_id, status.direction_id) == ("101", 0)
    # the ping 100 m along is the last in the 100 m zone: the exit, 10 s after 07:00
    assert status.departed_at == (START + dt.timedelta(seconds=STEP_S * 13)).isoformat()
    assert status.trip_id == "101-DU-0-0700" and status.schedule_deviation_s == 10.0
    assert status.progress == pytest.approx(27 * STEP_M / 5878, abs=0.002)
    assert status.off_route_m is None


def test_a_ping_older_than_the_view_does_not_move_it_back(stage, context):
    list(drive(stage, context, 30))
    before = stage._load("JN-1012").live
    late = START + dt.timedelta(seconds=STEP_S * 25 + 5)  # between two pings already seen
    assert stage.ingest([ping(context, late, 13 * STEP_M)]).statuses == []
    state = stage._load("JN-1012")
    assert state.live == before
    assert late.timestamp() in [f.t for f in state.pending]  # the legal path still takes it
    # the same instant as the newest ping (another seq) does not move it either
    newest = START + dt.timedelta(seconds=STEP_S * 29)
    assert stage.ingest([ping(context, newest, 0, seq=2)]).statuses == []
    assert stage._load("JN-1012").live == before


def test_a_position_the_bus_could_not_have_driven_to_does_not_move_the_map(stage, context):
    list(drive(stage, context, 30))
    before = stage._load("JN-1012").live
    jump = START + dt.timedelta(seconds=STEP_S * 30)
    # 5 km north 10 s later: still near the network, but out of a bus's reach
    thrown = stage.ingest([ping(context, jump, 18 * STEP_M, north_m=5_000)])
    # no status; and no dead letter now: the position fault is told at release, as before
    assert thrown.statuses == [] and thrown.rejected == []
    after = stage._load("JN-1012").live
    assert (after.position, after.legs, after.running) == (before.position, before.legs, before.running)
    [status] = stage.ingest([ping(context, jump + dt.timedelta(seconds=STEP_S), 19 * STEP_M)]).statuses
    assert status.progress == pytest.approx(19 * STEP_M / 5878, abs=0.002)


def test_the_bus_ahead_is_given_again_with_the_live_view(stage, context):
    list(drive(stage, context, 30))
    leg = next(leg for leg in stage._load("JN-1012").live.legs if leg.key == "101:0:101-0")
    ahead = VehicleAhead("JN-1012", leg.departed, "JN-1011", leg.departed - 1200, 1800)
    [status] = stage.on_ahead(ahead)
    assert (status.headway_s, status.scheduled_headway_s, status.vehicle_ahead) == (1200.0, 1800, "JN-1011")
    assert status.ts == (START + dt.timedelta(seconds=STEP_S * 29)).isoformat()
    # another departure's: kept, but the view does not run that trip
    assert stage.on_ahead(VehicleAhead("JN-1012", leg.departed + 1, None, None, 1800)) == []


def test_the_bus_ahead_joins_the_status_before_the_watermark_reaches_the_departure(context):
    # both stages (the replay's engine), one call per 10 s of the fleet, as a live worker's
    # takes bring them: JN-1011 runs line 101's 06:30 from 9001, JN-1012 the 07:00, 30 min
    # behind it where the timetable has 30 min (before, the bus ahead came back from the
    # operator stage only once the release told it the departure: 600 s later)
    engine = Engine(context)
    leader = START - dt.timedelta(minutes=30)
    shape_m = context.geofences.itineraries["101:0:101-0"].length_m
    seen = []
    for k in range(16 * 6):  # 06:28-06:44
        at = leader + dt.timedelta(seconds=STEP_S * k)
        engine.ingest([ping(context, at, min(max(0, k - 12) * STEP_M, shape_m), vehicle="JN-1011")])
    for k in range(8 * 6):  # 06:58-07:06, JN-1011 standing at the destination all along
        at = START + dt.timedelta(seconds=STEP_S * k)
        statuses = engine.ingest([ping(context, at - dt.timedelta(seconds=5), shape_m, vehicle="JN-1011"),
                                  ping(context, at, max(0, k - 12) * STEP_M)]).statuses
        seen += [(engine._vehicle_stage.watermark, s) for s in statuses if s.vehicle_id == "JN-1012"]
    running = [(watermark, s) for watermark, s in seen if s.departed_at is not None]
    departed = dt.datetime.fromisoformat(running[0][1].departed_at)
    assert departed == START + dt.timedelta(seconds=STEP_S * 13)  # 07:00:10, the exit
    # the call that saw it leave (the ping 10 s after the exit) shows the bus ahead: the
    # view's status, then again with the operator stage's answer, at the same ping; the
    # watermark (600 s behind the ping) reaches the departure 590 s later
    first = [s for _, s in running if s.ts == running[0][1].ts]
    assert first[0].ts == (departed + dt.timedelta(seconds=STEP_S)).isoformat()
    assert first[0].headway_s is None and first[-1].headway_s is not None
    assert departed.timestamp() - running[0][0] == 590
    for _, s in running[len(first) - 1:]:
        assert (s.vehicle_ahead, s.headway_s, s.scheduled_headway_s, s.headway_state) == \
            ("JN-1011", 1800.0, 1800, "regular"), s
    # a late ping (in the terminal, before the departure) moves nothing back: no status
    # for it, and the next ping's still has the bus ahead and the same departure
    view = engine._vehicle_stage._load("JN-1012").live
    late = engine.ingest([ping(context, START + dt.timedelta(seconds=STEP_S * 5 + 5), 0)])
    assert [s for s in late.statuses if s.vehicle_id == "JN-1012"] == []
    assert engine._vehicle_stage._load("JN-1012").live == view
    at = START + dt.timedelta(seconds=STEP_S * 48)
    [after] = [s for s in engine.ingest([ping(context, at, 36 * STEP_M)]).statuses if s.vehicle_id == "JN-1012"]
    assert (after.departed_at, after.vehicle_ahead, after.headway_s) == (departed.isoformat(), "JN-1011", 1800.0)


def test_the_live_view_stays_small_along_a_trip(stage, context):
    list(drive(stage, context, 60))
    size = len(stage._load("JN-1012").live.__struct_fields__)
    live = stage._load("JN-1012").live
    assert size and len(live.legs) <= 2 and len(live.screen.taken) <= context.policy.trips.max_noise_pings + 1
    list(drive(stage, context, 60, since=60))
    assert len(stage._load("JN-1012").live.legs) <= 2  # no fix history: one leg per itinerary near it


def test_a_failure_of_the_live_view_loses_its_status_never_the_legal_path(stage, context, monkeypatch):
    list(drive(stage, context, 5))

    def broken(*args):
        raise RuntimeError("a geometry bug")

    monkeypatch.setattr("engine.liveviews.measure", broken)
    at = START + dt.timedelta(seconds=STEP_S * 5)
    out = stage.ingest([ping(context, at, 0)])
    assert out.statuses == [] and out.rejected == []  # the ping is admitted all the same
    assert stage._load("JN-1012").pending[-1].t == at.timestamp()


# --- a catraca reading in the live view (#28): the catraca topic behind the tachograph's ---

@pytest.fixture
def both(context):
    """A stage whose watermark waits for the catraca too, as a worker's does."""
    states = {}
    return VehicleStage(context, PartitionState(0), states.get, lambda s: states.__setitem__(s.vehicle_id, s),
                        frozenset({"tachograph", "catraca"}))


def reading(at: dt.datetime, counter: int, vehicle: str = "JN-1012") -> Message:
    raw = f'{{"vehicle_id":"{vehicle}","ts":"{at.isoformat()}","counter":{counter},"seal_intact":true,"status":"ok"}}'
    location = f"c/{vehicle}/{at.timestamp():.0f}"
    return Message(decode("catraca", raw.encode(), location), location, raw)


def minute(m: float) -> dt.datetime:
    return START + dt.timedelta(minutes=m)


def lagging(stage, context) -> list:
    """The catraca 15 min behind: its readings of 06:40-06:45 come with the first ping
    (06:58), then none while the bus drives 40 pings (to 07:04:30): every status shows the
    catraca silent since 06:45. The statuses of the drive."""
    first = stage.ingest([reading(minute(-18 + k), 100 + k) for k in range(6)] + [ping(context, START, 0)])
    return first.statuses + [s for _, statuses in drive(stage, context, 39, since=1) for s in statuses]


def test_a_lagging_catraca_reading_shows_the_catraca_heard_without_a_new_ping(both, context):
    drove = lagging(both, context)
    last = drove[-1]
    assert last.ts == (START + dt.timedelta(seconds=STEP_S * 39)).isoformat()
    assert last.catraca_silent_since == minute(-13).isoformat()  # 06:45, 19.5 min before: "catraca muda"
    # 06:50 comes, no ping with it: still silent (14.5 min), since 06:50 now
    [since] = both.ingest([reading(minute(-8), 106)]).statuses
    assert since.catraca_silent_since == minute(-8).isoformat()
    # 06:58 comes: heard 6.5 min before the position shown, not silent any more
    [heard] = both.ingest([reading(minute(0), 110)]).statuses
    assert heard.catraca_silent_since is None
    # the same status but for the catraca: a reading moves no position, stamped with the last ping's time
    assert msgspec.structs.replace(heard, catraca_silent_since=last.catraca_silent_since) == last


def test_a_catraca_reading_that_changes_nothing_shown_sends_no_status(both, context):
    lagging(both, context)
    both.ingest([reading(minute(0), 110)])  # heard: not silent
    assert both.ingest([reading(minute(1), 111)]).statuses == []  # heard again: the same status
    # no position yet: no status to give again
    assert both.ingest([reading(minute(1), 5, "JN-1011")]).statuses == []
    # a ping in the same call: its status reads the call's readings, one status, not two
    at = START + dt.timedelta(seconds=STEP_S * 40)
    [status] = both.ingest([reading(minute(2), 112), ping(context, at, 28 * STEP_M)]).statuses
    assert status.ts == at.isoformat() and status.catraca_silent_since is None


def test_a_catraca_reading_older_than_the_views_does_not_move_it_back(both, context):
    lagging(both, context)
    both.ingest([reading(minute(-8), 106)])
    [heard] = both.ingest([reading(minute(0), 110)]).statuses
    view = both._load("JN-1012").live
    # 06:55 comes after 06:58: admitted for the legal path, but the view heard newer
    out = both.ingest([reading(minute(-3), 108)])
    assert out.statuses == [] and out.rejected == []
    state = both._load("JN-1012")
    assert state.live == view and state.live.catraca_at == minute(0).timestamp()
    assert minute(-3).timestamp() in [r.epoch for r in state.pending_catraca]
    # and the next ping's status still shows the catraca heard at 06:58
    at = START + dt.timedelta(seconds=STEP_S * 40)
    [status] = both.ingest([ping(context, at, 28 * STEP_M)]).statuses
    assert heard.catraca_silent_since is None
    assert status.catraca_silent_since is None  # 7.7 min after 06:58 (after 06:55 it would be 10.7: silent)


def test_an_instant_is_written_as_datetime_writes_it_across_offset_changes():
    """`iso` writes from its minute's text where the offset holds the whole minute: around
    São Paulo's last DST changes (2018-11-04, 2019-02-17), its 1914 change from local mean
    time (-03:06:28, an offset with seconds), in UTC and a fixed offset, fractions of a
    second rounded, it writes what `datetime.isoformat` writes."""
    import zoneinfo

    import numpy as np

    from engine.live import iso

    sao_paulo = zoneinfo.ZoneInfo("America/Sao_Paulo")
    around = [dt.datetime(2018, 11, 4, 3, 0, tzinfo=dt.timezone.utc), dt.datetime(2019, 2, 17, 2, 0, tzinfo=dt.timezone.utc),
              dt.datetime(1914, 1, 1, 3, 6, 28, tzinfo=dt.timezone.utc), dt.datetime(2026, 12, 1, 9, tzinfo=dt.timezone.utc)]
    rng = np.random.default_rng(31)
    epochs = [a.timestamp() + s for a in around for s in [*range(-125, 125), *rng.uniform(-7200, 7200, 200)]]
    for tz in (sao_paulo, dt.timezone.utc, TZ):
        for epoch in epochs:
            assert iso(epoch, tz) == dt.datetime.fromtimestamp(round(epoch), tz).isoformat()
    assert {iso(e, sao_paulo)[-6:] for e in epochs} >= {"-02:00", "-03:00"}  # both sides of a change seen
    assert any(iso(e, sao_paulo).endswith("-03:06:28") for e in epochs)
    assert iso(None, TZ) is None
