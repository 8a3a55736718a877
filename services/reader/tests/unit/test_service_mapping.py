"""Domain result -> proto mapping and span annotation."""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from quarry.v1 import reader_pb2
from reader.model import Extracted, ReadResult, Status
from reader.service import _annotate, to_proto

RESULT = ReadResult(
    Status.OK,
    "https://a.test/x",
    final_url="https://a.test/y",
    content_type="text/html",
    http_status=200,
    fetched_bytes=1234,
    truncated=True,
    extracted=Extracted("# T\n\nbody", "T", "2024-01-02", "Site", "en", "Ann Author"),
)


def test_to_proto_maps_every_field() -> None:
    reply = to_proto(RESULT, 42)
    assert reply.status == reader_pb2.ReadResponse.OK
    assert (reply.url, reply.final_url) == ("https://a.test/x", "https://a.test/y")
    assert (reply.title, reply.markdown) == ("T", "# T\n\nbody")
    assert (reply.published, reply.site_name, reply.language) == ("2024-01-02", "Site", "en")
    assert reply.author == "Ann Author"
    assert (reply.http_status, reply.fetched_bytes, reply.elapsed_ms) == (200, 1234, 42)
    assert reply.truncated
    assert not reply.cached


def test_every_status_has_a_proto_value() -> None:
    for status in Status:
        reply = to_proto(ReadResult(status, "u", error="e"), 0)
        assert reader_pb2.ReadResponse.Status.Name(reply.status) == status.value


def test_outcome_lands_on_the_current_span() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("test").start_as_current_span("Read"):
        _annotate(RESULT)
    (span,) = exporter.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["quarry.reader.status"] == "OK"
    assert span.attributes["quarry.reader.bytes"] == 1234
    assert span.attributes["http.response.status_code"] == 200
