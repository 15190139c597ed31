"""The stages' state as the workers store it: compressed msgpack, read back unchanged,
and the states stored in the two formats before it still read."""

from __future__ import annotations

import threading
import zlib

import msgspec

from engine.operator import OperatorState
from engine.stored import pack, unpack
from engine.vehicle import VehicleState
from trips.model import Fix, Track


def a_parked_vehicle(n: int) -> VehicleState:
    fixes = tuple(Fix(1_796_113_206.0 + 10 * i, 354_481.0 + i % 3, 7_814_796.9, 0.0, "101",
                      f"JN-1011/2026-12-01T05:20:{i % 60:02d}-03:00#{i}", -19.757, -40.3889) for i in range(n))
    return VehicleState("JN-1011", track=Track("JN-1011", fixes))


def test_a_state_comes_back_as_it_was_stored():
    state = a_parked_vehicle(200)
    assert unpack(pack(state), msgspec.msgpack.Decoder(VehicleState)) == state


def test_a_stored_state_is_compressed():
    state = a_parked_vehicle(200)
    plain = msgspec.msgpack.encode(state)
    # 200 fixes of ~99 bytes: their ids and coordinates repeat, zstd takes well over half away
    assert len(pack(state)) < len(plain) / 2
    assert pack(state)[:4] == b"\x28\xb5\x2f\xfd"  # a zstd frame


def test_a_state_stored_with_zlib_still_reads():
    """States written before session 25 (msgpack, zlib at level 1) are read as they were."""
    state = a_parked_vehicle(200)
    stored = zlib.compress(msgspec.msgpack.encode(state), 1)
    assert stored[0] == 0x78
    assert unpack(stored, msgspec.msgpack.Decoder(VehicleState)) == state


def test_a_state_stored_before_compression_still_reads():
    state = OperatorState("op-1", first_event=1.0)
    plain = msgspec.msgpack.encode(state)
    assert plain[0] not in (0x28, 0x78)  # a msgpack map: never mistaken for a zstd frame or a zlib stream
    assert unpack(plain, msgspec.msgpack.Decoder(OperatorState)) == state


def test_states_packed_in_several_threads_at_once_come_back_whole():
    """zstandard's compressors are not thread-safe: each thread has its own (a shared one
    races only now and then, so the codecs each thread used are compared too)."""
    from engine import stored

    states = [a_parked_vehicle(50 + 10 * k) for k in range(8)]
    expected = [pack(s) for s in states]
    results: dict[int, list[bytes]] = {}
    # the codecs themselves are kept (not their ids): a finished thread's cannot be freed
    # and their ids taken again
    used = {-1: (stored._codecs.compressor, stored._codecs.decompressor)}

    def work(k: int) -> None:
        results[k] = [pack(s) for s in states for _ in range(20)]
        used[k] = (stored._codecs.compressor, stored._codecs.decompressor)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(used) == 5 and len({id(c) for pair in used.values() for c in pair}) == 10
    decoder = msgspec.msgpack.Decoder(VehicleState)
    for packed in results.values():
        assert packed == [p for p in expected for _ in range(20)]
        assert [unpack(p, decoder) for p in packed[::20]] == states
