"""The readable summaries: Brazilian money and the fines that are due."""

import datetime as dt
from types import SimpleNamespace

from rich.console import Console

from fiscaliza.policy import load_policy
from fiscaliza.reporting import print_infractions
from rules.model import CONFIRMED, EXEMPT_ART45, make_infraction

POLICY = load_policy()


def infraction(code, status, n):
    return make_infraction(code, POLICY, identity=(n,), status=status, operator_id="VNV",
                           service_date=dt.date(2026, 12, 1), occurred_at=dt.datetime(2026, 12, 1, 8, tzinfo=POLICY.tz),
                           description="teste", evidence={})


def test_only_confirmed_infractions_are_due_in_ufir_and_reais():
    result = SimpleNamespace(policy=POLICY, infractions=[
        infraction("D-11", CONFIRMED, 1), infraction("D-22", EXEMPT_ART45, 2), infraction("C-01", CONFIRMED, 3)])
    console = Console(record=True, width=120)
    print_infractions(result, console)
    text = console.export_text()
    # due: D-11 200 + C-01 150 = 350 UFIR; × R$ 1,0641 = R$ 372,435 -> R$ 372,44 (the exempt D-22 is not due)
    total = [line for line in text.splitlines() if "total" in line][0]
    assert "350" in total and "R$ 372,44" in total
    assert "isenta(s) pelo art. 45" in text
