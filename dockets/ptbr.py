"""Numbers, dates, times and counts as a Brazilian reader writes them (pure functions).

No locale library is installed (babel is not a dependency): the few forms the autos
need are written out here, one place for the PDF, its charts and the CLI.
"""

from __future__ import annotations

import datetime as dt
import math
import re


def number(value: float, decimals: int = 0) -> str:
    """1.234,5: dot for thousands, comma for decimals."""
    text = f"{value:,.{decimals}f}"
    return text.replace(",", "\0").replace(".", ",").replace("\0", ".")


def amount(value: float, max_decimals: int = 1) -> str:
    """A figure without needless zeros: 60, 155,3, 1,47 (up to `max_decimals`)."""
    value = float(value)
    for decimals in range(max_decimals + 1):
        if math.isclose(round(value, decimals), value, abs_tol=10 ** -(max_decimals + 3)):
            return number(value, decimals)
    return number(value, max_decimals)


def plural(n: int, one: str, many: str) -> str:
    """1 item, 2 itens."""
    return f"{number(n)} {one if n == 1 else many}"


def date(value: dt.date | None) -> str:
    return value.strftime("%d/%m/%Y") if value else "—"


def time(value: dt.datetime) -> str:
    return value.strftime("%H:%M:%S")


def instant(value: dt.datetime, day: dt.date | None = None) -> str:
    """The wall time as recorded (in the feed's offset); the date only when it is not `day`."""
    return time(value) if day is not None and value.date() == day else f"{date(value.date())} {time(value)}"


def duration(seconds: float) -> str:
    """130 s → 2 min 10 s; 3.725 s → 1 h 02 min 05 s; fractions of a second kept under a minute."""
    if abs(seconds) < 60:
        return f"{amount(abs(seconds))} s"
    total = int(round(abs(seconds)))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min" + (f" {secs:02d} s" if secs else "")
    return f"{minutes} min" + (f" {secs} s" if secs else "")


def zone(moment: dt.datetime) -> str:
    """The time zone a wall time is read in, the same words on the auto and its page:
    "horário de Brasília, UTC-03" (the legal time of America/Sao_Paulo), else "horário
    local, UTC-04"."""
    offset = moment.strftime("UTC%z")[:-2]
    key = getattr(moment.tzinfo, "key", None)
    return f"horário {'de Brasília' if key == 'America/Sao_Paulo' else 'local'}, {offset}"


_DECIMAL = re.compile(r"(?<![\w.])(-?\d+)\.(\d+)(?![\w.])")


def decimal_commas(text: str) -> str:
    """The decimal points of a text written elsewhere (a rule's description, a place's
    coordinates) as commas: 2.2 min → 2,2 min. Dotted identifiers (0.1.0, jn-2026.1) are left."""
    return _DECIMAL.sub(r"\1,\2", text)
