"""Tool calling over the OpenAI-compatible wire format: ``tools`` in the request, streamed
``tool_calls`` deltas in the reply, ``role: tool`` messages for the results.

Ollama serves the same format at ``/v1/chat/completions`` (its native ``/api/chat`` differs
only in framing), so one client serves both providers: for ``LLM_PROVIDER=ollama`` it talks to
Ollama's OpenAI-compatible endpoint on the same server.

A streamed tool call arrives in pieces: the first delta of each call carries its ``index``,
``id`` and function ``name``; later deltas with the same ``index`` append to ``arguments``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import httpx

from orchestrator.adapters.llm.chat import LineState, LLMOptions, _Deadlines
from orchestrator.adapters.llm.openai import OpenAIClient
from orchestrator.core.llm import ToolCall, ToolReply, WireMessage
from orchestrator.core.think import strip_think

# Returned for a line that carried only a piece of a tool call: progress for the idle timeout,
# but no answer text.
_PROGRESS = "\x00"


@dataclass
class _Pending:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _ToolStream(OpenAIClient):
    """One tool-calling completion: parses ``tool_calls`` deltas into pending calls."""

    def __init__(self, base_url: str, http: httpx.AsyncClient, options: LLMOptions) -> None:
        super().__init__(base_url, http, options)
        self.pending: dict[int, _Pending] = {}
        self.usage = 0

    def _parse_line(self, line: str, url: str) -> tuple[str, LineState]:
        obj = self._event(line, url)  # the answer stream's own SSE framing (openai.py)
        if isinstance(obj, str):
            return "", obj
        usage = obj.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
            self.usage = usage["completion_tokens"]
        choices = obj.get("choices") or [{}]
        choice = choices[0] if isinstance(choices[0], dict) else {}
        raw = choice.get("delta")
        delta: dict[str, Any] = raw if isinstance(raw, dict) else {}
        progress = self._take_calls(delta.get("tool_calls"))
        text = delta.get("content")
        state: LineState = "finished" if choice.get("finish_reason") else "more"
        out = text if isinstance(text, str) else ""
        return out or (_PROGRESS if progress else ""), state

    def _take_calls(self, calls: Any) -> bool:
        if not isinstance(calls, list):
            return False
        for n, part in enumerate(calls):
            if not isinstance(part, dict):
                continue
            index = part.get("index", n)
            pending = self.pending.setdefault(index if isinstance(index, int) else n, _Pending())
            pending.id = pending.id or str(part.get("id") or "")
            raw = part.get("function")
            fn: dict[str, Any] = raw if isinstance(raw, dict) else {}
            pending.name = pending.name or str(fn.get("name") or "")
            if isinstance(fn.get("arguments"), str):
                pending.arguments.append(fn["arguments"])
        return True


class OpenAIToolCaller:
    """A ToolCaller for an OpenAI-compatible server (or Ollama's compatible endpoint)."""

    def __init__(self, base_url: str, http: httpx.AsyncClient, options: LLMOptions) -> None:
        """``base_url`` as configured (with or without ``/v1``)."""
        self.base_url = base_url.rstrip("/")
        self._http = http
        self._opts = options

    @property
    def model(self) -> str:
        """The configured model name."""
        return self._opts.model

    async def call_tools(
        self,
        messages: list[WireMessage],
        tools: list[dict[str, Any]],
        *,
        timeout: float,
        max_tokens: int,
    ) -> ToolReply:
        """See ToolCaller."""
        stream = _ToolStream(self.base_url, self._http, self._opts)
        stream._check_configured()
        body: dict[str, Any] = {
            "model": self._opts.model,
            "messages": messages,
            "tools": tools,
            "tool_choice": "auto",
            "stream": True,
            "stream_options": {"include_usage": True},
            "temperature": 0.0,
            "max_tokens": max_tokens,
        }
        loop = asyncio.get_running_loop()
        own = self._opts.timeout_s
        deadlines = _Deadlines(loop.time() + timeout, loop.time() + own, own)
        parts = [d async for d in stream._deltas(body, deadlines) if d != _PROGRESS]
        text = strip_think("".join(parts))
        calls = tuple(
            ToolCall(p.id or f"call_{i}", p.name, "".join(p.arguments))
            for i, p in sorted(stream.pending.items())
            if p.name
        )
        spent = stream.usage or (len(text) + sum(len(c.arguments) for c in calls)) // 4
        return ToolReply(text, calls, spent)
