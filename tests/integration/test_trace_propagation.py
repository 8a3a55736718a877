"""One HTTP request into the orchestrator that calls gRPC services yields one trace id."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from opentelemetry import trace
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
from opentelemetry.instrumentation.grpc import GrpcAioInstrumentorClient, GrpcAioInstrumentorServer
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from orchestrator.app import create_app
from orchestrator.config import Settings as OrchestratorSettings
from quarry_common import telemetry
from ranker.config import Settings as RankerSettings
from ranker.server import build_server as build_ranker
from reader.config import Settings as ReaderSettings
from reader.server import build_server as build_reader

from services.orchestrator.tests.fakes._http import Request, Response, TinyHTTPServer
from services.orchestrator.tests.fakes.fake_llm import FakeLLM, Say
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng, searx_result

ARTICLE = (
    b"<html><head><title>Tides</title></head><body><article><h1>Tides</h1>"
    + b"<p>Tides are caused by the gravity of the Moon and the Sun acting on the oceans.</p>" * 6
    + b"</article></body></html>"
)


async def _page(_: Request) -> Response:
    return Response(200, ARTICLE, "text/html; charset=utf-8")


@asynccontextmanager
async def _traced_stack(exporter: InMemorySpanExporter) -> AsyncIterator[httpx.AsyncClient]:
    """Reader, ranker, fakes and the orchestrator, all instrumented, in this process."""
    tel = telemetry.setup(
        "orchestrator", instruments=("grpc_server", "grpc_client"), exporter=exporter
    )
    current = trace.get_tracer_provider()
    if current is not tel.provider and isinstance(current, TracerProvider):
        # OpenTelemetry installs one global provider per process: an earlier test's wins, so
        # the spans made through it (the agent's, gRPC's) must reach this exporter too.
        current.add_span_processor(SimpleSpanProcessor(exporter))
    pages = TinyHTTPServer(_page)
    await pages.start()
    reader = build_reader(ReaderSettings(port=0, allow_private_networks=True, workers=1))
    ranker = build_ranker(RankerSettings(port=0))
    results = [searx_result(f"{pages.url}/tides", "Tides", "Why tides happen")]
    try:
        reader_port = await reader.start()
        ranker_port = await ranker.start()
        async with FakeLLM() as llm, FakeSearxng(results) as searx:
            # the snippet judge asks for the page, so the run calls Read and RankChunks too
            llm.queue("judge", Say.json({"reasoning": "r", "sufficiency": "partial"}))
            app = create_app(
                OrchestratorSettings(
                    reader_addr=f"127.0.0.1:{reader_port}",
                    ranker_addr=f"127.0.0.1:{ranker_port}",
                    searxng_url=searx.url,
                    llm_provider="ollama",
                    llm_base_url=llm.url,
                    llm_model=llm.model,
                )
            )
            FastAPIInstrumentor.instrument_app(app, tracer_provider=tel.provider)
            async with app.router.lifespan_context(app):
                transport = httpx.ASGITransport(app=app)
                async with httpx.AsyncClient(
                    transport=transport, base_url="http://localhost"
                ) as client:
                    yield client
    finally:
        await reader.stop(0)
        await ranker.stop(0)
        await pages.stop()
        GrpcAioInstrumentorServer().uninstrument()
        GrpcAioInstrumentorClient().uninstrument()
        tel.shutdown()


def _one_trace(spans: tuple[ReadableSpan, ...]) -> None:
    assert len({s.context.trace_id for s in spans}) == 1, [
        (s.name, s.context.trace_id) for s in spans
    ]


async def test_readyz_spans_share_one_trace() -> None:
    exporter = InMemorySpanExporter()
    async with _traced_stack(exporter) as client:
        exporter.clear()  # start-up spans (warm-up, health) belong to no request
        reply = await client.get("/readyz")
    assert reply.status_code == 200, reply.text

    spans = exporter.get_finished_spans()
    kinds = {s.kind for s in spans}
    assert {SpanKind.SERVER, SpanKind.CLIENT} <= kinds
    grpc_server_spans = [s for s in spans if s.kind == SpanKind.SERVER and "Health" in s.name]
    assert len(grpc_server_spans) == 2, [s.name for s in spans]
    _one_trace(spans)


async def test_search_is_one_trace_with_a_span_per_stage() -> None:
    exporter = InMemorySpanExporter()
    async with _traced_stack(exporter) as client:
        exporter.clear()
        reply = await client.post(
            "/v1/search",
            json={"query": "why are there tides"},
            headers={"Accept": "application/json"},
        )
    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] == "answered", json.dumps(reply.json())

    spans = exporter.get_finished_spans()
    names = {s.name for s in spans}
    assert {"agent.plan", "agent.search", "agent.rank", "agent.judge", "agent.read"} <= names
    assert {"agent.chunks", "agent.synthesis"} <= names
    server_rpcs = {s.name for s in spans if s.kind == SpanKind.SERVER and "quarry.v1" in s.name}
    assert {"/quarry.v1.Reader/Read", "/quarry.v1.Ranker/RankResults"} <= server_rpcs
    judges = [s for s in spans if s.name == "agent.judge"]
    assert {s.attributes["ae.verdict"] for s in judges if s.attributes} == {"partial", "sufficient"}
    _one_trace(spans)
