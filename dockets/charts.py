"""Evidence gráficos for the auto de infração (Código Disciplinar art. 6).

"Os gráficos e registros de equipamentos instalados nos veículos poderão constituir
meios de prova": these functions turn a vehicle's tachograph pings into the three
pictures printed on the auto's PDF:

- `speed_time_chart`: the linear tachograph chart, speed against local time;
- `tachograph_disc`: the familiar 24-hour circular disc (disco diagrama) of one day;
- `track_map`: the recorded track over the itinerary and its tolerated corridor;
- `catraca_chart`: the turnstile's counter and seal over the day (D-19, D-21).

Each is a pure function, data in and PNG bytes out, sized for an A4 page with 2 cm
margins (17 cm wide at 150 dpi, so font sizes in points are the printed sizes). They
use matplotlib's object API (`Figure` + Agg canvas, never pyplot), so they keep no
global state and can run in a web server's threads. The same input gives the same
bytes (no software/date metadata in the PNG). User-visible text is Brazilian
Portuguese.

Missing records are never interpolated: two pings more than `max_gap_s` apart (120 s
by default) are drawn with a break between them, and the speed chart shades the gap.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import matplotlib.dates as mdates
import numpy as np
import shapely
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, PathPatch, Rectangle
from matplotlib.path import Path as MplPath
from matplotlib.ticker import MultipleLocator
from matplotlib.transforms import Bbox, blended_transform_factory
from pyproj import CRS, Transformer

from dockets import ptbr

__all__ = [
    "DISC_PX",
    "DPI",
    "GAP_S",
    "MAP_PX",
    "MOVING_KMH",
    "SPEED_CHART_PX",
    "Itinerary",
    "Track",
    "Turnstile",
    "catraca_chart",
    "speed_time_chart",
    "tachograph_disc",
    "track_map",
]

DPI = 150
# (width, height) in pixels at DPI: 1004 px = 17.0 cm, the text width of A4 with 2 cm margins.
SPEED_CHART_PX = (1004, 540)  # 17.0 x 9.1 cm
DISC_PX = (1004, 720)  # 17.0 x 12.2 cm
MAP_PX = (1004, 1004)  # 17.0 x 17.0 cm

GAP_S = 120.0  # pings further apart than this are a gap in the record, drawn as a break
MOVING_KMH = 3.0  # above this speed the vehicle is "em movimento" on the disc
MIN_MAP_SPAN_M = 1000.0  # a focused map never shows less than this, in either direction

_FONT = "DejaVu Sans"  # bundled with matplotlib: the same glyphs on every machine
_TITLE_PT = 10.5
_LABEL_PT = 9
_TICK_PT = 8.5
_NOTE_PT = 8
# The disc is printed smaller than drawn (11 of 17 cm on the auto): its legend and summary
# need 10 pt to read as 6.5 pt on paper, and at 60 dpi on screen.
_DISC_LEGEND_PT = 10

_SPEED_COLOR = "#1f4e8c"
_LIMIT_COLOR = "#b71c1c"
_MARK_COLOR = "#6a1b9a"  # a moment the record is compared with (scheduled departure)
_HIGHLIGHT_FILL = "#f7c6c0"
_HIGHLIGHT_TEXT = "#8e1b12"
_GAP_FILL = "#e6e6e6"
_RED = "#e00000"  # highlighted pings and infraction points on the map (and nothing else)
_ITINERARY_COLOR = "#5d6d4e"
_CORRIDOR_FILL = "#d9ead3"
_TRACK_COLOR = "#1565c0"
_DISC_PAPER = "#fbf7ea"
_DISC_INK = "#3b3b3b"


@dataclass(frozen=True)
class Track:
    """A vehicle's recorded tachograph pings, time-ordered; times are tz-aware."""

    t: tuple[datetime, ...]
    lat: tuple[float, ...]
    lon: tuple[float, ...]
    speed_kmh: tuple[float, ...]

    def __post_init__(self) -> None:
        n = len(self.t)
        if not len(self.lat) == len(self.lon) == len(self.speed_kmh) == n:
            raise ValueError("Track: t, lat, lon and speed_kmh must have the same length")
        if any(x.tzinfo is None or x.utcoffset() is None for x in self.t):
            raise ValueError("Track: times must be timezone-aware")


@dataclass(frozen=True)
class Turnstile:
    """A vehicle's catraca readings, time-ordered; times are tz-aware."""

    t: tuple[datetime, ...]
    counter: tuple[int, ...]
    seal_intact: tuple[bool, ...]
    fault: tuple[bool, ...]

    def __post_init__(self) -> None:
        if not len(self.counter) == len(self.seal_intact) == len(self.fault) == len(self.t):
            raise ValueError("Turnstile: t, counter, seal_intact and fault must have the same length")
        if any(x.tzinfo is None or x.utcoffset() is None for x in self.t):
            raise ValueError("Turnstile: times must be timezone-aware")


@dataclass(frozen=True)
class Itinerary:
    """The trip's GTFS shape (lon, lat) and stops (name, lon, lat)."""

    lonlat: tuple[tuple[float, float], ...]
    stops: tuple[tuple[str, float, float], ...]
    corridor_m: float  # half-width of the tolerated corridor


# ----------------------------------------------------------------------------- helpers


@dataclass(frozen=True)
class _Pings:
    s: np.ndarray  # epoch seconds, sorted
    lat: np.ndarray
    lon: np.ndarray
    speed: np.ndarray

    def __len__(self) -> int:
        return len(self.s)

    def take(self, mask: np.ndarray) -> _Pings:
        return _Pings(self.s[mask], self.lat[mask], self.lon[mask], self.speed[mask])


def _pings(track: Track) -> _Pings:
    n = len(track.t)
    s = np.fromiter((x.timestamp() for x in track.t), dtype=float, count=n)
    order = np.argsort(s, kind="stable")
    return _Pings(
        s[order],
        np.asarray(track.lat, dtype=float).reshape(n)[order],
        np.asarray(track.lon, dtype=float).reshape(n)[order],
        np.asarray(track.speed_kmh, dtype=float).reshape(n)[order],
    )


def _interval(pair: tuple[datetime, datetime], what: str) -> tuple[float, float]:
    a, b = pair
    if a.tzinfo is None or b.tzinfo is None:
        raise ValueError(f"{what} must be timezone-aware")
    start, end = a.timestamp(), b.timestamp()
    if end < start:
        raise ValueError(f"{what} ends before it starts")
    return start, end


def _mpl_dates(s: np.ndarray) -> np.ndarray:
    """Epoch seconds -> matplotlib date numbers (respecting the configured date epoch)."""
    return mdates.date2num(np.round(np.asarray(s, dtype=float) * 1e6).astype("int64").astype("datetime64[us]"))


def _gap_starts(s: np.ndarray, max_gap_s: float) -> np.ndarray:
    """Indices i such that pings i and i+1 are more than max_gap_s apart."""
    return np.flatnonzero(np.diff(s) > max_gap_s)


def _break_at(values: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """Insert NaN after each gap start so a line plot breaks there."""
    return np.insert(np.asarray(values, dtype=float), gaps + 1, np.nan)


def _isolated(n: int, gaps: np.ndarray) -> np.ndarray:
    """Mask of pings with a gap (or the end of the record) on both sides: a line cannot show them."""
    before = np.zeros(n, dtype=bool)
    after = np.zeros(n, dtype=bool)
    if n:
        before[0] = after[-1] = True
        before[gaps + 1] = True
        after[gaps] = True
    return before & after


def _figure(size_px: tuple[int, int]) -> Figure:
    fig = Figure(figsize=(size_px[0] / DPI, size_px[1] / DPI), dpi=DPI, facecolor="white")
    FigureCanvasAgg(fig)
    return fig


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, facecolor="white", metadata={"Software": None})
    return buffer.getvalue()


def _text_width(fig: Figure, text: str, size: float, weight: str = "normal") -> float:
    """Width in pixels of `text` set in the charts' font (measured, not guessed)."""
    prop = FontProperties(family=_FONT, size=size, weight=weight)
    return fig.canvas.get_renderer().get_text_width_height_descent(text, prop, ismath=False)[0]


def _wrap(fig: Figure, text: str, width_px: float, size: float, weight: str = "normal",
          max_lines: int = 2) -> list[str]:
    """Greedy word wrap to width_px; more than max_lines are cut with an ellipsis."""
    lines: list[str] = []
    for word in text.split():
        candidate = f"{lines[-1]} {word}" if lines else word
        if lines and _text_width(fig, candidate, size, weight) <= width_px:
            lines[-1] = candidate
        else:
            lines.append(word)
    if len(lines) > max_lines:
        last = lines[max_lines - 1].split()
        while len(last) > 1 and _text_width(fig, " ".join(last) + " …", size, weight) > width_px:
            last.pop()
        lines = [*lines[:max_lines - 1], " ".join(last) + " …"]
    return lines or [""]


def _title(fig: Figure, title: str) -> float:
    """Draw the title (wrapped, at most two lines) at the top; return its bottom in figure fraction."""
    lines = _wrap(fig, title, fig.bbox.width - 40, _TITLE_PT, "bold")
    top = 1 - 10 / fig.bbox.height
    fig.text(0.5, top, "\n".join(lines), ha="center", va="top", fontsize=_TITLE_PT, fontweight="bold",
             fontfamily=_FONT, linespacing=1.3, parse_math=False)
    line_px = _TITLE_PT / 72 * DPI * 1.3
    return top - len(lines) * line_px / fig.bbox.height


_num = ptbr.number
_amount = ptbr.amount  # no decimals when whole, else one (60 km/h, 37,5 m)
_plural = ptbr.plural


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    hours, minutes = divmod(round(seconds / 60), 60)
    if hours == 0:
        return f"{minutes} min"
    return f"{hours} h {minutes:02d} min"


def _local(s: float, tz: ZoneInfo) -> datetime:
    return datetime.fromtimestamp(s, tz)


def _empty_note(ax, text: str = "Sem registros no período") -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=11,
            fontfamily=_FONT, color="#555555", zorder=10,
            bbox={"boxstyle": "round,pad=0.5", "facecolor": "white", "edgecolor": "#999999"})


def _style_ticks(ax) -> None:
    ax.tick_params(labelsize=_TICK_PT, colors="#333333")
    for label in (*ax.get_xticklabels(), *ax.get_yticklabels()):
        label.set_fontfamily(_FONT)


# -------------------------------------------------------------------- speed x time chart


def _legend_rows(fig: Figure, handles: list, *, y_px: float, width_px: float, loc: str, x: float = 0.5, **style):
    """A figure legend in one row if it fits in width_px, else in as few rows as needed."""
    for ncol in range(len(handles), 0, -1):
        legend = fig.legend(handles=handles, loc=loc, bbox_to_anchor=(x, y_px / fig.bbox.height), ncol=ncol,
                            frameon=False, prop={"family": _FONT, "size": _NOTE_PT + 0.5}, borderaxespad=0,
                            **style)
        if ncol == 1 or legend.get_window_extent(fig.canvas.get_renderer()).width <= width_px:
            return legend
        legend.remove()
    raise AssertionError("unreachable")


def speed_time_chart(
    track: Track,
    *,
    window: tuple[datetime, datetime],
    highlight: tuple[datetime, datetime] | None = None,
    speed_limit_kmh: float | None = None,
    tz: ZoneInfo,
    title: str,
    max_gap_s: float = GAP_S,
    marks: Sequence[tuple[datetime, str]] = (),
) -> bytes:
    """The linear tachograph chart: speed (km/h) against local time over `window`.

    `marks` are moments the reader compares the record with (D-13: the scheduled
    departure), each a dotted vertical line named in the legend.

    `highlight` (the infraction's interval) is shaded and labelled "Período da infração";
    `speed_limit_kmh` is drawn as a dashed line. Pings more than `max_gap_s` apart are not
    joined and the gap is shaded grey ("Sem registro"). Returns PNG bytes of SPEED_CHART_PX.
    """
    w0, w1 = _interval(window, "window")
    if w1 <= w0:
        raise ValueError("window must not be empty")
    pings = _pings(track)
    inside = (pings.s >= w0) & (pings.s <= w1)
    shown = int(inside.sum())
    # One ping on each side of the window so the line reaches its edges (clipped there).
    lo = max(int(np.searchsorted(pings.s, w0, side="left")) - 1, 0)
    hi = min(int(np.searchsorted(pings.s, w1, side="right")) + 1, len(pings))
    view = pings.take(slice(lo, hi)) if shown else pings.take(slice(0, 0))
    gaps = _gap_starts(view.s, max_gap_s)
    x0, x1 = _mpl_dates(np.array([w0, w1]))
    gx = _mpl_dates(view.s)
    visible_gaps = gaps[(gx[gaps + 1] > x0) & (gx[gaps] < x1)] if len(gaps) else gaps

    # Legend entries first: the legend's height decides where the axes end.
    handles: list = []
    if shown:
        handles.append(Line2D([], [], color=_SPEED_COLOR, linewidth=1.3, marker="o", markersize=2.6,
                              label="Velocidade registrada"))
    if speed_limit_kmh is not None:
        handles.append(Line2D([], [], color=_LIMIT_COLOR, linestyle=(0, (6, 3)), linewidth=1.3,
                              label=f"Limite: {_amount(speed_limit_kmh)} km/h"))
    if highlight is not None:
        handles.append(Patch(facecolor=_HIGHLIGHT_FILL, edgecolor=_LIMIT_COLOR, linewidth=0.8,
                             label="Período da infração"))
    for _, name in marks:
        handles.append(Line2D([], [], color=_MARK_COLOR, linestyle=(0, (1.5, 1.5)), linewidth=1.6, label=name))
    if len(visible_gaps):
        handles.append(Patch(facecolor=_GAP_FILL, edgecolor="#9a9a9a", hatch="////",
                             label=f"Sem registro (> {_amount(max_gap_s)} s)"))

    fig = _figure(SPEED_CHART_PX)
    title_bottom = _title(fig, title)
    width, height = fig.bbox.width, fig.bbox.height
    note = _plural(shown, "registro exibido", "registros exibidos")
    if len(visible_gaps):
        note += " · " + _plural(len(visible_gaps), "interrupção", "interrupções") + \
            f" do registro (intervalo > {_amount(max_gap_s)} s)"
    fig.text(0.985, 8 / height, note, ha="right", va="bottom", fontsize=_NOTE_PT, fontfamily=_FONT, color="#555555")
    legend_top = 30.0
    if handles:
        legend = _legend_rows(fig, handles, y_px=30, width_px=width - 40, loc="lower center",
                              handlelength=2.2, columnspacing=1.5)
        legend_top = 30 + legend.get_window_extent(fig.canvas.get_renderer()).height
    bottom = (legend_top + 70) / height  # room for tick labels and the axis label
    left = 78 / width
    ax = fig.add_axes((left, bottom, 1 - left - 18 / width, title_bottom - 14 / height - bottom))
    ax.set_xlim(x0, x1)

    top_speed = float(np.nanmax(pings.speed[inside])) if shown and np.isfinite(pings.speed[inside]).any() else 0.0
    top = max(top_speed, speed_limit_kmh or 0.0, 40.0) * 1.12
    step = 10 if top <= 80 else 20
    ax.set_ylim(0, math.ceil(top / step) * step)
    ax.yaxis.set_major_locator(MultipleLocator(step))
    ax.yaxis.set_minor_locator(MultipleLocator(step / 2))
    ax.grid(True, which="major", color="#d0d0d0", linewidth=0.6)
    ax.grid(True, which="minor", axis="y", color="#ececec", linewidth=0.4)
    ax.set_axisbelow(True)

    if highlight is not None:
        h0, h1 = _interval(highlight, "highlight")
        hx0, hx1 = _mpl_dates(np.array([h0, h1]))
        ax.axvspan(hx0, hx1, facecolor=_HIGHLIGHT_FILL, edgecolor=_LIMIT_COLOR, linewidth=0.8, zorder=0.5)
        if hx1 >= x0 and hx0 <= x1:
            mid = (max(hx0, x0) + min(hx1, x1)) / 2
            frac = (mid - x0) / (x1 - x0)
            ha = "left" if frac < 0.12 else "right" if frac > 0.88 else "center"
            anchor = max(hx0, x0) if ha == "left" else min(hx1, x1) if ha == "right" else mid
            ax.text(anchor, 0.975, "Período da infração",
                    transform=blended_transform_factory(ax.transData, ax.transAxes),
                    ha=ha, va="top", fontsize=_NOTE_PT, fontfamily=_FONT, color=_HIGHLIGHT_TEXT, zorder=6,
                    bbox={"boxstyle": "round,pad=0.25", "facecolor": "white", "edgecolor": "none", "alpha": 0.85})

    for a, b in zip(gx[visible_gaps], gx[visible_gaps + 1], strict=True):  # one span per gap, not per ping
        ax.axvspan(a, b, facecolor=_GAP_FILL, edgecolor="#9a9a9a", linewidth=0, hatch="////", zorder=0.4)

    for moment, _ in marks:
        ax.axvline(_mpl_dates(np.array([moment.timestamp()]))[0], color=_MARK_COLOR, linestyle=(0, (1.5, 1.5)),
                   linewidth=1.6, zorder=3.5)

    if speed_limit_kmh is not None:
        ax.axhline(speed_limit_kmh, color=_LIMIT_COLOR, linestyle=(0, (6, 3)), linewidth=1.3, zorder=3)

    if shown:
        ax.plot(_break_at(gx, gaps), _break_at(view.speed, gaps), color=_SPEED_COLOR, linewidth=1.3,
                zorder=4, solid_joinstyle="round")
        # Dots on every ping when there are few; otherwise on the isolated ones a line cannot show.
        dots = np.ones(len(view), dtype=bool) if shown <= 150 else _isolated(len(view), gaps)
        ax.plot(gx[dots], view.speed[dots], linestyle="none", marker="o", markersize=2.6,
                color=_SPEED_COLOR, zorder=5)
    else:
        _empty_note(ax)

    ax.xaxis.set_major_locator(mdates.AutoDateLocator(tz=tz, minticks=5, maxticks=11))
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M", tz=tz))
    first, last = _local(w0, tz).date(), _local(w1, tz).date()
    days = first.strftime("%d/%m/%Y") + ("" if first == last else " a " + last.strftime("%d/%m/%Y"))
    ax.set_xlabel(f"Horário local ({tz.key}) – {days}", fontsize=_LABEL_PT, fontfamily=_FONT)
    ax.set_ylabel("Velocidade (km/h)", fontsize=_LABEL_PT, fontfamily=_FONT)
    _style_ticks(ax)
    for spine in ax.spines.values():
        spine.set_color("#777777")
    return _png(fig)


# ------------------------------------------------------------------- tachograph disc

_R_CENTER = 0.27  # date and summary in the middle
_R_ACT0, _R_ACT1 = 0.30, 0.37  # driving/standing band
_R_SPEED0, _R_SPEED1 = 0.42, 0.92  # 0 km/h .. max_speed_kmh
_R_RIM = 1.0
_R_HOURS = 1.075  # hour numerals


def tachograph_disc(
    track: Track,
    *,
    day: date,
    tz: ZoneInfo,
    highlight: tuple[datetime, datetime] | None = None,
    max_speed_kmh: float = 120,
    title: str,
    max_gap_s: float = GAP_S,
    moving_kmh: float = MOVING_KMH,
) -> bytes:
    """The 24-hour circular tachograph disc (disco diagrama) of the local `day`.

    24 h clockwise with 0 h at the top; speed is the radial trace in the outer band (rings
    every 20 km/h up to `max_speed_kmh`); the inner band shows driving (speed above
    `moving_kmh`, thick) and standing (thin); `highlight` is shaded. Only the pings of that
    local day are drawn. Returns PNG bytes of DISC_PX.
    """
    if max_speed_kmh <= 0:
        raise ValueError("max_speed_kmh must be positive")
    d0 = datetime.combine(day, time(0), tzinfo=tz).timestamp()
    d1 = datetime.combine(day + timedelta(days=1), time(0), tzinfo=tz).timestamp()
    span = d1 - d0  # 86400 s except on a DST change, where the disc's 24 h are stretched
    all_pings = _pings(track)
    pings = all_pings.take((all_pings.s >= d0) & (all_pings.s < d1))
    n = len(pings)

    def theta(s):
        return 2 * np.pi * (np.asarray(s, dtype=float) - d0) / span

    fig = _figure(DISC_PX)
    title_bottom = _title(fig, title)
    width, height = fig.bbox.width, fig.bbox.height
    side = min(title_bottom * height - 16, 660.0)  # disc square, in pixels
    ax = fig.add_axes((12 / width, (title_bottom * height - 8 - side) / height, side / width, side / height),
                      projection="polar")
    ax.set_theta_zero_location("N")
    ax.set_theta_direction(-1)
    ax.set_ylim(0, 1.13)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    ax.spines["polar"].set_visible(False)
    ax.set_facecolor("none")

    full = np.linspace(0, 2 * np.pi, 721)
    ax.fill_between(full, 0, _R_RIM, color=_DISC_PAPER, zorder=0, linewidth=0)
    ax.plot(full, np.full_like(full, _R_RIM), color=_DISC_INK, linewidth=1.2, zorder=2)
    ax.plot(full, np.full_like(full, _R_SPEED0), color=_DISC_INK, linewidth=0.8, zorder=2)
    for r in (_R_ACT0, _R_ACT1):
        ax.plot(full, np.full_like(full, r), color="#9a9a9a", linewidth=0.5, zorder=2)
    ax.fill_between(full, 0, _R_CENTER, color="white", zorder=1, linewidth=0)
    ax.plot(full, np.full_like(full, _R_CENTER), color="#9a9a9a", linewidth=0.6, zorder=2)

    def radius(speed):
        clipped = np.clip(np.asarray(speed, dtype=float), 0, max_speed_kmh)
        return _R_SPEED0 + (_R_SPEED1 - _R_SPEED0) * clipped / max_speed_kmh

    rings = np.arange(20, max_speed_kmh + 1e-9, 20)
    for v in rings:
        ax.plot(full, np.full_like(full, radius(v)), color="#c9c2a8", linewidth=0.5, zorder=1.5)
    # Minute scale on the rim: hour, quarter and 5-minute ticks.
    minutes = np.arange(0, 24 * 60, 5)
    th = 2 * np.pi * minutes / (24 * 60)
    hour, quarter = minutes % 60 == 0, (minutes % 15 == 0) & (minutes % 60 != 0)
    five = ~hour & ~quarter
    ax.vlines(th[hour], _R_SPEED0, _R_RIM, color="#c9c2a8", linewidth=0.5, zorder=1.5)
    ax.vlines(th[hour], _R_SPEED1, _R_RIM, color=_DISC_INK, linewidth=1.0, zorder=2)
    ax.vlines(th[quarter], _R_RIM - 0.045, _R_RIM, color=_DISC_INK, linewidth=0.7, zorder=2)
    ax.vlines(th[five], _R_RIM - 0.025, _R_RIM, color=_DISC_INK, linewidth=0.5, zorder=2)
    for h in range(24):
        ax.text(2 * np.pi * h / 24, _R_HOURS, "0/24" if h == 0 else str(h), ha="center", va="center",
                fontsize=_TICK_PT + 0.5 if h % 6 == 0 else _TICK_PT, fontfamily=_FONT,
                fontweight="bold" if h % 6 == 0 else "normal", color=_DISC_INK)
    # Speed ring labels along the 0 h radius (just after midnight, where a bus rarely runs).
    label_theta = 2 * np.pi * 0.25 / 24
    for v in rings:
        ax.text(label_theta, radius(v), _num(v), ha="center", va="center", fontsize=_NOTE_PT, fontfamily=_FONT,
                color="#7a7058", zorder=3,
                bbox={"boxstyle": "square,pad=0.08", "facecolor": _DISC_PAPER, "edgecolor": "none"})
    ax.text(label_theta, _R_SPEED0 - 0.025, "km/h", ha="center", va="center", fontsize=_NOTE_PT,
            fontfamily=_FONT, color="#7a7058", zorder=3)

    handles: list = []
    if highlight is not None:
        h0, h1 = _interval(highlight, "highlight")
        a, b = max(h0, d0), min(h1, d1)
        if b >= a:
            ta, tb = theta([a, b])
            arc = np.linspace(ta, tb, max(int((tb - ta) / 0.005), 2))
            ax.fill_between(arc, _R_ACT0 - 0.02, _R_RIM, color=_HIGHLIGHT_FILL, alpha=0.9, zorder=1.2, linewidth=0)
            # A short infraction is a thin wedge: mark it on the rim as well.
            ax.plot(arc, np.full_like(arc, _R_RIM + 0.012), color=_LIMIT_COLOR, linewidth=3.5,
                    solid_capstyle="butt", zorder=3)
            ax.plot([ta, tb], [_R_RIM + 0.012] * 2, linestyle="none", marker="|", markersize=9,
                    markeredgewidth=1.4, color=_LIMIT_COLOR, zorder=3)
            middle = (ta + tb) / 2  # and point at it from outside the rim
            ax.plot([middle], [_R_RIM + 0.038], linestyle="none", marker=(3, 0, 180 - math.degrees(middle)),
                    markersize=9, color=_LIMIT_COLOR, zorder=3)
            handles.append(Patch(facecolor=_HIGHLIGHT_FILL, edgecolor=_LIMIT_COLOR, linewidth=0.8,
                                 label="Período da infração"))

    gaps = _gap_starts(pings.s, max_gap_s)
    summary: list[str] = [f"Dia: {day.strftime('%d/%m/%Y')}", f"Fuso: {tz.key}"]
    if n:
        t = theta(pings.s)
        ax.plot(_break_at(t, gaps), _break_at(radius(pings.speed), gaps), color="#111111", linewidth=0.9,
                zorder=4, solid_joinstyle="round")
        lonely = _isolated(n, gaps)
        ax.plot(t[lonely], radius(pings.speed[lonely]), linestyle="none", marker="o", markersize=2.2,
                color="#111111", zorder=4)
        # Activity band: each interval between consecutive pings (not across a gap) is driving
        # or standing according to the speed at its start.
        joined = np.ones(max(n - 1, 0), dtype=bool)
        joined[gaps] = False
        moving = pings.speed[:-1] > moving_kmh
        dt = np.diff(pings.s)
        r_mid = (_R_ACT0 + _R_ACT1) / 2
        for mask, lw in ((joined & moving, 7.0), (joined & ~moving, 1.6)):
            idx = np.flatnonzero(mask)
            if len(idx):
                seg_t = np.column_stack([t[idx], t[idx + 1], np.full(len(idx), np.nan)]).ravel()
                ax.plot(seg_t, np.where(np.isnan(seg_t), np.nan, r_mid), color="#222222", linewidth=lw,
                        solid_capstyle="butt", zorder=4)
        ax.plot(t[lonely], np.full(int(lonely.sum()), r_mid), linestyle="none", marker="s", markersize=2.5,
                color="#222222", zorder=4)
        fastest = int(np.nanargmax(pings.speed)) if np.isfinite(pings.speed).any() else 0
        summary += [
            _plural(n, "registro", "registros"),
            f"Primeiro: {_local(pings.s[0], tz):%H:%M:%S}",
            f"Último: {_local(pings.s[-1], tz):%H:%M:%S}",
            f"Em movimento: {_duration(dt[joined & moving].sum())}",
            f"Parado: {_duration(dt[joined & ~moving].sum())}",
            f"Sem registro: {_duration(dt[~joined].sum())}",
            f"Vel. máxima: {_num(pings.speed[fastest])} km/h",
            f"às {_local(pings.s[fastest], tz):%H:%M:%S}",
        ]
    else:
        ax.text(0, 0, "Sem registros\nno período", ha="center", va="center", fontsize=9.5,
                fontfamily=_FONT, color="#555555", zorder=6)
    if n:
        ax.text(0, 0, day.strftime("%d/%m/%Y"), ha="center", va="center", fontsize=10, fontweight="bold",
                fontfamily=_FONT, color=_DISC_INK, zorder=6)

    handles = [
        Line2D([], [], color="#111111", linewidth=0.9, label="Velocidade"),
        Line2D([], [], color="#222222", linewidth=7.0, solid_capstyle="butt",
               label=f"Em movimento (> {_amount(moving_kmh)} km/h)"),
        Line2D([], [], color="#222222", linewidth=1.6, label="Parado"),
        *handles,
    ]
    renderer = fig.canvas.get_renderer()
    panel_x = (12 + side + 28) / width
    panel_w = width - 12 - side - 28 - 12
    legend = fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(panel_x, title_bottom - 24 / height),
                        frameon=False, prop={"family": _FONT, "size": _DISC_LEGEND_PT}, handlelength=2.4,
                        borderaxespad=0, borderpad=0, labelspacing=0.6, title="Legenda", alignment="left",
                        title_fontproperties={"family": _FONT, "size": _DISC_LEGEND_PT, "weight": "bold"})
    y = legend.get_window_extent(renderer).y0 - 26
    fig.text(panel_x, y / height, "Resumo do dia", ha="left", va="top", fontsize=_DISC_LEGEND_PT, fontweight="bold",
             fontfamily=_FONT)
    y -= _DISC_LEGEND_PT / 72 * DPI + 10
    fig.text(panel_x, y / height, "\n".join(summary), ha="left", va="top", fontsize=_DISC_LEGEND_PT,
             fontfamily=_FONT, linespacing=1.3, color="#222222")
    note = (f"Anel externo: velocidade de 0 a {_amount(max_speed_kmh)} km/h; anel interno: em movimento "
            f"(traço grosso) ou parado (traço fino). Registros separados por mais de {_amount(max_gap_s)} s "
            "não são ligados.")
    fig.text(panel_x, 10 / height, "\n".join(_wrap(fig, note, panel_w, _NOTE_PT, max_lines=6)), ha="left",
             va="bottom", fontsize=_NOTE_PT, fontfamily=_FONT, color="#666666", linespacing=1.3)
    return _png(fig)


# ------------------------------------------------------------------------------- map


def _polygon_path(geometry) -> MplPath | None:
    """A matplotlib path (holes included) of a shapely (Multi)Polygon."""
    parts = [geometry] if geometry.geom_type == "Polygon" else list(getattr(geometry, "geoms", ()))
    vertices, codes = [], []
    for polygon in parts:
        if polygon.is_empty:
            continue
        for ring in (polygon.exterior, *polygon.interiors):
            xy = np.asarray(ring.coords)
            ring_codes = np.full(len(xy), MplPath.LINETO, dtype=MplPath.code_type)
            ring_codes[0], ring_codes[-1] = MplPath.MOVETO, MplPath.CLOSEPOLY
            vertices.append(xy)
            codes.append(ring_codes)
    if not vertices:
        return None
    return MplPath(np.concatenate(vertices), np.concatenate(codes))


def _nice_length(span_m: float) -> float:
    """A round scale-bar length of at most half the map's width (500 m on a 1–2 km view)."""
    for length in (5000, 2000, 1000, 500, 200, 100, 50, 20, 10):
        if length <= span_m * 0.5:
            return float(length)
    return 10.0


_LABEL_SPOTS = (  # (dx, dy) in points from the labelled point, with the text's alignment
    (7, 4, "left", "bottom"), (7, -4, "left", "top"), (-7, 4, "right", "bottom"), (-7, -4, "right", "top"),
    (9, 0, "left", "center"), (-9, 0, "right", "center"), (0, 9, "center", "bottom"), (0, -9, "center", "top"),
)


def _dense_display_points(ax, lines: Sequence[np.ndarray], step_px: float = 3.0) -> np.ndarray:
    """Display coordinates of points every ~step_px along polylines (NaN rows break them), in the axes."""
    box = ax.get_window_extent()
    out = [np.empty((0, 2))]
    for line in lines:
        if len(line) == 0:
            continue
        pts = ax.transData.transform(line)
        out.append(pts[np.isfinite(pts).all(axis=1)])
        if len(pts) < 2:
            continue
        a, b = pts[:-1], pts[1:]
        ok = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
        a, b = a[ok], b[ok]
        k = np.clip(np.ceil(np.hypot(*(b - a).T) / step_px).astype(int), 1, 2000)
        seg = np.repeat(np.arange(len(a)), k)
        frac = (np.arange(k.sum()) - np.repeat(np.cumsum(k) - k, k)) / np.repeat(k, k)
        out.append(a[seg] + frac[:, None] * (b[seg] - a[seg]))
    pts = np.concatenate(out)
    keep = (pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1) & (pts[:, 1] >= box.y0) & (pts[:, 1] <= box.y1)
    return pts[keep]


def _quietest_corner(points: np.ndarray, box, w: float, h: float, corners: Sequence[str], *, margin: float,
                     avoid: Sequence[Bbox] = ()) -> Bbox:
    """The w x h display box at one of the axes' `corners` ("ul", "lc", ...: lower/upper, left/centre/right)
    that covers the fewest points and no `avoid` box (ties: the first listed)."""
    best, first = None, None
    for rank, corner in enumerate(corners):
        x0 = {"l": box.x0 + margin, "r": box.x1 - margin - w, "c": (box.x0 + box.x1 - w) / 2}[corner[1]]
        y0 = box.y0 + margin if corner[0] == "l" else box.y1 - margin - h
        candidate = Bbox.from_bounds(x0, y0, w, h)
        first = candidate if first is None else first
        if any(candidate.overlaps(other) for other in avoid):
            continue
        covered = int(((points[:, 0] >= x0) & (points[:, 0] <= x0 + w)
                       & (points[:, 1] >= y0) & (points[:, 1] <= y0 + h)).sum())
        if best is None or (covered, rank) < best[:2]:
            best = (covered, rank, candidate)
    return best[2] if best is not None else first


def _scale_bar(ax, box: Bbox, length: float, m_per_px: float) -> None:
    """A four-segment black and white scale bar of `length` metres inside display box `box`."""
    to_data = ax.transData.inverted()
    (bx0, by0), (bx1, by1) = to_data.transform([(box.x0, box.y0), (box.x1, box.y1)])
    ax.add_patch(Rectangle((bx0, by0), bx1 - bx0, by1 - by0, facecolor="white", edgecolor="#999999",
                           linewidth=0.6, alpha=0.88, zorder=10))
    left = bx0 + 30 * m_per_px
    bottom = by0 + 14 * m_per_px
    thick = 7 * m_per_px
    quarter = length / 4
    for i in range(4):
        ax.add_patch(Rectangle((left + i * quarter, bottom), quarter, thick, facecolor="#222222" if i % 2 == 0
                               else "white", edgecolor="#222222", linewidth=0.8, zorder=11))

    def label(x: float, text: str) -> None:
        ax.text(x, bottom + thick + 4 * m_per_px, text, ha="center", va="bottom", fontsize=_NOTE_PT,
                fontfamily=_FONT, zorder=11)

    unit, scale = ("km", 1000.0) if length >= 1000 else ("m", 1.0)
    decimals = 0 if (length / 2 / scale).is_integer() else 1
    label(left, "0")
    label(left + length / 2, _num(length / 2 / scale, decimals))
    label(left + length, f"{_num(length / scale)} {unit}")


def _fit_aspect(x0, x1, y0, y1, aspect: float) -> tuple[float, float, float, float]:
    """Grow the box (about its centre) to width/height == aspect."""
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    w, h = x1 - x0, y1 - y0
    if w / h < aspect:
        w = h * aspect
    else:
        h = w / aspect
    return cx - w / 2, cx + w / 2, cy - h / 2, cy + h / 2


def _map_extent(focus: np.ndarray, *, margin: float, minimum: float, aspect: float):
    x0, y0 = focus.min(axis=0)
    x1, y1 = focus.max(axis=0)
    pad = margin * max(x1 - x0, y1 - y0) + 100.0
    x0, x1, y0, y1 = x0 - pad, x1 + pad, y0 - pad, y1 + pad
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    w, h = max(x1 - x0, minimum), max(y1 - y0, minimum)
    return _fit_aspect(cx - w / 2, cx + w / 2, cy - h / 2, cy + h / 2, aspect)


FIRST_OF_DAY, LAST_OF_DAY = "Primeiro registro do dia", "Último registro do dia"


def track_map(
    track: Track,
    itinerary: Itinerary,
    *,
    highlight: tuple[datetime, datetime] | None = None,
    marked: Sequence[tuple[float, float]] = (),
    epsg: int,
    title: str,
    max_gap_s: float = GAP_S,
) -> bytes:
    """The recorded track over the itinerary and its tolerated corridor, in metres (EPSG `epsg`).

    Pings inside `highlight` are drawn red, `marked` (lon, lat) points as red crosses; with a
    highlight the map zooms on the highlighted pings and marked points (never less than
    MIN_MAP_SPAN_M across), otherwise it shows the whole itinerary and track. Red is used for
    nothing else. Returns PNG bytes of MAP_PX.
    """
    forward = Transformer.from_crs(4326, epsg, always_xy=True)  # per call: transformers are not shared across threads

    def project(lon, lat) -> np.ndarray:
        x, y = forward.transform(np.asarray(lon, dtype=float), np.asarray(lat, dtype=float))
        return np.column_stack([np.atleast_1d(x), np.atleast_1d(y)]).reshape(-1, 2)

    pings = _pings(track)
    n = len(pings)
    xy = project(pings.lon, pings.lat) if n else np.empty((0, 2))
    shape_ll = np.asarray(itinerary.lonlat, dtype=float).reshape(-1, 2)
    shape_xy = project(shape_ll[:, 0], shape_ll[:, 1]) if len(shape_ll) else np.empty((0, 2))
    stop_ll = np.array([(lon, lat) for _, lon, lat in itinerary.stops], dtype=float).reshape(-1, 2)
    stop_xy = project(stop_ll[:, 0], stop_ll[:, 1]) if len(stop_ll) else np.empty((0, 2))
    marked_ll = np.asarray(marked, dtype=float).reshape(-1, 2)
    marked_xy = project(marked_ll[:, 0], marked_ll[:, 1]) if len(marked_ll) else np.empty((0, 2))
    hot = np.zeros(n, dtype=bool)
    if highlight is not None:
        h0, h1 = _interval(highlight, "highlight")
        hot = (pings.s >= h0) & (pings.s <= h1)

    fig = _figure(MAP_PX)
    title_bottom = _title(fig, title)
    width, height = fig.bbox.width, fig.bbox.height
    legend_px = 118
    rect = (14 / width, legend_px / height, 1 - 28 / width, title_bottom - 12 / height - legend_px / height)
    ax = fig.add_axes(rect)
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_color("#888888")
    ax.set_facecolor("#fdfdfb")
    aspect = (rect[2] * width) / (rect[3] * height)

    everything = np.concatenate([shape_xy, stop_xy, xy, marked_xy])
    focus = np.concatenate([xy[hot], marked_xy]) if highlight is not None else np.empty((0, 2))
    if len(focus):
        x0, x1, y0, y1 = _map_extent(focus, margin=0.25, minimum=MIN_MAP_SPAN_M, aspect=aspect)
    elif len(everything):
        x0, x1, y0, y1 = _map_extent(everything, margin=0.04, minimum=MIN_MAP_SPAN_M, aspect=aspect)
    else:
        x0, x1, y0, y1 = _fit_aspect(-500.0, 500.0, -500.0, 500.0, aspect)
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal", adjustable="datalim")

    handles: list = []
    corridor_label = f"Corredor de tolerância ({_amount(itinerary.corridor_m)} m)"
    if len(shape_xy) >= 2 and itinerary.corridor_m > 0:
        corridor = shapely.buffer(shapely.linestrings(shape_xy), itinerary.corridor_m)
        path = _polygon_path(corridor)
        if path is not None:
            ax.add_patch(PathPatch(path, facecolor=_CORRIDOR_FILL, edgecolor="#a8c99c", linewidth=0.6, zorder=1))
        handles.append(Patch(facecolor=_CORRIDOR_FILL, edgecolor="#a8c99c", linewidth=0.6, label=corridor_label))
    if len(shape_xy):
        ax.plot(shape_xy[:, 0], shape_xy[:, 1], color=_ITINERARY_COLOR, linewidth=1.6, zorder=2,
                solid_joinstyle="round", solid_capstyle="round")
        handles.insert(0, Line2D([], [], color=_ITINERARY_COLOR, linewidth=1.6, label="Itinerário"))

    if len(stop_xy):
        ax.plot(stop_xy[:, 0], stop_xy[:, 1], linestyle="none", marker="o", markersize=6.5,
                markerfacecolor="white", markeredgecolor="#222222", markeredgewidth=1.3, zorder=6)
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=6.5, markerfacecolor="white",
                              markeredgecolor="#222222", markeredgewidth=1.3, label="Pontos de parada"))

    gaps = _gap_starts(pings.s, max_gap_s)
    if n:
        ax.plot(_break_at(xy[:, 0], gaps), _break_at(xy[:, 1], gaps), color=_TRACK_COLOR, linewidth=1.3,
                zorder=4, solid_joinstyle="round", alpha=0.9)
        ax.plot(xy[~hot, 0], xy[~hot, 1], linestyle="none", marker="o", markersize=3.0, color=_TRACK_COLOR,
                markeredgecolor="white", markeredgewidth=0.4, zorder=5)
        handles.append(Line2D([], [], color=_TRACK_COLOR, linewidth=1.3, marker="o", markersize=3.0,
                              markeredgecolor="white", markeredgewidth=0.4, label="Trajeto registrado"))
        if hot.any():
            # Red line only between consecutive highlighted pings that are not separated by a gap.
            seg = np.flatnonzero(hot[:-1] & hot[1:] & (np.diff(pings.s) <= max_gap_s))
            if len(seg):
                sx = np.column_stack([xy[seg, 0], xy[seg + 1, 0], np.full(len(seg), np.nan)]).ravel()
                sy = np.column_stack([xy[seg, 1], xy[seg + 1, 1], np.full(len(seg), np.nan)]).ravel()
                ax.plot(sx, sy, color=_RED, linewidth=1.8, zorder=7)
            ax.plot(xy[hot, 0], xy[hot, 1], linestyle="none", marker="o", markersize=4.2, color=_RED,
                    markeredgecolor="white", markeredgewidth=0.5, zorder=8)
        if hot.any():
            handles.append(Line2D([], [], color=_RED, linewidth=1.8, marker="o", markersize=4.2,
                                  markeredgecolor="white", markeredgewidth=0.5,
                                  label="Registros no período da infração"))
    if len(marked_xy):
        ax.plot(marked_xy[:, 0], marked_xy[:, 1], linestyle="none", marker="X", markersize=10,
                color=_RED, markeredgecolor="white", markeredgewidth=0.8, zorder=9)
        handles.append(Line2D([], [], linestyle="none", marker="X", markersize=10, color=_RED,
                              markeredgecolor="white", markeredgewidth=0.8, label="Pontos da infração"))

    # Decorations go to the corners that hide the fewest drawn points: scale bar, then north arrow.
    renderer = fig.canvas.get_renderer()
    ax.apply_aspect()
    axes_box = ax.get_window_extent(renderer)
    drawn = _dense_display_points(ax, [np.column_stack([_break_at(xy[:, 0], gaps), _break_at(xy[:, 1], gaps)]),
                                       shape_xy, stop_xy, marked_xy])
    (vx0, vx1), (vy0, vy1) = ax.get_xlim(), ax.get_ylim()
    m_per_px = (vx1 - vx0) / axes_box.width
    length = _nice_length(vx1 - vx0)
    bar_w, bar_h = length / m_per_px + 2 * 30, 50.0
    bar_box = _quietest_corner(drawn, axes_box, bar_w, bar_h, ("ll", "lr", "ul", "ur"), margin=10)
    _scale_bar(ax, bar_box, length, m_per_px)
    arrow_box = _quietest_corner(drawn, axes_box, 44, 66, ("ur", "ul", "lr", "ll"), margin=10, avoid=[bar_box])
    cx, cy = (vx0 + vx1) / 2, (vy0 + vy1) / 2
    inverse = Transformer.from_crs(epsg, 4326, always_xy=True)
    clon, clat = inverse.transform(cx, cy)
    nx, ny = forward.transform(clon, min(clat + 0.01, 89.9))
    angle = math.atan2(nx - cx, ny - cy)  # grid bearing of true north (meridian convergence)
    base = ((arrow_box.x0 + arrow_box.x1) / 2, arrow_box.y0 + 8)  # display pixels
    tip = (base[0] + 36 * math.sin(angle), base[1] + 36 * math.cos(angle))
    to_axes = ax.transAxes.inverted()
    ax.annotate("", xy=to_axes.transform(tip), xycoords="axes fraction", xytext=to_axes.transform(base),
                textcoords="axes fraction", zorder=10,
                arrowprops={"arrowstyle": "-|>,head_length=0.8,head_width=0.35", "color": "#222222",
                            "linewidth": 1.6, "shrinkA": 0, "shrinkB": 0})
    ax.text(*to_axes.transform((tip[0] + 4 * math.sin(angle), tip[1] + 4 * math.cos(angle))), "N",
            transform=ax.transAxes, ha="center", va="bottom", fontsize=10, fontweight="bold", fontfamily=_FONT,
            zorder=10)
    obstacles = [bar_box, arrow_box]
    if not n:  # the note goes where it hides nothing (the itinerary usually crosses the centre)
        _empty_note(ax)
        note = ax.texts[-1]
        size = note.get_window_extent(renderer).padded(10)
        spot = _quietest_corner(drawn, axes_box, size.width, size.height, ("uc", "lc", "ul", "ur", "ll", "lr"),
                                margin=14, avoid=[bar_box, arrow_box])
        note.set_position(to_axes.transform(((spot.x0 + spot.x1) / 2, (spot.y0 + spot.y1) / 2)))
        obstacles.append(spot)

    # Labels: each at the candidate position that covers the fewest drawn points and no other
    # label; dropped if none fits inside the map. Labels sit under the track, never hiding it.
    def place(x: float, y: float, text: str, **style) -> None:
        best = None
        for rank, (dx, dy, ha, va) in enumerate(_LABEL_SPOTS):
            label = ax.annotate(text, xy=(x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va,
                                fontfamily=_FONT, annotation_clip=False, parse_math=False, **style)
            box = label.get_window_extent(renderer).padded(3)
            label.remove()
            if not (box.x0 >= axes_box.x0 and box.x1 <= axes_box.x1
                    and box.y0 >= axes_box.y0 and box.y1 <= axes_box.y1):
                continue
            if any(box.overlaps(other) for other in obstacles):
                continue
            covered = int(((drawn[:, 0] >= box.x0) & (drawn[:, 0] <= box.x1)
                           & (drawn[:, 1] >= box.y0) & (drawn[:, 1] <= box.y1)).sum())
            if best is None or (covered, rank) < best[:2]:
                best = (covered, rank, dx, dy, ha, va, box)
        if best is not None:
            _, _, dx, dy, ha, va, box = best
            ax.annotate(text, xy=(x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va,
                        fontfamily=_FONT, annotation_clip=False, parse_math=False, **style)
            obstacles.append(box)

    label_box = {"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.75}
    if n:
        # the ends of the vehicle's recorded day, not of the trip: the itinerary's stops
        # name the trip's origin and destination (a late trip's origin is not its "Fim")
        ends = [(0, FIRST_OF_DAY), (n - 1, LAST_OF_DAY)]
        if n == 1 or np.hypot(*(xy[-1] - xy[0])) < 1.0:
            ends = [(0, "Primeiro e último registro do dia" if n > 1 else "Registro único")]
        for i, name in ends:
            is_end = name == LAST_OF_DAY
            ax.plot(xy[i, 0], xy[i, 1], linestyle="none", marker="s" if is_end else "o", markersize=7.5,
                    markerfacecolor="#222222" if is_end else "#2e7d32", markeredgecolor="white",
                    markeredgewidth=1.0, zorder=9)
            place(xy[i, 0], xy[i, 1], name, fontsize=_LABEL_PT, fontweight="bold", color="#1b1b1b", zorder=3.6,
                  bbox={**label_box, "edgecolor": "#555555", "linewidth": 0.6, "alpha": 0.9})
    in_view = (stop_xy[:, 0] >= x0) & (stop_xy[:, 0] <= x1) & (stop_xy[:, 1] >= y0) & (stop_xy[:, 1] <= y1)
    for i in np.flatnonzero(in_view):
        place(stop_xy[i, 0], stop_xy[i, 1], itinerary.stops[i][0], fontsize=_NOTE_PT, color="#222222",
              zorder=3.5, bbox=label_box)

    crs_name = CRS.from_epsg(epsg).name
    fig.text(0.985, 8 / height, f"Coordenadas projetadas em metros: {crs_name} (EPSG:{epsg}). Sem mapa de fundo.",
             ha="right", va="bottom", fontsize=_NOTE_PT, fontfamily=_FONT, color="#666666")
    if handles:
        fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, (legend_px - 10) / height), ncol=3,
                   frameon=False, prop={"family": _FONT, "size": _NOTE_PT + 0.5}, handlelength=2.2,
                   columnspacing=1.8, borderaxespad=0)
    return _png(fig)


# ------------------------------------------------------------------------- catraca

CATRACA_CHART_PX = (1004, 600)  # 17.0 x 10.2 cm
_SERVICE_FILL = "#e3edf7"
_SEAL_OK = "#8bbf7a"


def catraca_chart(
    record: Turnstile,
    *,
    window: tuple[datetime, datetime],
    highlight: tuple[datetime, datetime] | None = None,
    in_service: Sequence[tuple[datetime, datetime]] = (),
    tz: ZoneInfo,
    title: str,
    max_silence_s: float,
) -> bytes:
    """The catraca over `window`: its counter (cumulative passages) as a step line, and
    below it a strip with the seal's state between readings (green intact, red broken)
    and a strip of the periods in service. Readings reporting a fault are red crosses;
    stretches without readings longer than `max_silence_s` are hatched grey, never
    joined; `highlight` (the infraction) is shaded on every strip. Returns PNG bytes of
    CATRACA_CHART_PX."""
    w0, w1 = _interval(window, "window")
    if w1 <= w0:
        raise ValueError("window must not be empty")
    n = len(record.t)
    s = np.fromiter((x.timestamp() for x in record.t), dtype=float, count=n)
    order = np.argsort(s, kind="stable")
    s = s[order]
    counter = np.asarray(record.counter, dtype=float).reshape(n)[order]
    intact = np.asarray(record.seal_intact, dtype=bool).reshape(n)[order]
    fault = np.asarray(record.fault, dtype=bool).reshape(n)[order]
    inside = (s >= w0) & (s <= w1)
    x = _mpl_dates(s)
    x0, x1 = _mpl_dates(np.array([w0, w1]))
    gaps = _gap_starts(s, max_silence_s)

    handles: list = [Line2D([], [], color=_SPEED_COLOR, linewidth=1.3, marker="o", markersize=2.4,
                            label="Contador da catraca")]
    handles.append(Patch(facecolor=_SEAL_OK, label="Lacre íntegro"))
    if (~intact[inside]).any():
        handles.append(Patch(facecolor=_RED, label="Lacre rompido"))
    if fault[inside].any():
        handles.append(Line2D([], [], linestyle="none", marker="X", markersize=8, color=_RED,
                              markeredgecolor="white", label="Catraca em falha"))
    if len(gaps):
        handles.append(Patch(facecolor=_GAP_FILL, edgecolor="#9a9a9a", hatch="////",
                             label=f"Sem registro (> {ptbr.duration(max_silence_s)})"))
    if highlight is not None:
        handles.append(Patch(facecolor=_HIGHLIGHT_FILL, edgecolor=_LIMIT_COLOR, linewidth=0.8,
                             label="Período da infração"))

    fig = _figure(CATRACA_CHART_PX)
    title_bottom = _title(fig, title)
    width, height = fig.bbox.width, fig.bbox.height
    fig.text(0.985, 8 / height, _plural(int(inside.sum()), "leitura exibida", "leituras exibidas"), ha="right",
             va="bottom", fontsize=_NOTE_PT, fontfamily=_FONT, color="#555555")
    legend = _legend_rows(fig, handles, y_px=30, width_px=width - 40, loc="lower center", handlelength=2.2,
                          columnspacing=1.5)
    legend_top = 30 + legend.get_window_extent(fig.canvas.get_renderer()).height
    left, right = 120 / width, 18 / width
    strip = 22 / height
    bottom = (legend_top + 64) / height
    service_ax = fig.add_axes((left, bottom, 1 - left - right, strip))
    seal_ax = fig.add_axes((left, bottom + strip + 6 / height, 1 - left - right, strip), sharex=service_ax)
    top0 = bottom + 2 * strip + 18 / height
    ax = fig.add_axes((left, top0, 1 - left - right, title_bottom - 14 / height - top0), sharex=service_ax)
    ax.set_xlim(x0, x1)

    for a, b in in_service:
        sa, sb = _mpl_dates(np.array([a.timestamp(), b.timestamp()]))
        service_ax.axvspan(sa, sb, facecolor=_SPEED_COLOR, alpha=0.55, linewidth=0)
        ax.axvspan(sa, sb, facecolor=_SERVICE_FILL, linewidth=0, zorder=0.2)
    # The seal's state holds from a reading to the next, unless the catraca fell silent.
    silent = set(gaps.tolist())
    for i in range(n - 1):
        if i not in silent:
            seal_ax.axvspan(x[i], x[i + 1], facecolor=_SEAL_OK if intact[i] else _RED, linewidth=0)
    for i in np.flatnonzero(~intact):
        seal_ax.axvline(x[i], color=_RED, linewidth=1.2)
    for target in (ax, seal_ax, service_ax):
        for a in gaps:
            target.axvspan(x[a], x[a + 1], facecolor=_GAP_FILL, edgecolor="#9a9a9a", hatch="////", linewidth=0,
                           zorder=0.4)
        if highlight is not None:
            h0, h1 = _interval(highlight, "highlight")
            hx0, hx1 = _mpl_dates(np.array([h0, h1]))
            if hx1 - hx0 < (x1 - x0) / 300:  # an instant: wide enough to be seen
                hx0, hx1 = hx0 - (x1 - x0) / 600, hx1 + (x1 - x0) / 600
            target.axvspan(hx0, hx1, facecolor=_HIGHLIGHT_FILL, edgecolor=_LIMIT_COLOR, linewidth=0.8, zorder=0.5,
                           alpha=0.8)
    if inside.any():
        ax.step(_break_at(x, gaps), _break_at(counter, gaps), where="post", color=_SPEED_COLOR, linewidth=1.3,
                zorder=4)
        ax.plot(x[inside], counter[inside], linestyle="none", marker="o", markersize=2.4, color=_SPEED_COLOR,
                zorder=5)
        broken = inside & ~intact
        ax.plot(x[broken], counter[broken], linestyle="none", marker="o", markersize=3.4, color=_RED, zorder=6)
        ax.plot(x[inside & fault], counter[inside & fault], linestyle="none", marker="X", markersize=8,
                color=_RED, markeredgecolor="white", zorder=7)
        low, high = float(counter[inside].min()), float(counter[inside].max())
        pad = max((high - low) * 0.08, 5.0)
        ax.set_ylim(low - pad, high + pad)
    else:
        _empty_note(ax, "Sem leituras da catraca no período")
    ax.yaxis.set_major_formatter(lambda v, _: _num(v))
    ax.set_ylabel("Contador (passagens)", fontsize=_LABEL_PT, fontfamily=_FONT)
    ax.grid(True, color="#d0d0d0", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.tick_params(labelbottom=False)
    seal_ax.tick_params(labelbottom=False)
    for strip_ax, name in ((seal_ax, "Lacre"), (service_ax, "Em serviço")):
        strip_ax.set_yticks([])
        strip_ax.set_ylim(0, 1)
        strip_ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=_NOTE_PT, fontfamily=_FONT)
    service_ax.set_xlim(x0, x1)
    service_ax.xaxis.set_major_locator(mdates.AutoDateLocator(tz=tz, minticks=5, maxticks=12))
    service_ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M", tz=tz))
    first, last = _local(w0, tz).date(), _local(w1, tz).date()
    days = first.strftime("%d/%m/%Y") + ("" if first == last else " a " + last.strftime("%d/%m/%Y"))
    service_ax.set_xlabel(f"Horário local ({tz.key}) – {days}", fontsize=_LABEL_PT, fontfamily=_FONT)
    for target in (ax, seal_ax, service_ax):
        _style_ticks(target)
        for spine in target.spines.values():
            spine.set_color("#777777")
    return _png(fig)
