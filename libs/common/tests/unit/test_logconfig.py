"""JSON logging carries trace and span ids from the active span."""

from __future__ import annotations

import io
import json
import logging

from opentelemetry.sdk.trace import TracerProvider
from quarry_common import logconfig


def test_json_lines_with_trace_ids() -> None:
    buf = io.StringIO()
    logconfig.configure("demo", "INFO", stream=buf)
    tracer = TracerProvider().get_tracer("t")
    log = logging.getLogger("demo.module")
    log.info("outside")
    with tracer.start_as_current_span("op") as span:
        log.info("inside %s", "span", extra={"count": 3})
    lines = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert lines[0]["msg"] == "outside"
    assert "trace_id" not in lines[0]
    inside = lines[1]
    ctx = span.get_span_context()
    assert inside["trace_id"] == format(ctx.trace_id, "032x")
    assert inside["span_id"] == format(ctx.span_id, "016x")
    assert inside["count"] == 3
    assert inside["service"] == "demo"
    assert inside["level"] == "INFO"


def test_exceptions_are_one_line_of_json() -> None:
    buf = io.StringIO()
    logconfig.configure("demo", "INFO", stream=buf)
    try:
        int("boom")
    except ValueError:
        logging.getLogger("x").exception("failed")
    (line,) = buf.getvalue().splitlines()
    record = json.loads(line)
    assert "ValueError: invalid literal" in record["exc"]
