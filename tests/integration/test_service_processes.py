"""Each service starts as `python -m <name>`, answers health, stops on SIGTERM within 5 s."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import httpx
import pytest
from grpc_health.v1 import health_pb2

from tests.conftest import free_port, grpc_status, service_env, start_service, wait_serving

STOP_LIMIT_S = 5.0


def _stop_within_limit(proc: subprocess.Popen[bytes]) -> int:
    proc.send_signal(signal.SIGTERM)
    start = time.monotonic()
    code = proc.wait(timeout=STOP_LIMIT_S + 5)
    assert time.monotonic() - start < STOP_LIMIT_S
    return code


@pytest.mark.parametrize("name", ["reader", "ranker", "index"])
def test_grpc_service_serves_health_and_stops(
    name: str, spawn: list[subprocess.Popen[bytes]]
) -> None:
    port = free_port()
    proc = start_service(name, service_env(**{f"{name.upper()}_PORT": str(port)}))
    spawn.append(proc)
    wait_serving(port, proc)
    assert grpc_status(port) == health_pb2.HealthCheckResponse.SERVING
    assert _stop_within_limit(proc) == 0
    out = proc.stdout.read().decode() if proc.stdout else ""
    assert '"msg": "serving"' in out


def test_orchestrator_healthz_and_stop(spawn: list[subprocess.Popen[bytes]]) -> None:
    port = free_port()
    proc = start_service("orchestrator", service_env(ORCHESTRATOR_PORT=str(port)))
    spawn.append(proc)
    deadline = time.monotonic() + 30
    while True:
        assert proc.poll() is None, "orchestrator exited early"
        try:
            reply = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            break
        except httpx.TransportError:
            assert time.monotonic() < deadline, "orchestrator did not answer /healthz"
            time.sleep(0.1)
    assert reply.status_code == 200
    assert _stop_within_limit(proc) == 0


@pytest.mark.parametrize(
    ("name", "variable"),
    [
        ("reader", "READER_PORT"),
        ("ranker", "RANKER_PORT"),
        ("index", "INDEX_PORT"),
        ("orchestrator", "ORCHESTRATOR_PORT"),
    ],
)
def test_bad_port_exits_2_with_one_line(name: str, variable: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", name],
        env=service_env(**{variable: "not-a-number"}),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    err = proc.stderr.decode().strip()
    assert len(err.splitlines()) == 1
    assert variable in err
    assert "Traceback" not in err
