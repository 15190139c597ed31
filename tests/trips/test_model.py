"""The fixes' fields as arrays, the one way every module reads them."""

import numpy as np

from trips.model import Fix, columns


def test_columns_are_the_named_fields_in_order():
    fixes = [Fix(t=10.0 * i, x=100.0 + i, y=200.0 - i, speed_kmh=30.0 + i, route_id=None, msg_id=f"m{i}")
             for i in range(4)]
    t, speed, y = columns(fixes, "t", "speed_kmh", "y")
    assert t.tolist() == [0.0, 10.0, 20.0, 30.0]
    assert speed.tolist() == [30.0, 31.0, 32.0, 33.0]
    assert y.tolist() == [200.0, 199.0, 198.0, 197.0]
    assert t.dtype == np.float64
    (empty,) = columns([], "x")
    assert empty.shape == (0,)
