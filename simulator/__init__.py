"""A reproducible telemetry simulator: tachograph and catraca JSON Lines for any feed.

`plan` turns the schedule of a date into vehicle duties (blocks first, then the
rest chained at terminals), `motion` moves a vehicle along its shapes, `faults`
injects the deviations the detectors must find, and `run` writes the files.
"""

from simulator.faults import FAULTS, INPUT_FAULTS, OTHER_LAW_FAULTS
from simulator.run import SimulationError, SimulationSettings, simulate

__all__ = ["FAULTS", "INPUT_FAULTS", "OTHER_LAW_FAULTS", "SimulationError", "SimulationSettings", "simulate"]
