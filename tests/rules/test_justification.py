"""Motivo justificado (DESIGN.md, rules/justification.py): an occurrence covers an
infraction when its kind may justify the code, its [start, end] overlaps the facts'
interval, it names the same route and vehicle when it names any, and -- for a detour
with a geometry -- every off-route position lies inside the geometry widened by the
corridor (50 m). A covered infraction becomes `justified`, keeping its evidence.

Kinds per code (the catalogue): D-22, D-12, D-13 road_closure/accident/breakdown/other;
D-11, A-07 authorized_detour/road_closure/accident; B-04 all five; C-01, D-19, D-21 none.

Geometry is in SIRGAS 2000 / UTM 24S (EPSG:31984), the tiny feed's CRS; shape L runs east
along y = 7 815 000 from x = 356 000 (terminal A) to x = 359 000, then north.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from tiny_day import ALL_RUN, SAO_PAULO, TUESDAY, at

from gtfs.projection import Projector
from kernel.policy import load_policy
from rules import d22
from rules.joao_neiva.pack import CATALOGUE
from rules.justification import covering, justify
from rules.model import CONFIRMED, JUSTIFIED, PROVISIONAL, Infraction, make_infraction
from telemetry import Occurrence, decode_occurrence

KINDS = ("road_closure", "authorized_detour", "accident", "breakdown", "other")
PROJECTOR = Projector(31984)
CORRIDOR_M = 50.0


def occurrence(id: str, kind: str, start: str = "06:00", end: str = "07:00", **fields) -> Occurrence:
    """An occurrence of 2026-12-01 (local HH:MM[:SS] times), decoded as the pipeline does."""
    decoded = decode_occurrence(json.dumps({
        "id": id, "kind": kind, "start": f"2026-12-01T{_hms(start)}-03:00",
        "end": f"2026-12-01T{_hms(end)}-03:00", **fields}))
    assert isinstance(decoded, Occurrence), decoded
    return decoded


def _hms(text: str) -> str:
    return text if text.count(":") == 2 else f"{text}:00"


def lonlat(x: float, y: float) -> list[float]:
    lon, lat = PROJECTOR.to_lonlat(x, y)
    return [float(lon), float(lat)]


# A detour street 300 m north of shape L, from x = 357 000 to x = 358 000 (y = 7 815 300).
DETOUR_LINE = {"type": "LineString", "coordinates": [lonlat(357_000, 7_815_300), lonlat(358_000, 7_815_300)]}


def infraction(code: str, *, route_id: str | None = "T", vehicle_id: str | None = "V1",
               interval: tuple[float, float] | None = None, off_route: list[list[float]] | None = None,
               status: str = CONFIRMED) -> Infraction:
    evidence = {}
    if interval is not None:
        evidence["interval_epoch"] = list(interval)
    if off_route is not None:
        evidence["off_route_lonlat"] = off_route
    return make_infraction(
        code, load_policy(), identity=(code, route_id, vehicle_id, interval), status=status,
        operator_id="OP1", route_id=route_id, direction_id=0, vehicle_id=vehicle_id, service_date=TUESDAY,
        occurred_at=dt.datetime(2026, 12, 1, 6, 30, tzinfo=SAO_PAULO), description="teste", evidence=evidence)


def ids(found) -> list[str]:
    return [o.id for o in found]


# --- covering(): kind --------------------------------------------------------------------


@pytest.mark.parametrize(("code", "kind", "covers"), [
    ("D-22", "road_closure", True), ("D-22", "breakdown", True), ("D-22", "authorized_detour", False),
    ("D-12", "accident", True), ("D-12", "authorized_detour", False),
    ("D-13", "other", True), ("D-13", "authorized_detour", False),
    ("D-11", "authorized_detour", True), ("D-11", "road_closure", True), ("D-11", "breakdown", False),
    ("A-07", "accident", True), ("A-07", "other", False),
    ("B-04", "authorized_detour", True), ("B-04", "other", True),
])
def test_occurrence_kind_allowed_for_code_yields_cover(code, kind, covers):
    found = covering(CATALOGUE[code].justified_by, [occurrence("OC-1", kind)], "T", "V1", at(6, 30), at(6, 40))
    assert (ids(found) == ["OC-1"]) is covers  # [06:00, 07:00] overlaps [06:30, 06:40]; only the kind decides


@pytest.mark.parametrize("code", ["C-01", "D-21", "D-19"])
@pytest.mark.parametrize("kind", KINDS)
def test_code_without_justifying_kinds_yields_nothing(code, kind):
    found = covering(CATALOGUE[code].justified_by, [occurrence("OC-1", kind, "00:00", "23:59:59")], "T", "V1", at(6, 30), at(6, 40))
    assert found == []  # no kind justifies speeding, a broken seal or a silent catraca


def test_only_the_kinds_passed_in_cover_yields_cover():
    closure = occurrence("OC-1", "road_closure")
    assert ids(covering(frozenset({"road_closure"}), [closure], "T", "V1", at(6, 30), at(6, 40))) == ["OC-1"]
    assert covering(frozenset({"other"}), [closure], "T", "V1", at(6, 30), at(6, 40)) == []


# --- covering(): time ----------------------------------------------------------------------


@pytest.mark.parametrize(("start", "end", "covers"), [
    ("06:00", "06:30", True),  # ends exactly when the facts start (06:30): closed intervals touch
    ("06:00", "06:29:59", False),  # ends 1 s before 06:30
    ("06:40", "07:00", True),  # starts exactly when the facts end (06:40)
    ("06:40:01", "07:00", False),  # starts 1 s after 06:40
    ("06:33", "06:35", True),  # inside [06:30, 06:40]
    ("06:00", "07:00", True),  # contains it
    ("08:00", "09:00", False),  # another hour
])
def test_occurrence_time_overlap_yields_cover(start, end, covers):
    found = covering(CATALOGUE["D-22"].justified_by, [occurrence("OC-1", "road_closure", start, end)], "T", None, at(6, 30), at(6, 40))
    assert (ids(found) == ["OC-1"]) is covers


# --- covering(): route and vehicle -----------------------------------------------------------


@pytest.mark.parametrize(("fields", "covers"), [
    ({}, True),  # names no route nor vehicle: network-wide
    ({"route_id": "T"}, True),  # same route
    ({"route_id": "F"}, False),  # another route
    ({"vehicle_id": "V1"}, True),  # same vehicle
    ({"vehicle_id": "V2"}, False),  # another vehicle
    ({"route_id": "T", "vehicle_id": "V1"}, True),  # both match
    ({"route_id": "T", "vehicle_id": "V2"}, False),  # route matches, vehicle does not
    ({"route_id": "F", "vehicle_id": "V1"}, False),  # vehicle matches, route does not
])
def test_occurrence_route_and_vehicle_yields_cover(fields, covers):
    found = covering(CATALOGUE["D-11"].justified_by, [occurrence("OC-1", "accident", **fields)], "T", "V1", at(6, 30), at(6, 40))
    assert (ids(found) == ["OC-1"]) is covers


def test_occurrence_naming_vehicle_for_facts_without_vehicle_yields_nothing():
    # a D-22 has no vehicle (nobody ran the trip): an occurrence of vehicle V1 does not name it
    found = covering(CATALOGUE["D-22"].justified_by, [occurrence("OC-1", "breakdown", vehicle_id="V1")], "T", None, at(6, 30), at(6, 40))
    assert found == []  # None != "V1"


def test_several_occurrences_yield_covers_sorted_by_id():
    found = covering(CATALOGUE["D-13"].justified_by, [occurrence("OC-B", "other"), occurrence("OC-A", "accident"),
                              occurrence("OC-C", "other", route_id="F")], "T", "V1", at(6, 30), at(6, 40))
    assert ids(found) == ["OC-A", "OC-B"]  # OC-C is of route F


# --- covering(): detour geometry ---------------------------------------------------------------


def detour(**fields) -> Occurrence:
    return occurrence("OC-D", "authorized_detour", geometry=DETOUR_LINE, route_id="T", **fields)


def test_off_route_points_inside_buffered_detour_yield_cover():
    # 0 m, 30 m and 45 m north of the detour street: all within 50 m
    points = [lonlat(357_100, 7_815_300), lonlat(357_500, 7_815_330), lonlat(357_900, 7_815_345)]
    found = covering(CATALOGUE["D-11"].justified_by, [detour()], "T", "V1", at(6, 30), at(6, 40), points, PROJECTOR, CORRIDOR_M)
    assert ids(found) == ["OC-D"]


def test_one_off_route_point_outside_buffered_detour_yields_nothing():
    # the last point is 60 m north of the street: 60 m > 50 m
    points = [lonlat(357_100, 7_815_300), lonlat(357_500, 7_815_330), lonlat(357_900, 7_815_360)]
    found = covering(CATALOGUE["D-11"].justified_by, [detour()], "T", "V1", at(6, 30), at(6, 40), points, PROJECTOR, CORRIDOR_M)
    assert found == []


def test_off_route_point_past_detour_end_yields_nothing():
    # 80 m east of the street's end (x = 358 000): beyond the 50 m buffer (round cap)
    points = [lonlat(357_500, 7_815_300), lonlat(358_080, 7_815_300)]
    found = covering(CATALOGUE["D-11"].justified_by, [detour()], "T", "V1", at(6, 30), at(6, 40), points, PROJECTOR, CORRIDOR_M)
    assert found == []


def test_off_route_points_inside_detour_polygon_yield_cover():
    polygon = {"type": "Polygon", "coordinates": [[
        lonlat(357_000, 7_815_100), lonlat(358_000, 7_815_100), lonlat(358_000, 7_815_400),
        lonlat(357_000, 7_815_400), lonlat(357_000, 7_815_100)]]}
    closure = occurrence("OC-P", "authorized_detour", geometry=polygon)
    inside = [lonlat(357_500, 7_815_200), lonlat(358_040, 7_815_200)]  # in it, and 40 m outside its east edge
    outside = [lonlat(357_500, 7_815_200), lonlat(358_060, 7_815_200)]  # 60 m > 50 m outside
    assert ids(covering(CATALOGUE["D-11"].justified_by, [closure], "T", "V1", at(6, 30), at(6, 40), inside, PROJECTOR, CORRIDOR_M)) == ["OC-P"]
    assert covering(CATALOGUE["D-11"].justified_by, [closure], "T", "V1", at(6, 30), at(6, 40), outside, PROJECTOR, CORRIDOR_M) == []


def test_detour_without_geometry_yields_cover_route_wide():
    points = [lonlat(357_500, 7_816_000)]  # anywhere: the detour is route-wide
    found = covering(CATALOGUE["D-11"].justified_by, [occurrence("OC-W", "authorized_detour", route_id="T")], "T", "V1",
                     at(6, 30), at(6, 40), points, PROJECTOR, CORRIDOR_M)
    assert ids(found) == ["OC-W"]


# --- justify() -------------------------------------------------------------------------------


def test_d11_inside_authorized_detour_yields_justified_infraction():
    off_route = [lonlat(357_200, 7_815_310), lonlat(357_800, 7_815_290)]  # 10 m from the street
    record = infraction("D-11", interval=(at(6, 30), at(6, 40)), off_route=off_route)
    result = justify(record, CATALOGUE[record.code].justified_by, [detour(note="obra na ponte")], PROJECTOR, CORRIDOR_M)
    assert result.status == JUSTIFIED
    assert result.evidence["justified_by"] == ["OC-D"]
    assert result.evidence["justification"] == ["authorized_detour: obra na ponte"]
    assert result.infraction_id == record.infraction_id  # same record, new status
    assert result.fine_ufir == record.fine_ufir  # 200: the fine the code carries
    assert {k: result.evidence[k] for k in record.evidence} == record.evidence  # evidence kept (audit trail)


def test_d11_partly_outside_authorized_detour_yields_infraction_unchanged():
    off_route = [lonlat(357_200, 7_815_310), lonlat(357_800, 7_815_200)]  # second point 100 m > 50 m away
    record = infraction("D-11", interval=(at(6, 30), at(6, 40)), off_route=off_route)
    assert justify(record, CATALOGUE[record.code].justified_by, [detour()], PROJECTOR, CORRIDOR_M) == record


def test_d22_under_road_closure_of_its_route_yields_justified_infraction(tiny):
    (record,) = [f for f in d22.detect(tiny.facts([d for d in ALL_RUN if d.departed_at != at(7, 0)]), tiny.policy)
                 if isinstance(f, Infraction)]  # T-0700 unmatched: interval [07:00, 07:28]
    assert record.status == PROVISIONAL
    closures = [occurrence("OC-2", "road_closure", "07:20", "09:00", route_id="T"),
                occurrence("OC-1", "accident", "06:50", "07:05", note="colisão")]
    result = justify(record, CATALOGUE[record.code].justified_by, closures, PROJECTOR, CORRIDOR_M)
    assert result.status == JUSTIFIED  # both overlap [07:00, 07:28]
    assert result.evidence["justified_by"] == ["OC-1", "OC-2"]  # sorted by id
    assert result.evidence["justification"] == ["accident: colisão", "road_closure"]


def test_d22_under_occurrence_of_another_route_yields_infraction_unchanged(tiny):
    (record,) = [f for f in d22.detect(tiny.facts([d for d in ALL_RUN if d.departed_at != at(7, 0)]), tiny.policy)
                 if isinstance(f, Infraction)]
    result = justify(record, CATALOGUE[record.code].justified_by, [occurrence("OC-1", "road_closure", "06:00", "09:00", route_id="F")],
                     PROJECTOR, CORRIDOR_M)
    assert result == record  # route F != T
    assert result.status == PROVISIONAL


def test_d22_with_occurrence_outside_its_time_yields_infraction_unchanged(tiny):
    (record,) = [f for f in d22.detect(tiny.facts([d for d in ALL_RUN if d.departed_at != at(7, 0)]), tiny.policy)
                 if isinstance(f, Infraction)]
    earlier = occurrence("OC-1", "road_closure", "06:00", "06:59:59", route_id="T")  # ends 1 s before 07:00
    later = occurrence("OC-2", "road_closure", "07:28:01", "09:00", route_id="T")  # starts 1 s after 07:28
    assert justify(record, CATALOGUE[record.code].justified_by, [earlier, later], PROJECTOR, CORRIDOR_M) == record


def test_infraction_without_interval_uses_occurred_at_yields_justified_infraction():
    record = infraction("B-04")  # no interval_epoch: the instant 06:30 stands for the facts
    assert justify(record, CATALOGUE[record.code].justified_by, [occurrence("OC-1", "other", "06:00", "06:30")], PROJECTOR, CORRIDOR_M).status \
        == JUSTIFIED  # [06:00, 06:30] touches 06:30
    assert justify(record, CATALOGUE[record.code].justified_by, [occurrence("OC-1", "other", "06:00", "06:29:59")], PROJECTOR, CORRIDOR_M) \
        == record  # 06:29:59 < 06:30


@pytest.mark.parametrize("code", ["C-01", "D-21"])
def test_c01_and_d21_under_every_kind_of_occurrence_yield_infraction_unchanged(code):
    record = infraction(code, interval=(at(6, 30), at(6, 40)))
    everything = [occurrence(f"OC-{i}", kind, "00:00", "23:59:59") for i, kind in enumerate(KINDS)]  # network-wide
    everything += [occurrence(f"OC-R{i}", kind, "00:00", "23:59:59", route_id="T", vehicle_id="V1")
                   for i, kind in enumerate(KINDS)]
    result = justify(record, CATALOGUE[record.code].justified_by, everything, PROJECTOR, CORRIDOR_M)
    assert result == record  # never justified: 0 of 10 occurrences can cover it
    assert result.status == CONFIRMED
