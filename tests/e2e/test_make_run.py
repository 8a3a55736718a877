"""`make run` as a user runs it: the supervisor starts the embedded LLM itself (QUARRY_MODEL=gemma,
no LLM configured), prints its banner and no JSON log line (each service logs to its own file),
exports traces when OTEL_EXPORTER_OTLP_ENDPOINT is set, answers `quarry ask`, and Ctrl-C leaves no
process behind.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import free_port
from tests.e2e.otlp import ReceivedSpan, Receiver, otlp_receiver
from tests.e2e.protocol import wait_for
from tests.e2e.stack import Stack, group_members, run_stack
from tests.e2e.test_ask_cli import quarry
from tests.e2e.web import PAGES, FixtureWeb

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

SERVICES = {"orchestrator", "reader", "ranker"}
# OTLP SpanKind values.
SERVER, CLIENT = 2, 3


@pytest.fixture(scope="module")
def traced(
    searx: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Stack, Receiver, int]]:
    """`make run` with the embedded Gemma and an OTLP endpoint, and the receiver it exports to."""
    workdir: Path = tmp_path_factory.mktemp("make-run")
    llm_port = free_port()
    with (
        otlp_receiver() as receiver,
        run_stack(
            workdir,
            searx,
            QUARRY_MODEL="gemma",
            QUARRY_LLM_PORT=str(llm_port),
            OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
            OTEL_EXPORTER_OTLP_INSECURE="true",
            OTEL_BSP_SCHEDULE_DELAY="100",
        ) as stack,
    ):
        yield stack, receiver, llm_port


def test_banner_names_the_embedded_model_and_the_search_engine(
    traced: tuple[Stack, Receiver, int], searx: str
) -> None:
    stack, _, llm_port = traced
    assert wait_for(lambda: "Ctrl-C stops everything" in stack.output(), 60), stack.output()
    out = stack.output()
    assert f"LLM: embedded Gemma 3 270M (base) Q4_K_M on 127.0.0.1:{llm_port}" in out
    assert "its search decisions are meaningless" in out
    assert f"Search: SearXNG at {searx} (reachable)" in out
    assert f"Quarry API: {stack.api}" in out
    # The stack runs on a free port, so the printed command must name it to work.
    assert f"ask: .venv/bin/quarry --url {stack.api} ask" in out


def test_the_model_loads_quietly_with_one_line_per_stage(
    traced: tuple[Stack, Receiver, int],
) -> None:
    stack, _, _ = traced
    assert wait_for(lambda: "Ctrl-C stops everything" in stack.output(), 60), stack.output()
    out = stack.output()
    for stage in (">> model: verifying", ">> model: loading", ">> model: ready in"):
        assert stage in out, out
    # llama.cpp's loader output goes to a log file under QUARRY_DATA_DIR, not the terminal.
    assert "llama_model_loader" not in out
    log = stack.log.parent / "data" / "logs" / "llm.log"
    assert "llama_model_loader" in log.read_text("utf-8", "replace")
    assert str(log) in out


def test_the_console_is_quiet_and_each_service_logs_to_its_file(
    traced: tuple[Stack, Receiver, int],
) -> None:
    stack, _, _ = traced
    assert wait_for(lambda: "Ctrl-C stops everything" in stack.output(), 60), stack.output()
    logs = stack.log.parent / "data" / "logs"
    for name in ("reader", "ranker", "index", "orchestrator"):
        records = _json_records((logs / f"{name}.log").read_text("utf-8", "replace"))
        assert records, name
        assert {r["service"] for r in records} == {name}
    out = stack.output()
    assert _json_records(out) == [], out
    assert f"Logs: {logs}/<service>.log (make run VERBOSE=1 shows them here too)" in out


def _json_records(text: str) -> list[dict[str, object]]:
    """The lines of ``text`` that are JSON log records (after a `service | ` prefix, if any)."""
    records = []
    for line in text.splitlines():
        try:
            record = json.loads(line.split("| ", 1)[-1])
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def test_one_question_is_one_trace_across_the_services(
    traced: tuple[Stack, Receiver, int], web: FixtureWeb
) -> None:
    stack, receiver, _ = traced
    done = quarry("Who designed the Zephyrine Lighthouse?", url=stack.api)
    assert done.returncode == 0, done.stderr
    assert "\n\nSources:\n" in done.stdout
    assert any(web.url(p) in done.stdout for p in PAGES)

    def question_traces() -> dict[str, list[ReceivedSpan]]:
        spans = receiver.snapshot()
        ids = {s.trace_id for s in spans if s.service == "orchestrator" and "/v1/search" in s.name}
        return {t: [s for s in spans if s.trace_id == t] for t in ids}

    def complete(spans: list[ReceivedSpan]) -> bool:
        # Every service's server span (the orchestrator's ends with the response) has arrived.
        return {s.service for s in spans if s.kind == SERVER} >= SERVICES

    # Exporters batch and flush on their own schedule: wait for the whole trace.
    wait_for(lambda: any(complete(v) for v in question_traces().values()), 30)
    traces = question_traces()
    assert len(traces) == 1, {t: {s.service for s in v} for t, v in traces.items()}
    (spans,) = traces.values()
    assert complete(spans), spans
    # The orchestrator's outgoing calls (gRPC to reader and ranker, HTTP to searx and the LLM)
    # are client spans of the same trace.
    clients = {s.name for s in spans if s.service == "orchestrator" and s.kind == CLIENT}
    assert len(clients) >= 3, clients


def test_ctrl_c_stops_everything(traced: tuple[Stack, Receiver, int]) -> None:
    stack, _, _ = traced
    stack.proc.send_signal(signal.SIGINT)
    status = stack.proc.wait(60)
    assert status == 0, stack.output()[-2000:]
    pgid = stack.proc.pid
    assert wait_for(lambda: not group_members(pgid), 10), (
        f"outlived make run: {group_members(pgid)}"
    )
