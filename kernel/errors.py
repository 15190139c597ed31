"""One base class for every error a user can cause: a bad file, argument or request.

Each entry point maps a `FiscalizaError` to its one line and exit code 2 (the command
line) or to its page (the web app) in one place; anything else is a bug and keeps its
traceback.
"""


class FiscalizaError(Exception):
    """A refusal the user can act on; its message is the one line they are shown."""


class InputError(FiscalizaError, ValueError):
    """A bad argument or an unreadable input file (policy, feed, fleet, geofences, telemetry)."""
