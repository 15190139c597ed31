"""How values are written on the pages (Brazilian Portuguese conventions)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from zoneinfo import ZoneInfo

from kernel.money import brl, fine_brl  # noqa: F401  (the pages' money)

ROLE_LABELS = {
    "fiscal": "Fiscal",
    "gestor": "Gestor do Órgão Gerencial",
    "titular": "Titular do Órgão Gerencial",
    "operador": "Empresa operadora",
    "sistema": "Sistema (detecção automática)",
}


def integer(value: int) -> str:
    """1.234"""
    return f"{int(value):,}".replace(",", ".")


def ufir_value(value) -> str:
    """The UFIR's value in reais, with its four decimals: R$ 1,0641."""
    text = f"{Decimal(str(value)):.4f}"
    return "R$ " + text.replace(".", ",")


def date_br(value: dt.date | None) -> str:
    if value is None:
        return "—"
    return value.strftime("%d/%m/%Y")


def as_aware(value: dt.datetime) -> dt.datetime:
    """A naive datetime taken as UTC. The store reads every instant back aware (UTC), so
    this only matters for values from elsewhere, e.g. a configured clock."""
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def local(value: dt.datetime, tz: ZoneInfo) -> dt.datetime:
    return as_aware(value).astimezone(tz)


def datetime_br(value: dt.datetime | None, tz: ZoneInfo, *, seconds: bool = False) -> str:
    if value is None:
        return "—"
    return local(value, tz).strftime("%d/%m/%Y %H:%M:%S" if seconds else "%d/%m/%Y %H:%M")


def size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB".replace(".", ",")
    return f"{n / (1024 * 1024):.1f} MiB".replace(".", ",")


def parse_date(text: str | None) -> dt.date | None:
    """An ISO date (what <input type=date> sends) or dd/mm/aaaa; None when empty or invalid."""
    text = (text or "").strip()
    if not text:
        return None
    for fmt in ("%Y-%m-%d", "%d/%m/%Y"):
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    return None


def parse_local_datetime(text: str | None, tz: ZoneInfo) -> dt.datetime | None:
    """What <input type=datetime-local> sends (local time, no offset), made aware; None if invalid."""
    text = (text or "").strip()
    if not text:
        return None
    for fmt in ("%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%d/%m/%Y %H:%M"):
        try:
            naive = dt.datetime.strptime(text, fmt)
        except ValueError:
            continue
        return naive.replace(tzinfo=tz)
    return None
