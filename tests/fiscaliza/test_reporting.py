"""The readable summaries: Brazilian money, the fines foreseen, per code and per operator."""

import datetime as dt
from types import SimpleNamespace

from rich.console import Console

from fiscaliza.reporting import REASONS_PT, print_infractions
from gtfs import load_feed
from kernel.policy import load_policy
from rules.model import CONFIRMED, EXEMPT_ART45, make_infraction
from samples import joao_neiva
from streams.metrics import ENGINE_REASONS
from telemetry.validation import REASON_CODES

POLICY = load_policy()
FEED = load_feed(joao_neiva()[0])


def infraction(code, status, n, evidence=None):
    return make_infraction(code, POLICY, identity=(n,), status=status, operator_id="VNV",
                           service_date=dt.date(2026, 12, 1), occurred_at=dt.datetime(2026, 12, 1, 8, tzinfo=POLICY.tz),
                           description="teste", evidence=evidence or {})


def summary(*infractions) -> str:
    console = Console(record=True, width=200)
    print_infractions(SimpleNamespace(policy=POLICY, feed=FEED, infractions=list(infractions)), console)
    return console.export_text()


def test_only_confirmed_infractions_count_in_the_fine_foreseen_per_code_and_operator():
    text = summary(infraction("D-11", CONFIRMED, 1), infraction("D-22", EXEMPT_ART45, 2),
                   infraction("C-01", CONFIRMED, 3))
    # D-11 200 + C-01 150 = 350 UFIR; × R$ 1,0641 = R$ 372,435 -> R$ 372,44 (the exempt D-22 is not due)
    total = next(line for line in text.splitlines() if line.startswith("│ total"))
    assert "350" in total and "R$ 372,44" in total
    operator = next(line for line in text.splitlines() if "VNV — Viação Neivense" in line)
    assert operator.split("│")[2:6] == ["         3 ", "           2 ", "  350 ", " R$ 372,44 "]
    assert "UFIR = R$ 1,0641" in " ".join(text.split())  # the policy's value, not rounded to the cent
    assert "deixar de cumprir os" in text  # D-11 with the law's words
    assert "multa prevista" in text and "devida" in text


def test_sums_add_the_fines_each_auto_states_rounded_to_the_cent():
    # three C-01 of 150 UFIR: each auto R$ 159,615 -> R$ 159,62, together R$ 478,86; the
    # rounded sum 450 × 1,0641 = R$ 478,845 -> R$ 478,85 would be a cent off the autos
    text = summary(*(infraction("C-01", CONFIRMED, n) for n in (1, 2, 3)))
    total = next(line for line in text.splitlines() if line.startswith("│ total"))
    assert "R$ 478,86" in total
    operator = next(line for line in text.splitlines() if "VNV — Viação Neivense" in line)
    assert "R$ 478,86" in operator


def test_an_art45_exemption_on_an_incomplete_month_says_it_is_provisional():
    incomplete = infraction("D-22", EXEMPT_ART45, 2, {"art45": {"month_complete": False}})
    assert "provisória(s): mês incompleto" in " ".join(summary(incomplete).split())
    complete = infraction("D-22", EXEMPT_ART45, 3, {"art45": {"month_complete": True}})
    assert "provisória" not in summary(complete)


def test_every_rejection_reason_reads_in_portuguese():
    assert set(REASON_CODES) | set(ENGINE_REASONS) <= set(REASONS_PT)
