"""Real PostgreSQL 15 and Redis servers for tests and benches, started and stopped here.

Debian's packages (scripts/system-packages.sh installs `postgresql` and `redis-server`): initdb
and pg_ctl into a fresh temporary folder, listening on a free 127.0.0.1 port (and a socket in that
folder, never the system's); redis-server on a free port with persistence off. initdb refuses to
run as root, so as root (CI) PostgreSQL runs as the `postgres` user the package created, through
`runuser`; as anyone else it runs as that user.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import free_port

PG_BIN = Path("/usr/lib/postgresql/15/bin")
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
START_S = 60.0


class Unavailable(Exception):
    """The server's binaries are not installed."""


@dataclass
class Postgres:
    """A running server: ``url`` reaches its ``postgres`` database as the superuser ``quarry``."""

    port: int
    folder: Path

    def url(self, database: str = "postgres") -> str:
        """A libpq URL for ``database``."""
        return f"postgresql://quarry@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """Create an empty database; its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")  # a generated name, no caller text
        return self.url(name)


def _as_postgres(cmd: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *cmd]
    return cmd


def _run_pg(cmd: list[str]) -> None:
    exe = PG_BIN / cmd[0] if (PG_BIN / cmd[0]).exists() else Path(shutil.which(cmd[0]) or cmd[0])
    subprocess.run(
        _as_postgres([str(exe), *cmd[1:]]), check=True, capture_output=True, timeout=START_S
    )


@contextlib.contextmanager
def postgres_server() -> Iterator[Postgres]:
    """initdb + pg_ctl start in a temporary folder; stopped (immediate) and removed after."""
    if not (PG_BIN / "initdb").exists():
        raise Unavailable(f"PostgreSQL 15 is not installed ({PG_BIN}/initdb)")
    folder = Path(tempfile.mkdtemp(prefix="quarry-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    data, port = folder / "data", free_port()
    try:
        # fsync off: a test server's data need not survive a power cut, and it saves seconds.
        _run_pg(
            ["initdb", "-D", str(data), "-U", "quarry", "--auth=trust", "-E", "UTF8", "--no-sync"]
        )
        opts = (
            f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c max_connections=200"
        )
        _run_pg(
            [
                "pg_ctl",
                "-D",
                str(data),
                "-o",
                opts,
                "-l",
                str(folder / "log"),
                "-w",
                "-t",
                str(int(START_S)),
                "start",
            ]
        )
        try:
            yield Postgres(port, folder)
        finally:
            _run_pg(["pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Redis:
    """A running redis-server."""

    port: int
    proc: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        """Its redis:// URL (database 0)."""
        return f"redis://127.0.0.1:{self.port}/0"


@contextlib.contextmanager
def redis_server() -> Iterator[Redis]:
    """redis-server on a free port, no persistence; killed after."""
    if not Path(REDIS_SERVER).exists():
        raise Unavailable("redis-server is not installed")
    port = free_port()
    proc = subprocess.Popen(
        [
            REDIS_SERVER,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--loglevel",
            "warning",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + START_S
        while not _answers(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start (exit {proc.poll()})")
            time.sleep(0.05)
        yield Redis(port, proc)
    finally:
        proc.kill()
        proc.wait(10)


def _answers(port: int) -> bool:
    import socket

    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """One PostgreSQL server for the test session (skips where it is not installed)."""
    try:
        with postgres_server() as server:
            yield server
    except Unavailable as err:
        pytest.skip(str(err))


@pytest.fixture
def pg_url(postgres: Postgres) -> str:
    """A fresh, empty database on the session's server."""
    return postgres.new_database()


@pytest.fixture(scope="session")
def redis() -> Iterator[Redis]:
    """One redis-server for the test session (skips where it is not installed)."""
    try:
        with redis_server() as server:
            yield server
    except Unavailable as err:
        pytest.skip(str(err))
