"""AVL exports (CSV or JSON) as source fixes, read through a TOML column mapping.

A mapping (see ingest/mappings/*.toml for two real ones)::

    [source]
    format = "csv"              # csv | json
    columns = ["id", "when"]    # csv without a header row: its columns' names, in order
    delimiter = ","
    records = "l[].vs[]"        # json: where the fixes are ("k[]" walks the list under k)

    [fields]                    # csv: column names; json: paths such as "l[].vs[].p"
    vehicle = ["id", "plate"]   # tried in order against fleet.csv (vehicle_id or plate)
    time = "when"
    lat = "lat"
    lon = "lon"
    speed = "speed"             # optional: without it, speeds are derived (and never accuse)
    speed_unit = "km/h"         # km/h | m/s
    route = "line"              # optional
    received = "server_time"    # optional: when the AVL server received it (received_at), read as time

    [time]
    format = "iso"              # iso | epoch | epoch_ms | a strptime pattern
    zone = "America/Sao_Paulo"  # for times that carry no offset
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

from ingest.fixes import NO_TIMESTAMP, SourceFix, reject
from kernel.errors import InputError
from telemetry.validation import INVALID_TIMESTAMP, TIMESTAMP_WITHOUT_OFFSET, WRONG_TYPE, Rejection

SHIPPED = Path(__file__).parent / "mappings"


class SourceTable(msgspec.Struct, forbid_unknown_fields=True):
    format: Literal["csv", "json"]
    columns: list[str] | None = None
    delimiter: str = ","
    records: str | None = None


class FieldTable(msgspec.Struct, forbid_unknown_fields=True):
    vehicle: str | list[str]
    time: str
    lat: str
    lon: str
    speed: str | None = None
    speed_unit: Literal["km/h", "m/s"] = "km/h"
    route: str | None = None
    received: str | None = None

    @property
    def vehicles(self) -> tuple[str, ...]:
        return (self.vehicle,) if isinstance(self.vehicle, str) else tuple(self.vehicle)


class TimeTable(msgspec.Struct, forbid_unknown_fields=True):
    format: str = "iso"
    zone: str | None = None


class Mapping(msgspec.Struct, forbid_unknown_fields=True):
    source: SourceTable
    fields: FieldTable
    time: TimeTable = msgspec.field(default_factory=TimeTable)


def shipped_mappings() -> dict[str, Path]:
    """The mappings that come with fiscaliza, by name (file name without .toml)."""
    return {p.stem: p for p in sorted(SHIPPED.glob("*.toml"))}


def load_mapping(path: Path) -> Mapping:
    """A mapping file, or the name of a shipped one; a bad one is an InputError (one line)."""
    if not path.exists() and str(path) in shipped_mappings():
        path = shipped_mappings()[str(path)]
    try:
        mapping = msgspec.toml.decode(path.read_bytes(), type=Mapping)
    except OSError as exc:
        raise InputError(f"cannot read the mapping {path}: {exc.strerror} (shipped mappings: "
                         f"{', '.join(shipped_mappings())})") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise InputError(f"mapping {path}: {str(exc).splitlines()[0]}") from None
    if mapping.source.format == "json" and not mapping.source.records:
        raise InputError(f"mapping {path}: a json source needs source.records (where the fixes are)")
    if not mapping.fields.vehicles or not all(mapping.fields.vehicles):
        raise InputError(f"mapping {path}: fields.vehicle must name at least one column")
    if len(mapping.source.delimiter) != 1:
        raise InputError(f"mapping {path}: source.delimiter must be one character")
    if mapping.time.zone is not None:
        try:
            ZoneInfo(mapping.time.zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise InputError(f"mapping {path}: time.zone {mapping.time.zone!r} is not an IANA time zone") from None
    return mapping


def parse_time(value: Any, rule: TimeTable) -> datetime | str:
    """An aware datetime, or the reason (INVALID_TIMESTAMP, TIMESTAMP_WITHOUT_OFFSET) it is not one."""
    try:
        if rule.format in ("epoch", "epoch_ms"):
            seconds = float(value) / (1000 if rule.format == "epoch_ms" else 1)
            return datetime.fromtimestamp(seconds, tz=timezone.utc)
        text = str(value).strip()
        when = datetime.fromisoformat(text) if rule.format == "iso" else datetime.strptime(text, rule.format)
    except (ValueError, TypeError, OverflowError, OSError):
        return INVALID_TIMESTAMP
    if when.tzinfo is None:
        if rule.zone is None:
            return TIMESTAMP_WITHOUT_OFFSET
        when = when.replace(tzinfo=ZoneInfo(rule.zone))
    return when


def _number(value: Any) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(value)
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(value)
    return number


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _unparsed(field: str, value: Any, reason: str, rule: TimeTable) -> str:
    expected = "needs an offset or a time.zone in the mapping" if reason == TIMESTAMP_WITHOUT_OFFSET \
        else f"does not parse as {rule.format}"
    return f"{field} {value!r} {expected}"


def to_fix(record: dict[str, Any], mapping: Mapping, location: str, raw: str) -> SourceFix | Rejection:
    """One record (the mapping's field names -> values) as a SourceFix, or why not."""
    fields = mapping.fields
    keys = tuple(k for k in (_text(record.get(f)) for f in fields.vehicles) if k)
    partial = SourceFix(location, raw, keys, None, None, None)
    stamp = record.get(fields.time)
    if stamp is None or _text(stamp) == "":
        return reject(partial, NO_TIMESTAMP, f"the record has no {fields.time}")
    when = parse_time(stamp, mapping.time)
    if isinstance(when, str):
        return reject(partial, when, _unparsed(fields.time, stamp, when, mapping.time))
    try:
        lat, lon = _number(record.get(fields.lat)), _number(record.get(fields.lon))
        speed = _number(record.get(fields.speed)) if fields.speed else None
    except (ValueError, TypeError) as exc:
        return reject(partial, WRONG_TYPE, f"not a number: {exc.args[0]!r}")
    if speed is not None and fields.speed_unit == "m/s":
        speed *= 3.6
    route = _text(record.get(fields.route)) if fields.route else ""
    received = None
    if fields.received and _text(record.get(fields.received)):
        received = parse_time(record.get(fields.received), mapping.time)
        if isinstance(received, str):
            return reject(partial, received, _unparsed(fields.received, record.get(fields.received), received,
                                                       mapping.time))
    return SourceFix(location, raw, keys, lat, lon, when, speed, route or None, received)


def _wanted(mapping: Mapping) -> list[str]:
    fields = mapping.fields
    optional = (fields.speed, fields.route, fields.received)
    return [*fields.vehicles, fields.time, fields.lat, fields.lon, *(f for f in optional if f)]


def read_records(path: Path, mapping: Mapping) -> Iterator[SourceFix | Rejection]:
    """Every record of the export, in the file's order; an unreadable file is an InputError."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    if mapping.source.format == "csv":
        yield from _csv_records(data, path.name, mapping)
    else:
        yield from _json_records(data, path.name, mapping)


def _csv_records(data: bytes, name: str, mapping: Mapping) -> Iterator[SourceFix | Rejection]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name} is not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    source = mapping.source
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=source.delimiter)
    columns = source.columns
    try:
        if columns is None:
            columns = next(reader, [])
        missing = [f for f in _wanted(mapping) if f not in columns]
        if missing:
            raise InputError(f"{name} has no column {missing[0]!r} (columns: {', '.join(columns) or 'none'})")
        # rows of the wrong width wait for one of the right width: a file with none is not
        # this mapping's export (another file, another delimiter), not a file of bad rows
        held: list[Rejection] = []
        first_width, fitted = 0, False
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            location, raw = f"{name}:{reader.line_num}", source.delimiter.join(row)
            if len(row) != len(columns):
                partial = SourceFix(location, raw, (), None, None, None)
                rejection = reject(partial, WRONG_TYPE, f"{len(row)} columns, the mapping names {len(columns)}")
                if fitted:
                    yield rejection
                else:
                    held.append(rejection)
                    first_width = first_width or len(row)
                continue
            if not fitted:
                fitted = True
                yield from held
            yield to_fix(dict(zip(columns, row)), mapping, location, raw)
        if held and not fitted:
            raise InputError(f"{name}: no row has the mapping's {len(columns)} columns (the first has {first_width}): "
                             "not an export of this mapping")
    except csv.Error as exc:
        raise InputError(f"{name}:{reader.line_num}: not CSV: {exc}") from None


def _json_records(data: bytes, name: str, mapping: Mapping) -> Iterator[SourceFix | Rejection]:
    try:
        document = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise InputError(f"{name} is not JSON: {exc}") from None
    steps = mapping.source.records.split(".")
    for ancestors, where in _walk(document, steps, [("", document)], ""):
        record = {f: _resolve(ancestors, f) for f in _wanted(mapping)}
        raw = msgspec.json.encode(ancestors[-1][1]).decode()
        yield to_fix(record, mapping, f"{name}#{where}", raw)


def _walk(node: Any, steps: list[str], ancestors: list[tuple[str, Any]], where: str):
    """(ancestors by path prefix, location) of every record the records path reaches."""
    if not steps:
        yield ancestors, where or "$"
        return
    step, rest = steps[0], steps[1:]
    key = step.removesuffix("[]")
    prefix = ".".join(p for p in (ancestors[-1][0], step) if p)
    child = node if key == "" else (node.get(key) if isinstance(node, dict) else None)
    if step.endswith("[]"):
        for index, item in enumerate(child if isinstance(child, list) else []):
            yield from _walk(item, rest, [*ancestors, (prefix, item)], f"{where}{key}[{index}]" + ("." if rest else ""))
    elif child is not None:
        yield from _walk(child, rest, [*ancestors, (prefix, child)], f"{where}{key}." if rest else f"{where}{key}")


def _resolve(ancestors: list[tuple[str, Any]], path: str) -> Any:
    """A field's value: its path read from the deepest record level it starts with."""
    for prefix, node in reversed(ancestors):
        if prefix == "" or path.startswith(prefix + "."):
            rest = path[len(prefix) + 1:] if prefix else path
            for key in rest.split("."):
                if not isinstance(node, dict):
                    return None
                node = node.get(key)
            return node
    return None
