"""What is scheduled on a date: service days, GTFS seconds, scheduled trips, frequency windows.

Fixture `fixtures/tiny/` (see test_feed.py for its geometry and the pyproj recipe):
calendar WD = Mon–Fri and SA = Sat, 2026-12-01..2026-12-31; calendar_dates removes WD and
adds SA on Tuesday 2026-12-08. December 2026 starts on a Tuesday, so Saturdays are 5, 12,
19, 26 and Sundays 6, 13, 20, 27. Trips: T-0600, T-0700, T-2350 (WD, timetabled),
T-SA-0800 (SA), F-TPL (WD, exact_times=0 template), E-TPL (WD, exact_times=1 template).
"""

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from gtfs import frequency_windows, load_feed, scheduled_trips, service_dates, service_day_start
from gtfs.schedule import expected_trips, gtfs_seconds_to_datetime

TINY = Path(__file__).parent / "fixtures" / "tiny"
SAO_PAULO = ZoneInfo("America/Sao_Paulo")
NEW_YORK = ZoneInfo("America/New_York")
UTC = dt.timezone.utc

TUESDAY = dt.date(2026, 12, 1)
SATURDAY = dt.date(2026, 12, 5)
SUNDAY = dt.date(2026, 12, 6)
HOLIDAY_TUESDAY = dt.date(2026, 12, 8)  # WD removed, SA added


@pytest.fixture(scope="module")
def tiny():
    return load_feed(TINY)


def _services(feed, date):
    return {sid for sid, days in feed.service_days.items() if date in days}


def _keys(trips):
    return [t.key for t in trips]


# --- service days ------------------------------------------------------------------------


def test_ordinary_tuesday_runs_weekday_service(tiny):
    assert _services(tiny, TUESDAY) == {"WD"}


def test_tuesday_8_december_runs_saturday_service_not_weekday(tiny):
    # calendar_dates: WD,20261208,2 (removed) and SA,20261208,1 (added)
    assert _services(tiny, HOLIDAY_TUESDAY) == {"SA"}


def test_saturday_runs_saturday_service(tiny):
    assert _services(tiny, SATURDAY) == {"SA"}


def test_sunday_runs_nothing(tiny):
    assert _services(tiny, SUNDAY) == set()
    assert scheduled_trips(tiny, SUNDAY) == ()
    assert frequency_windows(tiny, SUNDAY) == ()


@pytest.mark.parametrize("date", [dt.date(2026, 11, 30), dt.date(2027, 1, 4)])
def test_weekday_outside_the_calendar_runs_nothing(tiny, date):
    # both are Mondays, one day before 20261201 and four days after 20261231
    assert _services(tiny, date) == set()
    assert scheduled_trips(tiny, date) == ()
    assert frequency_windows(tiny, date) == ()


def test_december_counts_of_service_days(tiny):
    # weekdays: 1–4 (4) + 7–11 (5) + 14–18 (5) + 21–25 (5) + 28–31 (4) = 23, minus the 8th = 22
    assert len(tiny.service_days["WD"]) == 22
    # Saturdays 5, 12, 19, 26 = 4, plus Tuesday the 8th = 5
    assert len(tiny.service_days["SA"]) == 5


def test_service_dates_skip_the_sunday(tiny):
    # Sat 5 (SA), Sun 6 (nothing), Mon 7 (WD), Tue 8 (SA)
    assert service_dates(tiny, dt.date(2026, 12, 5), dt.date(2026, 12, 8)) == [
        dt.date(2026, 12, 5),
        dt.date(2026, 12, 7),
        dt.date(2026, 12, 8),
    ]


def test_service_dates_outside_the_calendar_are_empty(tiny):
    assert service_dates(tiny, dt.date(2026, 11, 1), dt.date(2026, 11, 30)) == []


# --- day boundaries and GTFS seconds -----------------------------------------------------


def test_service_day_start_is_local_midnight_on_an_ordinary_day():
    # noon -03:00 = 15:00 UTC; minus 12 h = 03:00 UTC = 00:00 -03:00 (no DST in Brazil in 2026)
    start = service_day_start(TUESDAY, SAO_PAULO)
    assert start == dt.datetime(2026, 12, 1, 0, 0, tzinfo=SAO_PAULO)
    assert start.astimezone(UTC) == dt.datetime(2026, 12, 1, 3, 0, tzinfo=UTC)


def test_service_day_start_on_spring_forward_is_23h_of_the_previous_day():
    # New York moves 02:00 EST -> 03:00 EDT on Sunday 2026-03-08.
    # noon 2026-03-08 is 12:00 EDT = 16:00 UTC; minus 12 h = 04:00 UTC = 23:00 EST on 2026-03-07
    start = service_day_start(dt.date(2026, 3, 8), NEW_YORK)
    assert start.astimezone(UTC) == dt.datetime(2026, 3, 8, 4, 0, tzinfo=UTC)
    assert start.replace(tzinfo=None) == dt.datetime(2026, 3, 7, 23, 0)
    assert start.utcoffset() == dt.timedelta(hours=-5)  # still EST


def test_service_day_start_on_fall_back_is_1h_of_the_same_day():
    # New York moves 02:00 EDT -> 01:00 EST on Sunday 2026-11-01.
    # noon 2026-11-01 is 12:00 EST = 17:00 UTC; minus 12 h = 05:00 UTC = 01:00 EDT on 2026-11-01
    start = service_day_start(dt.date(2026, 11, 1), NEW_YORK)
    assert start.astimezone(UTC) == dt.datetime(2026, 11, 1, 5, 0, tzinfo=UTC)
    assert start.replace(tzinfo=None) == dt.datetime(2026, 11, 1, 1, 0)
    assert start.utcoffset() == dt.timedelta(hours=-4)  # still EDT


def test_arrival_past_24h_is_on_the_next_calendar_day(tiny):
    trip = next(t for t in scheduled_trips(tiny, TUESDAY) if t.trip_id == "T-2350")
    assert trip.arrival_s == 87300  # 24:15:00 = 24*3600 + 15*60
    arrival = gtfs_seconds_to_datetime(TUESDAY, trip.arrival_s, SAO_PAULO)
    # 00:00 of 2026-12-01 + 87300 s = 2026-12-02 00:15 local (03:15 UTC)
    assert arrival == dt.datetime(2026, 12, 2, 0, 15, tzinfo=SAO_PAULO)
    assert arrival.astimezone(UTC) == dt.datetime(2026, 12, 2, 3, 15, tzinfo=UTC)


@pytest.mark.parametrize(
    ("date", "utc_noon"),
    [
        (dt.date(2026, 3, 8), dt.datetime(2026, 3, 8, 16, 0, tzinfo=UTC)),  # 12:00 EDT = 16:00 UTC
        (dt.date(2026, 11, 1), dt.datetime(2026, 11, 1, 17, 0, tzinfo=UTC)),  # 12:00 EST = 17:00 UTC
    ],
)
def test_gtfs_noon_on_a_dst_day_is_local_noon(date, utc_noon):
    # GTFS seconds are elapsed time from noon − 12 h, so 12:00:00 (43200 s) is always noon:
    # spring forward: 04:00 UTC + 43200 s = 16:00 UTC = 12:00 EDT;
    # fall back:      05:00 UTC + 43200 s = 17:00 UTC = 12:00 EST.
    noon = gtfs_seconds_to_datetime(date, 43200, NEW_YORK)
    assert noon.astimezone(UTC) == utc_noon
    assert noon.replace(tzinfo=None) == dt.datetime.combine(date, dt.time(12))


# --- scheduled trips ---------------------------------------------------------------------


def test_weekday_trips_are_the_timetabled_ones_and_exact_time_departures(tiny):
    # sorted by route, direction, departure: E dir 1 (10:00, 10:30), T dir 0 (06:00, 23:50),
    # T dir 1 (07:00); F-TPL (exact_times=0) and T-SA-0800 (Saturdays) are absent
    assert _keys(scheduled_trips(tiny, TUESDAY)) == [
        "E-TPL@36000",
        "E-TPL@37800",
        "T-0600",
        "T-2350",
        "T-0700",
    ]


def test_exact_times_template_expands_into_shifted_trips(tiny):
    expanded = [t for t in scheduled_trips(tiny, TUESDAY) if t.trip_id == "E-TPL"]
    # 10:00–11:00 every 1800 s, half-open: 36000, 37800 (39600 = 11:00 is the end, excluded)
    assert [t.departure_s for t in expanded] == [36000, 37800]
    assert len({t.key for t in expanded}) == 2
    assert all(t.from_frequency for t in expanded)
    # template C 00:00, B 00:10, A 00:20 shifted by 36000 and 37800 s
    assert [s.arrival_s for s in expanded[0].stops] == [36000, 36600, 37200]
    assert [s.arrival_s for s in expanded[1].stops] == [37800, 38400, 39000]
    assert [t.arrival_s for t in expanded] == [37200, 39000]  # departure + 1200 s


def test_exact_times_expansion_keeps_the_template_stop_positions(tiny):
    first = next(t for t in scheduled_trips(tiny, TUESDAY) if t.trip_id == "E-TPL")
    # R: C at 0 m, B after 4000 m south, A after 4000 + 3000 = 7000 m
    assert [s.shape_dist_m for s in first.stops] == pytest.approx([0, 4000, 7000], abs=0.01)
    assert first.programmed_m == pytest.approx(7000, abs=0.01)  # 4000 m + 3000 m


def test_timetabled_trip_key_is_its_trip_id(tiny):
    trip = next(t for t in scheduled_trips(tiny, TUESDAY) if t.trip_id == "T-0600")
    assert trip.key == "T-0600"
    assert trip.from_frequency is False
    assert trip.service_date == TUESDAY
    assert trip.block_id == "B1"
    assert (trip.departure_s, trip.arrival_s) == (21600, 23100)  # 06:00:00, 06:25:00
    assert trip.programmed_m == pytest.approx(7000, abs=0.01)  # 3000 m east + 4000 m north


def test_saturday_trip_runs_on_saturdays_only(tiny):
    assert _keys(scheduled_trips(tiny, SATURDAY)) == ["T-SA-0800"]
    assert "T-SA-0800" not in _keys(scheduled_trips(tiny, TUESDAY))


def test_saturday_trip_runs_on_8_december_instead_of_weekday_trips(tiny):
    assert _keys(scheduled_trips(tiny, HOLIDAY_TUESDAY)) == ["T-SA-0800"]
    assert frequency_windows(tiny, HOLIDAY_TUESDAY) == ()  # F-TPL is WD only


# --- frequency windows -------------------------------------------------------------------


def test_weekday_frequency_windows_of_headway_template(tiny):
    windows = frequency_windows(tiny, TUESDAY)
    assert [(w.trip_id, w.start_s, w.end_s, w.headway_s) for w in windows] == [
        ("F-TPL", 21600, 25200, 900),  # 06:00–07:00
        ("F-TPL", 25200, 28200, 1200),  # 07:00–07:50
    ]
    assert all(w.route_id == "F" and w.direction_id == 0 and w.shape_id == "L" for w in windows)
    assert all(w.service_date == TUESDAY for w in windows)
    assert all(w.programmed_m == pytest.approx(7000, abs=0.01) for w in windows)  # 3000 + 4000 m


def test_expected_departures_are_the_ceiling_of_window_over_headway(tiny):
    first, second = frequency_windows(tiny, TUESDAY)
    # [06:00, 07:00): 06:00, 06:15, 06:30, 06:45 -> ceil(3600 / 900) = 4 (07:00 is the next window's)
    assert first.expected_departures == 4
    # [07:00, 07:50): 07:00, 07:20, 07:40 -> ceil(3000 / 1200) = ceil(2.5) = 3
    assert second.expected_departures == 3


def test_consecutive_windows_are_half_open_and_do_not_overlap(tiny):
    first, second = frequency_windows(tiny, TUESDAY)
    # [21600, 25200) then [25200, 28200): 07:00 belongs to the second window only
    assert first.end_s == second.start_s == 25200


def test_exact_times_windows_only_on_request(tiny):
    assert all(not w.exact_times for w in frequency_windows(tiny, TUESDAY))
    exact = [w for w in frequency_windows(tiny, TUESDAY, include_exact=True) if w.exact_times]
    assert [(w.trip_id, w.start_s, w.end_s) for w in exact] == [("E-TPL", 36000, 39600)]
    assert exact[0].expected_departures == 2  # ceil(3600 / 1800) = 2


def test_expected_trips_are_the_headway_windows_departures_each_as_long_as_its_template(tiny):
    template = tiny.trips["F-TPL"]
    duration = template.stops[-1].arrival_s - template.departure_s
    trips = expected_trips(tiny, TUESDAY)
    # 4 every 15 min from 06:00, then 3 every 20 min from 07:00 (the exact_times=1 E-TPL is a timetable)
    assert [t.departure_s for t in trips] == [21600, 22500, 23400, 24300, 25200, 26400, 27600]
    assert all(t.arrival_s - t.departure_s == duration and t.from_frequency and t.trip_id == "F-TPL" for t in trips)
    assert expected_trips(tiny, SATURDAY) == ()


def test_saturday_has_no_frequency_windows(tiny):
    assert frequency_windows(tiny, SATURDAY, include_exact=True) == ()


def _gtfs_kit_service_days(path):
    """The reference: gtfs-kit's own answer, asked date by date (slow, so not used to load)."""
    import gtfs_kit as gk

    raw = gk.read_feed(path, dist_units="m")
    days = {}
    for text in gk.get_dates(raw):
        for service_id in gk.get_active_services(raw, text):
            days.setdefault(str(service_id), set()).add(dt.datetime.strptime(text, "%Y%m%d").date())
    return {service_id: frozenset(dates) for service_id, dates in days.items()}


def test_service_days_agree_with_gtfs_kit_date_by_date(tmp_path):
    import shutil

    from samples import joao_neiva

    # the tiny feed with its calendar.txt dropped: a service defined by calendar_dates alone
    only_dates = shutil.copytree(TINY, tmp_path / "only-dates")
    (only_dates / "calendar.txt").unlink()
    for path in (TINY, joao_neiva()[0], only_dates):
        expected = _gtfs_kit_service_days(path)
        assert expected, path
        assert load_feed(path).service_days == expected, path


# --- spans -------------------------------------------------------------------------------


def _scanned_span(day, route_id, direction_id):
    """`ServiceDay.span` as it was first written: a scan of every trip and window."""
    times = [t.departure_s for t in day.trips if (t.route_id, t.direction_id) == (route_id, direction_id)]
    times += [s for w in day.windows if (w.route_id, w.direction_id) == (route_id, direction_id)
              for s in (w.start_s, w.end_s)]
    if not times:
        return None
    return day.start_epoch + min(times), day.start_epoch + max(times)


def _feeds():
    from samples import SAMPLES

    yield "tiny", load_feed(TINY)
    for name, sample in SAMPLES.items():
        yield name, load_feed(sample()[0])


def test_indexed_span_is_the_full_scan_on_every_feed_and_date():
    from gtfs.schedule import service_day

    past_midnight = 0
    for name, feed in _feeds():
        lines = {(t.route_id, t.direction_id) for t in feed.trips.values()} | {("no-such-route", 0)}
        for date in feed.dates:
            day = service_day(feed, date)
            past_midnight += sum(t.departure_s >= 86400 or t.arrival_s >= 86400 for t in day.trips)
            for route_id, direction_id in sorted(lines):
                assert day.span(route_id, direction_id) == _scanned_span(day, route_id, direction_id), \
                    (name, date, route_id, direction_id)
    assert past_midnight  # the after-midnight trips are among those compared (tiny's T-2350)


def test_span_index_is_not_part_of_the_day_value(tiny):
    from gtfs.schedule import service_day

    day = service_day(tiny, TUESDAY)
    fresh = service_day(tiny, TUESDAY)
    day.span("T", 0)
    assert day == fresh and repr(day) == repr(fresh)
