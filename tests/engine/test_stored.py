"""The stages' state as the workers store it: compressed msgpack, read back unchanged."""

from __future__ import annotations

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
    # 200 fixes of ~99 bytes: their ids and coordinates repeat, zlib takes well over half away
    assert len(pack(state)) < len(plain) / 2


def test_a_state_stored_before_compression_still_reads():
    state = OperatorState("op-1", first_event=1.0)
    plain = msgspec.msgpack.encode(state)
    assert plain[0] != 0x78  # a msgpack map: never mistaken for a zlib stream
    assert unpack(plain, msgspec.msgpack.Decoder(OperatorState)) == state
