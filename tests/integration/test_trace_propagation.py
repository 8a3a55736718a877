"""One HTTP request into the orchestrator that calls gRPC services yields one trace id."""

from __future__ import annotations

import httpx
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
from opentelemetry.instrumentation.grpc import GrpcAioInstrumentorClient, GrpcAioInstrumentorServer
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from orchestrator.app import create_app
from orchestrator.config import Settings as OrchestratorSettings
from quarry_common import telemetry
from ranker.config import Settings as RankerSettings
from ranker.server import build_server as build_ranker
from reader.config import Settings as ReaderSettings
from reader.server import build_server as build_reader


async def test_readyz_spans_share_one_trace() -> None:
    exporter = InMemorySpanExporter()
    tel = telemetry.setup(
        "orchestrator", instruments=("grpc_server", "grpc_client"), exporter=exporter
    )
    reader = build_reader(ReaderSettings(port=0))
    ranker = build_ranker(RankerSettings(port=0))
    try:
        reader_port = await reader.start()
        ranker_port = await ranker.start()
        app = create_app(
            OrchestratorSettings(
                reader_addr=f"127.0.0.1:{reader_port}", ranker_addr=f"127.0.0.1:{ranker_port}"
            )
        )
        FastAPIInstrumentor.instrument_app(app, tracer_provider=tel.provider)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                reply = await client.get("/readyz")
        assert reply.status_code == 200, reply.text
    finally:
        await reader.stop(0)
        await ranker.stop(0)
        GrpcAioInstrumentorServer().uninstrument()
        GrpcAioInstrumentorClient().uninstrument()
        tel.shutdown()

    spans = exporter.get_finished_spans()
    kinds = {s.kind for s in spans}
    assert {SpanKind.SERVER, SpanKind.CLIENT} <= kinds
    grpc_server_spans = [s for s in spans if s.kind == SpanKind.SERVER and "Health" in s.name]
    assert len(grpc_server_spans) == 2, [s.name for s in spans]
    assert len({s.context.trace_id for s in spans}) == 1, [
        (s.name, s.context.trace_id) for s in spans
    ]
