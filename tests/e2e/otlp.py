"""A local OTLP/gRPC trace receiver: what a collector would get, kept in memory for assertions."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


@dataclass(frozen=True)
class ReceivedSpan:
    """The parts of an exported span the tests look at."""

    service: str
    name: str
    trace_id: str
    kind: int


@dataclass
class Receiver:
    """Spans received so far (thread-safe)."""

    endpoint: str
    spans: list[ReceivedSpan] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def snapshot(self) -> list[ReceivedSpan]:
        """A copy of the spans received so far."""
        with self.lock:
            return list(self.spans)


class _TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    """Accepts Export calls."""

    def __init__(self, receiver: Receiver) -> None:
        self._receiver = receiver

    def Export(
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        received = []
        for resource_spans in request.resource_spans:
            service = ""
            for attr in resource_spans.resource.attributes:
                if attr.key == "service.name":
                    service = attr.value.string_value
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    received.append(
                        ReceivedSpan(service, span.name, span.trace_id.hex(), int(span.kind))
                    )
        with self._receiver.lock:
            self._receiver.spans.extend(received)
        return trace_service_pb2.ExportTraceServiceResponse()


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    """Run a receiver on a free 127.0.0.1 port; export to it via ``endpoint``."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    port = server.add_insecure_port("127.0.0.1:0")
    receiver = Receiver(f"http://127.0.0.1:{port}")
    add = trace_service_pb2_grpc.add_TraceServiceServicer_to_server
    add(_TraceService(receiver), server)  # type: ignore[no-untyped-call]  # generated, untyped
    server.start()
    try:
        yield receiver
    finally:
        server.stop(0)
