"""Art. 45 — the month close of D-22 (DESIGN.md): per operator, efficiency = programmed km
of realized trips / programmed km of the month. At or above 98 % every provisional D-22
becomes `exempt_art45`, except the suppression of the first trip of the day of its route
and direction ("início da operação"), which becomes `confirmed`; below, all are confirmed.

The D-22 records come from rules.d22 on the tiny feed (America/Sao_Paulo, UTC-3), Tuesday
2026-12-01: T-0600 (06:00, first of T dir 0) and T-2350 (23:50, not first) unmatched.
"""

from __future__ import annotations

import json

import pytest
from tiny_day import at, detected

from gtfs.projection import Projector
from rules import d22
from rules.art45 import MonthKm, close_month
from rules.joao_neiva.pack import CATALOGUE
from rules.justification import justify
from rules.model import CONFIRMED, EXEMPT_ART45, JUSTIFIED, PROVISIONAL, Infraction
from telemetry import Occurrence, decode_occurrence

MONTH, DAYS = "2026-12", 31


@pytest.fixture(scope="module")
def suppressions(tiny) -> dict[str, Infraction]:
    """Provisional D-22 of 2026-12-01: T-0600 (start of operation) and T-2350 (not)."""
    ran = [detected("V1", "T", 1, at(7, 0)), detected("V2", "E", 1, at(10, 0)), detected("V2", "E", 1, at(10, 30))]
    found = {f.trip_id: f for f in d22.detect(tiny.facts(ran), tiny.policy) if isinstance(f, Infraction)}
    assert sorted(found) == ["T-0600", "T-2350"]
    assert found["T-0600"].evidence["start_of_operation"] is True
    assert found["T-2350"].evidence["start_of_operation"] is False
    assert {f.status for f in found.values()} == {PROVISIONAL}
    return found


def month_of_trips(trips: int, realized: int, metres: float = 7000.0) -> MonthKm:
    """`trips` scheduled trips of `metres` each, the first `realized` of them run, added one by one."""
    km = MonthKm()
    for i in range(trips):
        km = km.add(metres, metres if i < realized else 0.0, f"2026-12-{i % DAYS + 1:02d}")
    return km


def closed(suppressions, km: MonthKm, policy) -> dict[str, Infraction]:
    return {f.trip_id: f for f in close_month(list(suppressions.values()), km, MONTH, DAYS, policy)}


# --- efficiency at or above 98 % ---------------------------------------------------------


def test_efficiency_above_98_pct_yields_exempt_except_start_of_operation(tiny, suppressions):
    km = month_of_trips(100, 99)  # 99 × 7000 m / (100 × 7000 m) = 693 km / 700 km = 99 %
    result = closed(suppressions, km, tiny.policy)
    assert result["T-2350"].status == EXEMPT_ART45  # 99 % >= 98 %, not the first trip
    assert result["T-0600"].status == CONFIRMED  # first trip of T dir 0: "início da operação"


def test_efficiency_exactly_98_pct_yields_exempt(tiny, suppressions):
    km = month_of_trips(50, 49)  # 49 × 7000 m = 343 km of 50 × 7000 m = 350 km: 343 / 350 = 98 %
    result = closed(suppressions, km, tiny.policy)
    assert result["T-2350"].status == EXEMPT_ART45  # 98 % >= 98 % ("igual ou superior")
    assert result["T-0600"].status == CONFIRMED
    art45 = result["T-2350"].evidence["art45"]
    assert art45["programmed_km"] == 350.0  # 50 × 7 km
    assert art45["realized_km"] == 343.0  # 49 × 7 km
    assert art45["efficiency_pct"] == 98.0  # 100 × 343 / 350
    assert art45["min_efficiency_pct"] == 98.0
    assert art45["exempt"] is True
    assert art45["start_of_operation"] is False
    assert art45["month"] == MONTH


def test_efficiency_exactly_98_pct_of_fixture_shapes_summed_per_day_yields_exempt(tiny, suppressions):
    # 30 service days of 10 trips of shape L (its programmed length, 7000.000778 m), summed per
    # day as the engine does; one trip missed on each of 6 days: 294 of 300 trips of one length,
    # 294 / 300 = 98 % exactly. Summing floats gives 0.9799999999999999; 98 % must still exempt.
    length = tiny.feed.shapes["L"].length_m
    km = MonthKm()
    for day in range(30):
        programmed = realized = 0.0
        for trip in range(10):
            programmed += length
            realized += length if not (day < 6 and trip == 0) else 0.0
        km = km.add(programmed, realized, f"2026-12-{day + 1:02d}")
    result = closed(suppressions, km, tiny.policy)
    assert result["T-2350"].status == EXEMPT_ART45  # 294 × L / (300 × L) = 0.98 >= 0.98


def test_efficiency_of_98_pct_keeps_fine_and_id_yields_exempt(tiny, suppressions):
    result = closed(suppressions, month_of_trips(50, 49), tiny.policy)  # 98 %
    for trip_id, before in suppressions.items():
        after = result[trip_id]
        assert after.infraction_id == before.infraction_id  # a status change, same record id
        assert after.fine_ufir == 200  # the fine the code carries; the status says it is not due
        assert {k: v for k, v in after.evidence.items() if k != "art45"} == before.evidence  # evidence kept


def test_efficiency_of_98_pct_start_of_operation_yields_confirmed_infraction(tiny, suppressions):
    first = closed(suppressions, month_of_trips(50, 49), tiny.policy)["T-0600"]  # 98 % >= 98 %
    assert first.status == CONFIRMED  # suppression at the start of operation is never exempt
    assert first.evidence["art45"]["exempt"] is True  # the month qualified ...
    assert first.evidence["art45"]["start_of_operation"] is True  # ... but not this trip


# --- below 98 % -------------------------------------------------------------------------


def test_efficiency_below_98_pct_yields_all_confirmed(tiny, suppressions):
    km = month_of_trips(50, 48)  # 48 × 7 km = 336 km / 350 km = 96 % < 98 %
    result = closed(suppressions, km, tiny.policy)
    assert {f.status for f in result.values()} == {CONFIRMED}  # T-0600 and T-2350
    art45 = result["T-2350"].evidence["art45"]
    assert (art45["programmed_km"], art45["realized_km"], art45["efficiency_pct"]) == (350.0, 336.0, 96.0)
    assert art45["exempt"] is False


def test_efficiency_just_below_98_pct_yields_all_confirmed(tiny, suppressions):
    km = month_of_trips(10_000, 9_799)  # 9799 / 10000 = 97.99 % < 98 %
    result = closed(suppressions, km, tiny.policy)
    assert result["T-2350"].status == CONFIRMED
    assert result["T-2350"].evidence["art45"]["efficiency_pct"] == 97.99  # 100 × 68593 km / 70000 km


# --- statuses other than provisional -------------------------------------------------------


def test_justified_suppression_stays_justified_yields_nothing_new(tiny, suppressions):
    closure = decode_occurrence(json.dumps({
        "id": "OC-9", "kind": "road_closure", "route_id": "T",
        "start": "2026-12-01T23:40:00-03:00", "end": "2026-12-02T00:30:00-03:00"}))
    assert isinstance(closure, Occurrence)
    justified = justify(suppressions["T-2350"], CATALOGUE["D-22"].justified_by, [closure], Projector(tiny.feed.epsg), 50.0)
    assert justified.status == JUSTIFIED  # [23:40, 00:30] overlaps [23:50, 00:15]
    for km in (month_of_trips(50, 49), month_of_trips(50, 10)):  # 98 % and 20 %
        (after,) = close_month([justified], km, MONTH, DAYS, tiny.policy)
        assert after == justified  # unchanged: status justified, no art45 evidence


def test_already_confirmed_suppression_is_left_alone(tiny, suppressions):
    confirmed = close_month([suppressions["T-2350"]], month_of_trips(50, 48), MONTH, DAYS, tiny.policy)[0]
    again = close_month([confirmed], month_of_trips(50, 50), MONTH, DAYS, tiny.policy)[0]  # 100 %
    assert again == confirmed  # only provisional records are closed


# --- month bookkeeping --------------------------------------------------------------------


def test_month_km_adds_programmed_and_realized_metres():
    km = MonthKm().add(7000.0, 7000.0, "2026-12-01").add(14000.0, 7000.0, "2026-12-02").add(
        7000.0, 0.0, "2026-12-01")
    assert km.programmed_m == 28000.0  # 7000 + 14000 + 7000
    assert km.realized_m == 14000.0  # 7000 + 7000 + 0
    assert km.efficiency == 0.5  # 14 km / 28 km
    assert km.service_dates == ("2026-12-01", "2026-12-02")  # distinct, sorted


def test_month_with_every_service_date_yields_month_complete(tiny, suppressions):
    full = month_of_trips(62, 62)  # 2 trips on each of the 31 days of December
    assert closed(suppressions, full, tiny.policy)["T-2350"].evidence["art45"]["month_complete"] is True  # 31 >= 31
    partial = month_of_trips(30, 30)  # dates 01..30
    assert closed(suppressions, partial, tiny.policy)["T-2350"].evidence["art45"]["month_complete"] is False  # 30 < 31
    assert closed(suppressions, partial, tiny.policy)["T-2350"].evidence["art45"][
        "service_dates_considered"] == [f"2026-12-{d:02d}" for d in range(1, 31)]


# --- a month not seen whole ----------------------------------------------------------------


def test_month_with_one_day_seen_yields_no_confirmed_infraction(tiny, suppressions):
    # 1 of 31 days closed (month_complete: 1 + 0 < 31): 10 trips of 7 km, 9 run = 90 % < 98 %;
    # the 30 days not seen may change it, so neither D-22 is confirmed: both stay provisional
    km = MonthKm()
    for i in range(10):
        km = km.add(7000.0, 7000.0 if i < 9 else 0.0, "2026-12-01")
    result = closed(suppressions, km, tiny.policy)
    assert {f.status for f in result.values()} == {PROVISIONAL}
    art45 = result["T-0600"].evidence["art45"]
    assert (art45["month_complete"], art45["efficiency_pct"]) == (False, 90.0)
    assert "unsettled" in art45


def test_month_with_one_day_seen_at_98_pct_yields_exempt_but_start_of_operation_stays_provisional(tiny, suppressions):
    # 1 of 31 days: 50 trips, 49 run = 98 %: the exemption stands (it accuses no one), the
    # start of operation, which only a month's close confirms, stays provisional
    km = MonthKm()
    for i in range(50):
        km = km.add(7000.0, 7000.0 if i < 49 else 0.0, "2026-12-01")
    result = closed(suppressions, km, tiny.policy)
    assert result["T-2350"].status == EXEMPT_ART45
    assert result["T-0600"].status == PROVISIONAL
    assert result["T-0600"].evidence["art45"]["month_complete"] is False
