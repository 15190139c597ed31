"""The defence's own experiment: an auto re-judged on its bundle without the disputed readings."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from dockets.bundle import BundleMaker, read_bundle, sha256
from dockets.rejudgment import (
    DISAPPEARS,
    INSUFFICIENT,
    STANDS,
    Disputed,
    DisputeError,
    Span,
    bundle_context,
    judge_with,
    readings,
    rejudge,
    without,
)
from fiscaliza.replay import ReplayInputs, rerun
from rules.model import infraction_record

TZ = "America/Sao_Paulo"


class Jumped:
    """The jumped day's D-11 bundle (tests/conftest.py JumpedDay) read back, with its judge
    and the whole bundle judged once."""

    def __init__(self, day):
        self.episode, self.jump, self.record, self.data = day.episode, day.jump, day.record, day.data
        self.bundle = read_bundle(self.data)
        self.judge = judge_with(bundle_context(self.bundle))
        self.baseline = self.judge(without(self.bundle, ()))


@pytest.fixture(scope="module")
def jumped(jumped_day) -> Jumped:
    return Jumped(jumped_day)


@pytest.fixture(scope="module")
def demo_bundles(demo_day):
    maker = BundleMaker.for_files(demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context.fleet, TZ)
    return {code: maker.bundle(demo_day.record(code)) for code in ("C-01",)}


def _again(jumped, disputed):
    return rejudge(jumped.bundle, sha256(jumped.data), disputed, jumped.judge, TZ, jumped.baseline)


def test_the_jump_is_in_the_auto(jumped):
    # what the other tests dispute: the jump is what the auto's farthest point rests on
    (episode,) = jumped.record["evidence"]["episodes"]
    assert episode["max_distance_m"] > 240 and len(episode["pings"]) == 14


def test_the_in_memory_judgment_gives_what_the_replay_of_the_bundle_gives(jumped, tmp_path):
    unpacked = tmp_path / "bundle"
    for name, data in jumped.bundle.members.items():
        (unpacked / name).parent.mkdir(parents=True, exist_ok=True)
        (unpacked / name).write_bytes(data)
    inputs = ReplayInputs(unpacked / "feed", unpacked / "fleet.csv", unpacked / "tachograph.jsonl",
                          unpacked / "catraca.jsonl", policy=unpacked / "policy.toml")
    replayed = rerun(inputs.static, inputs.telemetry)
    judged = jumped.baseline
    key = lambda r: r["infraction_id"]  # noqa: E731
    assert sorted(judged.infractions, key=key) == sorted(map(infraction_record, replayed.infractions), key=key)
    assert list(judged.insufficient) == list(replayed.insufficient)
    assert judged.messages == replayed.messages


def test_disputing_the_three_fixes_of_a_multipath_jump_yields_the_d11_standing(jumped):
    # 14 fixes 10 s apart off the itinerary, 3 disputed: 11 remain, the two beside the gap
    # 40 s apart (≤ 120 s between pings), 13:25:49 to 13:27:59 = 130 s ≥ 60 s, well over
    # 300 m; the farthest point falls back to the undisturbed fixes' 155 m
    result = _again(jumped, Disputed(msg_ids=jumped.jump))
    assert result.outcome == STANDS and result.reproduced
    assert result.record["infraction_id"] == jumped.record["infraction_id"]
    assert result.record["fine_ufir"] == 200
    (episode,) = result.record["evidence"]["episodes"]
    assert len(episode["pings"]) == 11 and 150 < episode["max_distance_m"] < 160
    assert episode["duration_s"] == 130
    changed = {c.key for c in result.changes}
    assert {"description", "evidence.episodes"} <= changed and "fine_ufir" not in changed
    assert (result.cited, result.cited_disputed) == (14, 3)
    assert any("Trecho mais longo fora do itinerário que resta" in said and "11 registros" in said
               for said in result.reliance)


def test_disputing_the_fixes_that_make_the_episode_yields_its_fall(jumped):
    # all 14 fixes off the itinerary disputed: no fix of the trip is more than 50 m off
    result = _again(jumped, Disputed(msg_ids=jumped.episode))
    assert result.outcome in (INSUFFICIENT, DISAPPEARS)
    assert result.record is None and result.changes == ()
    assert (result.cited, result.cited_disputed) == (14, 14)
    assert any("Nenhum trecho fora do itinerário que baste resta" in said for said in result.reliance)


def test_disputing_all_but_two_fixes_of_the_episode_yields_its_fall(jumped):
    # 2 consecutive fixes < 3 (d11.min_consecutive_pings), and 10 s < 60 s: no episode
    result = _again(jumped, Disputed(msg_ids=jumped.episode[2:]))
    assert result.outcome in (INSUFFICIENT, DISAPPEARS)


def test_the_same_readings_named_by_line_by_id_or_by_span_give_the_same_result(jumped):
    by_id = {r.msg_id: r for r in readings(jumped.bundle, TZ)}
    lines = tuple(("tachograph", by_id[name].number) for name in jumped.jump)
    first, last = (dt.datetime.fromisoformat(jumped.jump[i].split("/", 1)[1].split("#")[0]) for i in (0, -1))
    span = Span("JN-2014", first, last, "tachograph")
    results = [_again(jumped, d) for d in (Disputed(msg_ids=jumped.jump), Disputed(lines=lines),
                                           Disputed(spans=(span,)))]
    assert len({(r.disputed_sha256, r.removed, r.outcome, r.changes) for r in results}) == 1
    assert results[0].bundle_sha256 == sha256(jumped.data)
    assert results[0].removed == tuple(f"tachograph.jsonl:{n}" for _, n in lines)


def test_disputing_the_fastest_c01_ping_yields_the_c01_standing_on_the_two_left(demo_day, demo_bundles):
    # 75,6 km/h at 09:44:21 and 70,9 km/h at 09:44:41: both above 60 + 7 km/h, 20 s apart
    # (≥ 10 s, ≤ 60 s between pings): still an episode of two consecutive pings
    data = demo_bundles["C-01"]
    bundle = read_bundle(data)
    pings = bundle.infraction["evidence"]["pings"]
    fastest = max(pings, key=lambda p: p["speed_kmh"])["msg_id"]
    result = rejudge(bundle, sha256(data), Disputed(msg_ids=(fastest,)), judge_with(bundle_context(bundle)), TZ)
    assert result.outcome == STANDS
    assert [p["speed_kmh"] for p in result.record["evidence"]["pings"]] == [75.6, 70.9]
    assert any("que restam: 75,6 km/h; 70,9 km/h" in said for said in result.reliance)


def test_disputing_two_of_the_three_c01_pings_yields_its_fall(demo_bundles):
    # one ping left above 67 km/h: fewer than the two consecutive pings a C-01 needs
    data = demo_bundles["C-01"]
    bundle = read_bundle(data)
    pings = [p["msg_id"] for p in bundle.infraction["evidence"]["pings"]]
    result = rejudge(bundle, sha256(data), Disputed(msg_ids=tuple(pings[:2])), judge_with(bundle_context(bundle)),
                     TZ)
    assert result.outcome in (INSUFFICIENT, DISAPPEARS)


@pytest.mark.parametrize(("disputed", "message"), [
    (Disputed(lines=(("tachograph", 10**7),)), "fora do arquivo tachograph.jsonl"),
    (Disputed(lines=(("tachograph", 0),)), "fora do arquivo"),
    (Disputed(msg_ids=("JN-2014/2026-12-01T13:26:40-03:00",)), "nenhuma leitura do pacote tem o identificador"),
    (Disputed(spans=(Span("JN-2014", dt.datetime(2026, 12, 1, 3, tzinfo=dt.timezone.utc),
                          dt.datetime(2026, 12, 1, 4, tzinfo=dt.timezone.utc)),)), "nenhuma leitura de JN-2014"),
    (Disputed(spans=(Span("JN-2014", dt.datetime(2026, 12, 1, 14, tzinfo=dt.timezone.utc),
                          dt.datetime(2026, 12, 1, 13, tzinfo=dt.timezone.utc)),)), "termina antes de começar"),
])
def test_a_reading_the_bundle_does_not_hold_is_refused_in_words(jumped, disputed, message):
    with pytest.raises(DisputeError, match=message):
        _again(jumped, disputed)


# --- leave-one-out: how many readings the verdict needs (issue 30 item 3) ---

def _leave_one_out(data, max_runs=64):
    from dockets.rejudgment import leave_one_out

    bundle = read_bundle(data)
    return leave_one_out(bundle, sha256(data), judge_with(bundle_context(bundle)), TZ, max_runs)


def test_a_c01_of_three_pings_yields_a_verdict_without_any_single_reading(demo_bundles):
    # 75,6, 80 and 70,9 km/h at 09:44:21, :31 and :41: without any one, two pings above
    # 67 km/h remain, 10 or 20 s apart (≥ 10 s, ≤ 60 s between pings): still a C-01
    result = _leave_one_out(demo_bundles["C-01"])
    assert (len(result.cited), result.checked, result.needed) == (3, 3, ())
    assert result.scope == "vehicle"
    assert result.statement().startswith("a infração subsiste sem qualquer leitura isolada")


@pytest.fixture(scope="module")
def two_ping_c01(demo_day, tmp_path_factory):
    """The demo day with the C-01's first ping read at 50 km/h: the episode rests on the two
    pings left above the limit."""
    import json

    from fiscaliza.replay import replay
    from telemetry import decode
    from telemetry.contracts import message_id

    first = demo_day.record("C-01")["evidence"]["pings"][0]["msg_id"]
    lines = []
    for line in demo_day.inputs.tachograph.read_bytes().splitlines():
        body = decode("tachograph", line)
        if getattr(body, "vehicle_id", None) and message_id(body) == first:
            slower = json.loads(line)
            slower["speed_kmh"] = 50.0
            line = json.dumps(slower).encode()
        lines.append(line)
    root = tmp_path_factory.mktemp("two-ping-c01")
    (root / "tachograph.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    inputs = ReplayInputs(demo_day.inputs.feed, demo_day.inputs.fleet, root / "tachograph.jsonl",
                          demo_day.inputs.catraca)
    record = next(infraction_record(i) for i in replay(inputs).infractions if i.code == "C-01")
    maker = BundleMaker.for_files(inputs.static, inputs.telemetry, demo_day.context.fleet, TZ)
    return maker.bundle(record)


def test_a_c01_of_two_pings_yields_a_verdict_that_depends_on_both(two_ping_c01):
    # 80 km/h at 09:44:31 and 70,9 km/h at 09:44:41, 10 s apart: without either, one ping
    # above 67 km/h is left, fewer than the two consecutive pings a C-01 needs
    bundle = read_bundle(two_ping_c01)
    assert [p["speed_kmh"] for p in bundle.infraction["evidence"]["pings"]] == [80.0, 70.9]
    result = _leave_one_out(two_ping_c01)
    assert result.needed == result.cited and len(result.cited) == 2
    first, second = (int(location.rsplit(":", 1)[1]) for location in result.cited)
    assert result.statement().startswith(f"depende das leituras {first} e {second} do tacógrafo (tachograph.jsonl)")


def test_a_leave_one_out_past_its_count_checks_readings_evenly_spaced_and_says_so(jumped):
    # the D-11 cites 14 readings; 4 runs leave out the 1st, 5th, 10th and 14th
    result = _leave_one_out(jumped.data, max_runs=4)
    assert result.checked == 4 and len(result.cited) == 14 and not result.complete
    assert "verificadas 4 de 14 leituras citadas, igualmente espaçadas" in result.statement()


def test_a_leave_one_out_says_the_same_on_two_runs_without_reading_a_clock(jumped, monkeypatch):
    import time

    first = _leave_one_out(jumped.data, max_runs=3)

    def no_clock(*_):
        raise AssertionError("leave-one-out read a clock")

    for name in ("time", "monotonic", "perf_counter", "process_time", "thread_time"):
        monkeypatch.setattr(time, name, no_clock)
    second = _leave_one_out(jumped.data, max_runs=3)
    assert second == first and second.statement() == first.statement()


@pytest.mark.parametrize(("count", "runs", "chosen"), [
    (14, 4, (0, 4, 9, 13)),
    (238, 16, (0, 16, 32, 47, 63, 79, 95, 111, 126, 142, 158, 174, 190, 205, 221, 237)),
    (5, 2, (0, 4)),
    (3, 16, (0, 1, 2)),
    (0, 16, ()),
])
def test_evenly_spaced_readings_include_the_first_and_the_last(count, runs, chosen):
    from dockets.rejudgment import evenly_spaced

    assert evenly_spaced(count, runs) == chosen


def test_a_policy_signed_with_the_old_cpu_budget_still_loads_and_a_count_below_two_is_refused():
    from kernel.policy import PolicyError, parse_policy

    text = (Path(__file__).parents[2] / "kernel/policies/joao-neiva.toml").read_text()
    old = text.replace("leave_one_out_max_runs = 16", "leave_one_out_budget_s = 15")
    assert parse_policy(old).defence.leave_one_out_max_runs == 16
    with pytest.raises(PolicyError, match="leave_one_out_max_runs"):
        parse_policy(text.replace("leave_one_out_max_runs = 16", "leave_one_out_max_runs = 1"))
