"""Sample networks shipped with fiscaliza (fictional data over real geography)."""

from importlib import resources
from pathlib import Path


def _sample(directory: str) -> tuple[Path, Path]:
    root = Path(str(resources.files("samples").joinpath(directory)))
    return root / "feed", root / "fleet.csv"


def joao_neiva() -> tuple[Path, Path]:
    """(feed directory, fleet.csv) of the João Neiva sample network."""
    return _sample("joao_neiva")


def conselheiro_lafaiete() -> tuple[Path, Path]:
    """(feed directory, fleet.csv) of the Conselheiro Lafaiete (MG) sample network."""
    return _sample("conselheiro_lafaiete")


def canarana() -> tuple[Path, Path]:
    """(feed directory, fleet.csv) of the Canarana (MT) sample network."""
    return _sample("canarana")


# Each sample by its city's code, the code its policy's `[policy] code` names
# (`kernel/policies/<code>.toml`).
SAMPLES = {"joao-neiva": joao_neiva, "conselheiro-lafaiete": conselheiro_lafaiete, "canarana": canarana}
