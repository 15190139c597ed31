"""fiscaliza: enforces a municipality's bus disciplinary code from live telemetry.

This package holds the application shell: the command line, the enforcement policy
and the replay runner. The domain lives in the sibling packages `gtfs` (schedule),
`geofences` (geometry), `telemetry` (message contracts) and `trips` (realized trips).
"""

__version__ = "0.1.0"
