"""OpenTelemetry setup: one call per service.

Spans are exported over OTLP only when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (the SDK reads
the standard ``OTEL_*`` variables itself); otherwise spans are created, so trace ids reach the
logs and propagate downstream, but nothing leaves the process.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter

logger = logging.getLogger(__name__)

Instrument = Literal["grpc_server", "grpc_client", "httpx"]


@dataclass
class Telemetry:
    """Handle returned by :func:`setup`; call :meth:`shutdown` before exit to flush spans."""

    provider: TracerProvider

    def shutdown(self) -> None:
        """Flush and stop every span processor."""
        self.provider.shutdown()


def _instrument(names: Iterable[Instrument]) -> None:
    # Imported lazily: each instrumentor pulls in its library, and not every service has all.
    for name in names:
        if name == "grpc_server":
            from opentelemetry.instrumentation.grpc import GrpcAioInstrumentorServer

            GrpcAioInstrumentorServer().instrument()
        elif name == "grpc_client":
            from opentelemetry.instrumentation.grpc import GrpcAioInstrumentorClient

            GrpcAioInstrumentorClient().instrument()
        elif name == "httpx":
            from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

            HTTPXClientInstrumentor().instrument()


def setup(
    service: str,
    instruments: Iterable[Instrument] = (),
    exporter: SpanExporter | None = None,
) -> Telemetry:
    """Install a tracer provider for ``service`` and the given instrumentors.

    Args:
        service: the service noun; used unless ``OTEL_SERVICE_NAME`` overrides it.
        instruments: which public instrumentors to enable.
        exporter: an explicit exporter (tests pass an in-memory one); spans go to it at once.
    """
    name = os.environ.get("OTEL_SERVICE_NAME") or service
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name}))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    elif os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    ):
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        logger.info("exporting traces over OTLP")
    trace.set_tracer_provider(provider)
    _instrument(instruments)
    return Telemetry(provider)
