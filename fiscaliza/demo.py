"""`fiscaliza demo`: a simulated day of a city's sample network (João Neiva's by default),
replayed under the city's shipped policy and summarized."""

from __future__ import annotations

import datetime as dt
import sys
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from fiscaliza.replay import ReplayInputs, replay, write_outputs
from fiscaliza.reporting import Progress, print_replay_summary, print_table
from gtfs import load_feed
from kernel.errors import FiscalizaError
from kernel.fleet import load_fleet
from kernel.policy import load_policy, shipped_policy_path
from rules import (
    a07,
    b04,
    c01,
    d11,
    d12,
    d13,
    d19,
    d21,
    d22,
    line_interruption,
    other_line,
    terminal_crowding,
    turn_back,
    unmarked_stop,
    waiting_time,
)
from rules.laws import law_of
from rules.packs import pack_of
from samples import SAMPLES, joao_neiva
from simulator import SimulationSettings, simulate

DEMO_FAULTS = ("detour", "late_departure", "suppressed_trip", "speeding", "broken_seal")
# Faults of acts only other laws name (simulator.faults.LAW_FAULTS: Conselheiro Lafaiete's
# art. 14 § único, art. 19 § único and art. 17; Canarana's art. 10 § 5º and art. 13): injected
# where the city's pack lists their detector, and never said missing where it does not (João
# Neiva's demo is as it was). Before DEMO_FAULTS: each wants a duty no other fault touched,
# and the shared suppressed trip can still take a duty they leave.
DEMO_LAW_FAULTS = ("turn_back", "other_line", "unmarked_stop", "service_gap", "held_at_terminal")
DEMO_INPUT_FAULTS = ("malformed", "duplicates", "out_of_order")
FAULTS_PT = {  # what the demo injected, as the manager reads it (the pack's code is added)
    "detour": "desvio de itinerário",
    "stop_bypass": "ponto de parada não atendido",
    "late_departure": "partida atrasada",
    "en_route_lateness": "atraso em ponto de controle",
    "suppressed_trip": "viagem não realizada",
    "frequency_shortfall": "partida de frequência não realizada",
    "broken_seal": "lacre da catraca rompido",
    "silent_catraca": "catraca sem registros",
    "speeding": "excesso de velocidade",
    "malformed": "mensagens malformadas",
    "duplicates": "mensagens duplicadas",
    "out_of_order": "mensagens fora de ordem",
    "gps_gap": "falha de GPS",
    "gps_teleport": "posições de GPS deslocadas 3 km",
    "gps_teleport_far": "posições de GPS deslocadas 50 km",
    "gps_teleport_long": "30 posições de GPS deslocadas 50 km",
    "avl_outage": "tacógrafo mudo por 90 min com a catraca registrando",
    "total_outage": "tacógrafo e catraca mudos por 90 min",
    "stale_timezone": "uma hora com o fuso do antigo horário de verão (−02:00)",
    "stale_timezone_day": "um dia com o fuso do antigo horário de verão (−02:00)",
    "local_as_utc": "hora local marcada como UTC (Z)",
    "conflicting_duplicate_first": "segunda versão de mensagens, antes da original",
    "conflicting_duplicate_after": "segunda versão de mensagens, depois da original",
    "late_upload": "mensagens enviadas após perda de cobertura",
    "shuffled_late": "mensagens atrasadas além da tolerância",
    "stray_minutes": "minutos de um veículo parado em dia sem outros dados",
    "turn_back": "retorno antes do ponto terminal",
    "unmarked_stop": "parada fora dos pontos",
    "other_line": "veículo conduzindo passageiros em outra linha",
    "service_gap": "linha sem partidas por 3h30",
    "held_at_terminal": "veículo retido no terminal",
    "line_interruption": "linha com serviço interrompido",
}


@dataclass(frozen=True)
class SharedDetector:
    """A shared detector packs file under their own code with `rule(code)`, so with no
    RULE of its own: what a fault is matched on (`Rule.detector`, its module)."""

    detector: str


# The shared detector each detector fault is there to trigger: a city's demo injects the
# faults whose detector its pack lists, named with the pack's code for it.
FAULT_RULES = {"detour": d11.RULE, "stop_bypass": a07.RULE, "late_departure": d13.RULE,
               "en_route_lateness": b04.RULE, "suppressed_trip": d22.RULE, "frequency_shortfall": d12.RULE,
               "broken_seal": d21.RULE, "silent_catraca": d19.RULE, "speeding": c01.RULE,
               "turn_back": SharedDetector(turn_back.__name__),
               "unmarked_stop": SharedDetector(unmarked_stop.__name__),
               "other_line": SharedDetector(other_line.__name__),
               "service_gap": SharedDetector(waiting_time.__name__),
               "held_at_terminal": SharedDetector(terminal_crowding.__name__),
               "line_interruption": SharedDetector(line_interruption.__name__)}
# The shared detectors that read the tachograph's doors_open: a city whose pack lists one
# is simulated with door sensors (SimulationSettings.doors).
DOOR_DETECTORS = frozenset({unmarked_stop.__name__})
DEFAULT_CITY = "joao-neiva"


def simulate_files(feed_path: Path | None, fleet_path: Path | None, settings: SimulationSettings, out: Path,
                   progress=None):
    """Simulate onto `out`; feed and fleet default to the João Neiva sample."""
    sample_feed, sample_fleet = joao_neiva()
    feed = load_feed(feed_path or sample_feed)
    fleet = load_fleet(fleet_path or sample_fleet, operators=set(feed.agencies))
    return simulate(feed, fleet, settings, out, progress=progress)


class DemoError(FiscalizaError):
    """The demo cannot run as asked (a one-line message for the user)."""


@dataclass(frozen=True)
class DemoCity:
    code: str  # as the policy's `[policy] code` and `--city` name it
    name: str  # the municipality, as its policy names it
    feed: Path
    fleet: Path
    policy: Path
    faults: tuple[str, ...]  # the demo's detector faults the city's pack detects
    labels: dict[str, str]  # fault -> what the manager reads, with the pack's code
    undetected: tuple[str, ...]  # the demo's detector faults the pack has no detector for
    doors: bool = False  # its pack reads the doors (DOOR_DETECTORS): simulated with door sensors


def demo_city(code: str) -> DemoCity:
    """The city's sample network and shipped policy, and the demo faults its pack detects."""
    if code not in SAMPLES:
        raise DemoError(f"unknown --city {code!r}; choose from {', '.join(SAMPLES)}")
    policy_path = shipped_policy_path(code)
    if not policy_path.is_file():
        raise DemoError(f"--city {code}: its policy is not shipped ({policy_path.name} is missing)")
    policy = load_policy(policy_path)
    catalogue = pack_of(policy).catalogue
    codes = {fault: next((c for c, rule in catalogue.items() if rule.detector == FAULT_RULES[fault].detector), None)
             for fault in DEMO_LAW_FAULTS + DEMO_FAULTS}
    feed, fleet = SAMPLES[code]()
    return DemoCity(code, policy.policy.municipality, feed, fleet, policy_path,
                    faults=tuple(f for f in DEMO_LAW_FAULTS + DEMO_FAULTS if codes[f]),
                    labels={f: f"{FAULTS_PT[f]} ({c})" for f, c in codes.items() if c},
                    undetected=tuple(f for f in DEMO_FAULTS if not codes[f]),
                    doors=any(rule.detector in DOOR_DETECTORS for rule in catalogue.values()))


DEMO_ROOT = Path("fiscaliza-demo")
# Written in a demo's folder: which city's demo it holds (its store, autos and passwords).
CITY_MARK = "cidade.txt"


def demo_folder(out: Path | None, city: DemoCity) -> Path:
    """Where a city's demo goes: `fiscaliza-demo/<city>/` by default, so that one city's
    run never replaces another's store, autos and passwords; a folder given with `--out`
    as given, unless it holds another city's demo (DemoError: replacing it is the user's
    act, not a side effect of `--city`). A run of the same city replaces its own."""
    folder = DEMO_ROOT / city.code if out is None else out
    mark = folder / CITY_MARK
    if mark.is_file():
        held = mark.read_text(encoding="utf-8").strip()
        if held and held != city.code:
            raise DemoError(f"{folder} holds the demo of --city {held}: remove it or choose another --out "
                            f"(without --out, each city has its own folder: {DEMO_ROOT / city.code})")
    return folder


def last_service_day_before(feed, today: dt.date) -> dt.date:
    """The sample's last service day before `today`: the demo's default, so that its autos
    are lavrados and can be contested today."""
    from gtfs import service_dates

    days = feed.dates
    before = service_dates(feed, days[0], today - dt.timedelta(days=1)) if days else []
    if not before:
        raise DemoError(f"the sample's calendar starts on {days[0] if days else '?'}, not before today "
                        f"({today}): pass --date")
    return before[-1]


def day_is_over(day: dt.date, today: dt.date) -> bool:
    """The demo lavra a day's autos only once the day is over: today's service is still
    running, and an auto never comes before the fact it states."""
    return day < today


def default_demo_day(city: DemoCity | None = None) -> dt.date:
    """`last_service_day_before` today, today as the clock reads it in the feed's timezone."""
    feed = load_feed(city.feed if city else joao_neiva()[0])
    return last_service_day_before(feed, dt.datetime.now(feed.timezone).date())


def run_demo(out: Path, date: dt.date, seed: int, city: DemoCity | None = None) -> None:
    console = Console()
    city = city or demo_city(DEFAULT_CITY)
    feed_path, fleet_path = city.feed, city.fleet
    telemetry_dir, results_dir = out / "telemetry", out / "replay"
    settings = SimulationSettings(date, date, seed, city.faults, DEMO_INPUT_FAULTS, doors=city.doors)
    console.print(f"[bold]fiscaliza demo[/bold] — rede de exemplo de {city.name}, {date:%d/%m/%Y}")
    with Progress("Simulando telemetria") as progress:
        simulated = simulate_files(feed_path, fleet_path, settings, telemetry_dir, progress=progress.update)
    (out / CITY_MARK).write_text(city.code + "\n", encoding="utf-8")  # from here on, the folder is this city's
    console.print(f"Simulados {simulated.pings:,} registros de tacógrafo e {simulated.catraca_readings:,} de catraca "
                  f"({simulated.runs} viagens executadas). Falhas injetadas:".replace(",", "."))
    for fault in simulated.injected:
        target = fault.get("trip_id") or ""
        vehicle = fault.get("vehicle_id") or ""
        name = city.labels.get(fault["fault"]) or FAULTS_PT.get(fault["fault"], fault["fault"])
        console.print(f"  • {name}{': viagem ' + target if target else ''}{', veículo ' + vehicle if vehicle else ''}"
                      f"{_where(fault)}")
    if city.undetected:  # said, so that a fault never injected is not read as one not found
        console.print("Não injetadas (a lei do município não tem detector para elas): "
                      + ", ".join(FAULTS_PT[f] for f in city.undetected) + ".")
    inputs = ReplayInputs(feed=feed_path, fleet=fleet_path, tachograph=simulated.tachograph,
                          catraca=simulated.catraca, policy=city.policy)
    with Progress("Reprocessando") as progress:
        result = replay(inputs, progress=progress.update)
    write_outputs(result, results_dir)
    print_replay_summary(result, results_dir, console)
    with Progress("Lavrando os autos de infração") as progress:
        dockets = write_demo_dockets(inputs, result, out / "autos", date, progress=progress.update)
    print_demo_dockets(dockets, console)


def _where(fault: dict) -> str:
    """Where and when a fault of a whole line, or of a bus held at a terminal, was injected."""
    if fault.get("terminal_stop_id"):
        return (f", parado no terminal {fault['terminal_stop_id']} das {fault['arrives'][11:16]} às "
                f"{fault['leaves'][11:16]} em vez dessa viagem de ida e volta")
    if not fault.get("trip_id") and fault.get("from") and fault.get("to"):
        return (f": linha {fault['route_id']}, sentido {fault['direction_id']}, "
                f"{fault['from'][11:16]}–{fault['to'][11:16]}")
    return ""


DEMO_WEB_ADDRESS = "http://127.0.0.1:8000"  # fiscaliza serve's default host and port
DEMO_ACCOUNTS = (  # username, full name, role, operator, matrícula
    ("fiscal", "Fiscal de demonstração", "fiscal", None, "0001"),
    ("gestor", "Gestor de demonstração", "gestor", None, None),
    ("titular", "Titular do Órgão Gerencial (demonstração)", "titular", None, None),
)


@dataclass
class DemoDockets:
    database: Path
    labels: list[tuple[str, str, str, int, str]]  # number, code, operator, fine, next deadline
    files: list[Path]
    accounts: list[tuple[str, str, str]]  # username, role, password
    public_key: Path  # the demo Órgão's published key, for fiscaliza verify
    signing_key: Path
    audit_key: Path
    lavrados: bool = True  # False: the simulated day is still to come, the autos are drafts
    fine_unit: str = "UFIR"  # the law's (rules.law.Law.fine_unit)


def write_demo_dockets(inputs: ReplayInputs, result, out: Path, date: dt.date, progress=None) -> DemoDockets:
    """The demo day's confirmed infractions as autos de infração: a fresh SQLite store
    with demo accounts, every auto lavrado the next business day, PDFs and bundles."""
    import secrets

    from dockets.anchors import FileAnchorLog, default_destination
    from dockets.audit import create_audit_key, load_audit_key
    from dockets.config import calendar_for, issuer_name
    from dockets.db import open_store
    from dockets.export import export_files, lavrar_drafts
    from dockets.service import Actor, status_of
    from dockets.signing import create_key, load_key, public_path
    from dockets.sink import ingest_replay, records_of
    from dockets.store import Docket
    from dockets.users import create_user
    from dockets.workflow import running_terms, term_notes
    from engine.loading import load_context

    out.mkdir(parents=True, exist_ok=True)
    database = out / "autos.sqlite3"
    anchors = FileAnchorLog(Path(default_destination(f"sqlite:///{database}", anchors=None, kafka_bootstrap=None)))
    # a new store each run, and a new anchor log for it
    for old in [database, anchors.path, *out.glob("auto-*")]:
        old.unlink(missing_ok=True)
    # the demo Órgão's keys, beside (never inside) the store; kept across runs
    key_path = out.parent / "chave-do-orgao.pem"
    signer = load_key(key_path) if key_path.exists() else create_key(key_path)
    audit_key_path = out.parent / "chave-de-auditoria.key"
    audit_key = load_audit_key(audit_key_path) if audit_key_path.exists() else create_audit_key(audit_key_path)
    sessions = open_store(f"sqlite:///{database}", audit_key=audit_key, anchors=anchors)
    context = load_context(inputs)
    ingest_replay(sessions, inputs.static, inputs.telemetry, context, records_of(result.infractions), signer=signer)
    accounts = []
    with sessions.begin() as session:
        for username, name, role, operator, registration in DEMO_ACCOUNTS + tuple(
                (a.lower(), f"Representante da {agency.name}", "operador", a, None)
                for a, agency in sorted(context.feed.agencies.items())):
            password = secrets.token_urlsafe(9)
            user = create_user(session, username=username, full_name=name, role=role, password=password,
                               operator_id=operator, registration=registration)
            accounts.append((username, role, password))
            if role == "fiscal":
                fiscal = Actor.of(user)
    calendar = calendar_for(context.policy)
    # acts are dated by the clock: the autos are lavrados today (a demo of today or of a day
    # still to come leaves them as drafts: no auto for what may not have happened yet)
    today = dt.datetime.now(context.policy.tz).date()
    lavrados = day_is_over(date, today)
    if lavrados:
        lavrar_drafts(sessions, fiscal, today, calendar=calendar, issuer_name=issuer_name(context.policy),
                      signer=signer)
    files = export_files(sessions, out)
    # a law that sets no term for notifying (Canarana's) runs none until the ciência: say which comes then
    after_ciencia = term_notes(calendar.law_terms).get("pagamento", "") if lavrados else ""
    with sessions() as session:
        labels = [(d.label, d.code, d.operator_id, d.fine_ufir,
                   # only a lavrado auto waits for the ciência (a draft is not yet an act)
                   _deadline_text(running_terms(status_of(d), calendar, today),
                                  after_ciencia if d.stage == "lavrado" else ""))
                  for d in session.query(Docket).order_by(Docket.number)]
    if progress:
        progress(1, 1)
    return DemoDockets(database, labels, files, accounts, public_path(key_path), key_path, audit_key_path, lavrados,
                       law_of(result.policy).fine_unit)


def _deadline_text(terms, after_ciencia: str = "") -> str:
    """The term running now (the first of `workflow.running_terms`), as the web app shows it;
    none running, the one the ciência starts (`after_ciencia`, in words), if given."""
    if not terms:
        return f"nenhum até a ciência; então {after_ciencia}" if after_ciencia else "—"
    term = terms[0]
    return f"{term.label.removeprefix('Prazo de ')} até {term.date:%d/%m/%Y}"


def fiscaliza_command() -> str:
    """How to run `fiscaliza` from here, as printed commands must run as printed: the
    virtualenv's script (relative to the working directory when under it), else the name."""
    script = Path(sys.executable).with_name("fiscaliza")
    if not script.exists():
        return "fiscaliza"
    try:
        return str(script.relative_to(Path.cwd()))
    except ValueError:
        return str(script)


def print_demo_dockets(dockets: DemoDockets, console: Console) -> None:
    command = fiscaliza_command()
    table = Table(title="Autos de infração lavrados" if dockets.lavrados else
                  "Autos de infração em rascunho (o dia simulado ainda não terminou: nenhum auto antes do fato)")
    fine = f"multa ({dockets.fine_unit})"
    for column in ("auto nº", "código", "operadora", fine, "próximo prazo"):
        table.add_column(column, justify="right" if column == fine else "left")
    for label, code, operator, ufir, deadline in dockets.labels:
        table.add_row(label, code, operator, str(ufir), deadline)
    print_table(console, table)
    # soft_wrap: paths and commands stay on one line, to be copied
    console.print(f"PDFs e pacotes de evidências em {dockets.database.parent}/", soft_wrap=True)
    bundle = next((f for f in dockets.files if f.name.endswith("-evidencias.zip")), None)
    if bundle is not None:
        console.print(f"Confira um pacote (integridade, assinatura, regra reexecutada): "
                      f"{command} verify {bundle} --public-key {dockets.public_key}", soft_wrap=True)
    console.print(f"Registro de auditoria: {command} audit verify --db sqlite:///{dockets.database} "
                  f"--audit-key {dockets.audit_key}", soft_wrap=True)
    # the web app last: what a new user does next is open it and log in
    accounts = Table(title="Contas de demonstração (senhas geradas nesta execução)")
    for column in ("usuário", "perfil", "senha"):
        accounts.add_column(column, no_wrap=True)
    for username, role, password in dockets.accounts:
        accounts.add_row(username, role, password)
    print_table(console, accounts)
    console.print(f"Sistema web: {command} serve --db sqlite:///{dockets.database} --no-secure-cookies "
                  f"--signing-key {dockets.signing_key} --audit-key {dockets.audit_key}", soft_wrap=True)
    console.print(f"e abra {DEMO_WEB_ADDRESS} com uma das contas acima.", soft_wrap=True)
