"""How each evidence figure reads on the auto: its name in legal Portuguese and how its
value is written (unit, Brazilian numbers, local dates and times, words for booleans).

Keyed by the evidence key the detectors and the engine emit; a key whose meaning
depends on where it sits is keyed by its path too ("episodes.max_distance_m" is the
distance measured in an episode, "max_distance_m" the tolerance). Every key emitted
must be here (tests/dockets/test_labels.py derives them from real detector output):
an unlabelled key would print as code on a legal document.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dockets import ptbr


@dataclass(frozen=True)
class Context:
    """What a value's wording may depend on besides the value itself."""

    day: dt.date | None = None  # the service day: instants on it print without their date
    vehicle_id: str | None = None  # the auto's vehicle: its messages need not name it
    evidence: Mapping[str, Any] = field(default_factory=dict)  # the whole evidence object
    fine_ufir: int | None = None  # the auto's fine (D-13: escalated)
    base_fine_ufir: int | None = None  # the code's fine before escalation (art. 3)
    step_pct: float | None = None  # D-13's escalation step, from the bundle's policy


Formatter = Callable[[Any, Context], str]


@dataclass(frozen=True)
class Label:
    text: str
    format: Formatter
    hidden: bool = False  # kept in the bundle, not printed (what the charts are drawn from)


# --- value formatters --------------------------------------------------------------

def _or_dash(fmt: Formatter) -> Formatter:
    return lambda value, ctx: "—" if value is None else fmt(value, ctx)


def _text(value, ctx) -> str:
    return str(value)


def _unit(unit: str, max_decimals: int = 1) -> Formatter:
    return _or_dash(lambda v, ctx: f"{ptbr.amount(v, max_decimals)} {unit}")


_metres = _unit("m")
_seconds = _unit("s")
_kmh = _unit("km/h")
_km = _unit("km", 3)
_pct = _unit("%", 3)


def _integer(value, ctx) -> str:
    return ptbr.number(value)


def _duration(value, ctx) -> str:
    return "—" if value is None else ptbr.duration(value)


def _deviation(value, ctx) -> str:
    """Signed seconds against the timetable: late (+) or early (−), in words."""
    if value is None:
        return "—"
    if value == 0:
        return "no horário"
    return f"{'atraso' if value > 0 else 'adiantamento'} de {ptbr.duration(abs(value))}"


def _words(yes: str, no: str) -> Formatter:
    return _or_dash(lambda v, ctx: yes if v else no)


def _parse_instant(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value)


def _instant(value, ctx) -> str:
    return "—" if value is None else ptbr.instant(_parse_instant(value), ctx.day)


def _date(value, ctx) -> str:
    return ptbr.date(dt.date.fromisoformat(value))


def _month(value, ctx) -> str:
    year, month = value.split("-")
    return f"{month}/{year}"


_MESSAGE = re.compile(r"^(?P<vehicle>.+)/(?P<ts>\d{4}-\d{2}-\d{2}T[^#]+)(?:#(?P<seq>\d+))?$")


def message(value: str, ctx: Context) -> str:
    """A telemetry message as evidence cites it (vehicle/time#seq), as a reader finds it
    in the bundle: its sequence number, vehicle and local time."""
    found = _MESSAGE.match(str(value))
    if not found:
        return str(value)
    when = ptbr.instant(_parse_instant(found["ts"]), ctx.day)
    if found["vehicle"] != ctx.vehicle_id:
        when = f"{found['vehicle']}, {when}"
    return f"nº {found['seq']} ({when})" if found["seq"] else when


def _messages(value, ctx) -> str:
    if not value:
        return "nenhum"
    if len(value) <= 3:
        return "; ".join(message(m, ctx) for m in value)
    return f"{ptbr.plural(len(value), 'registro', 'registros')}: {message(value[0], ctx)} a {message(value[-1], ctx)}"


def _list_of(fmt: Formatter, empty: str = "nenhum") -> Formatter:
    return lambda value, ctx: "; ".join(fmt(v, ctx) for v in value) if value else empty


def _intervals(value, ctx) -> str:
    return "; ".join(f"{_instant(a, ctx)} a {_instant(b, ctx)}" for a, b in value) if value else "nenhum"


def _interval(value, ctx) -> str:
    start, end = value
    return f"{_instant(start, ctx)} a {_instant(end, ctx)}"


def _positions(value, ctx) -> str:
    return ptbr.plural(len(value), "posição", "posições") + " fora do itinerário (no mapa e no pacote de evidências)"


def _rows(empty: str) -> Formatter:
    """Records shown as a table; this is what prints when there are none."""
    return lambda value, ctx: empty if not value else ptbr.plural(len(value), "item", "itens")


def _registers(value, ctx) -> str:
    """Register sizes of the catraca's counter: where it rolls over to zero."""
    return " ou ".join(f"{ptbr.number(size - 1)} → 0" for size in value)


def _measures(value, ctx) -> str:
    return "; ".join(value) if value else "nenhuma"


def d12_expected(value, ctx: Context) -> str:
    """ceil(window / headway) in words, from the evidence's own figures."""
    ev = ctx.evidence
    start, end = _parse_instant(ev["window_start"]), _parse_instant(ev["window_end"])
    seconds, headway = (end - start).total_seconds(), ev["headway_s"]
    exact = seconds / headway
    rounded = "" if exact.is_integer() else f" ({ptbr.amount(exact, 2)}, arredondado para cima)"
    return (f"janela de {ptbr.duration(seconds)} ÷ intervalo de {ptbr.duration(headway)} = "
            f"{ptbr.plural(math.ceil(exact), 'partida exigida', 'partidas exigidas')}{rounded}")


def d13_fine(value, ctx: Context) -> str:
    """Art. D-13's escalation in words, computed again from the evidence's counts: the
    code's fine plus 100 % of it for each full step of trips off schedule."""
    ev = ctx.evidence
    base, step = ctx.base_fine_ufir, ctx.step_pct
    off, realized = ev["off_schedule_trips"], ev["realized_trips"]
    if base is None or step is None:
        return f"multa de {ptbr.number(ctx.fine_ufir or 0)} UFIR"
    from rules.d13 import escalated_fine  # the rule's own exact arithmetic

    fine = escalated_fine(base, off, realized, step)
    steps = fine // base - 1
    pct = 100 * off / realized
    added = ("nenhum acréscimo" if steps == 0 else
             f"{ptbr.plural(steps, 'acréscimo', 'acréscimos')} de 100 % → {ptbr.number(base)} + "
             f"{steps} × {ptbr.number(base)}")
    return (f"multa de {ptbr.number(base)} UFIR acrescida de 100 % a cada {ptbr.amount(step)} % de viagens "
            f"fora do horário: {ptbr.number(off)} de {ptbr.plural(realized, 'viagem realizada', 'viagens realizadas')} "
            f"= {ptbr.amount(pct, 2)} % das viagens → {added} → {ptbr.number(fine)} UFIR")


# --- the dictionary ----------------------------------------------------------------

def _l(text: str, fmt: Formatter = _text, hidden: bool = False) -> Label:
    return Label(text, _or_dash(fmt), hidden)


LABELS: dict[str, Label] = {
    # a fiscal's manual infraction (web.fiscal.manual_record): the relato is the auto's
    # description, printed there once
    "relato": _l("relato do fiscal", hidden=True),
    "fiscal": _l("fiscal que constatou a infração"),
    # shared
    "interval_epoch": _l("período da infração (instantes)", _text, hidden=True),
    "policy_version": _l("versão da política de fiscalização"),
    "engine_version": _l("versão do sistema de fiscalização"),
    "from": _l("início", _instant),
    "to": _l("fim", _instant),
    "pings": _l("registros do tacógrafo", _messages),
    "msg_id": _l("registro", message),
    "trip_id": _l("viagem"),
    "vehicle_id": _l("veículo (número de ordem)"),
    "direction_id": _l("sentido"),
    "departed_at": _l("partida registrada", _instant),
    "scheduled_departure": _l("partida programada", _instant),
    "stop_id": _l("ponto de parada"),
    "max_early_s": _l("adiantamento máximo tolerado", _seconds),
    "max_late_s": _l("atraso máximo tolerado", _seconds),
    "deviation_s": _l("desvio", _deviation),
    "in_service": _l("períodos em serviço", _intervals),
    "justified_by": _l("ocorrências que justificam", _list_of(_text)),
    "justification": _l("motivo justificado", _list_of(_text)),
    "conflicting_duplicates": _l("registros recebidos em duas versões divergentes", _list_of(message)),
    # a record judged on both versions of what it cites (rules.versions)
    "conflicting_versions": _l("registros recebidos em duas versões divergentes (mesmo veículo, horário e sequência)",
                               _rows("nenhum")),
    "conflicting_versions.other_msg_id": _l("a outra versão", message),
    "conflicting_versions.speeds_kmh": _l("velocidade informada (versão considerada; a outra)",
                                          _list_of(_kmh)),
    "conflicting_versions.positions": _l("posições (versão considerada; a outra)", _text, hidden=True),
    "conflicting_versions.digests": _l("resumo do conteúdo (versão considerada; a outra)", _list_of(_text)),
    "conflicting_versions.differing": _l("campos divergentes (versão considerada / a outra)", _list_of(_text)),
    "conflicting_versions_counted": _l("versão considerada"),
    "conflicting_versions_verdict": _l("exame das duas versões"),
    "infraction_id": _l("identificador da infração"),
    # D-11
    "max_distance_m": _l("distância máxima tolerada do itinerário", _metres),
    "min_travel_m": _l("percurso mínimo fora do itinerário para a infração", _metres),
    "min_duration_s": _l("duração mínima fora do itinerário para a infração", _seconds),
    "episodes": _l("trechos fora do itinerário", _rows("nenhum")),
    "episodes.travel_m": _l("percurso fora do itinerário", _metres),
    "episodes.duration_s": _l("duração", _duration),
    "episodes.max_distance_m": _l("maior distância registrada do itinerário", _metres),
    "off_route_lonlat": _l("posições registradas fora do itinerário", _positions),
    #
    "stop_radius_m": _l("raio do ponto de parada", _metres),
    "max_interpolation_gap_s": _l("intervalo máximo entre registros para traçar o trajeto", _seconds),
    "missed_stops": _l("pontos de parada não atendidos", _rows("nenhum")),
    "unverifiable_stops": _l("pontos de parada não verificáveis pelos registros", _rows("nenhum")),
    "nearest_m": _l("menor distância do trajeto ao ponto", _metres),
    "closest_ping": _l("registro mais próximo do ponto", message),
    "missed_stops.pings": _l("registros entre os quais o ponto foi contornado", _messages),
    "unverifiable_stops.pings": _l("registros em torno do ponto", _messages),
    "gap_s": _l("intervalo entre os registros", _seconds),
    # B-04
    "departure_deviation_s": _l("desvio na partida do terminal", _deviation),
    "timepoints": _l("pontos de controle", _rows("nenhum")),
    "timepoints.stop_id": _l("ponto de controle"),
    "event": _l("evento"),
    "scheduled": _l("horário programado", _instant),
    "observed": _l("horário registrado", _instant),
    "reason": _l("motivo"),
    "timepoints.pings": _l("registros da passagem", _messages),
    # C-01
    "tolerance_kmh": _l("tolerância de velocidade", _kmh),
    "max_speed_kmh": _l("maior velocidade registrada", _kmh),
    "limit_kmh": _l("limite de velocidade da via", _kmh),
    "speed_kmh": _l("velocidade registrada", _kmh),
    "displacement_kmh": _l("velocidade média pelo deslocamento entre os registros", _kmh),
    "speed_agreement_kmh": _l("diferença máxima aceita entre velocidade registrada e deslocamento", _kmh),
    # D-12
    "window_start": _l("início da janela de frequência", _instant),
    "window_end": _l("fim da janela de frequência", _instant),
    "headway_s": _l("intervalo programado entre partidas", _duration),
    "expected_departures": _l("partidas exigidas", _integer),
    "expected_formula": _l("cálculo das partidas exigidas", d12_expected),
    "realized_departures": _l("partidas realizadas", _integer),
    "departures": _l("horários das partidas realizadas", _list_of(_instant)),
    "template_trip_id": _l("viagem-modelo da frequência"),
    # D-13
    "realized_trips": _l("viagens realizadas no dia", _integer),
    "off_schedule_trips": _l("viagens fora do horário", _integer),
    "pct_off_schedule": _l("percentual de viagens fora do horário", _pct),
    "fine_formula": _l("cálculo da multa", d13_fine),
    "trips": _l("viagens fora do horário", _rows("nenhuma")),
    "justified_trips": _l("viagens fora do horário com motivo justificado", _rows("nenhuma")),
    "departure_pings": _l("registros da saída do terminal", _messages),
    "occurrences": _l("ocorrências", _list_of(_text)),
    # D-19
    "max_silence_s": _l("silêncio máximo tolerado da catraca", _duration),
    "silences": _l("silêncios da catraca em serviço", _rows("nenhum")),
    "seconds": _l("duração", _duration),
    "faults": _l("falhas informadas pela catraca", _list_of(_instant, "nenhuma")),
    "measures": _l("medida administrativa", _measures),
    # D-21
    "facts": _l("leituras da catraca que comprovam a infração", _rows("nenhuma")),
    "fact": _l("fato"),
    "ts": _l("horário", _instant),
    "counter": _l("contador", _integer),
    "seal_intact": _l("lacre", _words("íntegro", "rompido")),
    "previous_counter": _l("contador na leitura anterior", _integer),
    "next_counter": _l("contador na leitura seguinte", _integer),
    "counter_moduli": _l("voltas a zero do contador admitidas", _registers),
    # D-22 and art. 45
    "scheduled_key": _l("viagem programada"),
    "block_id": _l("bloco de viagens"),
    "programmed_m": _l("extensão programada", _metres),
    "start_of_operation": _l("primeira viagem do dia (início da operação)", _words("sim", "não")),
    "match_window_s": _l("tolerância para casar viagem realizada e programada", _duration),
    "realized_trips_within_window": _l("viagens realizadas dentro da tolerância", _rows("nenhuma")),
    "matched_trip_id": _l("viagem programada a que corresponde"),
    "art45": _l("art. 45 (eficiência do mês)"),
    "month": _l("mês", _month),
    "programmed_km": _l("quilometragem programada", _km),
    "realized_km": _l("quilometragem realizada", _km),
    "efficiency_pct": _l("índice de eficiência", _pct),
    "min_efficiency_pct": _l("eficiência mínima para a isenção", _pct),
    "exempt": _l("isenção de multa do art. 45", _words("aplicável", "não aplicável")),
    "service_dates_considered": _l("dias considerados", _list_of(_date)),
    "days_without_telemetry": _l("dias sem telemetria (fora do cálculo)", _list_of(_date, "nenhum")),
    "month_complete": _l("mês encerrado", _words("sim", "não (parcial)")),
    "unsettled": _l("por que não foi confirmada"),
    # shared by the other laws' detectors
    "max_ping_gap_s": _l("intervalo máximo entre registros para a prova", _duration),
    "min_consecutive_pings": _l("registros consecutivos exigidos", _integer),
    "duration_s": _l("duração", _duration),
    "pings.at": _l("horário", _instant),
    # turning back before the terminal (Conselheiro Lafaiete, art. 14 § único)
    "min_reversal_m": _l("recuo mínimo ao longo do itinerário para a infração", _metres),
    "farthest_m": _l("ponto mais avançado alcançado no itinerário", _metres),
    "short_of_terminal_m": _l("distância que faltava até o ponto terminal", _metres),
    "reversal_m": _l("recuo ao longo do itinerário", _metres),
    "reversal_s": _l("duração do recuo", _duration),
    "pings.along_shape_m": _l("posição ao longo do itinerário", _metres),
    "pings.tachograph_m": _l("distância máxima rodada desde o ponto mais avançado, segundo o tacógrafo", _metres),
    # stopping outside the marked stops (Conselheiro Lafaiete, art. 19 § único)
    "min_stop_distance_m": _l("distância mínima de qualquer ponto de parada para a infração", _metres),
    "nearest_stop_id": _l("ponto de parada mais próximo"),
    "nearest_stop_m": _l("distância ao ponto de parada mais próximo", _metres),
    "pings.stop_m": _l("distância ao ponto de parada mais próximo", _metres),
    # another line (Conselheiro Lafaiete, art. 17)
    "licensed_lines": _l("linhas para as quais o veículo está licenciado", _list_of(_text, "nenhuma")),
    "min_boardings": _l("passageiros mínimos para a infração", _integer),
    "boardings": _l("passageiros registrados pela catraca na viagem", _integer),
    "readings": _l("leituras da catraca na viagem", _rows("nenhuma")),
    "readings.at": _l("horário", _instant),
    "readings.status": _l("situação da catraca"),
    "readings.boardings": _l("passageiros contados nesta leitura", _integer),
    # mean waiting time (Canarana, art. 10 § 5º)
    "period": _l("período do dia"),
    "window": _l("período", _interval),
    "max_wait_s": _l("espera média máxima permitida", _duration),
    "mean_wait_s": _l("espera média calculada", _duration),
    "headways_s": _l("intervalos entre as partidas realizadas", _list_of(_duration)),
    "formula": _l("cálculo da espera média"),
    "reading": _l("leitura da lei aplicada"),
    "scheduled_departures": _l("partidas programadas no período", _integer),
    "scheduled_mean_wait_s": _l("espera média do horário aprovado", _duration),
    # vehicles at a terminal (Canarana, art. 13)
    "terminal_stop_id": _l("ponto terminal"),
    "episode": _l("período", _interval),
    "max_share_pct": _l("parcela máxima dos veículos da linha no terminal", _pct),
    "grace_s": _l("permanência tolerada de cada veículo no terminal", _duration),
    "line_vehicle_count": _l("veículos da linha no dia", _integer),
    "line_vehicles": _l("veículos da linha no dia", _list_of(_text)),
    "max_vehicles": _l("máximo de veículos permitido no terminal", _integer),
    "peak": _l("maior número de veículos no terminal além da tolerância", _integer),
    "arithmetic": _l("cálculo"),
    "present": _l("veículos no terminal além da tolerância", _rows("nenhum")),
    "arrived_at": _l("chegada ao terminal", _instant),
    "not_counted_telemetry_broken": _l("veículos não contados: telemetria interrompida", _list_of(_text)),
    "not_counted_timetable": _l("veículos não contados: espera prevista no horário aprovado", _list_of(_text)),
    # a line interrupted (Canarana, art. 6º II)
    "interrupted_since": _l("linha interrompida desde", _instant),
    "interruption_s": _l("duração da interrupção", _duration),
    "max_interruption_s": _l("interrupção máxima sem autorização", _duration),
    "last_realized_departure": _l("última partida realizada", _instant),
    "last_unserved_departure": _l("última partida programada não realizada", _instant),
    "days_without_observation": _l("dias sem observação da frota", _list_of(_date)),
    "penalty": _l("penalidade"),
}


def label(key: str, parent: str | None = None) -> Label | None:
    """The label of `key`, the one of its place (`parent.key`) first."""
    if parent is not None and f"{parent}.{key}" in LABELS:
        return LABELS[f"{parent}.{key}"]
    return LABELS.get(key)
