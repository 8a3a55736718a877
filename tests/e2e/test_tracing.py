"""Services started as real processes export spans over OTLP, continuing the caller's trace."""

from __future__ import annotations

import secrets
import subprocess
import time

import grpc
import pytest
from quarry.v1 import (
    index_pb2,
    index_pb2_grpc,
    ranker_pb2,
    ranker_pb2_grpc,
    reader_pb2,
    reader_pb2_grpc,
)

from tests.conftest import free_port, service_env, start_service, wait_serving
from tests.e2e.otlp import otlp_receiver

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
# Generous: a first call warms a service up, and a busy 2-core box is slow at it.
RPC_TIMEOUT_S = 60


def test_grpc_services_join_the_callers_trace(spawn: list[subprocess.Popen[bytes]]) -> None:
    trace_id = secrets.token_hex(16)
    traceparent: tuple[str, str | bytes] = (
        "traceparent",
        f"00-{trace_id}-{secrets.token_hex(8)}-01",
    )
    with otlp_receiver() as receiver:
        ports = {}
        for name in ("reader", "ranker", "index"):
            ports[name] = free_port()
            env = service_env(
                **{f"{name.upper()}_PORT": str(ports[name])},
                OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
                OTEL_EXPORTER_OTLP_INSECURE="true",
                OTEL_BSP_SCHEDULE_DELAY="100",
            )
            spawn.append(start_service(name, env))
        # Started together, then waited for: one after the other took ~95 s on a busy box.
        for port, proc in zip(ports.values(), spawn, strict=True):
            wait_serving(port, proc)

        with grpc.insecure_channel(f"127.0.0.1:{ports['ranker']}") as ch:
            ranker_pb2_grpc.RankerStub(ch).RankResults(
                ranker_pb2.RankResultsRequest(
                    query="lighthouse",
                    results=[ranker_pb2.SearchResult(url="http://a/", title="A", engine_rank=1)],
                ),
                metadata=(traceparent,),
                timeout=RPC_TIMEOUT_S,
            )
        with grpc.insecure_channel(f"127.0.0.1:{ports['index']}") as ch:
            index_pb2_grpc.IndexStub(ch).SearchPassages(
                index_pb2.SearchPassagesRequest(queries=["lighthouse"]),
                metadata=(traceparent,),
                timeout=RPC_TIMEOUT_S,
            )
        with grpc.insecure_channel(f"127.0.0.1:{ports['reader']}") as ch:
            reader_pb2_grpc.ReaderStub(ch).Extract(
                reader_pb2.ExtractRequest(html=b"<html><body><p>hi</p></body></html>"),
                metadata=(traceparent,),
                timeout=RPC_TIMEOUT_S,
            )

        deadline = time.monotonic() + RPC_TIMEOUT_S  # spans are exported every 100 ms
        services: set[str] = set()
        while time.monotonic() < deadline and services != {"reader", "ranker", "index"}:
            services = {s.service for s in receiver.snapshot() if s.trace_id == trace_id}
            time.sleep(0.1)
        assert services == {"reader", "ranker", "index"}, receiver.snapshot()
