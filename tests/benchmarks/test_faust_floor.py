"""The Faust floor's pure pieces (benchmarks/faust_floor.py): which batch size a variant
asks for, and the sustained rate from the batches an agent got."""

from __future__ import annotations

import pytest

from benchmarks.faust_floor import VARIANTS, batch_size, sustained_rate


def test_every_variant_names_its_batch_size():
    assert [batch_size(v) for v in VARIANTS] == [1, 100, 1000, 10000, 10000, 10000]
    assert batch_size("events_direct") == 1 and batch_size("noack_take_250") == 250
    for unknown in ("take", "take_0", "take_x", "batch_10", "events_10"):
        with pytest.raises(ValueError):
            batch_size(unknown)


def test_the_rate_leaves_out_the_first_batch_and_a_last_partial_one():
    # 10 events fill before the clock starts; 20 more in 2 s; 5 stragglers after a 1.5 s wait
    assert sustained_rate([(10, 0.0), (20, 1.0), (30, 2.0), (35, 3.5)], size=10) == pytest.approx(10.0)
    # a last full batch counts
    assert sustained_rate([(10, 0.0), (20, 1.0), (30, 2.0)], size=10) == pytest.approx(10.0)
    # event by event: every "batch" is full
    assert sustained_rate([(1, 0.0), (2, 0.5), (3, 1.0)], size=1) == pytest.approx(2.0)


def test_batches_shorter_than_asked_all_along_are_measured_to_the_one_before_last():
    # the consumer never filled a batch within the 1 s wait: the last one waited too
    assert sustained_rate([(400, 0.0), (800, 1.0), (1200, 2.0), (1300, 3.0)], size=1000) == pytest.approx(400.0)


def test_too_few_batches_is_no_rate():
    with pytest.raises(ValueError):
        sustained_rate([(10, 0.0)], size=10)
    with pytest.raises(ValueError):
        sustained_rate([], size=10)
