"""Moving a vehicle along its runs: positions and speeds at ping times (vectorized).

Between stops a vehicle follows a trapezoidal speed profile (accelerate, cruise,
brake) that fits the scheduled running time; it stands still while dwelling at
stops and laying over at terminals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely
from shapely import LineString

ACCEL = 1.0  # m/s², a loaded urban bus


@dataclass(frozen=True)
class LateralOffset:
    """Drive `offset_m` to the side of the shape between two progress values."""

    start_m: float
    end_m: float
    offset_m: float
    ramp_m: float


@dataclass(frozen=True)
class FastStretch:
    """Drive from stop k-1 to stop k+1 without dwelling at k, at `speed_kmh`."""

    stop_index: int
    speed_kmh: float


@dataclass(frozen=True)
class Legs:
    """A run's motion as legs: from d0 at t0, travel to d1 with cruise speed v, in t_move."""

    t0: np.ndarray
    d0: np.ndarray
    d1: np.ndarray
    v: np.ndarray
    t_move: np.ndarray


def legs_of(stops, fast: FastStretch | None = None) -> Legs:
    """Legs between consecutive stops of a run (stop times as epochs)."""
    dep = np.array([s.departure_s for s in stops], float)
    arr = np.array([s.arrival_s for s in stops], float)
    dist = np.array([s.shape_dist_m for s in stops], float)
    t0, d0, d1, T = dep[:-1].copy(), dist[:-1].copy(), dist[1:].copy(), arr[1:] - dep[:-1]
    fixed_v = np.full(len(t0), np.nan)
    if fast is not None:
        k = fast.stop_index  # merge legs k-1 and k into one fast leg, then stand at k+1
        d1[k - 1], T[k - 1] = d1[k], arr[k + 1] - dep[k - 1]
        fixed_v[k - 1] = fast.speed_kmh / 3.6
        t0, d0, d1, T, fixed_v = (np.delete(a, k) for a in (t0, d0, d1, T, fixed_v))
    D = np.maximum(d1 - d0, 0.0)
    T = np.maximum(T, 1.0)
    disc = (ACCEL * T) ** 2 - 4 * ACCEL * D
    fitted = np.where(disc >= 0, (ACCEL * T - np.sqrt(np.clip(disc, 0, None))) / 2, np.sqrt(ACCEL * D))
    v = np.where(np.isnan(fixed_v), fitted, np.minimum(fixed_v, np.sqrt(ACCEL * D)))
    v = np.maximum(v, 1e-6)
    t_move = np.where(D > 0, D / v + v / ACCEL, 0.0)
    return Legs(t0, d0, d1, v, t_move)


def progress_at(legs: Legs, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Progress (m) and speed (m/s) at times t within a run."""
    i = np.clip(np.searchsorted(legs.t0, t, side="right") - 1, 0, len(legs.t0) - 1)
    tau = np.clip(t - legs.t0[i], 0, None)
    v, T, D = legs.v[i], legs.t_move[i], legs.d1[i] - legs.d0[i]
    ta = v / ACCEL
    accel = tau < ta
    brake = (tau >= T - ta) & (tau < T)
    done = tau >= T
    s = np.where(accel, 0.5 * ACCEL * tau**2, 0.5 * ACCEL * ta**2 + v * (tau - ta))
    s = np.where(brake, D - 0.5 * ACCEL * (T - tau) ** 2, s)
    s = np.where(done | (D <= 0), D, s)
    speed = np.where(accel, ACCEL * tau, v)
    speed = np.where(brake, ACCEL * (T - tau), speed)
    speed = np.where(done | (D <= 0), 0.0, speed)
    return legs.d0[i] + np.clip(s, 0, D), speed


def positions(line: LineString, progress: np.ndarray, offsets: tuple[LateralOffset, ...] = ()):
    """Points at `progress` along `line`, pushed sideways where an offset applies."""
    pts = shapely.line_interpolate_point(line, progress)
    x, y = shapely.get_x(pts), shapely.get_y(pts)
    if not offsets:
        return x, y
    ahead = shapely.line_interpolate_point(line, np.minimum(progress + 1.0, line.length))
    behind = shapely.line_interpolate_point(line, np.maximum(progress - 1.0, 0.0))
    tx, ty = shapely.get_x(ahead) - shapely.get_x(behind), shapely.get_y(ahead) - shapely.get_y(behind)
    norm = np.hypot(tx, ty)
    norm[norm == 0] = 1.0
    nx, ny = ty / norm, -tx / norm  # right-hand normal
    shift = np.zeros(len(progress))
    for o in offsets:
        up = np.clip((progress - o.start_m) / o.ramp_m, 0, 1)
        down = np.clip((o.end_m - progress) / o.ramp_m, 0, 1)
        shift = np.maximum(shift, o.offset_m * np.minimum(up, down))
    return x + nx * shift, y + ny * shift


@dataclass(frozen=True)
class TurnBack:
    """Turn back before the terminal: drive the run until `turn_at` (epoch), then back
    along the shape to the origin, the way out played backwards (the same stops, the
    same pace), there by `back_at`."""

    turn_at: float
    back_at: float
    turn_m: float  # how far along the shape it turned


def turn_back(stops, fraction: float, length_m: float) -> TurnBack:
    """Where and when a run that turns back at `fraction` of its shape does so: the
    first second its motion reaches that point (while the shape's distance), and when
    the same way back ends at its origin."""
    departure, arrival = stops[0].departure_s, stops[-1].arrival_s
    grid = np.arange(departure, arrival + 1.0, 1.0)
    progress, _ = progress_at(legs_of(stops), grid)
    reached = np.flatnonzero(progress >= fraction * length_m)
    turn_at = float(grid[reached[0]]) if len(reached) else float(arrival)
    return TurnBack(turn_at, 2 * turn_at - departure, float(progress[reached[0]] if len(reached) else progress[-1]))


def progress_turned(legs: Legs, t: np.ndarray, turn: TurnBack) -> tuple[np.ndarray, np.ndarray]:
    """Progress (m) and speed (m/s) at times t of a run that turns back (`turn`): the
    way out up to the turn, then the same motion in reverse."""
    return progress_at(legs, np.where(t <= turn.turn_at, t, 2 * turn.turn_at - t))


def pushed_aside(progress: np.ndarray, offsets: tuple[LateralOffset, ...]) -> np.ndarray:
    """Where an offset moves the vehicle off the shape (`positions` shifts it there): a bus
    standing there is not at its stop (a bypassed stop, a detour), its doors stay shut."""
    aside = np.zeros(len(progress), bool)
    for o in offsets:
        aside |= (progress > o.start_m) & (progress < o.end_m)
    return aside
