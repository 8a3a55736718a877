"""Start a real gRPC service (``python -m ranker``, ``python -m index``) for a benchmark, in
its own process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]


def start_ranker(deadline_s: float = 60, **env: str) -> tuple[subprocess.Popen[bytes], int]:
    """Start the ranker on a free loopback port with ``env`` added; wait until SERVING."""
    return start_service("ranker", deadline_s, **env)


def start_service(
    name: str, deadline_s: float = 60, **env: str
) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``python -m name`` on a free loopback port (``{NAME}_PORT``) with ``env`` added;
    wait until SERVING."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    prefix = name.upper()
    child_env.update({f"{prefix}_PORT": str(port), f"{prefix}_LOG_LEVEL": "WARNING", **env})
    proc = subprocess.Popen([sys.executable, "-m", name], env=child_env, cwd=ROOT)
    deadline = time.monotonic() + deadline_s
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        while time.monotonic() < deadline:
            try:
                reply = health_pb2_grpc.HealthStub(ch).Check(
                    health_pb2.HealthCheckRequest(), timeout=1
                )
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return proc, port
            except grpc.RpcError:
                time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{name} did not become SERVING")
