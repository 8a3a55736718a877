"""Shared fixtures for repo-level tests: free ports and real service processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """Return a TCP port that was free a moment ago on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def grpc_status(port: int, timeout: float = 1.0) -> int | None:
    """Return the overall gRPC health status at ``port``, or None if it does not answer."""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        try:
            reply = health_pb2_grpc.HealthStub(ch).Check(
                health_pb2.HealthCheckRequest(), timeout=timeout
            )
        except grpc.RpcError:
            return None
        return int(reply.status)


# How long a service may take to start: on a 2-core box loaded by other jobs the reader (which
# spawns extraction workers that import Trafilatura) took 43 s. Only a hang should reach this.
START_DEADLINE_S = 180.0


def wait_serving(
    port: int, proc: subprocess.Popen[bytes], deadline_s: float = START_DEADLINE_S
) -> None:
    """Block until the gRPC server at ``port`` reports SERVING (or fail the test)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            pytest.fail(f"process exited early with {proc.returncode}")
        if grpc_status(port, 0.5) == health_pb2.HealthCheckResponse.SERVING:
            return
        time.sleep(0.05)
    pytest.fail(f"port {port} not SERVING within {deadline_s} s")


def service_env(**extra: str) -> dict[str, str]:
    """Environment for a child service: no exporter, quiet, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update({"PYTHONUNBUFFERED": "1", **extra})
    return env


@pytest.fixture
def spawn() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Collect processes a test starts and make sure none outlives it."""
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait(5)


def start_service(name: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start ``python -m name`` with ``env``; output goes to a pipe."""
    return subprocess.Popen(
        [sys.executable, "-m", name],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
