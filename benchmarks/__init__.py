"""Benchmarks (development-time code, not tests): `python -m benchmarks` runs the
city-scale benchmark; the other modules are the earlier single-figure benchmarks."""
