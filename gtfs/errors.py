class FeedError(ValueError):
    """The GTFS feed cannot be used; the message says why in one line."""
