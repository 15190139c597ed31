"""The enforcement policy: every threshold the engine applies, read from TOML.

The shipped default is João Neiva's (`policies/joao-neiva.toml`). Unknown keys are
refused so that a typo in a threshold never silently falls back to a default.
"""

from __future__ import annotations

import datetime as dt
import re
from importlib import resources
from pathlib import Path
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

from kernel.errors import FiscalizaError


class PolicyError(FiscalizaError, ValueError):
    """The policy file is missing, unreadable or invalid."""


class _Section(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


class General(_Section):
    # the municipality's law and detectors (`rules.packs`): "joao-neiva", ...
    code: str
    name: str
    version: str
    municipality: str
    state: str
    timezone: str
    # R$ of one unit of the law's fine (João Neiva: the UFIR); a law fined in a unit that
    # no longer exists gives its mapping in [fines] instead, copied here when parsed
    ufir_brl: float | None = None
    municipal_holidays: tuple[dt.date, ...] = ()


class TripRules(_Section):
    terminal_zone_m: float
    min_coverage: float
    corridor_m: float
    max_coverage_gap_s: float
    max_plausible_speed_kmh: float
    max_trip_duration_s: float
    match_window_s: float
    in_service_terminal_s: float
    service_day_cutover_s: float
    # distinct minutes in which the operator's fleet must have reported within a scheduled
    # departure's match window for its absence to be a fact (D-22, art. 45)
    min_reporting_minutes: int
    # up to this many consecutive fixes off the corridor between fixes on it are GPS noise
    max_noise_pings: int
    # a vehicle seen over this much of an itinerary whose telemetry broke off may have run
    # the trip the silence hid (trips.unfollowed)
    min_unfollowed_pass_m: float
    # a fix farther than this from every itinerary is no position (trips.position); a default,
    # so that a policy written before it (an evidence bundle's) still loads
    max_network_distance_m: float = 20_000.0
    # a terminal whose feed stop point is not where its buses lay over: its own radius
    terminal_zone_m_by_stop: dict[str, float] = {}


class StreamRules(_Section):
    allowed_lateness_s: float
    max_clock_jump_s: float  # a message this far ahead of its vehicle's newest waits for the next one
    # a message (a file's line, a Kafka record) longer than this is rejected as too_long, unparsed;
    # a default, unlike the others: the policies inside evidence bundles made before it existed
    # must still parse, or those bundles could no longer be verified
    max_message_bytes: int = 65536
    # a message's time against its receipt (received_at, the Kafka record's time): more than
    # this ahead, or a whole number of hours behind to within this, is a clock fault (engine.clocks)
    max_clock_offset_s: float = 120.0  # a default: policies inside older evidence bundles
    # a message behind its vehicle's newest by more than the allowed lateness is kept and its
    # vehicle-day judged again (engine.late): up to this far behind, at most this many times
    # per vehicle-day; defaults, for the policies inside older evidence bundles
    rejudge_max_late_s: float = 2 * 86400.0
    rejudge_max_times: int = 3


class D11(_Section):
    max_distance_m: float
    min_travel_m: float
    min_duration_s: float
    max_ping_gap_s: float
    min_consecutive_pings: int  # a path held, not a GPS jump next to a noisy fix


class Punctuality(_Section):
    max_early_s: float
    max_late_s: float


class B04(Punctuality):
    max_ping_gap_s: float


class D13(Punctuality):
    escalation_step_pct: float
    max_departure_gap_s: float


class Art45(_Section):
    min_efficiency: float


class A07(_Section):
    stop_radius_m: float
    max_interpolation_gap_s: float


class D19(_Section):
    max_silence_s: float


class D21(_Section):
    counter_moduli: tuple[int, ...]  # the register sizes catraca counters roll over at
    wrap_margin: float  # a fall from the top `wrap_margin` of a register to its bottom is a wrap
    max_boardings_per_minute: float  # a counter rising faster is a sensor fault


class C01(_Section):
    default_limit_kmh: float
    tolerance_kmh: float
    min_consecutive_pings: int
    min_episode_s: float
    merge_gap_s: float
    max_ping_gap_s: float
    speed_agreement_kmh: float


class WaitingPeriod(_Section):
    """A named part of the day, [start, end) in local time, over which the mean wait is judged."""
    name: str
    start: dt.time
    end: dt.time


class WaitingTime(_Section):
    """The mean waiting time of a line's passengers (Canarana, Lei 179/1991 art. 10 § 5º)."""
    max_wait_s: float
    # a silence of the whole fleet longer than this may hide a departure: no accusation across it
    max_fleet_silence_s: float
    periods: tuple[WaitingPeriod, ...]


class Fines(_Section):
    """What a law leaves to the policy about its fines."""
    # the law's fine unit (as its Law.fine_unit names it) and R$ of one unit today, where
    # the unit is gone (Conselheiro Lafaiete's cruzeiros of 1948); else policy.ufir_brl
    unit: str | None = None
    brl_per_unit: float | None = None
    # how far back an upheld infraction of the same article makes a fine a recidivist's
    # (where the law doubles the fine "nos casos de reincidência" without saying how long)
    recidivism_window_days: int | None = None
    # article code as the law writes it -> fine in the law's unit, where the law leaves
    # each fine to a table the Prefeitura sets (Canarana, art. 39 § único)
    table: dict[str, int] = {}


class TurnBack(_Section):
    """Turning back before the terminal (rules.turn_back): a reversal along the itinerary
    held, not GPS jitter."""
    min_reversal_m: float  # behind the farthest point reached; above the corridor's jitter
    min_consecutive_pings: int  # consecutive fixes that far behind: a path held, not a jump
    max_ping_gap_s: float  # a longer silence between the farthest point and the reversal: unproven


class UnmarkedStop(_Section):
    """Stopping to take or leave passengers away from the marked stops (rules.unmarked_stop),
    read from the tachograph's optional `doors_open`."""
    max_speed_kmh: float  # at most this is standing still
    min_stop_distance_m: float  # farther than this from every stop of the feed; above the corridor's noise
    min_consecutive_pings: int  # doors open on this many pings in a row: one is a sensor glitch
    min_duration_s: float  # and for at least this long
    max_ping_gap_s: float


class OtherLine(_Section):
    """A vehicle carrying passengers on a line it is not licensed for (rules.other_line),
    read from the catraca's counter over a realized trip."""
    min_boardings: int  # counted over the trip, at least this many: passengers carried
    max_silence_s: float  # the catraca silent longer than this at the trip's start or end: unproven


class TerminalCrowding(_Section):
    """More than a share of a line's vehicles standing at one of its terminals at once
    (Canarana, Lei 179/1991 art. 13; rules.terminal_crowding)."""
    max_share_pct: float  # of the line's vehicles that day: more than this is crowding
    grace_s: float  # crowding shorter than this is a layover between trips, not a permanência
    # a silence of the whole fleet longer than this inside a stay leaves it unproven
    max_fleet_silence_s: float


class Interruption(_Section):
    """A line's service interrupted (Canarana, Lei 179/1991 art. 6º II; rules.line_interruption)."""
    max_interruption_s: float  # unserved scheduled departures for longer than this


class Headway(_Section):
    """The operations room's live headway (never evidence): a bus's departure after the
    bus ahead's against the scheduled headway there, on every line (the frequency window's
    headway_secs, or the timetable's gap between consecutive departures). Swiftly's
    defaults: bunched at most 75 %, gapped at least 125 %."""
    bunched_max_ratio: float = 0.75
    gapped_min_ratio: float = 1.25


class Defence(_Section):
    """The defence's experiment on an auto (dockets.rejudgment)."""
    # how many of the readings an auto's finding cites its leave-one-out leaves out in turn (the
    # rule re-run each time); beyond it, that many evenly spaced over them, first and last
    # included. A count, not a time: the signed PDF must say the same on any machine.
    leave_one_out_max_runs: Annotated[int, msgspec.Meta(ge=2)] = 16
    # the CPU budget that bound it before (bundles signed then still parse); not read
    leave_one_out_budget_s: float | None = None


class Policy(_Section):
    policy: General
    trips: TripRules
    stream: StreamRules
    d11: D11
    d13: D13
    b04: B04
    art45: Art45
    a07: A07
    d19: D19
    d21: D21
    c01: C01
    # a default, so that the policies inside evidence bundles made before it still parse
    headway: Headway = Headway()
    # sections only some laws need; None where the policy's law has no use for them
    waiting_time: WaitingTime | None = None
    fines: Fines | None = None  # João Neiva's UFIR needs no mapping nor table
    turn_back: TurnBack | None = None
    unmarked_stop: UnmarkedStop | None = None
    other_line: OtherLine | None = None
    terminal_crowding: TerminalCrowding | None = None
    interruption: Interruption | None = None
    # a default: the policies inside evidence bundles made before it existed must still parse
    defence: Defence = msgspec.field(default_factory=Defence)

    @property
    def version(self) -> str:
        return self.policy.version

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.policy.timezone)


DEFAULT_POLICY_NAME = "joao-neiva.toml"


def parse_policy(text: str | bytes, source: str = "<policy>") -> Policy:
    try:
        policy = msgspec.toml.decode(text, type=Policy)
    except msgspec.ValidationError as exc:
        raise PolicyError(f"{source}: invalid policy: {exc}") from None
    except msgspec.DecodeError as exc:
        raise PolicyError(f"{source}: not valid TOML: {exc}") from None
    per_unit = policy.fines.brl_per_unit if policy.fines is not None else None
    if (policy.policy.ufir_brl is None) == (per_unit is None):
        raise PolicyError(f"{source}: give the value of the law's fine unit either as policy.ufir_brl "
                          "or as [fines] brl_per_unit (exactly one)")
    if per_unit is not None:
        # one place for consumers to read it (dockets, reports): the R$ of a unit of fine_ufir
        policy = msgspec.structs.replace(
            policy, policy=msgspec.structs.replace(policy.policy, ufir_brl=policy.fines.brl_per_unit))
    try:
        ZoneInfo(policy.policy.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise PolicyError(f"{source}: unknown timezone {policy.policy.timezone!r}") from None
    if not 0 < policy.trips.min_coverage <= 1:
        raise PolicyError(f"{source}: trips.min_coverage must be in (0, 1]")
    if not policy.d21.counter_moduli or min(policy.d21.counter_moduli) < 2:
        raise PolicyError(f"{source}: d21.counter_moduli must list register sizes of at least 2")
    if not 0 < policy.d21.wrap_margin < 0.5:
        raise PolicyError(f"{source}: d21.wrap_margin must be in (0, 0.5)")
    if policy.trips.max_noise_pings >= policy.d11.min_consecutive_pings:
        raise PolicyError(f"{source}: trips.max_noise_pings must be below d11.min_consecutive_pings "
                          "(a path held that long is a detour, not noise)")
    for stop_id, radius in policy.trips.terminal_zone_m_by_stop.items():
        if not radius > 0:
            raise PolicyError(f"{source}: trips.terminal_zone_m_by_stop.{stop_id} must be positive, got {radius}")
    if policy.turn_back is not None and not policy.turn_back.min_reversal_m > 2 * policy.trips.corridor_m:
        raise PolicyError(f"{source}: turn_back.min_reversal_m must exceed twice trips.corridor_m "
                          "(a fix that far behind within the corridor may be GPS jitter)")
    if policy.unmarked_stop is not None and not policy.unmarked_stop.min_stop_distance_m > policy.trips.corridor_m:
        raise PolicyError(f"{source}: unmarked_stop.min_stop_distance_m must exceed trips.corridor_m "
                          "(GPS noise alone places a bus at a stop that far from it)")
    if not policy.headway.bunched_max_ratio < 1 < policy.headway.gapped_min_ratio:
        raise PolicyError(f"{source}: headway.bunched_max_ratio must be below 1 and headway.gapped_min_ratio above it")
    _check_optional_sections(policy, source)
    for section_name in policy.__struct_fields__:
        section = getattr(policy, section_name)
        if section is None:  # an optional section not given
            continue
        for name in section.__struct_fields__:
            value = getattr(section, name)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and not value > 0:
                raise PolicyError(f"{source}: {section_name}.{name} must be positive, got {value}")
    return policy


def _check_optional_sections(policy: Policy, source: str) -> None:
    if policy.waiting_time is not None:
        periods = policy.waiting_time.periods
        if not periods:
            raise PolicyError(f"{source}: waiting_time.periods must list at least one period")
        for period in periods:
            if not period.start < period.end:
                raise PolicyError(f"{source}: waiting_time period {period.name!r} must start before it ends")
        names = [period.name for period in periods]
        if len(set(names)) != len(names):
            raise PolicyError(f"{source}: waiting_time.periods names must be unique")
    if policy.terminal_crowding is not None and not policy.terminal_crowding.max_share_pct < 100:
        raise PolicyError(f"{source}: terminal_crowding.max_share_pct must be below 100")
    if policy.fines is not None:
        for code, fine in policy.fines.table.items():
            if not fine > 0:
                raise PolicyError(f"{source}: fines.table.{code!r} must be positive, got {fine}")


def shipped_policy_path(city: str | None = None) -> Path:
    """A shipped policy file, wherever the package is installed: the city's
    (`policies/<city>.toml`, `city` being the code its `[policy] code` names, e.g.
    "canarana"), else the default (João Neiva's). The path may not exist: a city whose
    policy is not shipped."""
    if city is not None and not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", city):
        # a code, never a path: "../x" must not reach outside the policies
        raise PolicyError(f"not a city code: {city!r}")
    name = DEFAULT_POLICY_NAME if city is None else f"{city}.toml"
    return Path(str(resources.files("kernel").joinpath("policies", name)))


def policy_bytes(path: Path | None) -> bytes:
    """The policy file's bytes as read; None means the shipped default."""
    return (Path(path) if path is not None else shipped_policy_path()).read_bytes()


def load_policy(path: Path | None = None) -> Policy:
    """Read a policy file; None means the shipped João Neiva default."""
    if path is None:
        return parse_policy(policy_bytes(None), DEFAULT_POLICY_NAME)
    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        raise PolicyError(f"cannot read policy {path}: {exc.strerror}") from None
    return parse_policy(text, str(path))
