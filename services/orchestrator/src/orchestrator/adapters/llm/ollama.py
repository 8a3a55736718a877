"""Ollama's native chat API: ``POST /api/chat`` with NDJSON streaming, ``GET /api/tags``."""

from __future__ import annotations

import json
from typing import Any

from orchestrator.adapters.llm.chat import (
    STRUCTURED_MAX_TOKENS,
    HttpChatClient,
    LineState,
    as_think,
)
from orchestrator.core.llm import LLMError, Message


class OllamaClient(HttpChatClient):
    """An LLMClient for an Ollama server (base URL like ``http://127.0.0.1:11434``)."""

    chat_path = "/api/chat"
    ping_path = "/api/tags"

    def _root_url(self, base_url: str) -> str:
        return base_url.removesuffix("/api")

    def _body(self, messages: list[Message], *, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._opts.model,
            "messages": self._messages(messages),
            "stream": stream,  # explicit: Ollama streams when it is omitted
            "keep_alive": _keep_alive(self._opts.keep_alive),
            # num_ctx explicitly: Ollama truncates longer prompts to its default without a word.
            "options": {
                "num_ctx": self._opts.num_ctx,
                "temperature": self._opts.temperature,
                "num_predict": self._opts.max_tokens,
            },
        }
        if self._opts.repeat_penalty is not None:
            body["options"]["repeat_penalty"] = self._opts.repeat_penalty
        return body

    def _json_body(self, messages: list[Message], schema: dict[str, Any]) -> dict[str, Any]:
        body = self._body(messages, stream=True)
        body["format"] = schema  # grammar-constrained output (Ollama >= 0.5)
        # greedy decoding for decisions, as measured in shared/notes/embedded-llm.md §4
        body["options"] |= {"temperature": 0.0, "num_predict": STRUCTURED_MAX_TOKENS}
        return body

    def _stream_body(self, messages: list[Message]) -> dict[str, Any]:
        return self._body(messages, stream=True)

    def _parse_line(self, line: str, url: str) -> tuple[str, LineState]:
        try:
            obj = json.loads(line)
        except ValueError:
            raise self._malformed(url, "stream line (not JSON)") from None
        if not isinstance(obj, dict):
            raise self._malformed(url, "stream line (not an object)")
        if obj.get("error"):
            raise LLMError(f"the LLM at {url} reported an error: {obj['error']}", self.base_url)
        raw = obj.get("message")
        message: dict[str, Any] = raw if isinstance(raw, dict) else {}
        text = message.get("content", "")
        text = as_think(message.get("thinking")) + (text if isinstance(text, str) else "")
        return text, ("done" if obj.get("done") else "more")


def _keep_alive(value: str) -> str | float:
    """A bare number goes as seconds (Ollama parses strings as Go durations, which need units)."""
    try:
        return float(value)
    except ValueError:
        return value
