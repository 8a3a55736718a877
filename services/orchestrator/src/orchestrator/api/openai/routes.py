"""An OpenAI-compatible face of Quarry: `GET /v1/models` and `POST /v1/chat/completions`.

Any client that speaks the OpenAI chat API (the official `openai` package, Open WebUI as a
"connection") asks Quarry like a model: the last user message is the question, the earlier
messages are the conversation, and the answer streams as ``chat.completion.chunk`` objects with
progress as ``reasoning_content`` and the sources as Markdown footnotes plus a ``sources`` field.
Errors stay RFC 7807 problems and also carry OpenAI's ``error`` object, which its clients read.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.adapters.corpus.documents import pinned
from orchestrator.api.openai import chat_format as fmt
from orchestrator.api.openai.research import research_completion
from orchestrator.api.shared.deps import PrincipalDep, RuntimeDep
from orchestrator.api.shared.options import DomainLists, SearchOptions
from orchestrator.api.shared.problems import openai_problem, openai_problem_for
from orchestrator.api.shared.ratelimit import enforce
from orchestrator.api.shared.sse import DONE, sse_data
from orchestrator.api.shared.streaming import EventStreamResponse, drive
from orchestrator.core.ask.service import Conversation, Question, ask, prepare
from orchestrator.core.errors import DomainError
from orchestrator.core.events import Event, EventSink, ResultCollector
from orchestrator.core.policy import domains_for, research_sources
from orchestrator.core.progress import progress_line

SEARCH_MODEL = "quarry-search"
RESEARCH_MODEL = "quarry-research"
MODELS = {
    SEARCH_MODEL: "Quick search: a cited answer in one run (POST /v1/search).",
    RESEARCH_MODEL: "Deep research: a long cited report (POST /v1/research).",
}
_CREATED = 1_767_225_600  # a fixed "created" for the model list (2026-01-01)
MAX_QUESTION_CHARS = 2000

router = APIRouter(prefix="/v1", tags=["openai"])


class ChatMessage(BaseModel):
    """One message; unknown fields (name, tool_calls, …) are accepted and ignored."""

    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    """The subset of the OpenAI request Quarry uses; sampling knobs are accepted and ignored."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, max_length=100)
    messages: list[ChatMessage] = Field(min_length=1, max_length=500)
    stream: bool = False
    # Quarry's own extra body field (`extra_body={"domains": {...}}` in the openai SDK).
    domains: DomainLists | None = None
    # Quarry's own per-request options (POST /v1/search's), sent as the OpenAI SDK's
    # ``extra_body={"options": {...}}``; checked like there (422 on a bad value).
    options: SearchOptions = Field(default_factory=SearchOptions)


@router.get("/models")
async def list_models() -> dict[str, Any]:
    """The models Quarry answers as, in OpenAI's list shape."""
    return {
        "object": "list",
        "data": [
            {
                "id": name,
                "object": "model",
                "created": _CREATED,
                "owned_by": "quarry",
                "description": text,
            }
            for name, text in MODELS.items()
        ],
    }


class ChunkEncoder:
    """Turns one run's events into OpenAI ``chat.completion.chunk`` SSE lines."""

    def __init__(self, completion_id: str, model: str, *, progress: bool = True) -> None:
        self._base = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }
        self._progress = progress
        self._refs = fmt.FootnoteStream()
        self._sources: list[dict[str, Any]] = []
        self._meta: dict[str, Any] = {"warnings": []}
        self._started = False

    def _chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse_data({**self._base, "choices": [choice], **extra})

    def _first(self) -> bytes:
        if self._started:
            return b""
        self._started = True
        return self._chunk({"role": "assistant", "content": ""})

    def __call__(self, event: Event) -> bytes:
        out = self._first()
        data = event.data
        if event.type == "answer.sentence":
            # Checked sentences (corrected citations), not the raw deltas: a streamed
            # completion cannot take text back.
            text = self._refs.feed(str(data["text"]))
            return out + (self._chunk({"content": text}) if text else b"")
        if event.type == "clarify":
            return out + self._chunk({"content": str(data["question"])})
        if event.type == "sources":
            self._sources = list(data["sources"])
        elif event.type == "answer.completed":
            self._meta["cited"] = data.get("cited", [])
            self._meta["sentences"] = data.get("sentences", [])
            self._meta["support_score"] = data.get("support_score")
            tail = self._refs.flush() + fmt.footnotes(self._sources)
            out += self._chunk({"content": tail}) if tail else b""
        elif event.type == "run.started":
            self._meta["run_id"] = data.get("run_id")
        elif event.type == "warning":
            self._meta["warnings"].append(data)
        elif event.type == "policy":  # what the domain policy dropped, as in the JSON result
            policy = self._meta.setdefault("policy", {"rules": None, "dropped": []})
            policy["rules"] = data.get("rules")
            policy["dropped"].extend(data.get("dropped", []))
        elif event.type == "error":
            error = {"message": data["message"], "type": "server_error", "code": data["code"]}
            return out + sse_data({"error": error})
        elif event.type == "run.completed":
            self._meta["status"] = data["status"]
            return out + self._chunk({}, "stop", sources=self._sources, quarry=self._meta)
        line = progress_line(event.type, data) if self._progress else None
        return out + (self._chunk({"reasoning_content": line + "\n"}) if line else b"")


def _completion(
    completion_id: str, model: str, result: dict[str, Any], created: int
) -> dict[str, Any]:
    answer = result["clarifying_question"] or result["answer"]
    content = fmt.to_footnote_refs(answer) + fmt.footnotes(result["sources"])
    keys = ("run_id", "status", "cited", "warnings", "sentences", "support_score", "policy")
    meta = {k: result.get(k) for k in keys}
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "sources": result["sources"],
        "quarry": meta,
    }


def _refusal(body: ChatRequest, research: Any) -> Response | None:
    """The problem for a request that names no model of ours or asks no question, else None."""
    if body.model not in MODELS:
        names = ", ".join(MODELS)
        detail = f"Unknown model {body.model!r}; use one of: {names} (GET /v1/models)."
        return openai_problem(404, detail, "model_not_found", "invalid_request_error")
    if body.model == RESEARCH_MODEL and research is None:
        detail = "quarry-research is not available on this server; use quarry-search."
        return openai_problem(404, detail, "model_not_found", "invalid_request_error")
    role, question = body.messages[-1].role, fmt.message_text(body.messages[-1].content).strip()
    if role != "user" or not question:
        detail = "The last message must be a user message with text: it is the question."
        return openai_problem(400, detail, "invalid_messages", "invalid_request_error")
    if len(question) > MAX_QUESTION_CHARS:
        detail = f"The question is longer than {MAX_QUESTION_CHARS} characters."
        return openai_problem(400, detail, "question_too_long", "invalid_request_error")
    return None


@router.post("/chat/completions", response_model=None)
async def chat_completions(
    body: ChatRequest, request: Request, runtime: RuntimeDep, who: PrincipalDep
) -> Response:
    """Answer the last user message, with the earlier messages as the conversation.

    Quick search keeps no session (the client sends the conversation each time); a research
    run is the caller's, like one started with POST /v1/research."""
    notice = await enforce(request, "questions")
    research = getattr(request.app.state, "research", None)
    if (refused := _refusal(body, research)) is not None:
        return refused
    texts = [(m.role, fmt.message_text(m.content).strip()) for m in body.messages]
    question = texts[-1][1]
    settings = runtime.deps.settings
    domains = body.domains.model_dump() if body.domains is not None else None
    if body.model == RESEARCH_MODEL and research is not None:
        await enforce(request, "research")
        try:
            sources = list(research_sources(None, settings))
            searched, policy = domains_for(question, domains, settings)
        except DomainError as err:  # search off, a bad domain or site: operator
            return openai_problem_for(err)
        return await research_completion(
            research.for_(who), body.model, searched, sources, stream=body.stream, domains=policy
        )
    run_id = uuid.uuid4().hex
    try:
        searched, options = prepare(question, body.options, settings, domains)
        options = await pinned(
            options,
            runtime.corpus.documents if runtime.corpus is not None else None,
            who,
            body.options.scope,
            body.options.sources,
        )
    except DomainError as err:  # search off, a bad option, domain or site: operator
        return openai_problem_for(err)
    # The client sends the conversation each time: nothing is kept here.
    talk = Conversation.given(fmt.history_from_messages(texts[:-1]), label=f"openai-{run_id}")
    asked = Question(searched, who.id, run_id, options, talk)

    async def run(sink: EventSink) -> None:
        if notice is not None:
            sink.warn_after_start(notice.code, notice.message)
        await ask(runtime.deps, runtime.sessions, sink, asked)

    return await _respond(run, body, request, f"chatcmpl-{run_id}", settings.keepalive_s)


async def _respond(
    run: Callable[[EventSink], Awaitable[None]],
    body: ChatRequest,
    request: Request,
    completion_id: str,
    keepalive_s: float,
) -> Response:
    """The run as a stream of chunks, or driven to its end as one completion (or a problem)."""
    if body.stream:
        encoder = ChunkEncoder(completion_id, body.model)
        return EventStreamResponse(
            run, "sse", encode=encoder, closing=lambda: DONE, keepalive_s=keepalive_s
        )
    collector = ResultCollector()
    created = int(time.time())

    async def on_event(event: Event) -> None:
        collector.add(event)

    await drive(run, request.receive, on_event)
    result = collector.result
    if result["status"] == "error" and result["error"]:
        code = str(result["error"]["code"])
        status = 404 if code == "no_results" else 503
        return openai_problem(status, str(result["error"]["message"]), code, "server_error")
    return JSONResponse(_completion(completion_id, body.model, result, created))
