"""The LLM provider interface the agent loop codes against."""

from __future__ import annotations

from collections.abc import AsyncIterator
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
        ``thoughts``, their text comes as ``orchestrator.llm.think.Thought`` deltas)."""
        ...

    async def ping(self, *, timeout: float) -> bool:
        """Return True when the server answers (for /readyz)."""
        ...
