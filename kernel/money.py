"""Fines in UFIR and reais (art. 3): exact decimal arithmetic, Brazilian notation."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def fine_brl(fine_ufir: int, ufir_brl) -> Decimal:
    """The fine in reais, rounded to the cent (half up) from the exact product."""
    return (Decimal(int(fine_ufir)) * Decimal(str(ufir_brl))).quantize(CENT, rounding=ROUND_HALF_UP)


def brl(value) -> str:
    """R$ in Brazilian notation: 1234.5 -> 'R$ 1.234,50' (half up to the cent)."""
    amount = Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)
    sign = "-" if amount < 0 else ""
    whole, cents = f"{abs(amount):.2f}".split(".")
    grouped = f"{int(whole):,}".replace(",", ".")
    return f"{sign}R$ {grouped},{cents}"
