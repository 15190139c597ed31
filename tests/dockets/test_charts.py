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


@pytest.mark.parametrize("kind", RENDERERS)
@pytest.mark.parametrize("case", ["empty", "single", "standing"])
def test_edge_cases_render(kind, case):
    render, size = RENDERERS[kind]
    track = {
        "empty": EMPTY,
        "single": road_track(1),
        "standing": Track(tuple(T0 + timedelta(seconds=10 * i) for i in range(20)), (LAT0,) * 20, (LON0,) * 20,
                          (0.0,) * 20),
    }[case]
    assert png_size(render(track, highlight=HIGHLIGHT)) == size
    assert png_size(render(track)) == size


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
                                title=f"Disco diagrama de 03/12/2026 – veículo 1234 (ABC1D23)"),
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
