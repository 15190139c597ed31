"""Total decoding of raw telemetry messages into contract Structs or Rejections.

Every ``decode_*`` function returns either a Struct or a ``Rejection`` and never
raises for bad input: malformed bytes, wrong JSON shape, and contract violations
all become a ``Rejection`` with a stable ``reason`` code (see ``REASON_CODES``).
"""

import codecs
import functools
import re
from collections.abc import Iterable
from typing import Any, Final, Literal, overload

import msgspec

from telemetry.contracts import (
    END_BEFORE_START_MESSAGE,
    NON_FINITE_MESSAGE,
    TIMESTAMP_WINDOW_MESSAGE,
    CatracaReading,
    Occurrence,
    TachographPing,
)

__all__ = [
    "CutMessage",
    "Decoded",
    "RawMessage",
    "RAW_SHOWN_BYTES",
    "REASON_CODES",
    "Rejection",
    "SOURCES",
    "Source",
    "decode",
    "decode_catraca",
    "decode_many",
    "decode_occurrence",
    "decode_tachograph",
    "encode",
    "to_builtins",
]

Source = Literal["tachograph", "catraca", "occurrences"]
SOURCES: Final[tuple[Source, ...]] = ("tachograph", "catraca", "occurrences")

RawMessage = bytes | bytearray | memoryview | str
Decoded = TachographPing | CatracaReading | Occurrence

# Stable reason codes; downstream dashboards and rejected.jsonl consumers key on them.
INVALID_JSON: Final = "invalid_json"
NOT_AN_OBJECT: Final = "not_an_object"
MISSING_FIELD: Final = "missing_field"
WRONG_TYPE: Final = "wrong_type"
OUT_OF_RANGE: Final = "out_of_range"
TIMESTAMP_WITHOUT_OFFSET: Final = "timestamp_without_offset"
INVALID_TIMESTAMP: Final = "invalid_timestamp"
INVALID_VALUE: Final = "invalid_value"
END_BEFORE_START: Final = "end_before_start"
TOO_LONG: Final = "too_long"

REASON_CODES: Final = (
    INVALID_JSON,
    NOT_AN_OBJECT,
    MISSING_FIELD,
    WRONG_TYPE,
    OUT_OF_RANGE,
    TIMESTAMP_WITHOUT_OFFSET,
    INVALID_TIMESTAMP,
    INVALID_VALUE,
    END_BEFORE_START,
    TOO_LONG,
)

# A rejection keeps this much of its message's raw text: enough to tell what was sent,
# while a file or topic of garbage gives a dead letter of bounded size.
RAW_SHOWN_BYTES: Final = 1024


class CutMessage(msgspec.Struct, frozen=True):
    """A message its reader stopped reading at a bound (a file's line longer than it):
    its first bytes and its full length, the rest never held in memory."""

    head: bytes
    length: int


class Rejection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False):
    """A rejected message, kept for ``rejected.jsonl``: one that failed decoding verbatim up
    to its first ``RAW_SHOWN_BYTES`` (``raw_length`` is given only when ``raw`` is cut, and
    says how many bytes the message had), one the engine rejects whole (it decoded, so it
    is within the policy's bound).

    Field order is the serialization order: ``raw`` last because it is longest.
    """

    source: str
    reason: str
    detail: str
    location: str | None = None
    raw_length: int | msgspec.UnsetType = msgspec.UNSET  # UNSET is left out of the JSON
    raw: str


# --- msgspec error message -> reason code ------------------------------------

# msgspec appends " - at `$.path`" to errors below the top level.
_PATH_SUFFIX: Final = r" - at `(\$[^`]*)`$"
# Constraint violations: "Expected `float` >= 0.0", "Expected `str` of length >= 1"...
_CONSTRAINT: Final = r"Expected `[^`]*` (>=|<=|>|<|of length|that's a multiple)"


def _split_path(message: str) -> tuple[str, str]:
    """Split msgspec's message into (text, path); top-level errors have path ``$``."""
    match = re.search(_PATH_SUFFIX, message)
    if match is None:
        return message, "$"
    return message[: match.start()], match.group(1)


def _reason_for(text: str, path: str) -> str:
    """Map a msgspec ValidationError text (path stripped) to a reason code."""
    if text.startswith("Object missing required field"):
        return MISSING_FIELD
    if text.startswith("Expected `datetime` with a timezone component"):
        return TIMESTAMP_WITHOUT_OFFSET
    if text.startswith("Invalid RFC3339"):
        return INVALID_TIMESTAMP
    if text.startswith(END_BEFORE_START_MESSAGE):
        return END_BEFORE_START
    if text.startswith((NON_FINITE_MESSAGE, "Number out of range", TIMESTAMP_WINDOW_MESSAGE)):
        return OUT_OF_RANGE
    if re.match(_CONSTRAINT, text):
        return OUT_OF_RANGE
    if re.match(r"Expected `[^`]*`, got `", text):
        # Only the message itself being a non-object is not_an_object; a nested
        # non-object (e.g. geometry: []) is an ordinary type error.
        if path == "$" and text.startswith("Expected `object`"):
            return NOT_AN_OBJECT
        return WRONG_TYPE
    # "Invalid enum value", "Invalid value", invalid geometry, and anything new.
    return INVALID_VALUE


def _one_line(text: str) -> str:
    return " ".join(text.split("\n")).replace("\r", " ")


# --- decoding ----------------------------------------------------------------


def _struct_type(source: Source) -> type[Decoded]:
    match source:
        case "tachograph":
            return TachographPing
        case "catraca":
            return CatracaReading
        case "occurrences":
            return Occurrence
    raise ValueError(f"unknown telemetry source {source!r}; expected one of {SOURCES}")


@functools.cache
def _decoder(source: Source) -> msgspec.json.Decoder[Any]:
    # Built lazily and cached: Decoders are immutable, but nothing runs at import.
    return msgspec.json.Decoder(_struct_type(source), strict=True)


def _reject(
    source: Source, reason: str, detail: str, data: bytes, text: str, location: str | None
) -> Rejection:
    """The rejection of a message whose bytes are ``data`` (its printable ``text``), the
    raw text cut to ``RAW_SHOWN_BYTES``."""
    if len(data) <= RAW_SHOWN_BYTES:
        return Rejection(source=source, reason=reason, detail=_one_line(detail), location=location, raw=text)
    return _cut(source, reason, detail, data[:RAW_SHOWN_BYTES], len(data), location)


def _cut(source: Source, reason: str, detail: str, head: bytes, length: int, location: str | None) -> Rejection:
    # an incremental decoder leaves out a character the cut split, instead of a U+FFFD
    shown = codecs.getincrementaldecoder("utf-8")("replace").decode(head[:RAW_SHOWN_BYTES], final=False)
    return Rejection(source=source, reason=reason, detail=_one_line(detail), location=location,
                     raw_length=length, raw=shown)


def _too_long(source: Source, head: bytes, length: int, max_bytes: int | None, location: str | None) -> Rejection:
    bound = f"stream.max_message_bytes ({max_bytes})" if max_bytes is not None else "its reader's bound"
    detail = f"Message of {length} bytes, longer than {bound}: not parsed"
    return _cut(source, TOO_LONG, detail, head, length, location)


# A telemetry message is an object of scalars; an occurrence's GeoJSON nests 4-5 deep.
# Deeper nesting, even inside a field nobody reads, is refused before parsing (msgspec
# would recurse once per level).
MAX_DEPTH: Final = 32
_BOM: Final = b"\xef\xbb\xbf"


def _depth_over(data: bytes, limit: int) -> bool:
    if data.count(b"[") + data.count(b"{") <= limit:  # cheap: most messages stop here
        return False
    depth, in_string, escaped = 0, False, False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


def _raw_text(raw: RawMessage) -> tuple[bytes, str, str | None]:
    """Return (utf-8 bytes, printable text, utf-8 error detail or None)."""
    if isinstance(raw, str):
        try:
            return raw.encode("utf-8"), raw, None
        except UnicodeEncodeError as exc:
            # Lone surrogates: keep a JSON-encodable approximation of the text.
            text = raw.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
            return b"", text, f"Text is not valid Unicode: {exc.reason} at index {exc.start}"
    data = bytes(raw)
    try:
        return data, data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        # Checked up front: msgspec skips unknown fields without validating UTF-8.
        text = data.decode("utf-8", "replace")
        return data, text, f"Invalid UTF-8: {exc.reason} at byte {exc.start}"


def decode(
    source: Source, raw: RawMessage | CutMessage, location: str | None = None, max_bytes: int | None = None
) -> Decoded | Rejection:
    """Decode one JSON message of ``source``; never raises for bad input.

    A message longer than ``max_bytes`` (the policy's ``stream.max_message_bytes``; None:
    no bound), or one its reader cut (a ``CutMessage``), is rejected as ``too_long``
    without being parsed. Every rejection keeps the raw text up to ``RAW_SHOWN_BYTES``.
    Raises ValueError only for an unknown ``source`` (a programming error).
    """
    decoder = _decoder(source)
    if isinstance(raw, CutMessage):
        return _too_long(source, raw.head, raw.length, max_bytes, location)
    if max_bytes is not None and not isinstance(raw, str) and len(raw) > max_bytes:
        # checked before anything looks at the bytes: a huge message is never decoded as text
        return _too_long(source, bytes(raw[:RAW_SHOWN_BYTES]), len(raw), max_bytes, location)
    data, text, utf8_error = _raw_text(raw)
    if max_bytes is not None and len(data) > max_bytes:  # a str message
        return _too_long(source, data, len(data), max_bytes, location)
    if utf8_error is not None:
        return _reject(source, INVALID_JSON, utf8_error, data, text, location)
    if not text.strip():
        detail = "Empty message: expected a JSON object"
        return _reject(source, INVALID_JSON, detail, data, text, location)
    if data.startswith(_BOM):
        detail = ("Starts with a UTF-8 byte order mark (BOM, bytes EF BB BF): save the file as UTF-8 "
                  "without BOM")
        return _reject(source, INVALID_JSON, detail, data, text, location)
    if _depth_over(data, MAX_DEPTH):
        detail = f"Nested deeper than {MAX_DEPTH} levels: no telemetry message is"
        return _reject(source, INVALID_JSON, detail, data, text, location)
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:  # subclass of DecodeError: catch first
        body, path = _split_path(str(exc))
        reason = _reason_for(body, path)
        return _reject(source, reason, f"{body} - at `{path}`", data, text, location)
    except msgspec.DecodeError as exc:
        return _reject(source, INVALID_JSON, f"Invalid JSON: {exc}", data, text, location)
    except RecursionError:  # a safety net below the depth check
        return _reject(source, INVALID_JSON, f"Nested deeper than {MAX_DEPTH} levels: no telemetry message is",
                       data, text, location)


def decode_tachograph(raw: RawMessage, location: str | None = None) -> TachographPing | Rejection:
    """Decode one tachograph ping; see ``decode``."""
    return decode("tachograph", raw, location)  # type: ignore[return-value]


def decode_catraca(raw: RawMessage, location: str | None = None) -> CatracaReading | Rejection:
    """Decode one catraca (turnstile) reading; see ``decode``."""
    return decode("catraca", raw, location)  # type: ignore[return-value]


def decode_occurrence(raw: RawMessage, location: str | None = None) -> Occurrence | Rejection:
    """Decode one occurrence; see ``decode``."""
    return decode("occurrences", raw, location)  # type: ignore[return-value]


@overload
def decode_many(
    kind: Literal["tachograph"],
    raws: Iterable[RawMessage],
    locations: Iterable[str | None] | None = None,
) -> tuple[list[TachographPing], list[Rejection]]: ...
@overload
def decode_many(
    kind: Literal["catraca"],
    raws: Iterable[RawMessage],
    locations: Iterable[str | None] | None = None,
) -> tuple[list[CatracaReading], list[Rejection]]: ...
@overload
def decode_many(
    kind: Literal["occurrences"],
    raws: Iterable[RawMessage],
    locations: Iterable[str | None] | None = None,
) -> tuple[list[Occurrence], list[Rejection]]: ...
def decode_many(
    kind: Source,
    raws: Iterable[RawMessage],
    locations: Iterable[str | None] | None = None,
) -> tuple[list[Any], list[Rejection]]:
    """Decode a batch into (accepted, rejected), each in input order.

    ``locations``, if given, must pair one-to-one with ``raws`` (ValueError
    otherwise). Raises ValueError for an unknown ``kind``.
    """
    _decoder(kind)  # fail fast on an unknown kind, even for an empty batch
    pairs = (
        ((raw, None) for raw in raws)
        if locations is None
        else zip(raws, locations, strict=True)
    )
    results = [decode(kind, raw, loc) for raw, loc in pairs]
    accepted = [r for r in results if not isinstance(r, Rejection)]
    rejected = [r for r in results if isinstance(r, Rejection)]
    return accepted, rejected


# --- encoding ----------------------------------------------------------------


def encode(struct: msgspec.Struct) -> bytes:
    """Encode a contract Struct or Rejection as one compact JSON document (no newline)."""
    return msgspec.json.encode(struct)


def to_builtins(struct: msgspec.Struct) -> Any:
    """Convert a Struct to JSON-ready builtins (datetimes become RFC 3339 strings)."""
    return msgspec.to_builtins(struct)
