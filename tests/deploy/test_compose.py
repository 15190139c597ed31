"""docker-compose.yml is a correct production stack (checked structurally: no Docker
engine runs here). Every service pinned, healthy-checked, persisted, and every command
of ours a real entry point."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from kernel.settings import VARIABLES, Settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
OURS = {name for name, s in SERVICES.items() if "build" in s}
LONG_RUNNING = {name for name, s in SERVICES.items() if s.get("restart") != "no"}


def test_stack_has_the_services_a_city_needs():
    assert set(SERVICES) >= {"kafka", "topics", "worker", "postgres", "prometheus", "grafana",
                             "dockets-migrate", "dockets-sink", "web"}
    assert SERVICES["kafka"]["image"].startswith("apache/kafka:")
    assert SERVICES["kafka"]["environment"]["KAFKA_PROCESS_ROLES"] == "broker,controller"  # KRaft
    assert SERVICES["postgres"]["image"].startswith("postgis/postgis:")


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_every_image_is_pinned_to_a_version(name):
    image = SERVICES[name]["image"]
    repository, _, tag = image.rpartition(":")
    assert repository and re.match(r"^v?\d+(\.\d+)*(-[\w.]+)?$", tag), image  # never "latest"


@pytest.mark.parametrize("name", sorted(LONG_RUNNING))
def test_every_long_running_service_has_a_health_check(name):
    assert SERVICES[name]["healthcheck"]["test"]


def test_state_lives_in_named_volumes():
    named = set(COMPOSE["volumes"])
    for name in ("kafka", "worker", "postgres", "prometheus", "grafana"):
        mounts = [v.split(":")[0] for v in SERVICES[name]["volumes"]]
        assert any(m in named for m in mounts), name


def test_mounted_files_exist_in_the_repository():
    for service in SERVICES.values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), source


def test_dependencies_name_services_of_the_stack():
    for service in SERVICES.values():
        for dependency in service.get("depends_on", {}):
            assert dependency in SERVICES


@pytest.mark.parametrize("name", sorted(OURS))
def test_our_commands_resolve_to_real_entry_points(name):
    command = SERVICES[name]["command"]
    assert command[0] == "fiscaliza"
    # the same arguments with --help: exit 0 means the command exists
    result = subprocess.run([sys.executable, "-m", "fiscaliza.cli", *command[1:], "--help"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", sorted(OURS))
def test_our_environment_variables_are_read_and_valid(name):
    environment = SERVICES[name].get("environment", {})
    assert set(environment) <= {variable.name for variable in VARIABLES}
    # as compose interpolates .env: the proxy's address is an address (the setting checks it)
    interpolated = {k: re.sub(r"\$\{PROXY_ADDRESS:\?[^}]*\}", "192.0.2.10", str(v)) for k, v in environment.items()}
    settings = Settings.from_env(interpolated)  # raises on an invalid value
    assert settings.given == set(environment)


def test_worker_partitions_match_the_topics_it_creates():
    assert SERVICES["worker"]["environment"]["FISCALIZA_PARTITIONS"] == \
        SERVICES["topics"]["environment"]["FISCALIZA_PARTITIONS"]


def test_grafana_is_provisioned_with_prometheus_and_the_dockets_database():
    datasources = yaml.safe_load((ROOT / "dashboards/provisioning/datasources/datasources.yml").read_text())
    kinds = {d["type"] for d in datasources["datasources"]}
    assert kinds == {"prometheus", "grafana-postgresql-datasource"}
    prometheus = yaml.safe_load((ROOT / "deploy/prometheus/prometheus.yml").read_text())
    jobs = {job["job_name"]: job for job in prometheus["scrape_configs"]}
    assert set(jobs) == {"fiscaliza-workers", "fiscaliza-ops", "fiscaliza-dockets"}
    assert jobs["fiscaliza-workers"]["dns_sd_configs"][0]["port"] == \
        int(SERVICES["worker"]["environment"]["FISCALIZA_WEB_PORT"])
    # the ops sink, whose lag gauge stays up when the workers are down
    assert jobs["fiscaliza-ops"]["static_configs"][0]["targets"] == ["ops-sink:6067"]
    assert "6067" in SERVICES["ops-sink"]["command"]
    assert jobs["fiscaliza-dockets"]["static_configs"][0]["targets"] == ["dockets-sink:6068"]
    assert "6068" in SERVICES["dockets-sink"]["command"]


def test_dockerfile_copies_every_package_the_project_installs():
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    top = {p.split(".")[0] for p in packages}
    dockerfile = (ROOT / "Dockerfile").read_text()
    for package in top:
        assert re.search(rf"^COPY {package} \./{package}$", dockerfile, re.M), package


def test_the_project_installs_every_python_package_of_the_runtime():
    # a package left out of pyproject's list is missing from `pip install .` (the image)
    # while an editable checkout still finds it: fiscaliza.commands and web.routers were
    packages = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    top = {p.split(".")[0] for p in packages}
    found = {".".join(init.parent.relative_to(ROOT).parts) for package in top for init in (ROOT / package).rglob("__init__.py")}
    assert found <= packages, sorted(found - packages)


def test_each_docket_service_connects_with_its_least_privileged_role():
    # before: every service, and Grafana, as the superuser that owns the tables
    roles = {name: re.match(r"postgresql\+psycopg://(\w+):", SERVICES[name]["environment"]["FISCALIZA_DB"]).group(1)
             for name in ("dockets-migrate", "dockets-sink", "web")}
    assert roles == {"dockets-migrate": "fiscaliza_owner", "dockets-sink": "fiscaliza_app", "web": "fiscaliza_app"}
    for name in ("dockets-migrate", "dockets-sink", "web"):
        assert SERVICES[name]["environment"]["FISCALIZA_DB"].endswith("@postgres:5432/fiscaliza")
    for name in ("dockets-sink", "web"):
        assert SERVICES[name]["depends_on"]["dockets-migrate"]["condition"] == "service_completed_successfully"
    postgres = SERVICES["postgres"]
    assert postgres["environment"]["POSTGRES_USER"] == "postgres"
    assert "./deploy/postgres/roles.sh:/docker-entrypoint-initdb.d/10-roles.sh:ro" in postgres["volumes"]
    script = (ROOT / "deploy" / "postgres" / "roles.sh").read_text()
    assert all(f"CREATE ROLE {role} LOGIN" in script for role in roles.values())
    datasource = yaml.safe_load((ROOT / "dashboards" / "provisioning" / "datasources" / "datasources.yml").read_text())
    dockets = next(d for d in datasource["datasources"] if d["uid"] == "dockets")
    assert dockets["user"] == "fiscaliza_reader" and "READER" in dockets["secureJsonData"]["password"]


def test_the_web_app_and_sink_chain_the_audit_log_with_a_secret_key_and_anchor_it_in_kafka():
    for name in ("dockets-sink", "web"):
        environment = SERVICES[name]["environment"]
        assert environment["FISCALIZA_AUDIT_KEY"] == "/run/secrets/audit_key" and "audit_key" in SERVICES[name]["secrets"]
        assert environment["FISCALIZA_KAFKA_BOOTSTRAP"] == "kafka:9092"  # anchors: audit-anchors
    assert COMPOSE["secrets"]["audit_key"]["file"].startswith("./secrets/")


def test_the_web_health_check_calls_a_route_the_app_serves():
    check = " ".join(SERVICES["web"]["healthcheck"]["test"])
    assert "/saude" in check and "8000" in " ".join(SERVICES["web"]["command"])
    from web.routers import session

    assert "/saude" in {route.path for route in session.router.routes}  # and create_app includes that router
    assert "session.router" in (ROOT / "web" / "app.py").read_text()


def test_the_sink_and_web_app_sign_with_a_key_from_a_secret_file_not_the_image_or_the_database():
    for name in ("dockets-sink", "web"):  # bundles, and the PDFs issued at lavratura
        service = SERVICES[name]
        assert service["environment"]["FISCALIZA_SIGNING_KEY"] == "/run/secrets/signing_key"
        assert "signing_key" in service["secrets"]
    assert COMPOSE["secrets"]["signing_key"]["file"].startswith("./secrets/")


def test_published_ports_listen_on_the_loopback_only():
    # before: 8000 on every interface, around the proxy
    published = [(name, port) for name, service in SERVICES.items() for port in service.get("ports", [])]
    assert published and all(str(port).startswith("127.0.0.1:") for _, port in published), published


def test_the_web_app_trusts_forwarded_headers_from_the_proxy_only():
    # before: unset, so behind the proxy every client shared one login-throttle bucket
    assert SERVICES["web"]["environment"]["FISCALIZA_TRUSTED_PROXY"].startswith("${PROXY_ADDRESS:?")


def test_grafana_keeps_the_feeds_clock_that_the_dashboards_leave_to_it():
    """The dashboards carry no time zone of their own (Canarana runs on America/Cuiaba):
    Grafana's default one is the city's, set in .env, and the stack refuses to start without it."""
    import json

    for name in (ROOT / "dashboards/provisioning/dashboards/json").glob("*.json"):
        assert json.loads(name.read_text())["timezone"] == "", name.name
    setting = SERVICES["grafana"]["environment"]["GF_DATE_FORMATS_DEFAULT_TIMEZONE"]
    assert setting.startswith("${FISCALIZA_TIMEZONE:?"), setting
