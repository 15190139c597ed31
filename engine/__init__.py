"""The enforcement engine: the stateful core that `fiscaliza replay` and the Faust
workers both run.

Messages go in (already decoded); realized trips, infractions, insufficient-evidence
records and rejections come out. Every decision is made by pure functions (`trips`,
`rules`); the engine only keeps their state between batches and closes service days
and months as the event-time watermark passes them.
"""

from engine.core import Engine, message_id
from engine.values import Context, Emitted, Message

__all__ = ["Context", "Emitted", "Engine", "Message", "message_id"]
