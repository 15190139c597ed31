from kernel.errors import FiscalizaError


class FeedError(FiscalizaError, ValueError):
    """The GTFS feed cannot be used; the message says why in one line."""
