"""The engine's context loaded from its static inputs, whatever the entry point."""

from __future__ import annotations

from engine.values import Context
from geofences import GeofenceError, build_geofences
from gtfs import FeedError, load_feed
from gtfs.check import require_valid
from kernel.errors import InputError
from kernel.fleet import FleetError, load_fleet
from kernel.inputs import StaticInputs
from kernel.policy import PolicyError, load_policy
from rules.packs import pack_of


def load_context(inputs: StaticInputs) -> Context:
    """Policy and its rule pack, feed, fleet and geofences, or InputError with a one-line reason
    (a feed the GTFS reference rules or this project's own needs find an error in, too)."""
    try:
        policy = load_policy(inputs.policy)
        # the policy's law and the sections its rules read: refused before the feed is read
        pack = pack_of(policy)
        require_valid(inputs.feed)  # a feed with errors never accuses: refused, its first error named
        feed = load_feed(inputs.feed)
        fleet = load_fleet(inputs.fleet, operators=set(feed.agencies), routes=set(feed.routes))
        geofences = build_geofences(feed, policy, inputs.geofences)
        context = Context(feed=feed, geofences=geofences, policy=policy, fleet=fleet, pack=pack)
    except (PolicyError, FeedError, FleetError, GeofenceError) as exc:
        raise InputError(str(exc)) from None
    return context
