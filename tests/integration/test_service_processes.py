"""Each service starts as `python -m <name>`, answers health, and stops cleanly on SIGTERM.

Nothing here is timed: on a loaded 2-core box the reader took 43 s to start and 5.6 s to stop,
so a fixed start deadline or a wall-clock stop limit failed on a busy machine only. A service
bounds its own stop (its shutdown grace); the test checks that it exits by itself with 0.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import httpx
import pytest
from grpc_health.v1 import health_pb2

from tests.conftest import (
    START_DEADLINE_S,
    free_port,
    grpc_status,
    service_env,
    start_service,
    wait_serving,
)

# Starting and stopping may each take a while on a busy machine; only a hang should fail here.
pytestmark = pytest.mark.timeout(2 * START_DEADLINE_S + 60)
STOP_WAIT_S = 60.0


def _stop(proc: subprocess.Popen[bytes]) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=STOP_WAIT_S)


@pytest.mark.parametrize("name", ["reader", "ranker", "index"])
def test_grpc_service_serves_health_and_stops(
    name: str, spawn: list[subprocess.Popen[bytes]]
) -> None:
    port = free_port()
    proc = start_service(name, service_env(**{f"{name.upper()}_PORT": str(port)}))
    spawn.append(proc)
    wait_serving(port, proc)
    assert grpc_status(port) == health_pb2.HealthCheckResponse.SERVING
    assert _stop(proc) == 0
    out = proc.stdout.read().decode() if proc.stdout else ""
    assert '"msg": "serving"' in out


def test_orchestrator_healthz_and_stop(spawn: list[subprocess.Popen[bytes]]) -> None:
    port = free_port()
    proc = start_service("orchestrator", service_env(ORCHESTRATOR_PORT=str(port)))
    spawn.append(proc)
    deadline = time.monotonic() + START_DEADLINE_S
    while True:
        assert proc.poll() is None, "orchestrator exited early"
        try:
            reply = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            break
        except httpx.TransportError:
            assert time.monotonic() < deadline, "orchestrator did not answer /healthz"
            time.sleep(0.1)
    assert reply.status_code == 200
    assert _stop(proc) == 0


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
        timeout=START_DEADLINE_S,  # importing a service is most of its start
        check=False,
    )
    assert proc.returncode == 2
    err = proc.stderr.decode().strip()
    assert len(err.splitlines()) == 1
    assert variable in err
    assert "Traceback" not in err
