"""HTTP plumbing shared by the chat providers: deadlines, error messages, streamed lines.

Timeouts, and which exception each one raises:

* the caller's ``timeout`` is its budget: when that runs out first, ``TimeoutError`` propagates
  (the agent loop treats it as "budget exhausted", not as a broken LLM);
* the configured limits say the server is too slow or stuck: ``LLM_FIRST_TOKEN_TIMEOUT_S`` to
  the first token and ``LLM_IDLE_TIMEOUT_S`` between tokens (every call is streamed, structured
  ones too), ``LLM_TIMEOUT_S`` for a whole structured call, ``LLM_CONNECT_TIMEOUT_S``; they
  raise ``LLMTimeout`` (an ``LLMError``) naming the URL and the setting.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import httpx

from orchestrator.core.llm import LLMError, LLMTimeout, Message
from orchestrator.core.think import ThinkFilter, Thought, strip_think

logger = logging.getLogger(__name__)

T = TypeVar("T")
SchemaDialect = Literal["json_schema", "json_object", "none"]
# After a stream line: read on; the body may now end cleanly (finish_reason seen); stop.
LineState = Literal["more", "finished", "done"]

# Enough for the planner's and judge's JSON with bounded strings (about 1.6 kB of text).
STRUCTURED_MAX_TOKENS = 512
_EXCERPT_CHARS = 200


@dataclass(frozen=True)
class LLMOptions:
    """Per-provider settings (see ``config.Settings`` for the matching ``LLM_*`` variables)."""

    model: str
    api_key: str = ""
    temperature: float = 0.2
    repeat_penalty: float | None = None
    max_tokens: int = 1024
    connect_timeout_s: float = 5.0
    timeout_s: float = 120.0
    first_token_timeout_s: float = 30.0
    idle_timeout_s: float = 60.0
    num_ctx: int = 8192
    keep_alive: str = "10m"
    schema_dialect: SchemaDialect = "json_schema"
    fold_system: bool = False


class LLMStatusError(LLMError):
    """The server answered with an HTTP error status."""

    def __init__(self, message: str, url: str, status: int, detail: str) -> None:
        super().__init__(message, url)
        self.status = status
        self.detail = detail


def error_detail(body: str) -> str:
    """A short, single-line excerpt of an error body (the ``error`` message when JSON)."""
    detail: Any = body
    try:
        obj = json.loads(body)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        detail = obj.get("error") or obj.get("detail") or obj.get("message") or body
        if isinstance(detail, dict):
            detail = detail.get("message") or json.dumps(detail)
    text = " ".join(str(detail).split())
    return text if len(text) <= _EXCERPT_CHARS else text[: _EXCERPT_CHARS - 1] + "…"


def fold_system(messages: list[Message]) -> list[Message]:
    """Prepend system messages' text to the first user message (and drop them)."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [m for m in messages if m["role"] != "system"]
    if not system:
        return rest
    for i, m in enumerate(rest):
        if m["role"] == "user":
            rest[i] = {"role": "user", "content": f"{system}\n\n{m['content']}"}
            return rest
    return [{"role": "user", "content": system}, *rest]


def as_think(reasoning: Any) -> str:
    """Reasoning sent in its own field, wrapped so the think filter drops it.

    It still counts as progress for the first-token and idle timeouts: a model that thinks for
    a minute is working, not stuck.
    """
    return f"<think>{reasoning}</think>" if isinstance(reasoning, str) and reasoning else ""


class _Deadlines:
    """The deadlines of one call: the caller's budget, the server's whole-call limit (structured
    calls: ``LLM_TIMEOUT_S``) and the current progress deadline (first token, then idle)."""

    def __init__(self, caller_at: float, call_at: float | None = None, call_s: float = 0) -> None:
        self._caller_at = caller_at
        self._call_at = call_at
        self._call_what = f"did not finish within {call_s:g} s (LLM_TIMEOUT_S)"
        self._progress_at = caller_at
        self._progress_what = ""

    def progress(self, at: float, what: str) -> None:
        """The next token is due by ``at`` (``what`` says which limit that is)."""
        self._progress_at, self._progress_what = at, what

    def _own(self) -> tuple[float, str]:
        if self._call_at is not None and self._call_at < self._progress_at:
            return self._call_at, self._call_what
        return self._progress_at, self._progress_what

    def at(self) -> float:
        """The earliest deadline."""
        return min(self._caller_at, self._own()[0])

    def caller_first(self) -> bool:
        """True when the caller's budget ends first (its TimeoutError is the caller's)."""
        return self._caller_at <= self._own()[0]

    def what(self) -> str:
        """The limit that ran out, for the error message."""
        return self._own()[1]


class HttpChatClient:
    """Base of the providers: subclasses describe the wire format, this class moves bytes."""

    chat_path = ""
    ping_path = ""

    def __init__(self, base_url: str, http: httpx.AsyncClient, options: LLMOptions) -> None:
        """``base_url`` is the server's address as configured (named in every error)."""
        self.base_url = base_url.rstrip("/")
        self._root = self._root_url(self.base_url)
        self._http = http
        self._opts = options

    # --- wire format (subclasses) ---

    def _root_url(self, base_url: str) -> str:
        return base_url

    def _headers(self) -> dict[str, str]:
        return {}

    def _json_body(self, messages: list[Message], schema: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _stream_body(self, messages: list[Message]) -> dict[str, Any]:
        raise NotImplementedError

    def _parse_line(self, line: str, url: str) -> tuple[str, LineState]:
        """Return (text delta, state) for one stream line; raise LLMError on an error line."""
        raise NotImplementedError

    # --- LLMClient ---

    async def complete_json(
        self, messages: list[Message], schema: dict[str, Any], *, timeout: float
    ) -> str:
        """Return one schema-constrained completion's text, ``<think>`` blocks removed.

        Streamed, like answers, so a server that sends nothing is given up on at the first-token
        deadline rather than at ``LLM_TIMEOUT_S``, which bounds the whole call.
        """
        self._check_configured()
        loop = asyncio.get_running_loop()
        own = self._opts.timeout_s
        deadlines = _Deadlines(loop.time() + timeout, loop.time() + own, own)
        body = self._json_body(messages, schema)
        text = "".join([delta async for delta in self._deltas(body, deadlines)])
        return strip_think(text)

    async def stream_chat(
        self, messages: list[Message], *, timeout: float, thoughts: bool = False
    ) -> AsyncIterator[str]:
        """Yield answer deltas; closing the generator closes the HTTP stream at once.

        With ``thoughts``, a reasoning model's thinking (``<think>`` blocks in the content, or
        a separate reasoning field) comes too, as :class:`Thought` deltas.
        """
        self._check_configured()
        loop = asyncio.get_running_loop()
        think = ThinkFilter()
        stream = self._deltas(self._stream_body(messages), _Deadlines(loop.time() + timeout))
        try:
            async for text in stream:
                visible = think.feed(text)
                thought = think.take_thoughts()
                if thoughts and thought:
                    yield Thought(thought)
                if visible:
                    yield visible
        finally:
            await stream.aclose()
        tail = think.flush()
        if tail:
            yield tail

    async def _deltas(self, body: dict[str, Any], deadlines: _Deadlines) -> AsyncGenerator[str]:
        """The raw text deltas of one streamed completion (reasoning wrapped in think tags),
        within the first-token, idle and whole-call deadlines."""
        url = self._root + self.chat_path
        loop = asyncio.get_running_loop()
        deadlines.progress(
            loop.time() + self._opts.first_token_timeout_s,
            f"sent no first token within {self._opts.first_token_timeout_s:g} s "
            "(LLM_FIRST_TOKEN_TIMEOUT_S)",
        )
        request = self._http.build_request(
            "POST", url, json=body, headers=self._headers(), timeout=self._httpx_timeout()
        )
        resp = await self._within(self._http.send(request, stream=True), deadlines)
        try:
            if resp.status_code >= 400:
                await self._within(resp.aread(), deadlines)
                raise self._status_error(resp.status_code, resp.text, url)
            lines = resp.aiter_lines()
            state: LineState = "more"
            while state != "done":
                try:
                    line = await self._within(anext(lines), deadlines)
                except StopAsyncIteration:
                    if state == "finished":
                        break
                    raise LLMError(
                        f"the LLM at {url} ended the stream before the answer was complete",
                        self.base_url,
                    ) from None
                if not line.strip():
                    continue
                text, state = self._parse_line(line, url)
                if text:
                    # any token (reasoning included) shows the server is alive
                    deadlines.progress(
                        loop.time() + self._opts.idle_timeout_s,
                        f"sent no token for {self._opts.idle_timeout_s:g} s (LLM_IDLE_TIMEOUT_S)",
                    )
                    yield text
        finally:
            await resp.aclose()

    async def ping(self, *, timeout: float) -> bool:
        """True when the server lists its models within ``timeout``."""
        if not self.base_url:
            return False
        try:
            async with asyncio.timeout(timeout):
                resp = await self._http.get(
                    self._root + self.ping_path, headers=self._headers(), timeout=timeout
                )
        except (TimeoutError, httpx.HTTPError) as exc:
            logger.info("LLM ping failed", extra={"llm_url": self.base_url, "error": repr(exc)})
            return False
        return resp.status_code < 400

    # --- helpers ---

    def _messages(self, messages: list[Message]) -> list[Message]:
        """The messages to send; system text folded into the first user turn if configured."""
        if not self._opts.fold_system:
            return list(messages)
        return fold_system(messages)

    def _check_configured(self) -> None:
        if not self.base_url:
            raise LLMError("no LLM server is configured: set LLM_BASE_URL", "(LLM_BASE_URL unset)")

    def _httpx_timeout(self) -> httpx.Timeout:
        # Reads are bounded by asyncio deadlines (which know the budget); httpx bounds connects.
        connect = self._opts.connect_timeout_s
        return httpx.Timeout(None, connect=connect, pool=connect)

    async def _within(self, aw: Awaitable[T], deadlines: _Deadlines) -> T:
        """Await ``aw`` until the earliest deadline; map httpx errors to LLMError."""
        url = self._root + self.chat_path
        try:
            async with asyncio.timeout_at(deadlines.at()):
                return await aw
        except TimeoutError:
            if deadlines.caller_first():
                raise
            raise LLMTimeout(f"the LLM at {url} {deadlines.what()}", self.base_url) from None
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, url) from exc

    def _transport_error(self, exc: httpx.HTTPError, url: str) -> LLMError:
        logger.warning("LLM transport error", extra={"llm_url": url, "error": repr(exc)})
        if isinstance(exc, httpx.ConnectTimeout):
            secs = self._opts.connect_timeout_s
            msg = f"connecting to the LLM at {url} timed out after {secs:g} s"
        elif isinstance(exc, httpx.ConnectError):
            msg = f"cannot connect to the LLM at {url} (connection refused or host unreachable)"
        elif isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
            msg = f"the LLM at {url} closed the connection before the answer was complete"
        elif isinstance(exc, httpx.TimeoutException):
            msg = f"timed out talking to the LLM at {url}"
        else:
            msg = f"could not talk to the LLM at {url} ({type(exc).__name__})"
        return LLMError(msg, self.base_url)

    def _status_error(self, status: int, body: str, url: str) -> LLMStatusError:
        detail = error_detail(body)
        return LLMStatusError(
            f"the LLM at {url} answered HTTP {status}: {detail}", self.base_url, status, detail
        )

    def _malformed(self, url: str, what: str) -> LLMError:
        return LLMError(f"the LLM at {url} sent a malformed {what}", self.base_url)
