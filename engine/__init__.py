"""The enforcement engine: the stateful core that `fiscaliza replay` and the Faust
workers both run.

Two stages: the vehicle stage (`engine.vehicle`, partitioned by vehicle) reorders,
deduplicates and detects trips, and judges a vehicle's trips and day once they are
matched. It hands its concerns to modules of their own: a message's admission
(`engine.admission`: dedup, versions, lateness), the live view (`engine.liveviews`
over `engine.live` and `engine.status`), the day's compact facts and the episodes
judged while the day runs (`engine.dayfacts`), the trip a vehicle is running
(`engine.running`: its departure told, B-04 while it runs), a trip's arrival
(`engine.arrival`: the rules its track settles, its log opened), the passes along an
itinerary in the open track (`engine.passes`: the track rules, the unfollowed passes
told) and the settling of a matched day (`engine.settling`), over the state of `engine.vehiclestate`. The operator stage (`engine.operator`, partitioned by operator) closes
service days and months on the event-time watermark, matches trips to the schedule
and runs the service-day rules. `engine.routing` says which stage each message goes
to and what leaves it; `engine.core.Engine` runs that routing in one process for the
replay, `streams.app` over Kafka topics in the workers. Every decision is made by pure
functions (`trips`, `rules`).
"""

from engine.core import Engine
from engine.sends import Sends
from engine.values import Context, Message
from engine.vehicle import message_id

__all__ = ["Context", "Engine", "Message", "Sends", "message_id"]
