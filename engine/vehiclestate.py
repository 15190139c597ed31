"""A vehicle's state in the vehicle stage (engine.vehicle): what its open trip and open
episodes need plus the day's compact facts, never the day's pings. The workers store it
in a Faust table (engine.stored); its fields are its stored format.
"""

from __future__ import annotations

import msgspec

from engine.clocks import ClockFault
from engine.daylog import DayLog
from engine.late import LateDay
from engine.live import LiveView
from engine.messages import VehicleAhead
from engine.triplog import TripLog
from rules.model import Infraction
from rules.versions import CatracaVersion, OtherVersion
from telemetry import CatracaReading
from trips.model import Fix, Track
from trips.position import PositionScreen


class Held(msgspec.Struct, frozen=True):
    """A message held by the clock-jump guard, as it arrived."""

    raw: str
    location: str | None
    offset: int | None


class VehicleState(msgspec.Struct):
    vehicle_id: str
    pending: list[Fix] = msgspec.field(default_factory=list)  # not yet past the watermark
    pending_catraca: list[CatracaReading] = msgspec.field(default_factory=list)
    track: Track | None = None  # the open trip's fixes (trip detection)
    days: list[DayLog] = msgspec.field(default_factory=list)  # operating days not judged yet
    trips: list[TripLog] = msgspec.field(default_factory=list)  # arrived trips of days not matched yet
    last_counter: int | None = None  # the newest plausible catraca counter released
    last_reading: tuple[float, int] | None = None  # time and counter of the newest reading released
    # dedup keys -> event time, within the lateness of the newest event (older ones are late)
    seen: dict[str, float] = msgspec.field(default_factory=dict)
    # `seen` is in event-time order (engine.admission.forget_old_keys then reads only its
    # front); False after a key came out of order, and in a state stored before it was kept
    seen_in_order: bool = False
    offsets: dict[str, int] = msgspec.field(default_factory=dict)  # input topic -> newest offset admitted
    # input -> event time of the newest message released: the day's compact facts take a
    # vehicle's messages in event-time order, so one behind this is late
    released: dict[str, float] = msgspec.field(default_factory=dict)
    judged: list[str] = msgspec.field(default_factory=list)  # service dates already judged
    max_events: dict[str, float] = msgspec.field(default_factory=dict)  # newest event time per input
    # records emitted while their day runs (C-01, D-19, D-21, B-04), by id, until the day is judged
    emitted: dict[str, Infraction] = msgspec.field(default_factory=dict)
    departure: tuple[float, str] | None = None  # the running trip last told to the operator stage
    # the bus ahead of its latest departure (live or released) on a line with a scheduled headway
    ahead: VehicleAhead | None = None
    # dedup key -> digest of the content first received with it (within the lateness, as `seen`)
    digests: dict[str, str] = msgspec.field(default_factory=dict)
    # message id -> event time: messages that came in two versions, until their day is judged
    conflicted: dict[str, float] = msgspec.field(default_factory=dict)
    # tachograph messages in two versions, until their day is judged (rules.versions): by
    # instant and seq, the version not in the facts and both versions' digests
    versions: dict[str, OtherVersion] = msgspec.field(default_factory=dict)
    # catraca readings in two versions received before the first was released, until their
    # day is judged (rules.versions): by dedup key, both versions
    catraca_versions: dict[str, CatracaVersion] = msgspec.field(default_factory=dict)
    # input -> a message dated far ahead of the vehicle's newest, waiting for the next one
    held: dict[str, Held] = msgspec.field(default_factory=dict)
    # "shape_id|first fix" -> (last fix, silent after) of the unfollowed passes told, while the track holds them
    unfollowed: dict[str, tuple[float, bool]] = msgspec.field(default_factory=dict)
    # the plausible catraca readings a trip not yet arrived may span (from the open
    # track's first fix on), for the trip rules that count boardings (a pack with
    # rules.other_line only); replaced whole, never changed in place
    trip_readings: list[CatracaReading] = msgspec.field(default_factory=list)
    # the GPS position screen (trips.position): the last fixes taken and the open fault run
    positions: PositionScreen = msgspec.field(default_factory=PositionScreen)
    # stretches of its messages a faulty clock dated (rejected as `clock_offset`), in receipt
    # time, for the days they fall in (engine.clocks)
    clock_faults: list[ClockFault] = msgspec.field(default_factory=list)
    # what the operations room sees, moved at each ping's arrival (engine.live): never evidence
    live: LiveView = msgspec.field(default_factory=LiveView)
    # operating date -> the late messages kept for it (engine.late), while it may be judged again
    late: dict[str, LateDay] = msgspec.field(default_factory=dict)
    # service date -> this vehicle's records of that day as last sent (id -> record), while a
    # late message may still have it judged again (only where a re-judgment is wired)
    sent: dict[str, dict[str, Infraction]] = msgspec.field(default_factory=dict)
