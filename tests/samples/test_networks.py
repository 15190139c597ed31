"""The sample networks: each loads with fiscaliza's own loader in its city's UTM zone and
timezone, and is what scripts/build_sample_feed.py builds, byte for byte."""

from __future__ import annotations

import filecmp
import importlib
import sys
from pathlib import Path

import pytest

from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import SAMPLES, canarana, conselheiro_lafaiete, joao_neiva

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("sample, epsg, timezone, operators", [
    (joao_neiva, 31984, "America/Sao_Paulo", {"VNV", "TRD"}),
    (conselheiro_lafaiete, 31983, "America/Sao_Paulo", {"VQZ", "ECJ"}),
    (canarana, 31982, "America/Cuiaba", {"VCN", "ECL"}),
])
def test_each_sample_loads_in_its_utm_zone_and_timezone(sample, epsg, timezone, operators):
    feed_path, fleet_path = sample()
    feed = load_feed(feed_path)
    assert feed.epsg == epsg and str(feed.timezone) == timezone
    assert set(feed.agencies) == operators
    fleet = load_fleet(fleet_path, operators=set(feed.agencies))
    assert {v.operator_id for v in fleet.values()} == operators and len(fleet) >= 6
    assert feed.dates[0].isoformat() == "2026-01-01" and feed.dates[-1].isoformat() == "2027-12-31"


def test_the_samples_are_named_by_their_policy_code():
    assert list(SAMPLES) == ["joao-neiva", "conselheiro-lafaiete", "canarana"]


@pytest.fixture(scope="module")
def generator():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        yield importlib.import_module("build_sample_feed")
    finally:
        sys.path.remove(str(ROOT / "scripts"))


@pytest.mark.parametrize("city", ["joao_neiva", "conselheiro_lafaiete", "canarana"])
def test_the_generator_rebuilds_the_shipped_files_and_they_validate(generator, city, tmp_path, monkeypatch):
    """Deterministic (same bytes as shipped: João Neiva's unchanged by the generalization),
    and valid for gtfs-kit and the generator's own geometry checks (`--check`)."""
    pytest.importorskip("gtfs_kit")
    monkeypatch.setattr(generator, "SAMPLES", tmp_path)
    result = generator.build(generator.CITIES[city])
    shipped = ROOT / "samples" / city
    built = sorted(p.relative_to(tmp_path / city) for p in (tmp_path / city).rglob("*") if p.is_file())
    assert built and all(filecmp.cmp(tmp_path / city / p, shipped / p, shallow=False) for p in built), city
    generator.check(result)  # exits on a problem
