"""Sample networks shipped with fiscaliza (fictional data over real geography)."""

from importlib import resources
from pathlib import Path


def joao_neiva() -> tuple[Path, Path]:
    """(feed directory, fleet.csv) of the João Neiva sample network."""
    root = Path(str(resources.files("samples").joinpath("joao_neiva")))
    return root / "feed", root / "fleet.csv"
