"""A throwaway PostgreSQL 15 + PostGIS cluster for tests (Debian's postgresql-15 and
postgresql-15-postgis-3): started in a temporary directory, listening only on 127.0.0.1
(and a unix socket there), deleted afterwards. The fixtures are in tests/conftest.py."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

PG_BINDIR = Path(os.environ.get("FISCALIZA_PG_BINDIR", "/usr/lib/postgresql/15/bin"))
PG_SHAREDIR = Path(os.environ.get("FISCALIZA_PG_SHAREDIR", "/usr/share/postgresql/15"))
PG_PACKAGES = "postgresql-15 postgresql-15-postgis-3"
DATABASE = "fiscaliza_test"


def _require_postgres() -> None:
    """Fail (never skip: CI installs them) naming the Debian packages to install."""
    missing = [str(PG_BINDIR / name) for name in ("initdb", "pg_ctl", "postgres") if not (PG_BINDIR / name).is_file()]
    if missing:
        pytest.fail(f"PostgreSQL 15 server binaries not found ({', '.join(missing)}): "
                    f"install the Debian packages with `apt-get install {PG_PACKAGES}`", pytrace=False)
    if not (PG_SHAREDIR / "extension" / "postgis.control").is_file():
        pytest.fail(f"the PostGIS extension is not installed for PostgreSQL 15 "
                    f"({PG_SHAREDIR / 'extension' / 'postgis.control'} missing): "
                    "install the Debian package with `apt-get install postgresql-15-postgis-3`", pytrace=False)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _Cluster:
    """initdb + pg_ctl in `root`, as the `postgres` user when we are root (PostgreSQL
    refuses to run as root), as ourselves otherwise."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.log = root / "postgres.log"
        self.port = _free_port()
        self.as_root = os.geteuid() == 0

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = [str(PG_BINDIR / args[0]), *args[1:]]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        # cwd: the postgres user may not be able to enter ours
        done = subprocess.run(command, cwd=self.root, capture_output=True, text=True, timeout=120, check=False,
                              env={**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"})
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
                               f"{self.log_tail()}")
        return done

    def log_tail(self) -> str:
        try:
            return "\n--- postgres.log ---\n" + "\n".join(self.log.read_text(errors="replace").splitlines()[-30:])
        except OSError:
            return ""

    def start(self) -> None:
        if self.as_root:
            shutil.chown(self.root, "postgres", "postgres")
        self.run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--encoding=UTF8",
                 "--locale=C.UTF-8", "--no-sync")
        for attempt in range(3):
            options = " ".join([
                "-c listen_addresses=127.0.0.1", f"-c port={self.port}", f"-c unix_socket_directories='{self.root}'",
                # a throwaway cluster: durability is not wanted, speed is
                "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off",
                "-c max_connections=40", "-c shared_buffers=32MB",
            ])
            try:
                self.run("pg_ctl", "start", "-D", str(self.data), "-w", "-t", "60", "-l", str(self.log), "-o", options)
                return
            except RuntimeError as exc:
                # someone took the free port in the meantime: another one
                if attempt == 2 or "Address already in use" not in str(exc):
                    raise
                self.port = _free_port()

    def stop(self) -> None:
        if not (self.data / "postmaster.pid").exists():
            return
        stopped = self.run("pg_ctl", "stop", "-D", str(self.data), "-m", "fast", "-w", "-t", "30", check=False)
        if stopped.returncode != 0:
            self.run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30", check=False)

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[_Cluster]:
    _require_postgres()
    root = Path(tempfile.mkdtemp(prefix="fiscaliza-pg-"))
    cluster = _Cluster(root)
    try:
        try:
            cluster.start()
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            pytest.fail(f"could not start the throwaway PostgreSQL cluster: {exc}", pytrace=False)
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def _admin(cluster_url: str) -> sa.Engine:
    return sa.create_engine(cluster_url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)


def create_database(cluster: _Cluster, name: str, template: str = "template1") -> str:
    admin = _admin(cluster.url("postgres"))
    with admin.connect() as connection:
        connection.execute(sa.text(f'CREATE DATABASE "{name}" TEMPLATE "{template}"'))
    admin.dispose()
    return cluster.url(name)
