"""How the stages' state is stored in the workers' tables and their changelogs.

msgpack, compressed with zlib at level 1. A vehicle's state is mostly fixes (the open
trip's track, the few around each timepoint of the day's trips) whose message ids and
coordinates repeat from one fix to the next: compressed, the largest state of the
sample day falls from ~86 KB to ~30 KB for ~0.6 ms of CPU per write. Every batch
rewrites the state of every vehicle it touched, so this divides the changelog's bytes
(and a restarted worker's recovery) by about three.

A state written before compression (plain msgpack: a map, first byte 0x80-0x8f or
0xde-0xdf) is still read; a zlib stream starts with 0x78, which msgpack spends on the
integer 120, never on a state.
"""

from __future__ import annotations

import zlib

import msgspec

_ENCODER = msgspec.msgpack.Encoder()
_ZLIB_HEADER = 0x78
_LEVEL = 1  # the fastest: most of the gain (level 6 saves a further ~7 %) at a third of the CPU


def pack(state: msgspec.Struct) -> bytes:
    return zlib.compress(_ENCODER.encode(state), _LEVEL)


def unpack(raw: bytes, decoder: msgspec.msgpack.Decoder):
    if raw[0] == _ZLIB_HEADER:
        raw = zlib.decompress(raw)
    return decoder.decode(raw)
