"""Loading a GTFS feed: directory and .zip, CRS, programmed km, stop positions, refusals.

Fixture geometry (EPSG:31984, SIRGAS 2000 / UTM zone 24S), from `fixtures/tiny/`:
shape L runs A (356000, 7815000) -> 3000 m east -> B (359000, 7815000) -> 4000 m north ->
C (359000, 7819000); shape R is the same path from C back to A. The lat/lon in the fixture
files were obtained with this throwaway recipe and pasted with 8 decimals:

    from pyproj import Transformer
    t = Transformer.from_crs(31984, 4326, always_xy=True)
    lon, lat = t.transform(359000, 7815400)
    print(f"{lat:.8f},{lon:.8f}")  # -19.75202096,-40.34573390 (stop M of fixtures/dwell)

The projected points land within 1 mm of the intended coordinates, hence the 0.01 m tolerances.
"""

import re
import zipfile
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from gtfs import FeedError, load_feed
from gtfs.projection import utm_epsg_for

FIXTURES = Path(__file__).parent / "fixtures"
TINY = FIXTURES / "tiny"


@pytest.fixture(scope="module")
def tiny():
    return load_feed(TINY)


def _zip_feed(source: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for file in sorted(source.glob("*.txt")):
            archive.write(file, arcname=file.name)
    return target


def _stop(feed, trip_id: str, stop_id: str):
    return next(s for s in feed.trips[trip_id].stops if s.stop_id == stop_id)


# --- directory and zip -------------------------------------------------------------------


def test_directory_and_zip_of_the_same_feed_give_the_same_trips(tiny, tmp_path):
    zipped = load_feed(_zip_feed(TINY, tmp_path / "tiny.zip"))
    # 6 rows in trips.txt: T-0600, T-0700, T-2350, T-SA-0800, F-TPL, E-TPL
    assert len(tiny.trips) == 6
    assert zipped.trips == tiny.trips
    assert zipped.frequencies == tiny.frequencies
    assert zipped.service_days == tiny.service_days
    assert zipped.patterns == tiny.patterns


def test_directory_feed_accepts_a_str_path(tiny):
    assert load_feed(str(TINY)).trips == tiny.trips


def test_agency_timezone_is_the_feed_timezone(tiny):
    assert tiny.timezone == ZoneInfo("America/Sao_Paulo")


def test_route_without_agency_id_belongs_to_the_only_agency(tiny):
    assert tiny.operator_of("T") == "OP1"
    assert tiny.routes["T"].long_name == "Timetabled"


# --- metric CRS --------------------------------------------------------------------------


def test_joao_neiva_coordinates_choose_sirgas_utm_24s(tiny):
    # fixture centred near (-40.36, -19.74): zone 24 spans 42°W..36°W, south -> 31984
    assert tiny.epsg == 31984


@pytest.mark.parametrize(
    ("place", "lon", "lat", "epsg"),
    [
        ("joao_neiva", -40.27, -19.52, 31984),  # 42°W..36°W, south: zone 24S
        ("sao_paulo", -46.63, -23.55, 31983),  # 48°W..42°W, south: zone 23S
        ("manaus", -60.02, -3.1, 31980),  # 66°W..60°W, south: zone 20S
        ("boa_vista", -60.67, 2.82, 31974),  # 66°W..60°W, north: zone 20N
    ],
)
def test_utm_epsg_for_brazilian_cities_gives_their_sirgas_zone(place, lon, lat, epsg):
    assert utm_epsg_for(lon, lat) == epsg


def test_utm_epsg_outside_the_americas_falls_back_to_wgs84_utm():
    # Paris (2.35, 48.85): zone 31 spans 0°E..6°E, north -> WGS 84 / UTM 31N = 32631
    assert utm_epsg_for(2.35, 48.85) == 32631


# --- programmed km and stop positions ----------------------------------------------------


@pytest.mark.parametrize("shape_id", ["L", "R"])
def test_programmed_length_of_tiny_shapes_is_the_hand_sum(tiny, shape_id):
    # 3000 m east + 4000 m north = 7000 m
    assert tiny.shapes[shape_id].length_m == pytest.approx(7000, abs=0.01)


def test_shapes_are_in_metres_at_the_utm_coordinates_of_the_fixture(tiny):
    first_x, first_y = tiny.shapes["L"].line.coords[0]
    last_x, last_y = tiny.shapes["L"].line.coords[-1]
    assert (first_x, first_y) == pytest.approx((356000, 7815000), abs=0.01)  # A
    assert (last_x, last_y) == pytest.approx((359000, 7819000), abs=0.01)  # C


@pytest.mark.parametrize(
    ("trip_id", "stop_id", "dist_m"),
    [
        ("T-0600", "A", 0),  # start of L
        ("T-0600", "B", 3000),  # corner of L: 3000 m east
        ("T-0600", "C", 7000),  # 3000 m east + 4000 m north
        ("T-0700", "C", 0),  # start of R
        ("T-0700", "B", 4000),  # corner of R: 4000 m south
        ("T-0700", "A", 7000),  # 4000 m south + 3000 m west
    ],
)
def test_stop_shape_dist_is_its_progress_along_the_trip_shape(tiny, trip_id, stop_id, dist_m):
    assert _stop(tiny, trip_id, stop_id).shape_dist_m == pytest.approx(dist_m, abs=0.01)


# --- stop times --------------------------------------------------------------------------


def test_times_are_gtfs_seconds_past_24h(tiny):
    trip = tiny.trips["T-2350"]
    assert trip.departure_s == 85800  # 23:50:00 = 23*3600 + 50*60
    assert trip.arrival_s == 87300  # 24:15:00 = 24*3600 + 15*60


def test_dwell_keeps_distinct_arrival_and_departure(tiny):
    b = _stop(tiny, "T-0600", "B")
    assert (b.arrival_s, b.departure_s) == (22200, 22230)  # 06:10:00, 06:10:30


def test_empty_times_of_a_middle_stop_are_interpolated_along_the_shape(tiny):
    b = _stop(tiny, "T-0700", "B")
    # C 07:00:00 (25200) -> A 07:28:00 (26880): 1680 s over 7000 m; B is 4000 m along R
    # 25200 + 4000/7000 * 1680 = 25200 + 960 = 26160 (07:16:00)
    assert b.arrival_s == 26160
    assert b.departure_s == 26160
    assert b.timepoint is False


def test_timepoint_flag_follows_the_timepoint_column(tiny):
    flags = [s.timepoint for s in tiny.trips["T-2350"].stops]
    assert flags == [True, False, True]  # timepoint 1, 0, 1 in stop_times.txt


def test_empty_stop_after_a_dwell_is_interpolated_from_the_departure():
    # fixtures/dwell: A 06:00 -> B arr 06:10:00 dep 06:12:00 (3000 m) -> M empty, 400 m north of
    # B (3400 m) -> C 06:22:00 (7000 m). The bus leaves B at 06:12:00 (22320 s), so M is
    # 22320 + 400/4000 * (22920 - 22320) = 22320 + 60 = 22380 (06:13:00).
    # Interpolating from B's arrival instead gives 22200 + 400/4000 * 720 = 22272 (06:11:12),
    # i.e. arriving at M 48 s before leaving B.
    feed = load_feed(FIXTURES / "dwell")
    stops = {s.stop_id: s for s in feed.trips["T-DWELL"].stops}
    assert stops["M"].shape_dist_m == pytest.approx(3400, abs=0.01)  # 3000 m east + 400 m north
    assert stops["M"].arrival_s >= stops["B"].departure_s  # never before leaving B
    assert stops["M"].arrival_s == 22380


# --- refusals ----------------------------------------------------------------------------


def test_feed_without_shapes_is_refused():
    with pytest.raises(FeedError, match=r"has no shapes\.txt: every trip needs its itinerary"):
        load_feed(FIXTURES / "no_shapes")


def test_trips_with_empty_or_unknown_shape_id_are_refused_by_name():
    # T-GOOD uses L; T-EMPTY has shape_id "", T-UNKNOWN has "Z" (not in shapes.txt)
    message = r"2 trip\(s\) have no shape in shapes\.txt: T-EMPTY, T-UNKNOWN$"
    with pytest.raises(FeedError, match=message):
        load_feed(FIXTURES / "bad_shape_ids")


def test_nonexistent_path_is_refused(tmp_path):
    missing = tmp_path / "nowhere"
    message = re.escape(f"cannot read feed {missing}: no such file or directory")
    with pytest.raises(FeedError, match=message):
        load_feed(missing)


def test_file_that_is_not_a_zip_is_refused(tmp_path):
    not_zip = tmp_path / "feed.zip"
    not_zip.write_text("route_id,agency_id\nT,OP1\n", encoding="utf-8")
    message = re.escape(f"cannot read feed {not_zip}: neither a directory nor a .zip file")
    with pytest.raises(FeedError, match=message):
        load_feed(not_zip)


def test_unknown_stop_in_stop_times_is_refused():
    # stops.txt has A and C; stop_times.txt also names Z
    with pytest.raises(FeedError, match=r"stop_times\.txt names unknown stops: Z$"):
        load_feed(FIXTURES / "unknown_stop")
