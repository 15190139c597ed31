"""Fines in reais: exact decimals, half up to the cent, Brazilian notation."""

from decimal import Decimal

from kernel.money import brl, fine_brl


def test_brl_uses_brazilian_separators():
    assert brl(1234.5) == "R$ 1.234,50"
    assert brl(212.82) == "R$ 212,82"
    assert brl(0) == "R$ 0,00"
    assert brl(1234567.891) == "R$ 1.234.567,89"


def test_brl_rounds_half_up_from_the_decimal_value():
    # 0.125 is exact in binary; float formatting would round it to even (0,12)
    assert brl(0.125) == "R$ 0,13"
    assert brl(Decimal("-3.005")) == "-R$ 3,01"


def test_fine_brl_is_the_exact_product_rounded_to_the_cent():
    # 200 UFIR × R$ 1,0641 = R$ 212,82 exactly; 150 × 1,0641 = 159,615 → 159,62 (half up)
    assert fine_brl(200, 1.0641) == Decimal("212.82")
    assert fine_brl(150, 1.0641) == Decimal("159.62")
