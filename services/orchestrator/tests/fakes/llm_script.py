"""What the scripted LLM answers: reply types, the parsed request, and the default script."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["plan", "judge", "synthesis", "other"]
Wire = Literal["ollama", "openai"]


@dataclass(frozen=True)
class Say:
    """Answer ``text`` (streamed as word tokens, or as the given ``tokens``).

    ``reasoning`` deltas come first, in the provider's own field (Ollama ``message.thinking``,
    OpenAI-compatible ``delta.reasoning_content``), as reasoning models send them.
    """

    text: str = ""
    tokens: Sequence[str] | None = None
    reasoning: Sequence[str] = ()

    @classmethod
    def json(cls, obj: Any) -> Say:
        """Answer with ``obj`` serialised as JSON."""
        return cls(json.dumps(obj))

    def deltas(self) -> list[str]:
        """The stream deltas."""
        if self.tokens is not None:
            return list(self.tokens)
        # a word plus its trailing whitespace per delta, like a tokenizer's pieces
        return re.findall(r"\S+\s*|\s+", self.text)


@dataclass(frozen=True)
class Fail:
    """An HTTP error status with the provider's error body."""

    status: int = 500
    message: str = "scripted failure"


@dataclass(frozen=True)
class Hang:
    """Never answer: before any byte (``after_tokens=None``) or after n streamed tokens."""

    after_tokens: int | None = None


@dataclass(frozen=True)
class Drop:
    """Abort the TCP connection: before the response, or after n streamed tokens."""

    after_tokens: int | None = None
    text: str = "partial answer that is cut off somewhere in the middle"


@dataclass(frozen=True)
class StreamError:
    """An error object inside the stream after n tokens (Ollama's ``{"error"}`` line)."""

    message: str = "model crashed"
    after_tokens: int = 0


@dataclass(frozen=True)
class Garbage:
    """A malformed body: not JSON (non-streaming) or a broken frame after n tokens."""

    after_tokens: int = 0


Reply = Say | Fail | Hang | Drop | StreamError | Garbage
Script = Callable[["Call"], Reply | Awaitable[Reply | None] | None]

# What the prompts look like to the fake (see orchestrator/core/prompts.py): fenced sources and a
# final "Question:" line.
_SOURCE_RE = re.compile(
    r"<<<BEGIN SOURCE (\d+) ([0-9A-Za-z]+)>>>\n(.*?)\n<<<END SOURCE \1 \2>>>", re.DOTALL
)
_QUESTION_RE = re.compile(r"Question:[ \n](.*)\Z", re.DOTALL)
_SENTENCE_RE = re.compile(r"[^.!?\n]+[.!?]?")


@dataclass
class Call:
    """One chat request as the fake understood it."""

    wire: Wire
    body: dict[str, Any]
    stream: bool
    schema: dict[str, Any] | None
    kind: Kind
    outcome: str = "pending"

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The request's chat messages."""
        return list(self.body.get("messages") or [])

    @property
    def prompt(self) -> str:
        """All message contents joined (for assertions)."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)

    @property
    def question(self) -> str | None:
        """The question at the end of the last user message, if the prompt has one."""
        users = [m for m in self.messages if m.get("role") == "user"]
        match = _QUESTION_RE.search(str(users[-1].get("content", ""))) if users else None
        return match.group(1).strip() if match else None

    @property
    def sources(self) -> list[tuple[int, str]]:
        """The fenced sources as (n, text)."""
        return [(int(m.group(1)), m.group(3)) for m in _SOURCE_RE.finditer(self.prompt)]


@dataclass
class SeenRequest:
    """Any request the fake received; ``call`` is set for chat requests."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    call: Call | None = None


def default_reply(call: Call) -> Reply:
    """Valid answers: proceed with the question; sufficient; an answer citing the sources."""
    if call.kind == "plan":
        return Say.json(
            {
                "history_sufficiency": "insufficient",
                "action": "proceed",
                "clarifying_question": None,
                "optimized_query": call.question,
            }
        )
    if call.kind == "judge":
        return Say.json(
            {"reasoning": "The sources answer it.", "sufficiency": "sufficient", "gap_queries": []}
        )
    if call.kind == "synthesis":
        return Say(synthesis_from_sources(call.sources))
    return Say("ok")


def synthesis_from_sources(sources: Sequence[tuple[int, str]], limit: int = 2) -> str:
    """An extractive answer: the first body sentence of up to ``limit`` sources, each cited."""
    parts = []
    for n, text in sources[:limit]:
        body = [ln for ln in text.splitlines() if ln and not ln.startswith(("Title:", "URL:"))]
        sentence = _SENTENCE_RE.search(" ".join(body))
        if sentence:
            parts.append(f"{sentence.group(0).strip().rstrip('.!?')} [{n}].")
    return " ".join(parts) if parts else "I found no sources for this question."


def classify(schema: dict[str, Any] | None, prompt: str, stream: bool) -> Kind:
    props = set((schema or {}).get("properties", {}))
    if "action" in props or "history_sufficiency" in props:
        return "plan"
    if "sufficiency" in props or "gap_queries" in props:
        return "judge"
    if schema is None:
        if "history_sufficiency" in prompt:
            return "plan"
        if "gap_queries" in prompt:
            return "judge"
        if stream or "[n]" in prompt:
            return "synthesis"
    return "other"


def openai_schema(response_format: Any) -> dict[str, Any] | None:
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        return schema if isinstance(schema, dict) else None
    schema = response_format.get("schema")
    return schema if isinstance(schema, dict) else None
