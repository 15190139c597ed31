"""The enforcement engine: the stateful core that `fiscaliza replay` and the Faust
workers both run.

Messages go in (already decoded), realized trips, infractions and rejections come
out. Everything the engine decides is computed by the pure functions of `trips`
(and, later, the rule catalogue); the engine only keeps their state between
batches and closes periods as the event-time watermark passes them.
"""

from engine.core import Context, Emitted, Engine, Message

__all__ = ["Context", "Emitted", "Engine", "Message"]
