"""How the stages' state is stored in the workers' tables and their changelogs.

msgpack, compressed with Zstandard at level 3 (zstd's default). A vehicle's state is
mostly fixes (the open trip's track, the few around each timepoint of the day's trips)
whose message ids and coordinates repeat from one fix to the next. Every batch rewrites
the state of every vehicle it touched, and the next batch that touches it reads it back,
so both directions are on the live path. On the largest state of the 150-vehicle
benchmark day (46 KB as msgpack) zstd stores 15.8 KB where zlib at level 1 stored 18.0 KB,
in about a third of the CPU both ways (BENCHMARKS.md, session 25).

Older states still read, told apart by their first byte: a zstd frame starts with its
magic number 0x28 B5 2F FD, a zlib stream (states written before session 25) with 0x78,
plain msgpack (states written before compression) with a map's byte (0x80-0x8f,
0xde-0xdf). msgpack spends 0x28 and 0x78 on the integers 40 and 120, never on a state.
"""

from __future__ import annotations

import threading
import zlib

import msgspec
import zstandard

_ENCODER = msgspec.msgpack.Encoder()
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ZLIB_HEADER = 0x78
_LEVEL = 3  # zstd's default: at level 1 the largest state is 7 % bigger for a fifth less CPU


class _Codecs(threading.local):
    """A compressor and a decompressor per thread: zstandard's are not thread-safe, and
    making one per call costs as much as compressing a small state."""

    def __init__(self) -> None:
        self.compressor = zstandard.ZstdCompressor(level=_LEVEL)
        self.decompressor = zstandard.ZstdDecompressor()


_codecs = _Codecs()


def pack(state: msgspec.Struct) -> bytes:
    return _codecs.compressor.compress(_ENCODER.encode(state))


def unpack(raw: bytes, decoder: msgspec.msgpack.Decoder):
    if raw[:4] == _ZSTD_MAGIC:
        raw = _codecs.decompressor.decompress(raw)
    elif raw[0] == _ZLIB_HEADER:
        raw = zlib.decompress(raw)
    return decoder.decode(raw)
