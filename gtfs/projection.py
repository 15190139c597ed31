"""The feed's metric CRS: SIRGAS 2000 / UTM in the zone of the feed's centre.

Distances (programmed km, corridors, zones) are measured in this CRS, as DESIGN.md
fixes (João Neiva falls in EPSG:31984, São Paulo in 31983).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from pyproj import CRS, Transformer
from pyproj.aoi import AreaOfInterest
from pyproj.database import query_utm_crs_info


def utm_epsg_for(lon: float, lat: float) -> int:
    """EPSG code of the SIRGAS 2000 UTM zone containing (lon, lat).

    Outside SIRGAS 2000's area (not in the Americas) WGS 84 / UTM is used instead.
    """
    aoi = AreaOfInterest(lon, lat, lon, lat)
    for datum in ("SIRGAS 2000", "WGS 84"):
        infos = query_utm_crs_info(datum_name=datum, area_of_interest=aoi)
        # The database lists several realizations; the plain "<datum> / UTM zone NNS" one wins.
        exact = [i for i in infos if i.name.startswith(f"{datum} / UTM zone")]
        if exact:
            return int(exact[0].code)
    raise ValueError(f"no UTM zone for lon={lon} lat={lat}")


@dataclass(frozen=True)
class Projector:
    """Vectorized WGS84 <-> metric transforms for one CRS."""

    epsg: int

    @cached_property
    def _forward(self) -> Transformer:
        return Transformer.from_crs(CRS.from_epsg(4326), CRS.from_epsg(self.epsg), always_xy=True)

    @cached_property
    def _inverse(self) -> Transformer:
        return Transformer.from_crs(CRS.from_epsg(self.epsg), CRS.from_epsg(4326), always_xy=True)

    def to_xy(self, lon, lat) -> tuple[np.ndarray, np.ndarray]:
        x, y = self._forward.transform(np.asarray(lon, dtype=float), np.asarray(lat, dtype=float))
        return np.asarray(x, dtype=float), np.asarray(y, dtype=float)

    def to_lonlat(self, x, y) -> tuple[np.ndarray, np.ndarray]:
        lon, lat = self._inverse.transform(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        return np.asarray(lon, dtype=float), np.asarray(lat, dtype=float)
