"""The `quarry-research` model of the OpenAI-compatible API: one deep-research run per request.

The report is the assistant message (citations as Markdown footnotes, as for `quarry-search`);
streaming sends phases and findings as ``reasoning_content`` and the report as it is written.
A streaming client that goes away cancels the run (its partial report stays in /v1/research).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi.responses import JSONResponse, Response, StreamingResponse

from orchestrator.api.openai import chat_format as fmt
from orchestrator.api.shared.problems import openai_problem, openai_problem_for
from orchestrator.api.shared.sse import DONE, sse_data
from orchestrator.core.domains import DomainPolicy
from orchestrator.core.errors import DomainError
from orchestrator.core.progress import research_progress_line
from orchestrator.core.research.owned import OwnedRuns
from orchestrator.core.research.state import ResearchState

_END = frozenset({"research.completed", "research.cancelled", "error"})


def report_body(state: ResearchState) -> str:
    """The checked report without its engine-written source list (footnotes replace it)."""
    return state.report.split("\n## Sources\n")[0].rstrip()


def _meta(run_id: str, status: str, state: ResearchState) -> dict[str, Any]:
    return {
        "research_id": run_id,
        "status": status,
        "cited": state.cited,
        "warnings": state.warnings,
    }


async def research_completion(
    manager: OwnedRuns,
    model: str,
    question: str,
    sources: list[str],
    *,
    stream: bool,
    domains: DomainPolicy | None = None,
) -> Response:
    """Start a run for ``question``, owned by the caller; the whole report, or a stream of
    chunks."""
    try:
        record = await manager.create(question, "deep-research", None, sources, domains=domains)
    except DomainError as err:  # the in-flight cap
        return openai_problem_for(err)
    completion_id = f"chatcmpl-{record.id}"
    if stream:
        chunks = _chunks(manager, record.id, completion_id, model)
        return StreamingResponse(chunks, media_type="text/event-stream")
    async for _ in manager.follow(record.id, -1, manager.heartbeat_s):
        pass
    final, state = await manager.record(record.id)
    if final.status != "completed":
        error = state.error or {"code": final.status, "message": f"The run ended {final.status}."}
        return openai_problem(503, str(error["message"]), str(error["code"]), "server_error")
    content = fmt.to_footnote_refs(report_body(state)) + fmt.footnotes(
        [s.public() for s in state.sources]
    )
    return JSONResponse(
        {
            "id": completion_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "sources": [s.public() for s in state.sources],
            "quarry": _meta(record.id, final.status, state),
        }
    )


async def _chunks(
    manager: OwnedRuns, run_id: str, completion_id: str, model: str
) -> AsyncIterator[bytes]:
    base = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse_data({**base, "choices": [choice], **extra})

    refs = fmt.FootnoteStream()
    ended = False
    try:
        yield chunk({"role": "assistant", "content": ""})
        async for event in manager.follow(run_id, -1, manager.heartbeat_s):
            if event is None:
                yield b": heartbeat\n\n"
                continue
            ended = event.type in _END or event.data.get("status") == "interrupted"
            if event.type == "report.chunk" and event.data.get("section") != "sources":
                text = refs.feed(str(event.data["text"]))
                if text:
                    yield chunk({"content": text})
            elif event.type == "research.completed":
                _, state = await manager.record(run_id)
                sources = [s.public() for s in state.sources]
                tail = refs.flush() + fmt.footnotes(sources)
                yield chunk({"content": tail})
                yield chunk({}, "stop", sources=sources, quarry=_meta(run_id, "completed", state))
            elif ended:
                message = str(event.data.get("message") or f"The run ended ({event.type}).")
                error = {"message": message, "type": "server_error", "code": "research_failed"}
                yield sse_data({"error": error})
            else:
                line = research_progress_line(event.type, event.data)
                if line:
                    yield chunk({"reasoning_content": line + "\n"})
        yield DONE
    finally:
        if not ended:  # the client went away: stop the run
            with contextlib.suppress(DomainError):
                await manager.cancel(run_id)
