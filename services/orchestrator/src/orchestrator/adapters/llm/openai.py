"""OpenAI-compatible chat servers: ``POST /v1/chat/completions`` with SSE, ``GET /v1/models``.

Servers take a schema in different dialects (``LLM_SCHEMA_DIALECT``): ``json_schema`` for
OpenAI, vLLM and llama.cpp's llama-server; ``json_object`` with a ``schema`` for
llama-cpp-python's server (which answers ``json_schema`` with HTTP 500); ``none`` to rely on the
prompt alone. A server that refuses ``json_schema`` is adapted to once, with a warning, rather
than failing every structured call: to ``json_object`` when it says that is what it takes, else
to a non-strict ``json_schema`` (OpenAI's strict mode refuses keywords such as ``maxLength``).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import httpx

from orchestrator.adapters.llm.chat import (
    STRUCTURED_MAX_TOKENS,
    HttpChatClient,
    LineState,
    LLMOptions,
    LLMStatusError,
    SchemaDialect,
    as_think,
)
from orchestrator.core.llm import LLMError, Message

logger = logging.getLogger(__name__)

# What a server says when it does not know response_format json_schema (llama-cpp-python:
# "Input should be 'text' or 'json_object'"; others name the field or the type).
_DIALECT_REJECTED = re.compile(r"json_object|json_schema|response_format", re.IGNORECASE)


class OpenAIClient(HttpChatClient):
    """An LLMClient for an OpenAI-compatible server (base URL with or without ``/v1``)."""

    chat_path = "/v1/chat/completions"
    ping_path = "/v1/models"

    def __init__(self, base_url: str, http: httpx.AsyncClient, options: LLMOptions) -> None:
        """See HttpChatClient; the dialect starts as configured."""
        super().__init__(base_url, http, options)
        self.dialect: SchemaDialect = options.schema_dialect
        self.strict = True

    def _root_url(self, base_url: str) -> str:
        return base_url.removesuffix("/v1")

    def _headers(self) -> dict[str, str]:
        if self._opts.api_key:
            return {"Authorization": f"Bearer {self._opts.api_key}"}
        return {}

    async def complete_json(
        self, messages: list[Message], schema: dict[str, Any], *, timeout: float
    ) -> str:
        """As HttpChatClient, adapting once per step to a server that refuses the schema form."""
        while True:
            try:
                return await super().complete_json(messages, schema, timeout=timeout)
            except LLMStatusError as err:
                if not self._downgrade(err):
                    raise

    def _downgrade(self, err: LLMStatusError) -> bool:
        """Step down after a schema refusal; False when there is nothing left to try."""
        if self.dialect != "json_schema" or not _DIALECT_REJECTED.search(err.detail):
            return False
        if "json_object" in err.detail.lower():
            # llama-cpp-python: "Input should be 'text' or 'json_object'"
            self.dialect = "json_object"
            hint = "set LLM_SCHEMA_DIALECT=json_object to skip this"
        elif self.strict:
            # OpenAI's strict mode refuses keywords it does not support (e.g. maxLength);
            # without strict they are ignored and the rest of the schema still applies.
            self.strict = False
            hint = "using a non-strict json_schema"
        else:
            return False
        logger.warning(
            "LLM server refused the structured-output request; adapting (%s)",
            hint,
            extra={"llm_url": self.base_url, "status": err.status, "error": err.detail},
        )
        return True

    def _body(self, messages: list[Message], *, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._opts.model,
            "messages": self._messages(messages),
            "stream": stream,
            "temperature": self._opts.temperature,
            "max_tokens": self._opts.max_tokens,
        }
        if self._opts.repeat_penalty is not None:
            # Not OpenAI's wire: llama.cpp's servers read it (their default is 1.1).
            body["repeat_penalty"] = self._opts.repeat_penalty
        return body

    def _json_body(self, messages: list[Message], schema: dict[str, Any]) -> dict[str, Any]:
        body = self._body(messages, stream=True)
        body |= {"temperature": 0.0, "max_tokens": STRUCTURED_MAX_TOKENS}
        if self.dialect == "json_schema":
            name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "answer"))[:64]
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": self.strict},
            }
        elif self.dialect == "json_object":
            body["response_format"] = {"type": "json_object", "schema": schema}
        return body

    def _stream_body(self, messages: list[Message]) -> dict[str, Any]:
        return self._body(messages, stream=True)

    def _event(self, line: str, url: str) -> dict[str, Any] | LineState:
        """One SSE line of a completion stream: its JSON object, or ``"more"`` for a line with
        none (comments such as ``: ping - …``, ``event:``, ``id:`` and ``retry:`` fields) and
        ``"done"`` for ``data: [DONE]``. Shared by every OpenAI-wire stream (answers, tool calls).

        Raises:
            LLMError: the line is not a JSON object, or carries the server's error object.
        """
        if not line.startswith("data:"):
            return "more"
        data = line[len("data:") :].strip()
        if data == "[DONE]":
            return "done"
        try:
            obj = json.loads(data)
        except ValueError:
            raise self._malformed(url, "stream event (not JSON)") from None
        self._raise_error_object(obj, url)
        if not isinstance(obj, dict):
            raise self._malformed(url, "stream event (not an object)")
        return obj

    def _parse_line(self, line: str, url: str) -> tuple[str, LineState]:
        obj = self._event(line, url)
        if isinstance(obj, str):
            return "", obj
        try:
            choice = obj["choices"][0] if obj["choices"] else {}
        except (KeyError, TypeError, IndexError):
            raise self._malformed(url, "stream event (no choices)") from None
        raw = choice.get("delta")
        delta: dict[str, Any] = raw if isinstance(raw, dict) else {}
        text = delta.get("content")
        # vLLM and llama-server send reasoning as reasoning_content (some as reasoning)
        reasoning = as_think(delta.get("reasoning_content") or delta.get("reasoning"))
        # Read on to [DONE] after finish_reason (closing early would cost the keep-alive
        # connection), but accept a body that ends there.
        state: LineState = "finished" if choice.get("finish_reason") else "more"
        return reasoning + (text if isinstance(text, str) else ""), state

    def _raise_error_object(self, obj: Any, url: str) -> None:
        if isinstance(obj, dict) and obj.get("error"):
            err = obj["error"]
            detail = err.get("message", err) if isinstance(err, dict) else err
            raise LLMError(f"the LLM at {url} reported an error: {detail}", self.base_url)
