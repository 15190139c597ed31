"""Build the dashboards' JSON (python -m dashboards.build)."""

from __future__ import annotations

import json
from pathlib import Path

from grafana_foundation_sdk.builders import dashboard, prometheus, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import DataSourceRef

OUT = Path(__file__).parent / "provisioning" / "dashboards" / "json"
PROMETHEUS = DataSourceRef(type_val="prometheus", uid="prometheus")


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
        .with_panel(_panel("Mensagens recebidas por tópico", "sum by (topic) (rate(fiscaliza_messages_received_per_topic[1m]))",
                           "{{topic}}", "reqps", "Telemetria chegando aos workers (tacógrafo, catraca, ocorrências)."))
        .with_panel(_panel("Mensagens enviadas por tópico", "sum by (topic) (rate(fiscaliza_topic_messages_sent[1m]))",
                           "{{topic}}", "reqps", "Infrações, viagens, rejeitadas e mensagens entre os estágios."))
        .with_panel(_panel("Atraso de consumo (mensagens)",
                           "sum by (topic) (fiscaliza_topic_partition_end_offset - fiscaliza_topic_partition_offset_commited)",
                           "{{topic}}", "short", "Quanto os workers estão atrás do que já chegou ao Kafka."))
        .with_panel(_panel("Rebalanceamentos", "increase(fiscaliza_total_rebalances[1h])", "rebalanceamentos",
                           "short", "Entradas e saídas de workers do grupo (por hora)."))
    )


def build() -> dict[str, str]:
    """File name -> JSON text of every dashboard."""
    return {"fiscaliza-workers.json": json.dumps(workers().build(), cls=JSONEncoder, indent=2, sort_keys=True) + "\n"}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in build().items():
        (OUT / name).write_text(text, encoding="utf-8")
        print(f"wrote {OUT / name}")


if __name__ == "__main__":
    main()
