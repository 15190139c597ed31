"""The demo's default day: the sample's last service day before today, so that what it
lavra today can be contested today."""

import datetime as dt
import re
import subprocess
from pathlib import Path

import pytest

from fiscaliza.demo import DemoError, last_service_day_before
from gtfs import load_feed
from samples import joao_neiva

D = dt.date


@pytest.fixture(scope="module")
def sample():
    return load_feed(joao_neiva()[0])


@pytest.mark.parametrize("today, expected", [
    (D(2026, 12, 2), D(2026, 12, 1)),  # Wednesday -> Tuesday
    (D(2026, 12, 7), D(2026, 12, 5)),  # Monday -> Saturday (no Sunday service)
    (D(2026, 12, 27), D(2026, 12, 26)),  # Sunday -> Saturday
    (D(2026, 12, 26), D(2026, 12, 25)),  # Saturday -> Natal, which runs the Saturday timetable
    (D(2027, 6, 15), D(2027, 6, 14)),  # the next year is covered too
    (D(2030, 1, 1), D(2027, 12, 31)),  # after the sample's calendar: its last day
])
def test_the_default_day_is_the_last_service_day_before_today(sample, today, expected):
    assert last_service_day_before(sample, today) == expected


def test_the_sample_covers_the_current_and_the_next_year(sample):
    assert sample.dates[0] == D(2026, 1, 1) and sample.dates[-1] == D(2027, 12, 31)


def test_before_the_sample_calendar_there_is_no_default_day(sample):
    with pytest.raises(DemoError, match="pass --date"):
        last_service_day_before(sample, D(2026, 1, 1))


@pytest.mark.parametrize("day, lavrados", [
    (D(2026, 12, 1), True),  # yesterday: over, its autos are lavrados today
    (D(2026, 12, 2), False),  # today: its service still runs (a 22:07 event may be to come)
    (D(2026, 12, 3), False),  # tomorrow
])
def test_autos_are_lavrados_only_for_a_day_that_is_over(day, lavrados):
    from fiscaliza.demo import day_is_over

    assert day_is_over(day, D(2026, 12, 2)) is lavrados


def test_every_fault_the_simulator_injects_has_its_portuguese_name():
    from fiscaliza.demo import FAULTS_PT
    from simulator.faults import FAULTS, INPUT_FAULTS

    assert set(FAULTS) | set(INPUT_FAULTS) <= set(FAULTS_PT)


# --- the city (`fiscaliza demo --city`) ------------------------------------------------


def test_joao_neiva_is_the_default_city_with_every_demo_fault_named_as_before():
    from fiscaliza.demo import DEFAULT_CITY, DEMO_FAULTS, demo_city

    city = demo_city(DEFAULT_CITY)
    assert (city.name, city.faults, city.undetected) == ("João Neiva", DEMO_FAULTS, ())
    assert city.labels == {"detour": "desvio de itinerário (D-11)", "late_departure": "partida atrasada (D-13)",
                           "suppressed_trip": "viagem não realizada (D-22)",
                           "speeding": "excesso de velocidade (C-01)",
                           "broken_seal": "lacre da catraca rompido (D-21)"}


def test_an_unknown_city_is_a_demo_error_naming_the_known_ones():
    from fiscaliza.demo import demo_city

    with pytest.raises(DemoError, match="unknown --city 'vitoria'; choose from joao-neiva, conselheiro-lafaiete, canarana"):
        demo_city("vitoria")


@pytest.mark.parametrize("code, name, injected, autos", [
    # Lei 4/1948 fines a suspended regular trip (art. 42 A, by D-22's detector), a stop
    # outside the marked stops (art. 19 § único: art. 42 B's floor, Cr$ 5), passengers
    # carried on another line (art. 17: art. 42 F by analogy, Cr$ 200) and a turn back
    # before the terminal (art. 14 § único: art. 42 A by analogy, Cr$ 20)
    ("conselheiro-lafaiete", "Conselheiro Lafaiete",
     ("viagem não realizada (art. 42 A)", "parada fora dos pontos (art. 19 § único)",
      "veículo conduzindo passageiros em outra linha (art. 17)",
      "retorno antes do ponto terminal (art. 14 § único)"),
     {"art. 42 A": 20, "art. 19 § único": 5, "art. 17": 200, "art. 14 § único": 20}),
    # Lei 179/1991: a line and direction without departures for 3 h 30 (art. 10 § 5º's waiting
    # time) and a bus held at a terminal (art. 13), each fined by the policy's table in VR
    ("canarana", "Canarana", ("linha sem partidas por 3h30 (art. 10 § 5º)", "veículo retido no terminal (art. 13)"),
     {"art. 10 § 5º": 100, "art. 13": 100}),
])
def test_the_demo_of_another_city_runs_its_sample_under_its_policy(code, name, injected, autos, tmp_path):
    """Its header names the city; it injects the faults its pack detects, labelled with the
    pack's code, and makes an auto of each with the law's fine."""
    import sqlite3
    from zoneinfo import ZoneInfo

    from cli_helpers import fiscaliza

    from fiscaliza.demo import day_is_over

    result = fiscaliza("demo", "--city", code, "--out", tmp_path / "demo", "--date", "2026-12-01")
    assert result.returncode == 0, result.stderr
    assert f"rede de exemplo de {name}, 01/12/2026" in result.stdout
    said = " ".join(result.stdout.split())
    for label in injected:
        assert label in said
    if code == "canarana":  # João Neiva's faults: no detector in Lei 179/1991, said so, not injected
        assert "Não injetadas (a lei do município não tem detector para elas): desvio de itinerário" in said
    with sqlite3.connect(tmp_path / "demo" / "autos" / "autos.sqlite3") as db:
        made = db.execute("SELECT code, fine_ufir, stage FROM dockets ORDER BY code").fetchall()
        bases = dict(db.execute("SELECT code, legal_basis FROM dockets").fetchall())
    # lavrados today once the day is over (the machine's clock: drafts before)
    over = day_is_over(D(2026, 12, 1), dt.datetime.now(ZoneInfo("America/Sao_Paulo")).date())
    assert made == sorted((c, fine, "lavrado" if over else "rascunho") for c, fine in autos.items())
    if code == "canarana":
        assert bases["art. 10 § 5º"].startswith("Lei Municipal nº 179/1991 (Canarana), art. 10, § 5º")
        assert bases["art. 13"].startswith("Lei Municipal nº 179/1991 (Canarana), art. 13")
        assert "multa (VR)" in said
        if over:  # Lei 179/1991 sets no term to notify: none runs until the ciência, then 30 days to pay
            assert "nenhum até a ciência; então pagamento da multa, 30 dias (art. 41)" in " ".join(
                said.replace("│", " ").split())
    if code == "conselheiro-lafaiete" and over:  # the auto prints the law's terms (art. 42 §§ 2º and 4º)
        pdf = next((tmp_path / "demo" / "autos").glob("auto-*-art-17.pdf"))
        text = " ".join(subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                                       check=True).stdout.split())
        assert "Recurso ao Prefeito, 5 dias" in text and "Pagamento da multa, 15 dias" in text
        # issue 30: the demo auto whose verdict depends on a few readings, and says which: the
        # boardings counted on the other line, each needed (without any one the count falls
        # short of the rule's), named by their lines in the catraca file
        depends = re.search(r"depende das leituras ([0-9–, e]+) do registro da catraca \(catraca\.jsonl\): sem "
                            r"qualquer uma delas, a infração não subsiste", text)
        assert depends, text[text.index("Leituras de que depende"):][:400]
    if code == "conselheiro-lafaiete":
        # its law's own fault too: a bus turning back, lavrado once under art. 14 § único
        # (Cr$ 20,00); the trip it cut short is not a second auto under art. 42 A, whose
        # only auto is the suppressed trip's
        # (the store holds exactly one auto per code: `made` above)
        assert "retorno antes do ponto terminal (art. 14 § único)" in said


def test_lafaiete_injects_the_turn_back_its_pack_detects_and_joao_neiva_does_not_mention_it():
    from fiscaliza.demo import DEFAULT_CITY, demo_city

    lafaiete = demo_city("conselheiro-lafaiete")
    assert lafaiete.faults == ("turn_back", "other_line", "unmarked_stop", "suppressed_trip")
    assert lafaiete.labels["turn_back"] == "retorno antes do ponto terminal (art. 14 § único)"
    assert "turn_back" not in lafaiete.undetected
    # a law without the act neither gets the fault nor is told it is missing
    for code in (DEFAULT_CITY, "canarana"):
        city = demo_city(code)
        assert "turn_back" not in city.faults and "turn_back" not in city.undetected
        assert "turn_back" not in city.labels


def test_door_sensors_only_for_a_city_whose_pack_reads_the_doors():
    """Lafaiete's pack lists the unmarked-stop detector (art. 19 § único): its demo buses
    report their doors, and its law's own faults are injected before the shared ones."""
    from fiscaliza.demo import demo_city

    lafaiete = demo_city("conselheiro-lafaiete")
    assert lafaiete.doors is True
    assert lafaiete.faults[-1] == "suppressed_trip" and {"unmarked_stop", "other_line"} <= set(lafaiete.faults)
    assert (lafaiete.labels["unmarked_stop"], lafaiete.labels["other_line"]) == (
        "parada fora dos pontos (art. 19 § único)", "veículo conduzindo passageiros em outra linha (art. 17)")
    assert "unmarked_stop" not in lafaiete.undetected and "other_line" not in lafaiete.undetected
    for other in ("joao-neiva", "canarana"):
        city = demo_city(other)
        assert city.doors is False and not {"unmarked_stop", "other_line"} & set(city.faults)


def test_each_city_has_its_own_demo_folder_by_default():
    from fiscaliza.demo import demo_city, demo_folder

    assert demo_folder(None, demo_city("joao-neiva")) == Path("fiscaliza-demo/joao-neiva")
    assert demo_folder(None, demo_city("canarana")) == Path("fiscaliza-demo/canarana")


def test_a_folder_given_is_used_as_given_and_another_citys_demo_in_it_is_refused(tmp_path):
    from cli_helpers import assert_bad_input, fiscaliza

    from fiscaliza.demo import CITY_MARK, demo_city, demo_folder

    joao_neiva_city, canarana = demo_city("joao-neiva"), demo_city("canarana")
    assert demo_folder(tmp_path / "nova", canarana) == tmp_path / "nova"  # nothing there yet
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / CITY_MARK).write_text("joao-neiva\n")
    assert demo_folder(tmp_path / "d", joao_neiva_city) == tmp_path / "d"  # its own: run again, replaced
    with pytest.raises(DemoError, match="holds the demo of --city joao-neiva"):
        demo_folder(tmp_path / "d", canarana)
    # on the command line: one line, exit 2, before anything is written
    before = sorted(p.name for p in (tmp_path / "d").iterdir())
    assert_bad_input(fiscaliza("demo", "--city", "canarana", "--out", tmp_path / "d", "--date", "2026-12-01"),
                     "holds the demo of --city joao-neiva", "fiscaliza-demo/canarana")
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == before
