"""The evidence gráficos of the auto de infração: PNG bytes, sizes, determinism, edge cases.

The synthetic track is a straight road in João Neiva (lat -19.75, lon -40.38, EPSG:31984):
one ping every 10 s heading north at 36 km/h (10 m/s, i.e. 100 m between pings), with
a stretch at 72 km/h between 07:05 and 07:06.

`python tests/dockets/test_charts.py` writes sample pictures (a trip of route 101 of the
João Neiva sample feed) to /tmp/charts-sample-{speed,disc,map}.png for a visual check.
"""

from __future__ import annotations

import csv
import io
import struct
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from matplotlib.image import imread
from pyproj import Transformer

from dockets.charts import (
    DISC_PX,
    MAP_PX,
    SPEED_CHART_PX,
    Itinerary,
    Track,
    speed_time_chart,
    tachograph_disc,
    track_map,
)
from samples import joao_neiva

TZ = ZoneInfo("America/Sao_Paulo")
EPSG = 31984
DAY = date(2026, 12, 3)
T0 = datetime(2026, 12, 3, 7, 0, tzinfo=TZ)
LON0, LAT0 = -40.38, -19.75
M_PER_DEG_LAT = 110_760.0  # close enough at 19.75° S for a synthetic road
EMPTY = Track((), (), (), ())


def road_track(n: int = 60, *, start: datetime = T0, step_s: float = 10.0, fast=(30, 36)) -> Track:
    """n pings every step_s seconds going north at 10 m/s (20 m/s between pings fast[0]..fast[1])."""
    speed = np.full(n, 36.0)
    speed[fast[0]:fast[1]] = 72.0
    north = np.concatenate([[0.0], np.cumsum(speed[:-1] / 3.6 * step_s)])
    return Track(
        t=tuple(start + timedelta(seconds=step_s * i) for i in range(n)),
        lat=tuple((LAT0 + north / M_PER_DEG_LAT).tolist()),
        lon=tuple(np.full(n, LON0).tolist()),
        speed_kmh=tuple(speed.tolist()),
    )


def road_itinerary() -> Itinerary:
    lats = LAT0 - 0.002 + np.arange(11) * 0.0015
    return Itinerary(
        lonlat=tuple((LON0, float(lat)) for lat in lats),
        stops=(("Ponto Inicial", LON0, float(lats[0])), ("Escola Municipal", LON0, float(lats[5])),
               ("Praça da Matriz", LON0, float(lats[-1]))),
        corridor_m=50.0,
    )


def window() -> tuple[datetime, datetime]:
    return T0 - timedelta(minutes=2), T0 + timedelta(minutes=12)


HIGHLIGHT = (T0 + timedelta(seconds=300), T0 + timedelta(seconds=350))


def speed_png(track: Track, **kw) -> bytes:
    args = {"window": window(), "tz": TZ, "title": "Velocidade x tempo – veículo 1234", **kw}
    return speed_time_chart(track, **args)


def disc_png(track: Track, **kw) -> bytes:
    args = {"day": DAY, "tz": TZ, "title": "Disco diagrama – veículo 1234", **kw}
    return tachograph_disc(track, **args)


def map_png(track: Track, **kw) -> bytes:
    args = {"epsg": EPSG, "title": "Trajeto registrado – veículo 1234", **kw}
    return track_map(track, road_itinerary(), **args)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def pixels(data: bytes) -> np.ndarray:
    return imread(io.BytesIO(data), format="png")


def red_pixels(data: bytes) -> int:
    rgb = pixels(data)[..., :3]
    return int(((rgb[..., 0] > 0.8) & (rgb[..., 1] < 0.3) & (rgb[..., 2] < 0.3)).sum())


RENDERERS = {
    "speed": (speed_png, SPEED_CHART_PX),
    "disc": (disc_png, DISC_PX),
    "map": (map_png, MAP_PX),
}


@pytest.mark.parametrize("kind", RENDERERS)
def test_png_of_the_print_size(kind):
    render, size = RENDERERS[kind]
    data = render(road_track(), highlight=HIGHLIGHT)
    assert png_size(data) == size
    # ≈ 17 cm wide at 150 dpi: the text width of A4 with 2 cm margins.
    assert size[0] / 150 * 2.54 == pytest.approx(17.0, abs=0.05)


@pytest.mark.parametrize("kind", RENDERERS)
def test_deterministic(kind):
    render, _ = RENDERERS[kind]
    assert render(road_track(), highlight=HIGHLIGHT) == render(road_track(), highlight=HIGHLIGHT)


@pytest.mark.parametrize("kind", RENDERERS)
def test_different_input_gives_different_picture(kind):
    render, _ = RENDERERS[kind]
    base = render(road_track(), highlight=HIGHLIGHT)
    assert render(road_track(fast=(10, 20)), highlight=HIGHLIGHT) != base
    assert render(road_track()) != base


def test_same_bytes_from_concurrent_threads():
    """No global state: pictures rendered in parallel threads equal the ones rendered alone."""
    jobs = [(render, road_track(fast=(k, k + 6))) for k in (5, 20, 40) for render, _ in RENDERERS.values()]
    alone = [render(track, highlight=HIGHLIGHT) for render, track in jobs]
    with ThreadPoolExecutor(max_workers=6) as pool:
        together = list(pool.map(lambda job: job[0](job[1], highlight=HIGHLIGHT), jobs * 2))
    assert together == alone * 2


def test_no_metadata_chunks_that_vary():
    data = speed_png(road_track())
    assert b"Software" not in data and b"matplotlib" not in data


# ------------------------------------------------------------- edge cases, by what is drawn
#
# The renderers build a matplotlib Figure and encode it in dockets.charts._png; the tests
# catch the Figure there and read back what was plotted (line data, spans, texts), and
# check the PNG's pixels where the Figure says a mark is (display pixels at the charts'
# DPI are the PNG's pixels, rows counted from the top).

EDGE_CASES = {
    "empty": EMPTY,
    "single": road_track(1),  # one ping, 07:00:00 at 36 km/h
    "standing": Track(tuple(T0 + timedelta(seconds=10 * i) for i in range(20)), (LAT0,) * 20, (LON0,) * 20,
                      (0.0,) * 20),  # 20 pings 07:00:00 .. 07:03:10 at 0 km/h
}


def drawn(monkeypatch, render, track, **kw):
    """(the Figure `render` encoded, the PNG bytes it returned)."""
    import dockets.charts as module

    figures = []
    encode = module._png

    def catch(fig):
        figures.append(fig)
        return encode(fig)

    monkeypatch.setattr(module, "_png", catch)
    png = render(track, **kw)
    monkeypatch.setattr(module, "_png", encode)
    [fig] = figures
    assert png == encode(fig)  # the Figure caught is the picture returned
    return fig, png


def lines_of(ax, color, **props):
    """The axes' Line2D drawn in `color` (and with the given linewidth, marker, ...), but
    those plotted with no point (a renderer may plot an empty selection)."""
    from matplotlib.colors import same_color

    return [line for line in ax.lines if same_color(line.get_color(), color) and len(line.get_xdata())
            and all(getattr(line, f"get_{k}")() == v for k, v in props.items())]


def near(expected, tolerance: float):
    """pytest.approx within an absolute tolerance only: the charts' x values are large
    (matplotlib day numbers ~20790, projected metres ~7.8e6), where approx's default
    relative tolerance (1e-6) would let half an hour or metres pass."""
    return pytest.approx(expected, rel=0, abs=tolerance)


SECOND = 1 / 86400  # a second in matplotlib's day numbers


def texts_of(fig) -> list[str]:
    return [t.get_text() for t in fig.texts] + [t.get_text() for ax in fig.axes for t in ax.texts]


def pixel(png: bytes, fig, ax, x: float, y: float) -> np.ndarray:
    """RGB (0..1) of the PNG at the data point (x, y) of `ax`."""
    px, py = ax.transData.transform((x, y))
    rgb = pixels(png)[..., :3]
    return rgb[int(round(fig.bbox.height - py - 0.5)), int(round(px - 0.5))]


def rgb(hex_color: str) -> np.ndarray:
    from matplotlib.colors import to_rgb

    return np.array(to_rgb(hex_color))


def span_x(patch) -> tuple[float, float]:
    """The x extent (data) of an axvspan or fill_between patch/collection."""
    paths = patch.get_paths() if hasattr(patch, "get_paths") else [patch.get_path()]
    transform = patch.get_patch_transform() if hasattr(patch, "get_patch_transform") else None
    xs = np.concatenate([(transform.transform(p.vertices) if transform else p.vertices)[:, 0] for p in paths])
    return float(xs.min()), float(xs.max())


SPEED_RGB, HIGHLIGHT_RGB = rgb("#1f4e8c"), rgb("#f7c6c0")  # dockets.charts _SPEED_COLOR, _HIGHLIGHT_FILL


@pytest.mark.parametrize("highlight", [HIGHLIGHT, None], ids=["highlight", "plain"])
@pytest.mark.parametrize("case", EDGE_CASES)
def test_speed_chart_of_an_edge_case_plots_exactly_its_pings(monkeypatch, case, highlight):
    from matplotlib.dates import date2num

    track = EDGE_CASES[case]
    fig, png = drawn(monkeypatch, speed_png, track, highlight=highlight)
    assert png_size(png) == SPEED_CHART_PX
    [ax] = fig.axes
    x = [date2num(t) for t in track.t]
    speed_lines = lines_of(ax, "#1f4e8c")
    if case == "empty":
        assert speed_lines == []
        assert "Sem registros no período" in texts_of(fig) and "0 registros exibidos" in texts_of(fig)
    else:
        # the trace and its dots (all of them: at most 150 pings) go through every ping, no other
        trace, dots = speed_lines
        for line in (trace, dots):
            assert line.get_xdata() == near(x, SECOND / 100) and line.get_ydata() == near(track.speed_kmh, 1e-9)
        assert dots.get_marker() == "o" and trace.get_linestyle() == "-"
        assert f"{len(x)} {'registro exibido' if len(x) == 1 else 'registros exibidos'}" in texts_of(fig)
        assert "Sem registros no período" not in texts_of(fig)
        # ... and the PNG has the trace's colour at the first ping
        assert np.abs(pixel(png, fig, ax, x[0], track.speed_kmh[0] + 0.2) - SPEED_RGB).max() < 0.1
    # the y axis: max(top speed 36 or 0, 40) × 1.12 = 44.8, up to the next 10 km/h: 0..50
    assert ax.get_ylim() == (0, 50)
    assert ax.get_xlim() == near([date2num(t) for t in window()], SECOND / 100)
    spans = [p for p in ax.patches if np.allclose(p.get_facecolor()[:3], HIGHLIGHT_RGB)]
    if highlight is None:
        assert spans == [] and "Período da infração" not in texts_of(fig)
    else:
        [span] = spans  # the infraction's period, 07:05:00 .. 07:05:50, shaded
        h0, h1 = (date2num(t) for t in highlight)
        assert span_x(span) == near((h0, h1), SECOND / 100)
        assert "Período da infração" in texts_of(fig)
        # its middle, at 2,5 km/h (between grid lines, below the empty chart's note), is the
        # highlight's colour in the PNG
        assert np.abs(pixel(png, fig, ax, (h0 + h1) / 2, 2.5) - HIGHLIGHT_RGB).max() < 0.05


def theta(t: datetime) -> float:
    """The disc's angle of a time of DAY: 24 h clockwise from the top (0 h)."""
    return 2 * np.pi * (t - datetime(2026, 12, 3, 0, 0, tzinfo=TZ)).total_seconds() / 86400


def radius(speed_kmh: float) -> float:
    """The disc's speed radius: 0 km/h at 0,42, 120 km/h at 0,92 of the rim (charts _R_SPEED0.._R_SPEED1)."""
    return 0.42 + 0.5 * speed_kmh / 120


@pytest.mark.parametrize("highlight", [HIGHLIGHT, None], ids=["highlight", "plain"])
@pytest.mark.parametrize("case", EDGE_CASES)
def test_disc_of_an_edge_case_plots_exactly_its_pings(monkeypatch, case, highlight):
    track = EDGE_CASES[case]
    fig, png = drawn(monkeypatch, disc_png, track, highlight=highlight)
    assert png_size(png) == DISC_PX
    [ax] = fig.axes
    texts = texts_of(fig)
    trace = lines_of(ax, "#111111", linestyle="-")  # the speed trace
    dots = lines_of(ax, "#111111", marker="o")  # pings no line can show (alone between gaps)
    moving, standing = lines_of(ax, "#222222", linewidth=7.0), lines_of(ax, "#222222", linewidth=1.6)
    summary = next((t for t in texts if t.startswith("Dia: 03/12/2026")), "")
    if case == "empty":
        assert trace == dots == moving == standing == []
        assert "Sem registros\nno período" in texts and summary == "Dia: 03/12/2026\nFuso: America/Sao_Paulo"
    else:
        angles, radii = [theta(t) for t in track.t], [radius(v) for v in track.speed_kmh]
        [trace] = trace
        assert trace.get_xdata() == near(angles, 1e-9) and trace.get_ydata() == near(radii, 1e-9)
        assert "Sem registros\nno período" not in texts and "03/12/2026" in texts
        if case == "single":
            # 07:00 is 7/24 of the turn; 36 km/h is 0,42 + 0,5 × 36/120 = 0,57; a lone ping is a dot
            assert angles == near([2 * np.pi * 7 / 24], 1e-12) and radii == near([0.57], 1e-12)
            [dot] = dots
            assert dot.get_xdata() == near(angles, 1e-9) and dot.get_ydata() == near(radii, 1e-9)
            assert moving == standing == []  # no interval between pings
            assert "1 registro\nPrimeiro: 07:00:00\nÚltimo: 07:00:00" in summary
            assert "Vel. máxima: 36 km/h\nàs 07:00:00" in summary
            assert np.abs(pixel(png, fig, ax, angles[0], radii[0]) - rgb("#111111")).max() < 0.1  # in the PNG
        else:
            # 19 intervals of 10 s at 0 km/h: standing from 07:00:00 to 07:03:10 (190 s, "3 min"),
            # drawn as the thin band only, one segment per interval
            assert dots == [] and moving == []
            [band] = standing
            segments = np.asarray(band.get_xdata(), dtype=float).reshape(-1, 3)[:, :2]
            assert segments == near(np.column_stack([angles[:-1], angles[1:]]), 1e-9)
            assert "Em movimento: 0 s\nParado: 3 min\nSem registro: 0 s" in summary
            assert radii == near([0.42] * 20, 1e-12) and "Vel. máxima: 0 km/h" in summary
    rim = lines_of(ax, "#b71c1c", linewidth=3.5)  # the infraction's arc on the rim
    if highlight is None:
        assert rim == [] and "Período da infração" not in [t.get_text() for t in fig.legends[0].get_texts()]
    else:
        [rim] = rim  # 07:05:00 .. 07:05:50
        assert (min(rim.get_xdata()), max(rim.get_xdata())) == near((theta(highlight[0]), theta(highlight[1])), 1e-9)
        [wedge] = [c for c in ax.collections
                   if len(c.get_facecolor()) and np.allclose(c.get_facecolor()[0][:3], HIGHLIGHT_RGB)]
        assert span_x(wedge) == near((theta(highlight[0]), theta(highlight[1])), 1e-9)
        assert "Período da infração" in [t.get_text() for t in fig.legends[0].get_texts()]


MAP_FROM_WGS84 = Transformer.from_crs(4326, EPSG, always_xy=True)


@pytest.mark.parametrize("highlight", [HIGHLIGHT, None], ids=["highlight", "plain"])
@pytest.mark.parametrize("case", EDGE_CASES)
def test_map_of_an_edge_case_plots_exactly_its_pings_over_the_itinerary(monkeypatch, case, highlight):
    track, itinerary = EDGE_CASES[case], road_itinerary()
    fig, png = drawn(monkeypatch, map_png, track, highlight=highlight)
    assert png_size(png) == MAP_PX
    [ax] = fig.axes
    texts = texts_of(fig)
    # the itinerary, projected to EPSG:31984, whatever the track
    [route] = lines_of(ax, "#5d6d4e")
    sx, sy = MAP_FROM_WGS84.transform(*np.array(itinerary.lonlat).T)
    assert route.get_xdata() == near(sx, 1e-3) and route.get_ydata() == near(sy, 1e-3)  # to the millimetre
    track_lines = lines_of(ax, "#1565c0")
    # nothing red: the highlight (07:05:00 .. 07:05:50) holds none of these pings, none is marked
    assert lines_of(ax, "#e00000") == []
    assert int(((pixels(png)[..., 0] > 0.8) & (pixels(png)[..., 1] < 0.3) & (pixels(png)[..., 2] < 0.3)).sum()) == 0
    if case == "empty":
        assert track_lines == [] and "Sem registros no período" in texts
        assert "Registro único" not in texts and "Primeiro e último registro do dia" not in texts
    else:
        tx, ty = MAP_FROM_WGS84.transform(np.array(track.lon), np.array(track.lat))
        line, dots = track_lines
        for drawn_line in (line, dots):
            assert drawn_line.get_xdata() == near(tx, 1e-3) and drawn_line.get_ydata() == near(ty, 1e-3)
        # one ping, or pings all at one spot: one label for start and end, where the ping is
        label = "Registro único" if case == "single" else "Primeiro e último registro do dia"
        [mark] = [t for t in ax.texts if t.get_text() == label]
        assert mark.xy == near((tx[0], ty[0]), 1e-3)
        # in the PNG, the ping's spot has the start mark's green (it covers the track's dot)
        assert np.abs(pixel(png, fig, ax, tx[0], ty[0]) - rgb("#2e7d32")).max() < 0.1
        assert "Sem registros no período" not in texts
        x0, x1 = ax.get_xlim()
        y0, y1 = ax.get_ylim()
        assert x0 < tx[0] < x1 and y0 < ty[0] < y1  # in view
    stops = [t.get_text() for t in ax.texts]
    assert {"Ponto Inicial", "Escola Municipal", "Praça da Matriz"} <= set(stops)


def test_speed_chart_limit_changes_the_picture():
    assert speed_png(road_track(), speed_limit_kmh=60) != speed_png(road_track())


def test_speed_chart_outside_window_is_the_empty_chart():
    later = road_track(start=T0 + timedelta(hours=3))
    assert speed_png(later) == speed_png(EMPTY)


def test_speed_chart_breaks_the_line_at_gaps():
    """A gap longer than 120 s is not interpolated: no line pixels in the middle of it."""
    full = road_track(84)  # 07:00 .. 07:13:50, over the whole window
    keep = np.r_[0:24, 60:84]  # nothing between 07:04 and 07:10
    gappy = Track(*(tuple(np.asarray(getattr(full, f), dtype=object)[keep]) for f in ("t", "lat", "lon", "speed_kmh")))
    w0, w1 = window()
    frac = (T0 + timedelta(minutes=7) - w0) / (w1 - w0)  # middle of the gap

    def line_pixels(data):
        rgb = pixels(data)[..., :3]
        col = int(round((0.075 + 0.905 * frac) * SPEED_CHART_PX[0]))
        band = rgb[:, col - 3:col + 4]  # a few columns around the gap's middle
        target = np.array([0x1F, 0x4E, 0x8C]) / 255  # the speed trace's colour
        return int((np.abs(band - target).max(axis=-1) < 0.08).sum())

    assert line_pixels(speed_png(full)) > 0
    assert line_pixels(speed_png(gappy)) == 0


def test_disc_draws_only_the_requested_day():
    yesterday = road_track(30, start=T0 - timedelta(days=1))
    today = road_track(30)
    tomorrow = road_track(30, start=T0 + timedelta(days=1))
    both = Track(*(getattr(yesterday, f) + getattr(today, f) + getattr(tomorrow, f)
                   for f in ("t", "lat", "lon", "speed_kmh")))
    assert disc_png(both) == disc_png(today)
    assert disc_png(yesterday) == disc_png(EMPTY)
    assert disc_png(tomorrow) == disc_png(EMPTY)
    assert disc_png(today) != disc_png(EMPTY)


def test_disc_day_is_the_local_day():
    """23:30 local on the 3rd is 02:30 UTC on the 4th: it belongs to the disc of the 3rd."""
    late = road_track(10, start=datetime(2026, 12, 3, 23, 30, tzinfo=TZ))
    assert disc_png(late) != disc_png(EMPTY)
    assert disc_png(late, day=date(2026, 12, 4)) == disc_png(EMPTY, day=date(2026, 12, 4))


def test_map_highlighted_pings_are_red():
    track = road_track()
    assert red_pixels(map_png(track, highlight=HIGHLIGHT)) > 50
    assert red_pixels(map_png(track)) == 0


def test_map_marked_points_are_red():
    track = road_track()
    marked = [(track.lon[32], track.lat[32])]
    assert red_pixels(map_png(track, marked=marked)) > 20
    assert red_pixels(map_png(track, marked=marked)) != red_pixels(map_png(track))


def test_map_highlight_outside_track_draws_no_red_pings():
    track = road_track()
    far = (T0 + timedelta(hours=5), T0 + timedelta(hours=6))
    assert red_pixels(map_png(track, highlight=far)) == 0


def test_map_projects_with_the_given_crs():
    assert map_png(road_track(), epsg=31984) != map_png(road_track(), epsg=31983)


def test_track_validation():
    with pytest.raises(ValueError):
        Track((T0,), (LAT0, LAT0), (LON0,), (0.0,))
    with pytest.raises(ValueError):
        Track((datetime(2026, 12, 3, 7, 0),), (LAT0,), (LON0,), (0.0,))
    with pytest.raises(ValueError):
        speed_png(road_track(), window=(T0, T0 - timedelta(minutes=1)))


def test_unsorted_pings_are_sorted():
    track = road_track(20)
    order = np.argsort(-np.arange(20))
    shuffled = Track(*(tuple(np.asarray(getattr(track, f), dtype=object)[order])
                       for f in ("t", "lat", "lon", "speed_kmh")))
    assert speed_png(shuffled) == speed_png(track)


# ------------------------------------------------------------------------ samples

SAMPLE_FEED = joao_neiva()[0]


def _sample_itinerary(shape_id: str = "101-0", trip_id: str = "101-DU-0-0700") -> Itinerary:
    with open(SAMPLE_FEED / "shapes.txt", newline="", encoding="utf-8") as handle:
        rows = sorted((r for r in csv.DictReader(handle) if r["shape_id"] == shape_id),
                      key=lambda r: int(r["shape_pt_sequence"]))
    with open(SAMPLE_FEED / "stops.txt", newline="", encoding="utf-8") as handle:
        stops = {r["stop_id"]: r for r in csv.DictReader(handle)}
    with open(SAMPLE_FEED / "stop_times.txt", newline="", encoding="utf-8") as handle:
        calls = sorted((r for r in csv.DictReader(handle) if r["trip_id"] == trip_id),
                       key=lambda r: int(r["stop_sequence"]))
    return Itinerary(
        lonlat=tuple((float(r["shape_pt_lon"]), float(r["shape_pt_lat"])) for r in rows),
        stops=tuple((stops[c["stop_id"]]["stop_name"], float(stops[c["stop_id"]]["stop_lon"]),
                     float(stops[c["stop_id"]]["stop_lat"])) for c in calls),
        corridor_m=50.0,
    )


def _drive(itinerary: Itinerary, start: datetime, *, reverse=False, fast=None, step_s=10, detour=None):
    """1 Hz kinematics along the shape (stop dwells, 40 km/h cruise), sampled every step_s."""
    fwd = Transformer.from_crs(4326, EPSG, always_xy=True)
    inv = Transformer.from_crs(EPSG, 4326, always_xy=True)
    ll = np.array(itinerary.lonlat)[::-1 if reverse else 1]
    x, y = fwd.transform(ll[:, 0], ll[:, 1])
    along = np.concatenate([[0], np.cumsum(np.hypot(np.diff(x), np.diff(y)))])
    sx, sy = fwd.transform(np.array([s[1] for s in itinerary.stops]), np.array([s[2] for s in itinerary.stops]))
    stop_at = np.sort([along[np.argmin(np.hypot(x - a, y - b))] for a, b in zip(sx, sy)])
    pos, v, t, out = 0.0, 0.0, 0, []
    dwell = 0
    next_stop = 1
    wobble = np.random.default_rng(int(start.timestamp())).normal(0, 1.2, 100_000)
    while pos < along[-1]:
        racing = fast is not None and fast[0] <= pos <= fast[1]
        cruise = (74.0 if racing else 40.0) + wobble[t]
        to_stop = stop_at[next_stop] - pos if next_stop < len(stop_at) else 1e9
        if dwell > 0:
            dwell -= 1
            v = 0.0
        elif to_stop < 2 and racing:  # ... and skips the stop
            next_stop += 1
        elif to_stop < 2:
            dwell, v = 18, 0.0
            next_stop += 1
        else:
            brake = (v / 3.6) ** 2 / (2 * 1.1)
            if to_stop <= brake + 3 and not racing:
                v = max(v - 4.0, 6.0)
            else:
                v = min(v + 3.5, cruise) if v < cruise else max(v - 3, cruise)
            pos = min(pos + v / 3.6, along[-1])
        if t % step_s == 0:
            out.append((t, pos, v))
        t += 1
    ts, ps, vs = map(np.array, zip(*out))
    px, py = np.interp(ps, along, x), np.interp(ps, along, y)
    if detour is not None:  # leave the corridor sideways for a while
        bump = np.clip(1 - np.abs(ps - detour[0]) / detour[1], 0, None) * detour[2]
        px = px + bump
    lon, lat = inv.transform(px, py)
    return ([start + timedelta(seconds=int(s)) for s in ts], lat.tolist(), lon.tolist(), vs.tolist())


def sample_day() -> tuple[Track, Itinerary, tuple[datetime, datetime]]:
    itinerary = _sample_itinerary()
    parts = []
    clock = datetime(2026, 12, 3, 5, 30, tzinfo=TZ)
    rng = np.random.default_rng(7)
    for k in range(60):
        if clock.hour >= 22:
            break
        fast = (1990, 2750) if k == 2 else None
        detour = (3400, 260, 140) if k == 2 else None
        t, lat, lon, v = _drive(itinerary, clock, reverse=k % 2 == 1, fast=fast, detour=detour)
        if k == 2:  # the recorder stops for 3 minutes mid-trip
            keep = [i for i, x in enumerate(t) if not (t[0] + timedelta(minutes=9) <= x < t[0] + timedelta(minutes=12))]
            t, lat, lon, v = ([s[i] for i in keep] for s in (t, lat, lon, v))
        parts.append((t, lat, lon, v))
        layover = int(rng.integers(8, 20)) + (50 if k == 12 else 0)  # lunch after the 13th trip
        clock = t[-1] + timedelta(minutes=layover)
        if k != 16:  # standing at the terminal with the recorder on (off after the 17th trip)
            pings = layover * 2 - 1
            parts.append(([t[-1] + timedelta(seconds=30 * i) for i in range(1, pings + 1)], [lat[-1]] * pings,
                          [lon[-1]] * pings, [0.0] * pings))
    track = Track(*(tuple(x for p in parts for x in p[i]) for i in range(4)))
    fast_trip = parts[4][0]
    speeds = np.array(parts[4][3])
    over = np.flatnonzero(speeds > 60)
    highlight = (fast_trip[over[0]], fast_trip[over[-1]])
    return track, itinerary, highlight


def write_samples(directory: Path = Path("/tmp")) -> list[Path]:
    track, itinerary, highlight = sample_day()
    h0, h1 = highlight
    s = np.array([x.timestamp() for x in track.t])
    over = np.flatnonzero((s >= h0.timestamp()) & (s <= h1.timestamp()) & (np.array(track.speed_kmh) > 60))
    marked = [(track.lon[i], track.lat[i]) for i in over[[0, -1]]]
    trip = Track(*(x[s.searchsorted(h0.timestamp()) - 60: s.searchsorted(h1.timestamp()) + 60]
                   for x in (track.t, track.lat, track.lon, track.speed_kmh)))
    title = "Auto de infração nº 2026/000123 – Art. 7º, inciso III – veículo 1234 (ABC1D23), linha 101"
    out = {
        "speed": speed_time_chart(track, window=(h0 - timedelta(minutes=9), h1 + timedelta(minutes=9)),
                                  highlight=highlight, speed_limit_kmh=60, tz=TZ,
                                  title=f"Tacógrafo: velocidade x tempo – {title}"),
        "disc": tachograph_disc(track, day=DAY, tz=TZ, highlight=highlight,
                                title="Disco diagrama de 03/12/2026 – veículo 1234 (ABC1D23)"),
        "map": track_map(trip, itinerary, highlight=highlight, marked=marked, epsg=EPSG,
                         title=f"Trajeto registrado – {title}"),
        "map-whole": track_map(trip, itinerary, epsg=EPSG, title="Trajeto registrado – viagem 101-DU-0-0700"),
    }
    paths = []
    for name, data in out.items():
        path = directory / f"charts-sample-{name}.png"
        path.write_bytes(data)
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write_samples(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp")):
        print(written)


# --------------------------------------------------------------------- catraca chart

def _turnstile(broken_from: int | None = None, silent: tuple[int, int] | None = None):
    from dockets.charts import Turnstile

    minutes = [m for m in range(0, 180) if not (silent and silent[0] < m < silent[1])]
    times = tuple(datetime(2026, 12, 1, 8, 0, tzinfo=TZ) + timedelta(minutes=m) for m in minutes)
    return Turnstile(t=times, counter=tuple(1000 + m for m in minutes),
                     seal_intact=tuple(broken_from is None or m < broken_from for m in minutes),
                     fault=tuple(False for _ in minutes))


def test_catraca_chart_is_a_png_of_its_size():
    from dockets.charts import CATRACA_CHART_PX, catraca_chart

    start = datetime(2026, 12, 1, 7, 40, tzinfo=TZ)
    png = catraca_chart(_turnstile(broken_from=120), window=(start, start + timedelta(hours=3, minutes=40)),
                        highlight=(start + timedelta(minutes=140), start + timedelta(minutes=200)),
                        in_service=[(start + timedelta(minutes=20), start + timedelta(minutes=200))],
                        tz=TZ, title="Catraca", max_silence_s=600)
    assert png.startswith(b"\x89PNG") and png_size(png) == CATRACA_CHART_PX


def test_catraca_chart_refuses_an_empty_window():
    from dockets.charts import catraca_chart

    start = datetime(2026, 12, 1, 8, 0, tzinfo=TZ)
    with pytest.raises(ValueError):
        catraca_chart(_turnstile(), window=(start, start), tz=TZ, title="Catraca", max_silence_s=600)
