"""Grafana dashboards of the Órgão Gerencial's operations room, as code.

Generated with grafana-foundation-sdk into dashboards/provisioning/dashboards/json,
which Grafana provisions (docker-compose.yml). Regenerate with
`python -m dashboards.build`.
"""
