"""The defence's own experiment (issue 30): the rule re-run on an evidence bundle without
the readings the operator disputes.

The core is pure: a bundle's contents read back (`dockets.bundle.Bundle`), the disputed
readings (single lines, by their line number in the bundle or their message id, and time
spans of one vehicle's tachograph or catraca) and a `Judge` (the engine over the bundle's
own static inputs, `judge_with`) give a `Rejudgment`: the infraction stands (with the same
or a changed fine), becomes insufficient evidence, or disappears; each field that changed;
and how far the verdict rests on the disputed readings. Deterministic: the result names
its inputs by digest (the bundle's SHA-256 and the canonical digest of the readings
removed), so anyone can run it again. The signed bundle is never changed.

The system informs; it does not decide: the gestor still judges the defence.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

from dockets import ptbr
from dockets.bundle import Bundle, read_bundle, sha256
from engine import Context, Engine, Message, Sends
from kernel.errors import FiscalizaError
from rules.model import InsufficientEvidence, infraction_record
from telemetry import Rejection, decode, event_order
from telemetry.contracts import message_id

STANDS = "stands"
INSUFFICIENT = "insufficient_evidence"
DISAPPEARS = "disappears"
OUTCOME_PT = {STANDS: "a infração subsiste", INSUFFICIENT: "passa a evidência insuficiente",
              DISAPPEARS: "a infração desaparece"}
# The readings a defence may dispute: the vehicles' own telemetry, never the occurrences.
DISPUTABLE = ("tachograph", "catraca")
SOURCE_PT = {"tachograph": "tacógrafo", "catraca": "catraca"}
_BATCH = 2000  # messages per engine call, as the replay's; results do not depend on it


class DisputeError(FiscalizaError, ValueError):
    """A disputed reading that the bundle does not hold (a line number beyond its file, an
    unknown message id, a span of no reading): named in one line."""


@dataclass(frozen=True)
class Reading:
    """One telemetry line of a bundle: its file, its line number (from 1) and message id."""

    source: str
    number: int
    msg_id: str
    vehicle_id: str
    epoch: float
    # the ids evidence may cite it by: as sent, and in the feed's zone (a message whose
    # offset was not kept, e.g. read back from the engine's state, is cited so)
    ids: frozenset[str]

    @property
    def location(self) -> str:
        return f"{self.source}.jsonl:{self.number}"


@dataclass(frozen=True)
class Span:
    """A time span [start, end] of one vehicle's tachograph, catraca, or both (source None)."""

    vehicle_id: str
    start: dt.datetime
    end: dt.datetime
    source: str | None = None

    def as_disputed(self) -> Disputed:
        return Disputed(spans=(self,))


@dataclass(frozen=True)
class Disputed:
    """What the defence disputes: lines by number (`source`, n) or message id, and spans."""

    lines: tuple[tuple[str, int], ...] = ()
    msg_ids: tuple[str, ...] = ()
    spans: tuple[Span, ...] = ()


@dataclass(frozen=True)
class Judged:
    """What the engine gave over a set of lines: final infraction records, insufficient
    evidence, and how many messages it read."""

    infractions: tuple[dict, ...]
    insufficient: tuple[InsufficientEvidence, ...]
    messages: int


Judge = Callable[[Mapping[str, Sequence[bytes]]], Judged]


@dataclass(frozen=True)
class Change:
    """A field of the record that the re-judgment gave otherwise (pt-BR label; values as shown)."""

    key: str
    label: str
    before: str
    after: str


@dataclass(frozen=True)
class Rejudgment:
    bundle_sha256: str
    disputed_sha256: str  # of the canonical list of the lines removed (`removed`)
    removed: tuple[str, ...]  # locations, in file and line order
    infraction_id: str
    code: str
    outcome: str  # STANDS | INSUFFICIENT | DISAPPEARS
    record: dict | None  # the re-judged infraction record (STANDS), else None
    insufficient_reason: str | None
    changes: tuple[Change, ...]
    reliance: tuple[str, ...]  # pt-BR: how far the verdict rests on the disputed readings
    cited: int  # readings the finding cites
    cited_disputed: int  # of them, disputed
    messages: int  # messages the re-judgment read
    # the whole bundle, judged the same way, gives the auto's infraction as recorded: what
    # the changes are measured against
    reproduced: bool

    @property
    def outcome_pt(self) -> str:
        return OUTCOME_PT[self.outcome]


# --- the bundle's readings ---------------------------------------------------------------

def readings(bundle: Bundle, timezone: str) -> tuple[Reading, ...]:
    """The bundle's telemetry lines that decode, in file and line order."""
    tz = ZoneInfo(timezone)
    found = []
    for source in DISPUTABLE:
        for number, line in enumerate(bundle.lines(source), start=1):
            body = decode(source, line)
            if isinstance(body, Rejection):
                continue
            found.append(Reading(source, number, message_id(body), body.vehicle_id, body.epoch,
                                 frozenset({message_id(body), message_id(body, tz)})))
    return tuple(found)


def resolve(bundle: Bundle, disputed: Disputed, timezone: str) -> tuple[Reading, ...]:
    """The lines the disputed set names, each once, in file and line order; DisputeError for
    anything the bundle does not hold."""
    every = readings(bundle, timezone)
    by_location = {(r.source, r.number): r for r in every}
    counts = {source: len(bundle.lines(source)) for source in DISPUTABLE}
    chosen: dict[tuple[str, int], Reading] = {}
    for source, number in disputed.lines:
        if source not in DISPUTABLE:
            raise DisputeError(f"fonte desconhecida: {source!r} (tachograph ou catraca)")
        if not 1 <= number <= counts[source]:
            raise DisputeError(f"linha {number} fora do arquivo {source}.jsonl do pacote "
                               f"({ptbr.plural(counts[source], 'linha', 'linhas')})")
        if (source, number) not in by_location:
            raise DisputeError(f"a linha {number} de {source}.jsonl não é uma leitura válida do pacote")
        chosen[source, number] = by_location[source, number]
    if disputed.msg_ids:
        ids: dict[str, list[Reading]] = {}
        for reading in every:
            for name in reading.ids:
                ids.setdefault(name, []).append(reading)
        for name in disputed.msg_ids:
            if name not in ids:
                raise DisputeError(f"nenhuma leitura do pacote tem o identificador {name!r}")
            chosen.update({(r.source, r.number): r for r in ids[name]})
    for span in disputed.spans:
        if span.start.tzinfo is None or span.end.tzinfo is None:
            raise DisputeError("o intervalo precisa de data e hora com fuso (ISO-8601)")
        if span.end < span.start:
            raise DisputeError(f"intervalo de {span.vehicle_id} termina antes de começar")
        if span.source is not None and span.source not in DISPUTABLE:
            raise DisputeError(f"fonte desconhecida: {span.source!r} (tachograph ou catraca)")
        inside = [r for r in every if r.vehicle_id == span.vehicle_id
                  and (span.source is None or r.source == span.source)
                  and span.start.timestamp() <= r.epoch <= span.end.timestamp()]
        if not inside:
            raise DisputeError(f"nenhuma leitura de {span.vehicle_id} no pacote entre "
                               f"{span.start.isoformat()} e {span.end.isoformat()}")
        chosen.update({(r.source, r.number): r for r in inside})
    return tuple(sorted(chosen.values(), key=lambda r: (DISPUTABLE.index(r.source), r.number)))


def disputed_digest(removed: Sequence[Reading]) -> str:
    """The canonical digest of the lines removed: the SHA-256 of their locations as a JSON
    list, in file and line order (however the defence named them: numbers, ids, spans)."""
    return sha256(json.dumps([r.location for r in removed], separators=(",", ":")).encode("utf-8"))


def cited_readings(bundle: Bundle, record: Mapping, timezone: str) -> tuple[Reading, ...]:
    """The readings the finding's evidence cites (by message id), in file and line order."""
    return cited_among(readings(bundle, timezone), record)


def cited_among(every: Sequence[Reading], record: Mapping) -> tuple[Reading, ...]:
    """Those of `every` (the bundle's `readings`, decoded once) the finding's evidence cites."""
    cited = set()
    _strings(record.get("evidence"), cited)
    return tuple(r for r in every if r.ids & cited)


def _strings(value, into: set[str]) -> None:
    if isinstance(value, str):
        into.add(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            _strings(item, into)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _strings(item, into)


_LINES_TOKEN = re.compile(r"(?:(tachograph|catraca):)?(\d+)(?:-(\d+))?")


def parse_lines(text: str) -> Disputed:
    """`12,13,15-18` (tachograph lines), `catraca:40-45`, or message ids
    (`JN-2014/2026-11-30T13:26:09-03:00#2646`), comma-separated: DisputeError if not."""
    lines, ids = [], []
    for token in (t.strip() for t in text.split(",")):
        if not token:
            raise DisputeError(f"lista de leituras com item vazio: {text!r}")
        if "/" in token:
            ids.append(token)
            continue
        found = _LINES_TOKEN.fullmatch(token)
        if found is None:
            raise DisputeError(f"leitura inválida: {token!r} (números de linha como 12,15-18, catraca:40 ou "
                               "identificadores de mensagem)")
        source, first, last = found.group(1) or "tachograph", int(found.group(2)), int(found.group(3) or found.group(2))
        if last < first:
            raise DisputeError(f"intervalo de linhas invertido: {token!r}")
        if last - first > 1_000_000:
            raise DisputeError(f"intervalo de linhas longo demais: {token!r}")
        lines += [(source, n) for n in range(first, last + 1)]
    return Disputed(lines=tuple(lines), msg_ids=tuple(ids))


def parse_span(vehicle: str, start: str, end: str, timezone: str) -> Span:
    """A span as typed: `[tachograph:|catraca:]VEHICLE`, and two ISO-8601 times (without an
    offset: in the feed's zone)."""
    source, _, name = vehicle.rpartition(":") if vehicle.startswith(DISPUTABLE) else ("", "", vehicle)
    if source and source not in DISPUTABLE:
        raise DisputeError(f"fonte desconhecida: {source!r} (tachograph ou catraca)")
    if not name:
        raise DisputeError("intervalo sem veículo")

    def moment(text: str) -> dt.datetime:
        try:
            value = dt.datetime.fromisoformat(text)
        except ValueError:
            raise DisputeError(f"data e hora inválida: {text!r} (ISO-8601, p. ex. 2026-11-30T14:00:00-03:00)") from None
        return value if value.tzinfo is not None else value.replace(tzinfo=ZoneInfo(timezone))

    return Span(name, moment(start), moment(end), source or None)


def merged(disputes: Sequence[Disputed]) -> Disputed:
    return Disputed(lines=tuple(itertools.chain.from_iterable(d.lines for d in disputes)),
                    msg_ids=tuple(itertools.chain.from_iterable(d.msg_ids for d in disputes)),
                    spans=tuple(itertools.chain.from_iterable(d.spans for d in disputes)))


def lines_argument(removed: Sequence[str]) -> str:
    """Locations (`tachograph.jsonl:12`) as `--without` takes them, ranges joined: 12-18,catraca:40."""
    parts = []
    for source in DISPUTABLE:
        numbers = sorted(int(loc.rsplit(":", 1)[1]) for loc in removed if loc.startswith(f"{source}.jsonl:"))
        prefix = "" if source == "tachograph" else f"{source}:"
        for _, run in itertools.groupby(enumerate(numbers), key=lambda pair: pair[1] - pair[0]):
            run = [n for _, n in run]
            parts.append(f"{prefix}{run[0]}" if len(run) == 1 else f"{prefix}{run[0]}-{run[-1]}")
    return ",".join(parts)


# --- the judgment --------------------------------------------------------------------------

def without(bundle: Bundle, removed: Sequence[Reading]) -> dict[str, tuple[bytes, ...]]:
    """The bundle's telemetry lines by source with the `removed` ones left out."""
    gone = {(r.source, r.number) for r in removed}
    lines = {}
    for source in ("tachograph", "catraca", "occurrences"):
        if f"{source}.jsonl" not in bundle.members and source != "tachograph":
            continue
        lines[source] = tuple(line for number, line in enumerate(bundle.lines(source), start=1)
                              if (source, number) not in gone)
    return lines


def ordered_messages(lines: Mapping[str, Sequence[bytes]], max_bytes: int,
                     decoded: dict | None = None) -> tuple[list[Message], int]:
    """The lines as the replay feeds them to the engine (fiscaliza.replay.SortedInput): in
    event-time order, occurrences first among equal times, then by vehicle and input order;
    each located `source.jsonl:n`. Also the count of lines read. `decoded` keeps each
    line's decoded message from one call to the next (a leave-one-out decodes once)."""
    entries, count, read = [], 0, 0
    decoded = {} if decoded is None else decoded
    for source in ("tachograph", "catraca", "occurrences"):
        for number, line in enumerate(lines.get(source, ()), start=1):
            read += 1
            location = f"{source}.jsonl:{number}"
            body = decoded.get((source, line))
            if body is None:  # a rejection names its location: decoded again each time
                body = decode(source, line, location, max_bytes)
                if not isinstance(body, Rejection):
                    decoded[source, line] = body
            if isinstance(body, Rejection):
                continue
            entries.append(event_order(source, body, count) +
                           (Message(body, location, line.decode("utf-8", errors="replace")),))
            count += 1
    entries.sort(key=lambda e: e[:4])
    return [e[4] for e in entries], read


def judge_with(context: Context) -> Judge:
    """The engine (the replay's and the workers' core) over a bundle's lines, in memory."""

    decoded: dict = {}

    def judge(lines: Mapping[str, Sequence[bytes]]) -> Judged:
        messages, read = ordered_messages(lines, context.policy.stream.max_message_bytes, decoded)
        engine = Engine(context, frozenset({"tachograph"} | ({"catraca"} if "catraca" in lines else set())))
        out = Sends()
        stream = iter(messages)
        while batch := list(itertools.islice(stream, _BATCH)):
            out.merge(engine.ingest(batch))
        out.merge(engine.close())
        latest = {i.infraction_id: i for i in out.infractions}  # the change log's final state
        return Judged(tuple(infraction_record(i) for i in latest.values()), tuple(out.insufficient), read)

    return judge


def rejudge(bundle: Bundle, bundle_sha256: str, disputed: Disputed, judge: Judge, timezone: str,
            baseline: Judged | None = None) -> Rejudgment:
    """The bundle's infraction judged again without the disputed readings.

    `baseline` (the judgment of the whole bundle; computed when not given) shows the auto
    reproduced, and tells the insufficient evidence the removal made from what the whole
    day already had."""
    removed = resolve(bundle, disputed, timezone)
    return rejudge_removed(bundle, bundle_sha256, removed, judge, timezone, baseline)


def rejudge_removed(bundle: Bundle, bundle_sha256: str, removed: Sequence[Reading], judge: Judge, timezone: str,
                    baseline: Judged | None = None, cited: Sequence[Reading] | None = None) -> Rejudgment:
    recorded = bundle.infraction
    cited = cited_readings(bundle, recorded, timezone) if cited is None else cited
    gone = {(r.source, r.number) for r in removed}
    baseline = judge(without(bundle, ())) if baseline is None else baseline
    whole = next((r for r in baseline.infractions if r["infraction_id"] == recorded["infraction_id"]), None)
    again = judge(without(bundle, removed))
    record = _same_infraction(recorded, again.infractions)
    reason = None
    if record is not None and record["status"] != "withdrawn":
        outcome = STANDS
        changes = _changes(recorded, record)
    else:
        unsure = _new_insufficient(recorded, again.insufficient, baseline.insufficient)
        outcome = INSUFFICIENT if unsure is not None else DISAPPEARS
        reason = unsure.reason if unsure is not None else None
        record = None
        changes = ()
    cited_disputed = sum((r.source, r.number) in gone for r in cited)
    return Rejudgment(
        bundle_sha256=bundle_sha256, disputed_sha256=disputed_digest(removed),
        removed=tuple(r.location for r in removed), infraction_id=recorded["infraction_id"],
        code=recorded["code"], outcome=outcome, record=record, insufficient_reason=reason, changes=changes,
        reliance=_reliance(recorded, record, len(cited), cited_disputed), cited=len(cited),
        cited_disputed=cited_disputed, messages=again.messages,
        reproduced=whole is not None and not _changes(recorded, whole))


# The contract's fields a re-judgment compares (as `fiscaliza verify` does), with status and
# fine first: what a defence reads.
_FIELDS = {"status": "situação", "fine_ufir": "multa (UFIR)", "occurred_at": "data e hora",
           "trip_id": "viagem", "route_id": "linha", "direction_id": "sentido", "lat": "latitude",
           "lon": "longitude", "description": "descrição"}
_IDENTITY = ("code", "service_date", "operator_id", "vehicle_id", "route_id", "direction_id")


def _same_infraction(recorded: Mapping, records: Sequence[dict]) -> dict | None:
    """The re-judged record of the bundle's infraction: the same id, or (an identity that
    hashed a fact the removal moved, e.g. a trip's departure) the same code, day, operator,
    vehicle, line and direction (and scheduled trip, when it had one), nearest in time."""
    for record in records:
        if record["infraction_id"] == recorded["infraction_id"]:
            return record
    alike = [r for r in records if all(r.get(k) == recorded.get(k) for k in _IDENTITY)
             and (recorded.get("trip_id") is None or r.get("trip_id") == recorded["trip_id"])]
    when = dt.datetime.fromisoformat(recorded["occurred_at"])
    alike.sort(key=lambda r: (abs((dt.datetime.fromisoformat(r["occurred_at"]) - when).total_seconds()),
                              r["infraction_id"]))
    return alike[0] if alike else None


def _new_insufficient(recorded: Mapping, again: Sequence[InsufficientEvidence],
                      before: Sequence[InsufficientEvidence]) -> InsufficientEvidence | None:
    """Insufficient evidence of the infraction's code and subject that the whole bundle did not give."""
    had = {_key(u) for u in before}
    for unsure in again:
        if unsure.code != recorded["code"] or _key(unsure) in had:
            continue
        if all(getattr(unsure, k) in (None, recorded.get(k)) for k in ("operator_id", "vehicle_id", "route_id")) \
                and unsure.service_date.isoformat() == recorded["service_date"]:
            return unsure
    return None


def _key(unsure: InsufficientEvidence) -> str:
    return json.dumps([unsure.code, unsure.service_date.isoformat(), unsure.operator_id, unsure.route_id,
                       unsure.trip_id, unsure.vehicle_id, unsure.reason, unsure.evidence], sort_keys=True,
                      default=str)


def _changes(recorded: Mapping, again: Mapping) -> tuple[Change, ...]:
    from dockets.bundle import STATUS_PT, _shown
    from dockets.labels import label

    changes = []
    for key, name in _FIELDS.items():
        if again.get(key) != recorded.get(key):
            if key == "status":
                before, after = (STATUS_PT.get(recorded[key], recorded[key]), STATUS_PT.get(again[key], again[key]))
            elif key == "description":  # whole: what changed is often its end (metres, minutes)
                before, after = (ptbr.decimal_commas(recorded.get(key) or "—"),
                                 ptbr.decimal_commas(again.get(key) or "—"))
            else:
                before, after = _shown(recorded.get(key), key), _shown(again.get(key), key)
            changes.append(Change(key, name, before, after))
    old, new = recorded.get("evidence") or {}, again.get("evidence") or {}
    for key in sorted(set(old) | set(new)):
        if key in ("art45", "policy_version", "engine_version") or old.get(key) == new.get(key):
            continue
        known = label(key)
        if key == "interval_epoch":  # instants, as the auto's reader reads them
            before, after = _instants(old.get(key), recorded), _instants(new.get(key), recorded)
        else:
            before, after = _shown(old.get(key), key, evidence=True), _shown(new.get(key), key, evidence=True)
        if before == after:  # a list of as many items, or a value written alike: its content changed
            after += " (conteúdo alterado)"
        changes.append(Change(f"evidence.{key}", f"evidência: {known.text if known else key}", before, after))
    return tuple(changes)


def _instants(value, recorded: Mapping) -> str:
    """An [from, to] epoch pair in the offset the record's own time carries."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, (int, float)) for v in value):
        return "—"
    zone = dt.datetime.fromisoformat(recorded["occurred_at"]).tzinfo
    return " a ".join(ptbr.time(dt.datetime.fromtimestamp(v, zone)) for v in value)


def _reliance(recorded: Mapping, again: Mapping | None, cited: int, cited_disputed: int) -> tuple[str, ...]:
    """How far the verdict rests on the disputed readings, in a reader's words."""
    said = [f"{ptbr.plural(cited_disputed, 'leitura contestada é citada', 'leituras contestadas são citadas')} "
            f"pela constatação, de {ptbr.plural(cited, 'leitura citada', 'leituras citadas')}."]
    measure = _MEASURES.get(recorded["code"])
    if measure is not None:
        said += measure(recorded, again)
    return tuple(said)


def _d11(recorded: Mapping, again: Mapping | None) -> list[str]:
    def longest(record):
        episodes = (record or {}).get("evidence", {}).get("episodes") or []
        return max(episodes, key=lambda e: (e["travel_m"], e["duration_s"]), default=None)

    ev = recorded["evidence"]
    before, after = longest(recorded), longest(again)
    minimum = (f"mínimos {ptbr.amount(ev['min_travel_m'])} m e {ptbr.duration(ev['min_duration_s'])}, "
               f"a mais de {ptbr.amount(ev['max_distance_m'])} m do traçado")

    def stretch(e):
        return (f"{ptbr.amount(e['travel_m'])} m em {ptbr.duration(e['duration_s'])}, "
                f"{ptbr.plural(len(e['pings']), 'registro', 'registros')}, até {ptbr.amount(e['max_distance_m'])} m "
                "do traçado")

    if after is None:
        return [f"Nenhum trecho fora do itinerário que baste resta ({minimum}); no auto: "
                f"{stretch(before) if before else '—'}."]
    return [f"Trecho mais longo fora do itinerário que resta: {stretch(after)} ({minimum}); no auto: "
            f"{stretch(before) if before else '—'}."]


def _c01(recorded: Mapping, again: Mapping | None) -> list[str]:
    ev = recorded["evidence"]
    threshold = f"{ptbr.amount(ev['limit_kmh'])} + {ptbr.amount(ev['tolerance_kmh'])} km/h"

    def speeds(record):
        pings = (record or {}).get("evidence", {}).get("pings") or []
        return "; ".join(f"{ptbr.amount(p['speed_kmh'])} km/h" for p in pings) or "nenhuma"

    return [f"Velocidades acima de {threshold} que restam: {speeds(again)}; no auto: {speeds(recorded)}."]


def _d13(recorded: Mapping, again: Mapping | None) -> list[str]:
    def share(record):
        ev = record["evidence"]
        return (f"{ev['off_schedule_trips']} de {ev['realized_trips']} viagens fora do horário "
                f"({ptbr.amount(ev['pct_off_schedule'], 2)} %), {record['fine_ufir']} UFIR")

    return [f"Restam {share(again)}; no auto: {share(recorded)}." if again is not None
            else f"No auto: {share(recorded)}."]


_MEASURES: dict[str, Callable[[Mapping, Mapping | None], list[str]]] = {"D-11": _d11, "C-01": _c01, "D-13": _d13}


# --- leave-one-out: how many readings the verdict needs -------------------------------------

@dataclass(frozen=True)
class LeaveOneOut:
    """The auto judged again without each of the readings its finding cites, one at a time
    (at most the policy's count of them, evenly spaced)."""

    cited: tuple[str, ...]  # locations of the readings the finding cites, in file and line order
    checked: int  # how many of them were left out in turn
    needed: tuple[str, ...]  # those without which the infraction does not stand
    scope: str  # "vehicle": the accused vehicle's readings alone reproduce the auto; "bundle": all

    @property
    def complete(self) -> bool:
        return self.checked == len(self.cited)

    def statement(self) -> str:
        """What the auto's PDF says of it (pt-BR)."""
        n = len(self.cited)
        if not n:
            return "a constatação não cita leituras individuais da telemetria"
        sampled = f"verificadas {self.checked} de {n} leituras citadas, igualmente espaçadas"
        if self.needed:
            part = "" if self.complete else f"; {sampled}"
            return (f"depende das leituras {readings_named(self.needed)}: sem qualquer uma delas, a infração não "
                    f"subsiste ({ptbr.plural(n, 'leitura citada', 'leituras citadas')}{part})")
        if self.complete:
            return (f"a infração subsiste sem qualquer leitura isolada (cada uma das "
                    f"{ptbr.plural(n, 'leitura citada', 'leituras citadas')} retirada por vez)")
        return (f"a infração subsiste sem cada leitura verificada ({sampled}, a primeira e a última "
                f"incluídas, cada uma retirada por vez; as demais não foram verificadas)")


def evenly_spaced(count: int, runs: int) -> tuple[int, ...]:
    """The indexes of `runs` of `count` items spread evenly, the first and the last included
    (all of them when `runs` covers them): integer arithmetic, the same on every machine."""
    if runs >= count:
        return tuple(range(count))
    if runs <= 1:
        return (0,)[:max(runs, 0)]
    # round(i * (count - 1) / (runs - 1)), half up, without floats
    return tuple((2 * i * (count - 1) + runs - 1) // (2 * (runs - 1)) for i in range(runs))


def readings_named(locations: Sequence[str]) -> str:
    """Bundle lines as a reader names them: `10879–10887 e 10912 do tacógrafo` (runs of
    consecutive lines joined)."""
    parts = []
    for source in DISPUTABLE:
        numbers = sorted(int(loc.rsplit(":", 1)[1]) for loc in locations if loc.startswith(f"{source}.jsonl:"))
        runs = []
        for _, run in itertools.groupby(enumerate(numbers), key=lambda pair: pair[1] - pair[0]):
            run = [n for _, n in run]
            runs.append(str(run[0]) if len(run) == 1 else f"{run[0]}–{run[-1]}")
        if runs:
            listed = runs[0] if len(runs) == 1 else ", ".join(runs[:-1]) + " e " + runs[-1]
            parts.append(f"{listed} do {'tacógrafo' if source == 'tachograph' else 'registro da catraca'} "
                         f"({source}.jsonl)")
    return "; ".join(parts)


def leave_one_out(bundle: Bundle, bundle_sha256: str, judge: Judge, timezone: str,
                  max_runs: int) -> LeaveOneOut:
    """Each reading the finding cites left out in turn; when it cites more than `max_runs`,
    that many of them evenly spaced (`evenly_spaced`). A count, never a clock: the same
    bundle gives the same words on any machine.

    A finding about one vehicle is judged on that vehicle's readings alone when they
    reproduce the auto exactly (what its infraction rests on: the other vehicles only make
    the schedule's matching, which the auto then shows the same), four times faster on the
    demo; otherwise, and for a line's or a day's findings, on the whole bundle."""
    recorded = bundle.infraction
    every = readings(bundle, timezone)
    cited = cited_readings(bundle, recorded, timezone)
    background: tuple[Reading, ...] = ()
    scope, baseline = "bundle", None
    if recorded.get("vehicle_id") and cited:
        others = tuple(r for r in every if r.vehicle_id != recorded["vehicle_id"])
        alone = judge(without(bundle, others))
        whole = next((r for r in alone.infractions if r["infraction_id"] == recorded["infraction_id"]), None)
        if whole is not None and not _changes(recorded, whole):
            background, scope, baseline = others, "vehicle", alone
    if cited and baseline is None:
        baseline = judge(without(bundle, ()))
    chosen = [cited[i] for i in evenly_spaced(len(cited), max_runs)]
    needed = [reading.location for reading in chosen
              if rejudge_removed(bundle, bundle_sha256, (*background, reading), judge, timezone, baseline,
                                 cited).outcome != STANDS]
    return LeaveOneOut(cited=tuple(r.location for r in cited), checked=len(chosen), needed=tuple(needed),
                       scope=scope)


# --- the shell's part: the bundle's static inputs loaded --------------------------------------

def bundle_context(bundle: Bundle) -> Context:
    """The engine's context from the bundle's own feed, fleet, policy and geofences (written
    to a temporary folder for the loaders, which read files)."""
    from engine.loading import load_context
    from kernel.inputs import StaticInputs

    with tempfile.TemporaryDirectory(prefix="fiscaliza-rejudge-") as tmp:
        root = Path(tmp)
        (root / "feed").mkdir()
        for name, data in bundle.members.items():
            if name.startswith("feed/") or name in ("fleet.csv", "policy.toml", "geofences.geojson"):
                (root / name).write_bytes(data)
        return load_context(StaticInputs(
            feed=root / "feed", fleet=root / "fleet.csv", policy=root / "policy.toml",
            geofences=(root / "geofences.geojson") if "geofences.geojson" in bundle.members else None))


def rejudge_bundle(data: bytes, disputed: Disputed) -> Rejudgment:
    """The auto of the bundle `data` re-judged without `disputed`, on the bundle's own static
    inputs and policy (what `fiscaliza verify --without` prints, and the web app caches)."""
    bundle = read_bundle(data)
    context = bundle_context(bundle)
    return rejudge(bundle, sha256(data), disputed, judge_with(context), context.policy.policy.timezone)
