"""The LLM provider interface the agent loop codes against."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypedDict


class Message(TypedDict):
    """One chat message."""

    role: Literal["system", "user", "assistant"]
    content: str


class LLMError(Exception):
    """The LLM server could not be reached or answered badly; ``url`` names the server."""

    def __init__(self, message: str, url: str) -> None:
        super().__init__(message)
        self.url = url


class LLMTimeout(LLMError):
    """The server took longer than its configured limit (``LLM_TIMEOUT_S``, first token, idle).

    A structured call that times out takes its safe default and the run goes on; a streamed
    answer that times out ends the run with a clear error.
    """


class LLMClient(Protocol):
    """A chat model behind Ollama's native API or an OpenAI-compatible server."""

    base_url: str

    async def complete_json(
        self, messages: list[Message], schema: dict[str, Any], *, timeout: float
    ) -> str:
        """Return the raw text of one schema-constrained (where supported) completion."""
        ...

    def stream_chat(
        self, messages: list[Message], *, timeout: float, thoughts: bool = False
    ) -> AsyncIterator[str]:
        """Yield text deltas of a streamed completion (``<think>`` blocks removed; with
        ``thoughts``, their text comes as ``orchestrator.core.think.Thought`` deltas)."""
        ...

    async def ping(self, *, timeout: float) -> bool:
        """Return True when the server answers (for /readyz)."""
        ...


# --- tool calling (the agent mode, orchestrator/core/ask/agentic.py) ---

#: One message of a tool-calling conversation, in the OpenAI wire format: system/user/assistant
#: (with ``tool_calls``) and ``tool`` results (with ``tool_call_id``).
WireMessage = dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for: ``arguments`` is the JSON text it wrote (maybe invalid)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ToolReply:
    """One tool-calling turn of the model: its text, the calls it asked for, tokens spent."""

    text: str
    calls: tuple[ToolCall, ...] = ()
    # Completion tokens (the server's usage when it reports it, else characters / 4).
    tokens: int = 0


class ToolCaller(Protocol):
    """A chat model that can be offered tools (OpenAI ``tools`` / ``tool_calls``)."""

    base_url: str

    @property
    def model(self) -> str:
        """The model's name (the tool-calling probe is cached per model)."""
        ...

    async def call_tools(
        self,
        messages: list[WireMessage],
        tools: list[dict[str, Any]],
        *,
        timeout: float,
        max_tokens: int,
    ) -> ToolReply:
        """One streamed completion with ``tools`` offered; the model's text and calls.

        Raises:
            LLMError: the server failed or refused (e.g. a model without tool support).
            TimeoutError: ``timeout`` (the caller's budget) ran out first.
        """
        ...
