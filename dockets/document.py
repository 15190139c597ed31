"""The auto de infração as a document: its graphics (art. 6) drawn from the evidence
bundle, and the PDF with every field of art. 5 (I–VIII), rendered by weasyprint."""

from __future__ import annotations

import base64
import csv
import datetime as dt
import io
import json
import re
import tempfile
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from pyproj import Transformer

from dockets import charts, labels, ptbr, workflow
from dockets.audit import Head
from dockets.bundle import MANIFEST, Bundle, is_manual, read_bundle, sha256, signature_of
from dockets.calendar import BusinessCalendar
from dockets.service import status_of
from dockets.store import Docket
from gtfs import Feed, load_feed
from kernel.money import brl, fine_brl
from kernel.policy import Policy, parse_policy
from telemetry import Rejection, decode

CHART_KINDS = ("velocidade", "disco", "mapa")
# The auto's charts, on the PDF and on the web page (web/views.py CHART_TITLES names each).
PDF_CHART_KINDS = (*CHART_KINDS, "catraca")
# The codes whose facts are the catraca's readings: their auto charts the counter and seal.
CATRACA_CODES = frozenset({"D-19", "D-21"})
# The speed chart shows this much before and after the infraction's interval.
_CHART_MARGIN = dt.timedelta(minutes=20)
_MIN_CHART_WINDOW = dt.timedelta(minutes=30)


@dataclass(frozen=True)
class Evidence:
    """What the graphics are drawn from: decoded once per bundle."""

    bundle_sha256: str
    signer: dict | None  # the signature's key_id and public_key (base64), if signed
    feed: Feed
    policy: Policy
    pings: dict[str, charts.Track]  # by vehicle, time-ordered
    turnstiles: dict[str, charts.Turnstile]  # catraca readings by vehicle, time-ordered
    plates: dict[str, str]  # the fleet rows in the bundle: plate by vehicle


@lru_cache(maxsize=32)
def _evidence(data: bytes) -> Evidence:
    bundle = read_bundle(data)
    with tempfile.TemporaryDirectory(prefix="fiscaliza-auto-") as tmp:
        feed_dir = Path(tmp) / "feed"
        feed_dir.mkdir()
        for name, content in bundle.members.items():
            if name.startswith("feed/"):
                (feed_dir / name.removeprefix("feed/")).write_bytes(content)
        feed = load_feed(feed_dir)
    policy = parse_policy(bundle.members["policy.toml"], "policy.toml")
    return Evidence(sha256(data), _signer(signature_of(bundle)), feed, policy, _tracks(bundle), _turnstiles(bundle),
                    _plates(bundle))


@dataclass(frozen=True)
class ManualEvidence:
    """A fiscal's manual infraction's bundle: no telemetry to draw, the files it holds."""

    attachments: tuple[dict, ...]  # as the manifest lists them: file, filename, content_type, size, sha256
    signer: dict | None


def _signer(signature) -> dict | None:
    return {k: signature[k] for k in ("key_id", "public_key")} if isinstance(signature, dict) and \
        isinstance(signature.get("key_id"), str) and isinstance(signature.get("public_key"), str) else None


@lru_cache(maxsize=32)
def _manual(data: bytes) -> ManualEvidence | None:
    """The manual infraction's evidence, or None for a bundle of telemetry (its manifest alone
    tells: read first, so that a telemetry bundle is not read twice)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            manifest = json.loads(archive.read(MANIFEST))
    except (KeyError, ValueError, zipfile.BadZipFile):
        return None
    if not isinstance(manifest, dict) or not is_manual(manifest):
        return None
    bundle = read_bundle(data)
    listed = tuple(a for a in bundle.manifest.get("attachments") or [] if isinstance(a, dict))
    return ManualEvidence(listed, _signer(signature_of(bundle)))


def _telemetry(bundle: bytes | None) -> bytes | None:
    """`bundle` if it holds telemetry to draw and read, else None."""
    return None if bundle is None or _manual(bundle) is not None else bundle


def _plates(bundle: Bundle) -> dict[str, str]:
    rows = csv.DictReader(io.StringIO(bundle.members.get("fleet.csv", b"").decode("utf-8")))
    return {row["vehicle_id"]: row["plate"] for row in rows if row.get("vehicle_id") and row.get("plate")}


def _turnstiles(bundle: Bundle) -> dict[str, charts.Turnstile]:
    by_vehicle: dict[str, dict[float, tuple]] = {}
    for line in bundle.lines("catraca"):
        reading = decode("catraca", line)
        if isinstance(reading, Rejection):
            continue
        by_vehicle.setdefault(reading.vehicle_id, {})[reading.epoch] = (
            reading.ts, reading.counter, reading.seal_intact, reading.status == "fault")
    turnstiles = {}
    for vehicle, rows in by_vehicle.items():
        t, counter, intact, fault = zip(*(rows[k] for k in sorted(rows)))
        turnstiles[vehicle] = charts.Turnstile(t=t, counter=counter, seal_intact=intact, fault=fault)
    return turnstiles


def _tracks(bundle: Bundle) -> dict[str, charts.Track]:
    by_vehicle: dict[str, dict[float, tuple]] = {}
    for line in bundle.lines("tachograph"):
        ping = decode("tachograph", line)
        if isinstance(ping, Rejection):
            continue
        # Duplicates (same vehicle and time) were rejected by the engine: drawn once.
        by_vehicle.setdefault(ping.vehicle_id, {})[ping.epoch] = (ping.ts, ping.lat, ping.lon, ping.speed_kmh)
    tracks = {}
    for vehicle, rows in by_vehicle.items():
        ordered = [rows[k] for k in sorted(rows)]
        t, lat, lon, speed = zip(*ordered)
        tracks[vehicle] = charts.Track(t=t, lat=lat, lon=lon, speed_kmh=speed)
    return tracks


def _interval(docket: Docket, tz: ZoneInfo) -> tuple[dt.datetime, dt.datetime]:
    epochs = docket.infraction.get("evidence", {}).get("interval_epoch")
    if epochs:
        start, end = (dt.datetime.fromtimestamp(e, tz) for e in epochs)
    else:
        start = end = docket.occurred_at.astimezone(tz)
    return start, end


def _window(highlight: tuple[dt.datetime, dt.datetime]) -> tuple[dt.datetime, dt.datetime]:
    start, end = highlight[0] - _CHART_MARGIN, highlight[1] + _CHART_MARGIN
    if end - start < _MIN_CHART_WINDOW:
        pad = (_MIN_CHART_WINDOW - (end - start)) / 2
        start, end = start - pad, end + pad
    return start, end


ORIGIN, DESTINATION = "origem da viagem", "destino da viagem"


def _itinerary(evidence: Evidence, docket: Docket) -> charts.Itinerary:
    """The trip's shape and stops (a route-day auto's: its first off-schedule trip's), or
    the route's first shape in the docket's direction; the first and last stops say they
    are the trip's origin and destination."""
    feed = evidence.feed
    trips = docket.infraction.get("evidence", {}).get("trips") or []
    cited = trips[0].get("trip_id") if trips and isinstance(trips[0], dict) else None
    template = feed.trips.get(docket.trip_id or cited or "")
    if template is None and docket.route_id:
        template = next((t for t in feed.trips.values() if t.route_id == docket.route_id
                         and (docket.direction_id is None or t.direction_id == docket.direction_id)), None)
    corridor = evidence.policy.d11.max_distance_m
    if template is None:
        return charts.Itinerary(lonlat=(), stops=(), corridor_m=corridor)
    to_lonlat = Transformer.from_crs(feed.epsg, 4326, always_xy=True)
    xy = np.asarray(feed.shapes[template.shape_id].line.coords)
    lon, lat = to_lonlat.transform(xy[:, 0], xy[:, 1])
    last = len(template.stops) - 1
    stops = tuple((feed.stops[s.stop_id].name + (f" ({ORIGIN})" if i == 0 else f" ({DESTINATION})" if i == last
                                                 else ""), feed.stops[s.stop_id].lon, feed.stops[s.stop_id].lat)
                  for i, s in enumerate(template.stops))
    return charts.Itinerary(lonlat=tuple(zip(lon.tolist(), lat.tolist())), stops=stops, corridor_m=corridor)


def _marked(docket: Docket) -> list[tuple[float, float]]:
    evidence = docket.infraction.get("evidence", {})
    points = evidence.get("off_route_lonlat") or []
    if not points and docket.lon is not None and docket.lat is not None:
        points = [(docket.lon, docket.lat)]
    return [tuple(p) for p in points]


def _vehicle_shown(docket: Docket) -> str | None:
    """The vehicle whose record the charts show: the auto's own, or for a route-day auto
    (D-13) the vehicle of its first off-schedule trip, whose departure is the interval."""
    if docket.vehicle_id:
        return docket.vehicle_id
    trips = docket.infraction.get("evidence", {}).get("trips") or []
    return trips[0].get("vehicle_id") if trips and isinstance(trips[0], dict) else None


def _scheduled_marks(docket: Docket, vehicle: str | None) -> list[tuple[dt.datetime, str]]:
    """The scheduled departures of the off-schedule trips the chart shows (D-13): what the
    recorded departure is measured against."""
    trips = docket.infraction.get("evidence", {}).get("trips") or []
    marks = []
    for trip in trips:
        if isinstance(trip, dict) and trip.get("vehicle_id") == vehicle and trip.get("scheduled_departure"):
            moment = dt.datetime.fromisoformat(trip["scheduled_departure"])
            marks.append((moment, f"Partida programada ({moment:%H:%M})"))
    return marks


def chart_png(docket: Docket, bundle: bytes | None, kind: str) -> bytes | None:
    """One of the auto's graphics as PNG, or None when the docket has none of that kind
    (no bundle; no vehicle for the tachograph charts)."""
    if kind not in PDF_CHART_KINDS:
        raise ValueError(f"unknown chart kind {kind!r}")
    bundle = _telemetry(bundle)
    if bundle is None:
        return None
    evidence = _evidence(bundle)
    tz = evidence.feed.timezone
    highlight = _interval(docket, tz)
    vehicle = _vehicle_shown(docket)
    track = evidence.pings.get(vehicle or "")
    if kind == "catraca":
        turnstile = evidence.turnstiles.get(vehicle or "")
        if docket.code not in CATRACA_CODES or turnstile is None:
            return None
        in_service = [tuple(dt.datetime.fromisoformat(x) for x in pair)
                      for pair in docket.infraction.get("evidence", {}).get("in_service") or []]
        silences = docket.infraction.get("evidence", {}).get("silences") or []
        if silences:  # D-19: the infraction is the silence itself, not the moment it began
            highlight = (min(dt.datetime.fromisoformat(s["from"]) for s in silences),
                         max(dt.datetime.fromisoformat(s["to"]) for s in silences))
        span = [*turnstile.t, *(x for pair in in_service for x in pair)]
        day_window = (min(span) - _CHART_MARGIN, max(span) + _CHART_MARGIN)
        return charts.catraca_chart(turnstile, window=day_window, highlight=highlight, in_service=in_service,
                                    tz=tz, max_silence_s=evidence.policy.d19.max_silence_s,
                                    title=f"Catraca — contador e lacre ao longo do dia, veículo {vehicle}, "
                                          f"{highlight[0]:%d/%m/%Y}")
    if kind == "mapa":
        empty = charts.Track(t=(), lat=(), lon=(), speed_kmh=())
        title = f"Trajeto registrado × itinerário — linha {docket.route_id or '—'}"
        return charts.track_map(track or empty, _itinerary(evidence, docket), highlight=highlight if track else None,
                                marked=_marked(docket), epsg=evidence.feed.epsg, title=title)
    if track is None:
        return None
    if kind == "velocidade":
        limit = evidence.policy.c01.default_limit_kmh if docket.code == "C-01" else None
        return charts.speed_time_chart(track, window=_window(highlight), highlight=highlight,
                                       speed_limit_kmh=limit, tz=tz, marks=_scheduled_marks(docket, vehicle),
                                       title=f"Tacógrafo — velocidade × tempo, veículo {vehicle}")
    return charts.tachograph_disc(track, day=highlight[0].date(), tz=tz, highlight=highlight,
                                  title=f"Disco diagrama de 24 horas — veículo {vehicle}, "
                                        f"{highlight[0]:%d/%m/%Y}")


# --- the readings the web page lets the defence pick ------------------------------------

@dataclass(frozen=True)
class PickableReading:
    """A tachograph reading as the page's speed chart and map draw it, to be picked."""

    value: str  # the marks form's value: "tachograph:123" (the bundle's file and line)
    local_time: str  # ISO, in the feed's zone, to the second: what the span form takes
    epoch: float
    speed_kmh: float
    lon: float
    lat: float
    cited: bool  # the finding cites it


@dataclass(frozen=True)
class PickableReadings:
    """The shown vehicle's tachograph readings inside the speed chart's window, in time
    order (each line of the bundle: a duplicate is a reading of its own), with the
    window, the infraction's interval and the itinerary to draw them against."""

    vehicle_id: str
    window: tuple[float, float]  # epochs
    highlight: tuple[float, float]
    readings: tuple[PickableReading, ...]
    itinerary: tuple[tuple[float, float], ...]  # lon, lat


def pickable_readings(docket: Docket, bundle: bytes | None) -> PickableReadings | None:
    """What the auto's page draws for the defence to pick readings on (issue 30): None
    without a telemetry bundle or a vehicle's tachograph in it."""
    from dockets.rejudgment import cited_among, readings  # the re-judgment's reading of the bundle

    bundle = _telemetry(bundle)
    vehicle = _vehicle_shown(docket)
    if bundle is None or vehicle is None:
        return None
    evidence = _evidence(bundle)
    tz = evidence.feed.timezone
    highlight = _interval(docket, tz)
    start, end = (moment.timestamp() for moment in _window(highlight))
    read = read_bundle(bundle)
    every = readings(read, tz.key)  # decoded once; only the window's lines again, for what they read
    cited = {r.number for r in cited_among(every, docket.infraction) if r.source == "tachograph"}
    lines = read.lines("tachograph")
    found = []
    for reading in sorted((r for r in every if r.source == "tachograph" and r.vehicle_id == vehicle
                           and start <= r.epoch <= end), key=lambda r: (r.epoch, r.number)):
        ping = decode("tachograph", lines[reading.number - 1])
        local = dt.datetime.fromtimestamp(ping.epoch, tz).replace(tzinfo=None, microsecond=0)
        found.append(PickableReading(f"tachograph:{reading.number}", local.isoformat(), ping.epoch,
                                     ping.speed_kmh, ping.lon, ping.lat, reading.number in cited))
    if not found:
        return None
    return PickableReadings(vehicle, (start, end), (highlight[0].timestamp(), highlight[1].timestamp()),
                            tuple(found), _itinerary(evidence, docket).lonlat)


# --- the PDF ---------------------------------------------------------------------------

def _date(d: dt.date | None) -> str:
    return d.strftime("%d/%m/%Y") if d else "—"


@lru_cache(maxsize=1)
def _templates() -> Environment:
    env = Environment(loader=PackageLoader("dockets", "templates"), autoescape=select_autoescape(["html"]))
    env.filters["data"] = _date
    env.filters["brl"] = brl
    env.filters["command"] = _command
    return env


def _command(text: str) -> Markup:
    """A command line as printed: broken between its words only, never at a hyphen inside
    one, which a reader (and pdftotext) takes for a word hyphenated at the line's end: the
    file name `auto-2026-0004-D-21-evidencias.zip` or `--without` broken there came out
    of a copy one dash short."""
    return Markup(" ").join(Markup('<span class="word">{}</span>').format(word) for word in text.split(" "))


_MAX_TABLE_ROWS = 12


def _humane(key: str) -> str:
    """A key the label dictionary lacks prints as it is: visibly unnamed, and the tests
    that read the autos' text fail on it (tests/dockets/test_labels.py, test_auto_text.py)."""
    return key


def _value(value, key: str, parent: str | None, ctx: labels.Context) -> str:
    found = labels.label(key, parent)
    if found is not None:
        return found.format(value, ctx)
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "sim" if value else "não"
    if isinstance(value, (int, float)):
        return ptbr.amount(value, 3)
    if isinstance(value, list):
        return ptbr.plural(len(value), "item", "itens") + " (no pacote de evidências)"
    return str(value)


def _hidden(key: str, parent: str | None = None) -> bool:
    found = labels.label(key, parent)
    return found is not None and found.hidden


def _title(key: str, parent: str | None = None) -> str:
    found = labels.label(key, parent)
    return found.text if found is not None else _humane(key)


def _evidence_rows(evidence: dict, ctx: labels.Context) -> list[dict]:
    """The evidence for the table on the auto, each figure named and written as the law
    reads it: records (episodes, trips, readings) as small tables, an object (art. 45)
    as its named figures; long lists of points are counted, the points left to the
    bundle and the charts."""
    rows: list[dict] = []
    for key, value in evidence.items():
        if _hidden(key):
            continue
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            columns = [c for c in dict.fromkeys(k for item in value for k in item) if not _hidden(c, key)]
            table = [[_value(item.get(c), c, key, ctx) for c in columns] for item in value[:_MAX_TABLE_ROWS]]
            rows.append({"label": _title(key), "columns": [_title(c, key) for c in columns], "table": table,
                         "more": len(value) - len(table)})
        elif isinstance(value, dict):
            inner = "; ".join(f"{_title(k, key)}: {_value(v, k, key, ctx)}" for k, v in value.items()
                              if not _hidden(k, key))
            rows.append({"label": _title(key), "value": inner})
        else:
            rows.append({"label": _title(key), "value": _value(value, key, None, ctx)})
    return rows


def _vehicles_named(docket: Docket) -> list[str]:
    """The vehicles the auto names: its own, or for a route-day auto (D-13) those of the
    trips its evidence cites, in order."""
    if docket.vehicle_id:
        return [docket.vehicle_id]
    trips = docket.infraction.get("evidence", {}).get("trips") or []
    return list(dict.fromkeys(t["vehicle_id"] for t in trips if isinstance(t, dict) and t.get("vehicle_id")))


def _label_context(docket: Docket, policy: Policy | None) -> labels.Context:
    from rules.laws import law_of

    policy = policy or _shipped_policy()
    article = law_of(policy).articles.get(docket.code)
    step = policy.d13.escalation_step_pct
    return labels.Context(day=docket.service_date, vehicle_id=docket.vehicle_id, evidence=docket.infraction.get("evidence", {}),
                          fine_ufir=docket.fine_ufir, base_fine_ufir=article.fine if article else None,
                          step_pct=step)


@lru_cache(maxsize=1)
def _shipped_policy() -> Policy:
    """The policy an auto without its bundle is read with (the bundle carries its own)."""
    from kernel.policy import load_policy

    return load_policy()


@dataclass(frozen=True)
class Wording:
    """How an auto reads as law, the same on its PDF and on its web page: the rule's and
    the place finder's text with decimal commas, the vehicles it names with their plates,
    the evidence named by the label dictionary, D-13's escalation in words."""

    description: str
    place: str | None
    vehicles: list[tuple[str, str | None]]  # (número de ordem, placa or None)
    evidence_rows: list[dict]
    fine_explanation: str | None
    law_text: str  # the words of the law the auto quotes after its dispositivo


def _law_text(docket: Docket, policy: Policy | None) -> str:
    """The law's text its record quoted; the code's article's (in the law of the bundle's
    policy, else the shipped one) when the record quoted none."""
    if docket.legal_text is not None:
        return docket.legal_text
    from rules.laws import law_of

    article = law_of(policy or _shipped_policy()).articles.get(docket.code)
    return article.text if article else ""


_STOPS_BY_ID = re.compile(r"de (\d+) ponto\(s\) de parada: ([^.;]+)")
_MINUTES = re.compile(r"\be (\d+)\.(\d) min\b")


def _described(docket: Docket, feed: Feed | None) -> str:
    """The record's description as the auto words it: the stops an A-07 left unserved by
    their names (from the bundle's feed), in the right number; a D-11's time off the
    itinerary as every duration on the auto reads (2 min 10 s, not 2,2 min), from the
    evidence's own interval. The record itself (infractions.jsonl) is left as it is."""
    text = docket.description or ""
    evidence = docket.infraction.get("evidence", {})
    if feed is not None:
        def named(found: re.Match) -> str:
            ids = [s.strip() for s in found[2].split(",")]
            if len(ids) != int(found[1]) or any(s not in feed.stops for s in ids):
                return found[0]
            names = [f"{feed.stops[s].name} ({s})" for s in ids]
            if len(names) == 1:
                return f"do ponto de parada {names[0]}"
            return f"dos {len(names)} pontos de parada {', '.join(names[:-1])} e {names[-1]}"

        text = _STOPS_BY_ID.sub(named, text, count=1)
    epochs = evidence.get("interval_epoch")
    if docket.code == "D-11" and epochs:
        seconds = float(epochs[-1]) - float(epochs[0])

        def exact(found: re.Match) -> str:
            shown = float(f"{found[1]}.{found[2]}")
            return f"e {ptbr.duration(seconds)}" if round(seconds / 60, 1) == shown else found[0]

        text = _MINUTES.sub(exact, text, count=1)
    return ptbr.decimal_commas(text)


def wording(docket: Docket, bundle: bytes | None) -> Wording:
    """The auto's wording, read with its bundle's policy and fleet (the shipped policy and
    the docket's own plate without a bundle)."""
    plates = {docket.vehicle_id: docket.plate} if docket.vehicle_id and docket.plate else {}
    policy = None
    feed = None
    bundle = _telemetry(bundle)
    if bundle is not None:
        evidence = _evidence(bundle)
        policy = evidence.policy
        feed = evidence.feed
        plates = {**evidence.plates, **plates}
    context = _label_context(docket, policy)
    return Wording(
        # written by the rules and the place finder with decimal points: the auto writes commas
        description=_described(docket, feed),
        place=ptbr.decimal_commas(docket.place) if docket.place else None,
        vehicles=[(v, plates.get(v)) for v in _vehicles_named(docket)],
        evidence_rows=_evidence_rows(docket.infraction.get("evidence", {}), context),
        fine_explanation=labels.d13_fine(None, context) if docket.code == "D-13" else None,
        law_text=_law_text(docket, policy),
    )


def document_context(docket: Docket, bundle: bytes | None, *, calendar: BusinessCalendar, issuer_name: str,
                     fiscal_name: str | None = None, fiscal_registration: str | None = None,
                     operator_name: str | None = None, audit_head: Head | None = None) -> dict:
    status = status_of(docket)
    tz = ZoneInfo("America/Sao_Paulo")
    route = None
    graphics = {}
    signer = None
    robustness = None  # a telemetry bundle's leave-one-out, in words
    manual = _manual(bundle) if bundle is not None else None
    if manual is not None:
        signer = manual.signer
    elif bundle is not None:
        evidence = _evidence(bundle)
        signer = evidence.signer
        tz = evidence.feed.timezone
        route = evidence.feed.routes.get(docket.route_id or "")
        for kind in PDF_CHART_KINDS:
            png = chart_png(docket, bundle, kind)
            if png is not None:
                graphics[kind] = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        robustness = leave_one_out_statement(bundle)
    fine = fine_brl(docket.fine_ufir, docket.ufir_brl)
    words = wording(docket, bundle)
    return {
        "docket": docket,
        "issuer_name": issuer_name,
        "operator_name": operator_name or docket.operator_id,
        "route": route,
        "occurred_local": docket.occurred_at.astimezone(tz),
        "zone": ptbr.zone(docket.occurred_at.astimezone(tz)),
        "description": words.description,
        "place": words.place,
        "fine_brl": fine,
        "ufir_brl": float(docket.ufir_brl),
        "status": status,
        "deadlines": workflow.deadlines(status, calendar),
        # what the auto cites of its municipality's law, its terms in words and its fine unit
        "auto": calendar.law.auto,
        "term_notes": workflow.term_notes(calendar.law_terms),
        "fine_unit": calendar.law.fine_unit,
        "state": calendar.subdivision,
        "counts_business_days": any(term is not None and term.business_days for term in
                                    (getattr(calendar.law_terms, f) for f in workflow.DEADLINE_LABELS)),
        "fiscal_name": fiscal_name,
        "fiscal_registration": fiscal_registration,
        "graficos": graphics,
        "evidence_rows": words.evidence_rows,
        "fine_explanation": words.fine_explanation,
        "law_text": words.law_text,
        "vehicles": words.vehicles,
        "bundle_sha256": docket.bundle_sha256,
        "signer": signer,
        "leave_one_out": robustness,
        # a manual infraction's files, listed as its bundle holds them (None: a telemetry bundle)
        "manual_attachments": manual.attachments if manual is not None else None,
        "audit_head": audit_head,
    }


@lru_cache(maxsize=16)
def leave_one_out_statement(bundle: bytes) -> str:
    """What the auto says of how many readings its verdict needs (issue 30 item 3): each
    reading the finding cites left out in turn and the rule run again on the bundle, at most
    the bundle policy's count of them, evenly spaced. Kept per bundle (an auto lavrado again,
    a test's PDFs); the same words anyway, on any machine."""
    from dockets.rejudgment import bundle_context, judge_with, leave_one_out

    from kernel.errors import FiscalizaError

    read = read_bundle(bundle)
    try:
        context = bundle_context(read)
    except FiscalizaError as exc:  # the rule cannot run on it: say so rather than fail the auto
        return f"não pôde ser verificado: a regra não pôde ser reexecutada sobre o pacote ({exc})"
    result = leave_one_out(read, sha256(bundle), judge_with(context), context.policy.policy.timezone,
                           context.policy.defence.leave_one_out_max_runs)
    return result.statement()


def make_renderer(session, *, calendar: BusinessCalendar, issuer_name: str):
    """The `renderer` for `service.perform(Lavrar)`: names the operator and the fiscal who
    lavrou the auto (art. 5 I and VIII) from the store."""
    from dockets.store import Operator, User

    def render(docket: Docket, bundle: bytes | None, audit_head: Head | None = None) -> bytes:
        operator = session.get(Operator, docket.operator_id)
        fiscal = session.get(User, docket.lavrado_por) if docket.lavrado_por else None
        return render_pdf(docket, bundle, calendar=calendar, issuer_name=issuer_name, audit_head=audit_head,
                          operator_name=operator.name if operator else None,
                          fiscal_name=fiscal.full_name if fiscal else None,
                          fiscal_registration=fiscal.registration if fiscal else None)

    return render


def render_html(docket: Docket, bundle: bytes | None, **kwargs) -> str:
    return _templates().get_template("auto.html").render(**document_context(docket, bundle, **kwargs))


def render_pdf(docket: Docket, bundle: bytes | None, *, calendar: BusinessCalendar, issuer_name: str,
               fiscal_name: str | None = None, fiscal_registration: str | None = None,
               operator_name: str | None = None, audit_head: Head | None = None) -> bytes:
    from weasyprint import HTML  # heavy import, only when a PDF is made

    html = render_html(docket, bundle, calendar=calendar, issuer_name=issuer_name, fiscal_name=fiscal_name,
                       fiscal_registration=fiscal_registration, operator_name=operator_name, audit_head=audit_head)
    return HTML(string=html).write_pdf()


def render_judgment_pdf(docket: Docket, *, issuer_name: str, operator_name: str, decision: str, judged_on: str,
                        judge: str, fundamentacao: str, defence, marks: list[tuple[str, str]], rejudgment,
                        appeal: bool = False, earlier: str | None = None) -> bytes:
    """The judgment of the defence as a document: the decision and its grounds, the defence,
    and the readings it disputed with the auto re-judged without them (`disputes.RejudgmentView`),
    from what the audit chain certifies. With `appeal`, the judgment of the recurso: `defence`
    is then the recurso, and `earlier` the judgment of the defence it appealed, in words."""
    from weasyprint import HTML  # heavy import, only when a PDF is made

    html = _templates().get_template("julgamento.html").render(
        docket=docket, issuer_name=issuer_name, operator_name=operator_name, decision=decision, judged_on=judged_on,
        judge=judge, fundamentacao=fundamentacao, defence=defence, marks=marks, rejudgment=rejudgment,
        title="Julgamento do recurso" if appeal else "Julgamento da defesa",
        pleading_title="Recurso" if appeal else "Defesa", pleading_filed="Interposto" if appeal else "Apresentada",
        earlier=earlier)
    return HTML(string=html).write_pdf()
