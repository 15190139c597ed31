"""What a stage or a step sends (engine.sends): combined with `merge`, told in order. The
values are labels: merging and telling only move them."""

from __future__ import annotations

import dataclasses

from engine.sends import Sends


def labelled(tag: str) -> Sends:
    """Every list holding one label of its own, the counters 1 and 2."""
    lists = {f.name: [f"{tag}:{f.name}"] for f in dataclasses.fields(Sends) if f.name not in ("late_kept", "rejudged")}
    return Sends(**lists, late_kept=1, rejudged=2)


def test_merge_appends_every_list_in_order_and_sums_the_counters():
    sends = labelled("a")
    sends.merge(labelled("b"))
    for f in dataclasses.fields(Sends):
        if f.name in ("late_kept", "rejudged"):
            continue
        assert getattr(sends, f.name) == [f"a:{f.name}", f"b:{f.name}"]
    assert (sends.late_kept, sends.rejudged) == (2, 4)


def test_merge_leaves_what_it_merges_alone():
    sends, other = Sends(rejected=["a"]), Sends(rejected=["b"])
    sends.merge(other)
    assert other.rejected == ["b"] and sends.rejected == ["a", "b"]


def test_told_puts_a_departure_before_the_arrival_after_it_one_result_after_the_other():
    # within a result the vehicle stage's kinds go in a fixed order; across results, the
    # earlier result's all go first (its trip's arrival before the next departure)
    first = Sends(detected=["arrived 1"], departed=["departed 1"], revised=["revised 1"])
    second = Sends(detected=["arrived 2"], departed=["departed 2"], unfollowed=["unfollowed 2"],
                   cut_short=["cut short 2"], live_departed=["seen leaving 3"])
    sends = Sends()
    sends.merge(first.told())
    sends.merge(second.told())
    assert sends.to_operators == ["departed 1", "arrived 1", "revised 1",
                                  "seen leaving 3", "departed 2", "unfollowed 2", "cut short 2", "arrived 2"]
    assert sends.live_departed == sends.departed == sends.unfollowed == sends.cut_short == sends.detected == sends.revised == []
    assert first.detected == ["arrived 1"]  # told is a new value
