"""Build the dashboards' JSON (python -m dashboards.build)."""

from __future__ import annotations

import json
from pathlib import Path

from grafana_foundation_sdk.builders import barchart, common, dashboard, geomap, prometheus, table, timeseries
from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.cog import variants as cogvariants
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.common import FrameGeometrySourceMode
from grafana_foundation_sdk.models.dashboard import DataSourceRef

from dockets.workflow import STAGE_LABELS

OUT = Path(__file__).parent / "provisioning" / "dashboards" / "json"
PROMETHEUS = DataSourceRef(type_val="prometheus", uid="prometheus")
# the docket store (PostgreSQL + PostGIS), provisioned as uid "dockets"
DOCKETS = DataSourceRef(type_val="grafana-postgresql-datasource", uid="dockets")


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
        .timezone("America/Sao_Paulo")
        .with_panel(_panel("Mensagens recebidas por tópico",
                           "sum by (topic) (rate(fiscaliza_messages_received_per_topic_total[1m]))",
                           "{{topic}}", "reqps", "Telemetria chegando aos workers (tacógrafo, catraca, ocorrências)."))
        .with_panel(_panel("Mensagens enviadas por tópico", "sum by (topic) (rate(fiscaliza_topic_messages_sent_total[1m]))",
                           "{{topic}}", "reqps", "Infrações, viagens, rejeitadas e mensagens entre os estágios."))
        .with_panel(_panel("Atraso de consumo (mensagens)",
                           "sum by (topic) (fiscaliza_topic_partition_end_offset - fiscaliza_topic_partition_offset_commited)",
                           "{{topic}}", "short", "Quanto os workers estão atrás do que já chegou ao Kafka "
                           "(medido pelos próprios workers: some se todos pararem)."))
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
        .with_panel(_panel("Infrações emitidas por código e situação",
                           "sum by (code, status) (increase(fiscaliza_infractions_total[1h])) > 0",
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
                 "FROM dashboard_dockets WHERE next_deadline IS NOT NULL AND next_deadline <= current_date + 7 "
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
        .timezone("America/Sao_Paulo")
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


DASHBOARDS = {"fiscaliza-workers.json": workers, "fiscaliza-autos.json": autos}


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
