"""Position faults: fixes the bus could not have reached by driving.

A GPS unit throws fixes kilometres off on a cold start (a (0,0)-style fix), on
multipath in a street canyon, or when it falls back to a cell tower's position; a run of
such fixes is not the bus. Taken as positions they lose a trip that was run (a D-12 or a
D-22) or draw a path past no stop (an A-07). DESIGN.md: sensor faults are never
infractions. So each released fix is screened, in event-time order, before it reaches
trip detection and the day's facts: one that lies farther from the newest fix taken than
the physical ceiling allows in the time between them (`trips.max_plausible_speed_kmh`,
plus twice the corridor for the two fixes' noise, as `trips.detection.along_shape`
allows) is a position fault, dropped and told with its reason. A stretch a run of faults
hides is a silence to every detector: an unfollowed pass, never a trip not run.

A fix farther than `trips.max_network_distance_m` from every itinerary (a cold start's
(0,0), a unit reporting from another city) is a position fault whatever came before it,
and is no witness for the fixes after it.

Which side of a jump is the bus. A fix is taken when it lies within reach of one of the
last few fixes taken (`trips.max_noise_pings` + 1 of them), so that a single noisy fix
taken cannot make the next true one look out of reach. A run of faults that holds
together (each within reach of the one before) stays a fault run even once the time
since the last fix taken would let a bus drive there: the jump into it was not driven;
a fix within reach of both, a fix taken and the fault run, goes to the nearer (relative
to reach). The run is the bus, and taken from then on, when it holds together
- for more fixes than the run taken before the jump since the last silence: a cold
  start's fix followed by the real track loses to it at its third fix; or
- for longer than `trips.max_coverage_gap_s`: a unit whose fixes drifted away and
  snapped back, or a true position after a run of faults taken, is followed again
  after that long, not lost for the rest of the day.
A fault run mid-trip is thus dropped whole when it is shorter than both.

Pure and sequential: the screen carries its state across calls, so the verdicts do not
depend on how the fixes were batched.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence

import msgspec

from kernel.policy import TripRules
from trips.model import Fix

Place = tuple[float, float, float]  # t, x, y


class PositionScreen(msgspec.Struct, frozen=True, array_like=True):
    """What the screen keeps of a vehicle: the last fixes taken and the open fault run."""

    taken: tuple[Place, ...] = ()  # the last fixes taken as the bus's position, newest last
    taken_run: int = 0  # fixes taken since the last silence or switch
    stray: Place | None = None  # the newest fix of the open fault run (None: no run open)
    stray_run: int = 0  # fixes in the open fault run
    stray_since: float = 0.0  # the time of its first fix


class PositionFault(msgspec.Struct, frozen=True):
    """A fix dropped as a position fault, with what it was measured against."""

    fix: Fix
    distance_m: float  # from the newest fix taken (NaN: none taken yet)
    elapsed_s: float  # since it
    reach_m: float  # the most the bus could have driven in that time, plus the fixes' noise
    off_network_m: float | None = None  # set when the fix lies farther than this from every itinerary
    # set when the fix is within reach but continues a run of faults (nearer to it): the run's first fix
    run_since: float | None = None

    @property
    def detail(self) -> str:
        if self.off_network_m is not None:
            return (f"position fault: farther than {self.off_network_m:.0f} m from every itinerary of the feed "
                    "(policy trips.max_network_distance_m): not taken as a position")
        if self.run_since is not None:
            since = dt.datetime.fromtimestamp(self.run_since, dt.timezone.utc).isoformat()
            return (f"position fault: continues the run of fixes that jumped out of the vehicle's reach at {since} "
                    f"(nearer to the run's previous fix than to the vehicle's position {self.elapsed_s:.0f} s before, "
                    f"{self.distance_m:.0f} m away): not taken as a position")
        speed = self.distance_m / self.elapsed_s * 3.6 if self.elapsed_s > 0 else math.inf
        return (f"position fault: {self.distance_m:.0f} m from the vehicle's position {self.elapsed_s:.0f} s "
                f"before ({speed:.0f} km/h), beyond the {self.reach_m:.0f} m a bus can drive in that time "
                "(policy trips.max_plausible_speed_kmh, plus 2 x trips.corridor_m of GPS noise): "
                "not taken as a position")


def _reach(rules: TripRules, elapsed_s: float) -> float:
    return rules.max_plausible_speed_kmh / 3.6 * max(elapsed_s, 0.0) + 2 * rules.corridor_m


def _measure(rules: TripRules, before: Place, fix: Fix) -> tuple[float, float, float]:
    """(distance, elapsed, reach) from a place to a fix."""
    elapsed = fix.t - before[0]
    return math.hypot(fix.x - before[1], fix.y - before[2]), elapsed, _reach(rules, elapsed)


def screen_positions(screen: PositionScreen, fixes: Sequence[Fix], near_network: Sequence[bool],
                     rules: TripRules) -> tuple[PositionScreen, list[Fix], list[PositionFault]]:
    """The fixes (in event-time order) split into those taken and the position faults,
    and the screen after them. `near_network`: per fix, whether it lies within
    `rules.max_network_distance_m` of some itinerary (`Geofences.near_any_itinerary`)."""
    witnesses = rules.max_noise_pings + 1
    taken, taken_run = list(screen.taken), screen.taken_run
    stray, stray_run, stray_since = screen.stray, screen.stray_run, screen.stray_since
    kept: list[Fix] = []
    faults: list[PositionFault] = []
    for fix, near in zip(fixes, near_network, strict=True):
        if not near:
            faults.append(PositionFault(fix, math.nan, math.nan, math.nan, rules.max_network_distance_m))
            continue
        place = (fix.t, fix.x, fix.y)
        if not taken or not (math.isfinite(fix.x) and math.isfinite(fix.y)):
            if not taken:
                taken, taken_run = [place], 1
            kept.append(fix)
            continue
        if fix.t - max(taken[-1][0], stray[0] if stray else -math.inf) > rules.max_coverage_gap_s:
            taken_run = 0  # after a silence (no fix at all) the run behind is no longer a witness
        measures = [_measure(rules, before, fix) for before in taken]
        nearest = min(distance / reach for distance, _, reach in measures)
        if stray is not None:
            distance, _, reach = _measure(rules, stray, fix)
            follows_stray, stray_nearness = distance <= reach, distance / reach
        else:
            follows_stray, stray_nearness = False, math.inf
        if nearest <= 1.0 and not (follows_stray and stray_nearness < nearest):
            taken, taken_run, stray, stray_run = [*taken, place][-witnesses:], taken_run + 1, None, 0
            kept.append(fix)
        elif follows_stray and (stray_run + 1 > max(taken_run, rules.max_noise_pings)
                                or fix.t - stray_since > rules.max_coverage_gap_s):
            # the run after the jump holds longer than the one before it, or too long to be
            # a fault: it is the bus
            taken, taken_run, stray, stray_run = [place], stray_run + 1, None, 0
            kept.append(fix)
        else:
            if not follows_stray:
                stray_run, stray_since = 0, fix.t
            stray, stray_run = place, stray_run + 1
            faults.append(PositionFault(fix, *measures[-1], run_since=None if nearest > 1.0 else stray_since))
    return PositionScreen(tuple(taken), taken_run, stray, stray_run, stray_since), kept, faults
