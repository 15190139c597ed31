"""Build the dashboards' JSON (python -m dashboards.build)."""

from __future__ import annotations

import json
from pathlib import Path

from grafana_foundation_sdk.builders import barchart, common, dashboard, geomap, prometheus, table, timeseries
from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.cog import variants as cogvariants
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.common import FrameGeometrySourceMode, GraphThresholdsStyleMode
from grafana_foundation_sdk.models.dashboard import (
    DataSourceRef,
    Threshold,
    ThresholdsMode,
    VariableOption,
    VariableRefresh,
    VariableSort,
)

from dockets.workflow import STAGE_LABELS
from kernel.policy import Headway, load_policy

OUT = Path(__file__).parent / "provisioning" / "dashboards" / "json"
PROMETHEUS = DataSourceRef(type_val="prometheus", uid="prometheus")
# the docket store (PostgreSQL + PostGIS), provisioned as uid "dockets"
DOCKETS = DataSourceRef(type_val="grafana-postgresql-datasource", uid="dockets")
# Grafana's "default" time zone: the server's [date_formats] default_timezone, which the
# stack sets to the feed's agency_timezone (docker-compose.yml, FISCALIZA_TIMEZONE). Not a
# literal here: Canarana's feed runs on America/Cuiaba, an hour behind São Paulo.
CITY_TIME = ""


def _panel(title: str, expr: str, legend: str, unit: str, description: str) -> timeseries.Panel:
    return (
        timeseries.Panel()
        .title(title)
        .description(description)
        .unit(unit)
        .datasource(PROMETHEUS)
        .with_target(prometheus.Dataquery().expr(expr).legend_format(legend).ref_id("A"))
        .height(8)
        .span(12)
    )


def workers() -> dashboard.Dashboard:
    """The stream processing itself: is telemetry flowing, are the workers keeping up."""
    return (
        dashboard.Dashboard("Fiscaliza — processamento")
        .uid("fiscaliza-workers")
        .tags(["fiscaliza"])
        .refresh("30s")
        .time("now-6h", "now")
        .timezone(CITY_TIME)
        .with_panel(_panel("Processos no ar", 'sum by (job) (up{job=~"fiscaliza-.*"})', "{{job}}", "short",
                           "Workers, sink de operação e sink dos autos respondendo à coleta do Prometheus."))
        .with_panel(_panel("Mensagens recebidas por tópico",
                           "sum by (topic) (rate(fiscaliza_messages_received_per_topic_total[1m]))",
                           "{{topic}}", "reqps", "Telemetria chegando aos workers (tacógrafo, catraca, ocorrências)."))
        .with_panel(_panel("Mensagens enviadas por tópico", "sum by (topic) (rate(fiscaliza_topic_messages_sent_total[1m]))",
                           "{{topic}}", "reqps", "Infrações, viagens, rejeitadas e mensagens entre os estágios."))
        .with_panel(_panel("Atraso de consumo (mensagens)", "max by (topic) (fiscaliza_consumer_lag_messages)",
                           "{{topic}}", "short", "Quanto os workers estão atrás do que já chegou ao Kafka, medido "
                           "pelo sink de operação a partir dos offsets do Kafka: continua crescendo com os workers "
                           "parados."))
        .with_panel(_panel("Atraso do sink de operação (mensagens)", "max(fiscaliza_ops_sink_lag_messages)",
                           "tabelas ao vivo", "short",
                           "Registros de posição, viagens e infrações ainda não gravados nas tabelas ao vivo."))
        .with_panel(_panel("Rebalanceamentos", "sum(increase(fiscaliza_assignment_operations_total[1h]))",
                           "atribuições de partições", "short",
                           "Atribuições de partições aos workers (cada entrada ou saída de um worker gera uma), por hora."))
        .with_panel(_panel("Idade da telemetria por partição",
                           "time() - max by (partition, source) (fiscaliza_partition_watermark_seconds > 0)",
                           "partição {{partition}} — {{source}}", "s",
                           "Há quanto tempo (relógio) foi o evento mais novo de cada partição e entrada. "
                           "Crescendo: a telemetria parou de chegar ou os workers pararam."))
        .with_panel(_panel("Mensagens rejeitadas por motivo",
                           "sum by (source, reason) (rate(fiscaliza_rejected_total[5m])) > 0",
                           "{{source}}: {{reason}}", "reqps",
                           "Mensagens enviadas ao tópico de rejeitadas (dead letters), por entrada e motivo."))
        .with_panel(_panel("Mensagens atrasadas guardadas", "sum(increase(fiscaliza_late_messages_kept_total[1h]))",
                           "mensagens", "short",
                           "Mensagens chegadas além da tolerância de atraso, guardadas (não descartadas) para "
                           "julgar de novo o dia do veículo, por hora."))
        .with_panel(_panel("Dias de veículo julgados de novo",
                           "sum(increase(fiscaliza_vehicle_days_rejudged_total[1h]))", "dias de veículo", "short",
                           "Dias de veículo julgados de novo a partir da telemetria bruta depois de chegarem "
                           "mensagens atrasadas, por hora."))
        .with_panel(_panel("Infrações emitidas por código e situação",
                           # round: increase() extrapolates past the scrapes (1.01 for one infraction)
                           "round(sum by (code, status) (increase(fiscaliza_infractions_total[1h]))) > 0",
                           "{{code}} {{status}}", "short",
                           "Registros de infração emitidos pelo motor na última hora (provisória, confirmada, "
                           "justificada, isenta pelo art. 45, retirada)."))
        .with_panel(_panel("Ônibus em serviço por operadora", "sum by (operator) (fiscaliza_vehicles_in_service)",
                           "{{operator}}", "short", "Veículos executando uma viagem agora."))
        .with_panel(_panel("Ônibus sem transmitir por operadora",
                           "sum by (operator, input) (fiscaliza_vehicles_silent)", "{{operator}} — {{input}}", "short",
                           "Tacógrafo sem posição há mais de 10 min; catraca além do limite do D-19."))
        .with_panel(_panel("Latência do evento à emissão (p95)",
                           "histogram_quantile(0.95, sum by (output, le) "
                           "(rate(fiscaliza_emission_latency_seconds_bucket[5m])))",
                           "{{output}}", "s", "Do evento que tornou a saída possível até a sua emissão pelo worker."))
    )


class SqlQuery(cogvariants.Dataquery):
    """A raw SQL query of Grafana's PostgreSQL data source (the SDK has no builder for it)."""

    def __init__(self, sql: str, format_as: str) -> None:
        self.sql = sql
        self.format_as = format_as

    def to_json(self) -> dict:
        return {"refId": "A", "datasource": DOCKETS.to_json(), "editorMode": "code", "rawQuery": True,
                "rawSql": self.sql, "format": self.format_as}


class Sql(cogbuilder.Builder[cogvariants.Dataquery]):
    def __init__(self, sql: str, format_as: str = "table") -> None:
        self._query = SqlQuery(sql, format_as)

    def build(self) -> SqlQuery:
        return self._query


# Stages in Portuguese, as the web app shows them.
STAGE_CASE = ("CASE stage " + " ".join(f"WHEN '{stage.value}' THEN '{label}'" for stage, label in STAGE_LABELS.items())
              + " ELSE stage END")
AUTO_NUMBER = "CASE WHEN number IS NULL THEN 'rascunho ' || id ELSE lpad(number::text, 4, '0') || '/' || year END"

# Today in the feed's timezone: the deadlines are business days of the city, and the
# session's current_date is UTC's (from 21:00 in São Paulo it is already tomorrow).
FEED_TODAY = "(now() AT TIME ZONE coalesce((SELECT timezone FROM live_feed), current_setting('TimeZone')))::date"

QUERIES = {
    "stages": f"SELECT {STAGE_CASE} AS \"situação\", count(*) AS autos, sum(fine_ufir) AS \"multa (UFIR)\" "
              "FROM dashboard_dockets WHERE $__timeFilter(occurred_at) GROUP BY stage ORDER BY autos DESC",
    "fines": "SELECT d.operator_name AS operadora, "
             "sum(CASE WHEN d.stage = 'multa_devida' THEN d.fine_ufir * d.ufir_brl ELSE 0 END) AS \"devidas (R$)\", "
             "sum(CASE WHEN d.stage = 'pago' THEN d.fine_ufir * d.ufir_brl ELSE 0 END) AS \"pagas (R$)\", "
             "sum(CASE WHEN d.stage IN ('lavrado', 'notificado', 'defesa_apresentada', 'julgado_procedente', "
             "'recurso_interposto') THEN d.fine_ufir * d.ufir_brl ELSE 0 END) AS \"em andamento (R$)\" "
             "FROM dashboard_dockets d WHERE $__timeFilter(d.occurred_at) "
             "GROUP BY d.operator_name ORDER BY d.operator_name",
    "deadlines": f"SELECT {AUTO_NUMBER} AS auto, code AS \"código\", operator_id AS operadora, "
                 f"next_deadline_label AS prazo, next_deadline AS \"vence em\", {STAGE_CASE} AS \"situação\" "
                 "FROM dashboard_dockets WHERE next_deadline IS NOT NULL "
                 f"AND next_deadline <= {FEED_TODAY} + 7 "
                 "ORDER BY next_deadline, id",
    "map": f"SELECT {AUTO_NUMBER} AS auto, code AS \"código\", operator_id AS operadora, lat AS latitude, "
           "lon AS longitude, occurred_at AS \"ocorrida em\" FROM dashboard_dockets "
           "WHERE lat IS NOT NULL AND $__timeFilter(occurred_at)",
    "codes": "SELECT code AS \"código\", count(*) AS autos FROM dashboard_dockets WHERE $__timeFilter(occurred_at) "
             "GROUP BY code ORDER BY code",
}


def autos() -> dashboard.Dashboard:
    """The autos de infração: where the contest stands, what falls due, where it happened."""
    return (
        dashboard.Dashboard("Fiscaliza — autos de infração")
        .uid("fiscaliza-autos")
        .tags(["fiscaliza"])
        .refresh("1m")
        .time("now-30d", "now")
        .timezone(CITY_TIME)
        .with_panel(table.Panel().title("Autos por situação").datasource(DOCKETS).with_target(Sql(QUERIES["stages"]))
                    .description("Autos de infração ocorridos no período, por etapa do processo (arts. 5º a 8º).")
                    .height(8).span(8))
        .with_panel(barchart.Panel().title("Multas por operadora (R$)").datasource(DOCKETS)
                    .with_target(Sql(QUERIES["fines"])).x_field("operadora").unit("currencyBRL")
                    .description("Cada auto carrega a sua multa (art. 10). Devidas: decisão final mantida; "
                                 "em andamento: ainda em prazo de defesa ou recurso.")
                    .height(8).span(8))
        .with_panel(barchart.Panel().title("Autos por código").datasource(DOCKETS).with_target(Sql(QUERIES["codes"]))
                    .x_field("código").description("Infrações do Anexo I autuadas no período.").height(8).span(8))
        .with_panel(table.Panel().title("Prazos vencendo (próximos 7 dias)").datasource(DOCKETS)
                    .with_target(Sql(QUERIES["deadlines"]))
                    .description("Notificação (5 dias úteis), defesa e recurso (10 dias úteis), pagamento (10 dias).")
                    .height(10).span(12))
        .with_panel(geomap.Panel().title("Onde ocorreram").datasource(DOCKETS).with_target(Sql(QUERIES["map"]))
                    .view(geomap.MapViewConfig().id("coords").lat(-19.76).lon(-40.39).zoom(13))
                    .layers([common.MapLayerOptions().type("markers").name("Autos")
                             .location(common.FrameGeometrySource().mode(FrameGeometrySourceMode.COORDS)
                                       .latitude("latitude").longitude("longitude"))])
                    .description("Local de cada auto de infração (os pontos são os das evidências).")
                    .height(10).span(12))
    )


# The live tables (ops/store.py), fed by `fiscaliza ops sink`. "Now" is the newest
# position the pipeline has delivered, not the wall clock: statuses come out once the
# input is in order, up to stream.allowed_lateness_s (10 min) behind it. Whether the
# whole pipeline stopped is the processing dashboard's (and TelemetriaParada's) question.
NEWEST = "(SELECT max(ts) FROM live_vehicle_status)"
# The dashboards' operator and line variables (multi-value, "all" is .*): as PromQL
# matchers, and as SQL regexes.
OPERATOR_MATCH = '{operator=~"$operator"}'
ROUTE_MATCH = '{route=~"$route"}'
LINE_MATCH = '{operator=~"$operator", route=~"$route"}'
BY_OPERATOR = "operator_id ~ '^(${operator:regex})$'"
BY_LINE = "coalesce(route_id, '') ~ '^(${route:regex})$'"
# the engine's reading of the headway (engine.status, the policy's [headway] bounds)
HEADWAY_CASE = ("CASE headway_state WHEN 'bunched' THEN 'agrupado' WHEN 'gapped' THEN 'buraco' "
                "WHEN 'regular' THEN 'regular' END")
STATUS_CASE = ("CASE status WHEN 'provisional' THEN 'provisória' WHEN 'confirmed' THEN 'confirmada' "
               "WHEN 'justified' THEN 'justificada' WHEN 'exempt_art45' THEN 'isenta (art. 45)' "
               "WHEN 'withdrawn' THEN 'retirada' ELSE status END")
LIVE_QUERIES = {
    "map": "SELECT vehicle_id AS \"veículo\", operator_id AS operadora, coalesce(route_id, '—') AS linha, "
           "lat AS latitude, lon AS longitude, round((schedule_deviation_s / 60.0)::numeric, 1) AS \"atraso (min)\", "
           f"{HEADWAY_CASE} AS \"espaçamento\", "
           "CASE WHEN off_route_m IS NOT NULL THEN 'fora do itinerário' "
           "WHEN layover_since IS NOT NULL THEN 'no terminal, entre viagens' WHEN in_service THEN 'em viagem' "
           "ELSE 'fora de serviço' END AS \"situação\" "
           f"FROM live_vehicle_status WHERE ts > {NEWEST} - interval '10 minutes' AND {BY_OPERATOR} AND {BY_LINE}",
    "off_route": "SELECT vehicle_id AS \"veículo\", operator_id AS operadora, route_id AS linha, "
                 "direction_id AS sentido, round(off_route_m::numeric) AS \"distância do itinerário (m)\", "
                 "off_route_since AS \"fora desde\" FROM live_vehicle_status "
                 f"WHERE off_route_m IS NOT NULL AND ts > {NEWEST} - interval '10 minutes' AND {BY_OPERATOR} "
                 f"AND {BY_LINE} ORDER BY off_route_since",
    "silent": "SELECT vehicle_id AS \"veículo\", operator_id AS operadora, ts AS \"última posição\", "
              "catraca_silent_since AS \"catraca muda desde\" FROM live_vehicle_status "
              f"WHERE (ts < {NEWEST} - interval '10 minutes' OR catraca_silent_since IS NOT NULL) "
              f"AND ts > {NEWEST} - interval '1 day' AND {BY_OPERATOR} ORDER BY ts",
    "bunched": "SELECT coalesce(route_id, '—') AS linha, direction_id AS sentido, vehicle_id AS \"veículo\", "
               f"{HEADWAY_CASE} AS \"espaçamento\", vehicle_ahead AS \"ônibus à frente\", "
               "round((headway_s / 60.0)::numeric, 1) AS \"intervalo (min)\", "
               "round((scheduled_headway_s / 60.0)::numeric, 1) AS \"programado (min)\" FROM live_vehicle_status "
               f"WHERE headway_state IN ('bunched', 'gapped') AND ts > {NEWEST} - interval '10 minutes' "
               f"AND {BY_OPERATOR} AND {BY_LINE} ORDER BY route_id, direction_id, departed_at",
    # detected_at is the event time of the watermark at the record's first emission: how
    # long after the act the engine could say it (DESIGN.md, Timing)
    "last_hour": f"SELECT code AS \"código\", {STATUS_CASE} AS \"situação\", operator_id AS operadora, "
                 "coalesce(route_id, '—') AS linha, coalesce(vehicle_id, '—') AS \"veículo\", "
                 "occurred_at AS \"ocorrida em\", detected_at AS \"emitida em\", "
                 "round((extract(epoch FROM detected_at - occurred_at) / 60)::numeric, 1) AS \"minutos após o fato\" "
                 f"FROM live_infractions WHERE detected_at > {NEWEST} - interval '1 hour' AND {BY_OPERATOR} "
                 f"AND {BY_LINE} ORDER BY detected_at DESC, code",
    "trips_closed": "SELECT service_date AS dia, route_id AS linha, direction_id AS sentido, count(*) AS realizadas, "
                    "count(trip_id) AS \"casadas com a programação\", "
                    "round(avg(departure_deviation_s / 60.0)::numeric, 1) AS \"desvio médio na partida (min)\" "
                    "FROM live_trips WHERE service_date = (SELECT max(service_date) FROM live_trips) "
                    f"AND {BY_OPERATOR} AND {BY_LINE} "
                    "GROUP BY service_date, route_id, direction_id ORDER BY route_id, direction_id",
}


def _with_line_variables(board: dashboard.Dashboard) -> dashboard.Dashboard:
    """Operadora and Linha: multi-value, "all" by default, read from the workers' series
    (every line of the feed is bound there from the start)."""
    def variable(name: str, label: str, query: str) -> dashboard.QueryVariable:
        return (dashboard.QueryVariable(name).label(label).datasource(PROMETHEUS).query(query)
                .multi(True).include_all(True).all_value(".*").refresh(VariableRefresh.ON_TIME_RANGE_CHANGED)
                .sort(VariableSort.ALPHABETICAL_ASC)
                .current(VariableOption(selected=True, text=["Todas"], value=["$__all"])))

    return (board.with_variable(variable("operator", "Operadora", "label_values(fiscaliza_trips_total, operator)"))
            .with_variable(variable("route", "Linha",
                                    'label_values(fiscaliza_trips_total{operator=~"$operator"}, route)')))


def _sql_table(title: str, query: str, description: str, span: int = 12) -> table.Panel:
    return (table.Panel().title(title).datasource(DOCKETS).with_target(Sql(LIVE_QUERIES[query]))
            .description(description).height(8).span(span))


def _bounds(headway: Headway) -> str:
    return (f"até {headway.bunched_max_ratio:.0%} do programado (agrupados) ou a partir de "
            f"{headway.gapped_min_ratio:.0%} (buraco na linha)").replace("%", " %")


# Per line, the tightest and the widest headway of its reporting buses on a trip, over every
# worker: a controller acts on the worst pair (Swiftly classifies each bus against the
# scheduled headway, bunched <= 75 %, gapped >= 125 %), and one line-level figure such as the
# latest or the median reading hides a bunched pair behind the others. Both are facts of the
# buses' latest readings, whatever order the workers' partitions brought them in.
HEADWAY_EXTREMES = (
    'label_replace(min by (route, direction) (fiscaliza_headway_ratio{bound="tightest", route=~"$route"}), '
    '"medida", "menor intervalo", "", "") '
    'or label_replace(max by (route, direction) (fiscaliza_headway_ratio{bound="widest", route=~"$route"}), '
    '"medida", "maior intervalo", "", "")')


def _headway_panel(headway: Headway) -> timeseries.Panel:
    """Per line, the tightest and the widest observed over scheduled headway of its buses now,
    with the policy's bunched and gapped bounds drawn."""
    steps = [Threshold(None, "orange"), Threshold(headway.bunched_max_ratio, "green"),
             Threshold(headway.gapped_min_ratio, "red")]
    return (_panel("Espaçamento observado / programado", HEADWAY_EXTREMES,
                   "linha {{route}} sentido {{direction}}: {{medida}}", "percentunit",
                   "Por linha e sentido, o menor e o maior intervalo entre a partida de um ônibus em viagem e a do "
                   "ônibus da frente, sobre o programado ali (o intervalo da frequência nas linhas por frequência, "
                   "o do quadro de horários entre partidas seguidas nas outras), entre os ônibus que transmitiram "
                   "nos últimos 10 min: o menor diz se algum par está agrupado, o maior se abriu um buraco. "
                   f"{_bounds(headway)[0].upper()}{_bounds(headway)[1:]}.")
            .thresholds(dashboard.ThresholdsConfig().mode(ThresholdsMode.ABSOLUTE).steps(steps))
            .thresholds_style(common.GraphThresholdsStyleConfig().mode(GraphThresholdsStyleMode.LINE)))


def live() -> dashboard.Dashboard:
    """The operations room, now: where the buses are, which lines are uncovered, who
    left the itinerary, who stopped transmitting, which lines bunch or gap."""
    headway = load_policy().headway  # the shipped policy's bounds, as the workers run them by default
    return _with_line_variables(
        dashboard.Dashboard("Fiscaliza — operação ao vivo")
        .uid("fiscaliza-live")
        .tags(["fiscaliza"])
        .refresh("30s")
        .time("now/d", "now")
        .timezone(CITY_TIME)
        .with_panel(geomap.Panel().title("Ônibus agora").datasource(DOCKETS).with_target(Sql(LIVE_QUERIES["map"]))
                    .view(geomap.MapViewConfig().id("coords").lat(-19.76).lon(-40.39).zoom(13))
                    .layers([common.MapLayerOptions().type("markers").name("Ônibus")
                             .location(common.FrameGeometrySource().mode(FrameGeometrySourceMode.COORDS)
                                       .latitude("latitude").longitude("longitude"))])
                    .description("Última posição de cada ônibus que transmitiu nos 10 min antes da posição mais "
                                 "nova recebida, com a linha, o atraso na partida e a situação: em viagem, fora do "
                                 "itinerário, no terminal entre viagens (chegou e aguarda a próxima) ou fora de "
                                 "serviço.")
                    .height(12).span(12))
        .with_panel(_panel("Linhas sem ônibus com viagem programada",
                           f"(max by (route, direction) (fiscaliza_trips_scheduled_now{LINE_MATCH}) > 0) "
                           "unless on (route, direction) "
                           f"(sum by (route, direction) (fiscaliza_vehicles_in_service{LINE_MATCH}) > 0)",
                           "linha {{route}} sentido {{direction}}", "short",
                           "Linhas e sentidos em que o quadro de horários tem viagens em curso e nenhum ônibus "
                           "está em viagem (o valor é o número de viagens programadas agora)."))
        .with_panel(_headway_panel(headway))
        .with_panel(_sql_table("Ônibus agrupados ou com buraco agora", "bunched",
                               f"Ônibus em viagem cujo intervalo para o da frente está {_bounds(headway)}.", 8))
        .with_panel(_sql_table("Fora do itinerário agora", "off_route",
                               "Ônibus além da distância do D-11 do traçado da linha, e desde quando.", 8))
        .with_panel(_sql_table("Infrações da última hora", "last_hour",
                               "Infrações emitidas na hora antes da posição mais nova recebida, e quantos minutos "
                               "depois do fato cada uma saiu (o motor espera a telemetria atrasada: até 10 min "
                               "depois do fim da prova; a D-22, 30 min depois da partida programada).", 12))
        .with_panel(_sql_table("Sem transmitir", "silent",
                               "Tacógrafo sem posição 10 min antes da posição mais nova recebida de qualquer ônibus, "
                               "ou catraca além do limite do D-19.", 8))
        # per service day in event time, up to the watermark: each worker counts its own
        # vehicles' trips seen arriving; every worker gives the same due count (before:
        # increase() of trips detected by the wall clock, 846 % in a backfill; then trips
        # due at the newest event, 10 min ahead of the trips seen: 8 of 9 with every trip run)
        .with_panel(_panel("Viagens realizadas / programadas até agora (hoje)",
                           f"sum by (route, direction) (fiscaliza_trips_realized_so_far{LINE_MATCH}) "
                           f"/ max by (route, direction) (fiscaliza_trips_scheduled_so_far{LINE_MATCH} > 0)",
                           "linha {{route}} sentido {{direction}}", "percentunit",
                           "Viagens do dia de serviço reconhecidas ao chegar ao terminal, sobre as viagens do dia "
                           "programadas para ter chegado até então (linhas por frequência: as partidas esperadas), "
                           "contadas pelo horário dos eventos, não pelo relógio, até a marca d'água (10 min atrás "
                           "da telemetria mais nova): uma viagem em curso ainda não conta de nenhum lado."))
        .with_panel(_sql_table("Viagens do último dia fechado", "trips_closed",
                               "O casamento final de cada viagem com a programação, feito no fechamento do dia: "
                               "quantas casaram e o desvio médio na partida.", 8))
    )


# The feed's timezone, as the ops sink names it (ops.sink.record_feed): a day on a panel is
# a day of the feed's clock, as the engine dates everything, not of the session's UTC
# (date_trunc on a timestamptz alone put 1 Dec's 22:07 on 2 Dec).
FEED_TIMEZONE = "(SELECT timezone FROM live_feed)"

COMPLIANCE_QUERIES = {
    "by_code": f"SELECT date_trunc('day', occurred_at, {FEED_TIMEZONE}) AS time, code AS metric, "
               "count(*) AS infrações FROM live_infractions WHERE $__timeFilter(occurred_at) AND status IN ('provisional', 'confirmed') "
               f"AND {BY_OPERATOR} AND {BY_LINE} "
               "GROUP BY 1, code ORDER BY 1",
    "by_operator": f"SELECT operator_id AS operadora, coalesce(route_id, '—') AS linha, code AS \"código\", "
                   f"{STATUS_CASE} AS \"situação\", count(*) AS registros FROM live_infractions "
                   f"WHERE $__timeFilter(occurred_at) AND {BY_OPERATOR} AND {BY_LINE} "
                   "GROUP BY operator_id, route_id, code, status "
                   "ORDER BY operator_id, route_id, code",
    "d13": "SELECT service_date AS dia, route_id AS linha, "
           "(record->'evidence'->>'pct_off_schedule')::float AS \"viagens fora do horário (%)\", "
           "200 * (1 + floor((record->'evidence'->>'pct_off_schedule')::float / 10)) AS \"multa (UFIR)\" "
           "FROM live_infractions WHERE code = 'D-13' AND $__timeFilter(occurred_at) "
           f"AND {BY_OPERATOR} AND {BY_LINE} ORDER BY service_date, route_id",
    "art45": "SELECT operator_id AS operadora, month AS \"mês\", efficiency_pct AS \"eficiência (%)\", "
             "min_efficiency_pct AS \"mínimo (%)\", days_closed AS \"dias fechados\", "
             "days_without_telemetry AS \"dias sem telemetria\", as_of AS \"até\", "
             "CASE WHEN month_closed THEN 'fechado' ELSE 'em curso' END AS \"situação\" "
             f"FROM live_month_efficiency WHERE {BY_OPERATOR} ORDER BY month DESC, operator_id",
    # live_vehicle_status names the vehicle's operator; a vehicle never seen there is "—"
    "conflicts": "SELECT c.vehicle_id AS \"veículo\", coalesce(v.operator_id, '—') AS operadora, "
                 "count(*) AS \"mensagens em duas versões\", min(c.ts) AS \"primeira\", max(c.ts) AS \"última\" "
                 "FROM live_conflicting_duplicates c LEFT JOIN live_vehicle_status v USING (vehicle_id) "
                 "WHERE $__timeFilter(c.ts) AND coalesce(v.operator_id, '') ~ '^(${operator:regex})$' "
                 "GROUP BY c.vehicle_id, v.operator_id ORDER BY count(*) DESC, c.vehicle_id",
    "d22": f"SELECT operator_id AS operadora, {STATUS_CASE} AS \"situação\", count(*) AS \"viagens suprimidas\" "
           f"FROM live_infractions WHERE code = 'D-22' AND $__timeFilter(occurred_at) AND {BY_OPERATOR} "
           "GROUP BY operator_id, status ORDER BY operator_id, status",
}


def compliance() -> dashboard.Dashboard:
    """Compliance with the Código Disciplinar over days and months: what is accused, where,
    and how the art. 45 month stands."""
    def sql(title: str, query: str, description: str, span: int = 12) -> table.Panel:
        return (table.Panel().title(title).datasource(DOCKETS).with_target(Sql(COMPLIANCE_QUERIES[query]))
                .description(description).height(8).span(span))

    return _with_line_variables(
        dashboard.Dashboard("Fiscaliza — conformidade")
        .uid("fiscaliza-compliance")
        .tags(["fiscaliza"])
        .refresh("5m")
        .time("now-30d", "now")
        .timezone(CITY_TIME)
        .with_panel(timeseries.Panel().title("Infrações por dia e código").datasource(DOCKETS)
                    .with_target(Sql(COMPLIANCE_QUERIES["by_code"], "time_series"))
                    .description("Infrações provisórias e confirmadas, pelo dia em que ocorreram.")
                    .unit("short").height(8).span(12))
        .with_panel(sql("Por operadora, linha, código e situação", "by_operator",
                        "Todos os registros, inclusive justificados, isentos pelo art. 45 e retirados."))
        .with_panel(sql("D-13: viagens fora do horário por linha e dia", "d13",
                        "Percentual de viagens fora do horário; a multa cresce 100 % a cada 10 % (Anexo I, D-13).", 8))
        # an operator with no day of the month closed yet has no figure (the gauge starts at 0,
        # which a controller reads as an operator failing the art. 45)
        .with_panel(_panel("Art. 45: eficiência do mês até agora",
                           f"max by (operator) (fiscaliza_month_efficiency_ratio{OPERATOR_MATCH}) and on (operator) "
                           f"(max by (operator) (fiscaliza_month_days_closed{OPERATOR_MATCH}) > 0)",
                           "{{operator}}", "percentunit",
                           "Quilômetros realizados sobre programados nos dias já fechados do mês; abaixo de 98 % "
                           "(art. 45) as supressões de viagem do mês não serão isentas. Sem valor enquanto nenhum "
                           "dia do mês fechou."))
        .with_panel(sql("Art. 45: eficiência do mês por operadora", "art45",
                        "Quilômetros realizados sobre programados no mês; a partir de 98 % os D-22 do mês são "
                        "isentos. Enquanto o mês não fecha, a isenção é provisória.", 8))
        .with_panel(sql("D-22: viagens suprimidas, provisórias e isentas", "d22",
                        "Provisórias até o fim do mês; então confirmadas ou isentas pelo art. 45.", 8))
        .with_panel(sql("Mensagens em duas versões, por veículo", "conflicts",
                        "A mesma mensagem (veículo, hora e sequência) recebida com outro conteúdo: sinal de "
                        "adulteração. As infrações que ela cita são julgadas nas duas versões.", 8))
    )


DASHBOARDS = {"fiscaliza-workers.json": workers, "fiscaliza-autos.json": autos, "fiscaliza-live.json": live,
              "fiscaliza-compliance.json": compliance}


def build() -> dict[str, str]:
    """File name -> JSON text of every dashboard."""
    return {name: json.dumps(make().build(), cls=JSONEncoder, indent=2, sort_keys=True) + "\n"
            for name, make in DASHBOARDS.items()}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in build().items():
        (OUT / name).write_text(text, encoding="utf-8")
        print(f"wrote {OUT / name}")


if __name__ == "__main__":
    main()
