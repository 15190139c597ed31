"""Motivo justificado: registered occurrences that cover an infraction's facts.

An occurrence covers an infraction when its kind can justify that code (each rule
says which kinds can), its [start, end] overlaps the interval of the facts, it names
the same route and vehicle when it names any, and — for a detour with a geometry —
every off-route position lies within the detour's geometry widened by the corridor.
A covered infraction becomes `justified` and keeps its evidence (audit trail).
"""

from __future__ import annotations

import msgspec
import numpy as np
import shapely
from shapely.geometry import shape as geojson_shape

from gtfs.projection import Projector
from rules.model import JUSTIFIED, Infraction
from telemetry import Occurrence


def covering(kinds: frozenset[str], occurrences, route_id: str | None, vehicle_id: str | None, start: float,
             end: float, off_route_lonlat: list[tuple[float, float]] | None = None, projector: Projector | None = None,
             corridor_m: float = 0.0) -> list[Occurrence]:
    """The occurrences of the `kinds` that justify the code (its rule's `justified_by`,
    passed in: this module sits below the catalogue) covering these facts."""
    found = []
    for occurrence in occurrences:
        if occurrence.kind not in kinds:
            continue
        if occurrence.start_epoch > end or occurrence.end_epoch < start:
            continue
        if occurrence.route_id is not None and occurrence.route_id != route_id:
            continue
        if occurrence.vehicle_id is not None and occurrence.vehicle_id != vehicle_id:
            continue
        if occurrence.geometry is not None and off_route_lonlat and projector is not None:
            area = shapely.transform(
                geojson_shape(occurrence.geometry),
                lambda c: np.column_stack(projector.to_xy(c[:, 0], c[:, 1])),
            ).buffer(corridor_m)
            lon, lat = np.array(off_route_lonlat).T
            x, y = projector.to_xy(lon, lat)
            if not shapely.contains_xy(area, x, y).all():
                continue
        found.append(occurrence)
    return sorted(found, key=lambda o: o.id)


def justify(infraction: Infraction, kinds: frozenset[str], occurrences, projector: Projector,
            corridor_m: float) -> Infraction:
    """The infraction, `justified` if a registered occurrence of the `kinds` covers its facts."""
    start, end = infraction.evidence.get("interval_epoch", (infraction.occurred_at.timestamp(),) * 2)
    found = covering(kinds, occurrences, infraction.route_id, infraction.vehicle_id, start, end,
                     infraction.evidence.get("off_route_lonlat"), projector, corridor_m)
    if not found:
        return infraction
    return msgspec.structs.replace(
        infraction, status=JUSTIFIED,
        evidence={**infraction.evidence, "justified_by": [o.id for o in found],
                  "justification": [f"{o.kind}: {o.note or ''}".strip(": ") for o in found]},
    )
