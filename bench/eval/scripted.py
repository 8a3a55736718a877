"""The LLM side of an eval run: the project's scripted OpenAI-compatible server (FakeLLM)
on its own thread, deciding like a perfect agent and recording what each call was given.

Policies, per question (looked up by its text in the prompt):
* ``snippets``: the snippet judge says sufficient (the snippets-only baseline);
* ``one_round``: the snippet judge says insufficient (pages are read), the chunk judge sufficient;
* ``gap``: the first chunk judge says partial, asking the ``gap_query`` of every part whose
  pattern is not in the passages it was shown (sufficient when none is missing), then sufficient;
* ``relay``: every call goes to a real model (``--llm``); nothing is decided here.
The planner keeps the question (optimized_query = question) except under ``relay``.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from bench.eval.questions import Question
from services.orchestrator.tests.fakes.fake_llm import FakeLLM
from services.orchestrator.tests.fakes.llm_script import Call, Fail, Reply, Say, default_reply

Policy = Literal["snippets", "one_round", "gap", "relay"]
START_TIMEOUT_S = 30.0


@dataclass
class Record:
    """What the LLM saw for one question's run."""

    synthesis: list[str] = field(default_factory=list)  # each synthesis call's source texts
    drafts: list[str] = field(default_factory=list)  # each relayed synthesis call's reply, raw
    chunk_judges: int = 0


def sources_text(call: Call) -> str:
    """The evidence of a prompt exactly as fenced into it (title and text per source); if
    the prompt has no fences the fake recognises, its last user message minus the question."""
    if call.sources:
        return "\n\n".join(text for _, text in call.sources)
    users = [str(m.get("content", "")) for m in call.messages if m.get("role") == "user"]
    return users[-1].rsplit("Question:", 1)[0] if users else ""


class Director:
    """Holds each question's policy and record; answers the scripted server's calls."""

    def __init__(self, relay_url: str = "", relay_model: str = "") -> None:
        self._lock = threading.Lock()
        self._asked: dict[str, tuple[Question, Policy]] = {}
        self.records: dict[str, Record] = defaultdict(Record)
        self._relay_url = relay_url.rstrip("/")
        self._relay_model = relay_model

    def begin(self, q: Question, policy: Policy) -> Record:
        """Start a run of ``q`` under ``policy``; its fresh record."""
        with self._lock:
            self._asked[q.question] = (q, policy)
            self.records[q.question] = Record()
            return self.records[q.question]

    async def __call__(self, call: Call) -> Reply | None:
        text = call.question or ""
        q: Question | None = None
        policy: Policy = "one_round"
        with self._lock:
            if text in self._asked:
                q, policy = self._asked[text]
            record = self.records[text]
        if call.kind == "synthesis":
            record.synthesis.append(sources_text(call))
        if policy == "relay":
            reply = await self._relay(call)
            if call.kind == "synthesis" and isinstance(reply, Say):
                record.drafts.append(reply.text)
            return reply
        if call.kind == "judge":
            return self._judge(call, q, policy, record)
        return None  # the default script: keep the question, answer from the sources

    def _judge(self, call: Call, q: Question | None, policy: Policy, record: Record) -> Reply:
        snippets = "search result snippets" in call.prompt
        if snippets:
            verdict = "sufficient" if policy == "snippets" else "insufficient"
            return _verdict(verdict, [])
        record.chunk_judges += 1
        if policy == "gap" and q is not None and record.chunk_judges == 1:
            missing = q.missing_in(sources_text(call))
            gaps = [p.gap_query for p in missing if p.gap_query]
            if gaps:
                return _verdict("partial", gaps)
        return _verdict("sufficient", [])

    async def _relay(self, call: Call) -> Reply:
        body: dict[str, Any] = {**call.body, "stream": False}
        if self._relay_model:
            body["model"] = self._relay_model
        async with httpx.AsyncClient(timeout=600) as client:
            reply = await client.post(f"{self._relay_url}/v1/chat/completions", json=body)
        if reply.status_code != 200:
            return Fail(reply.status_code, reply.text[:500])
        message = reply.json()["choices"][0]["message"]
        return Say(str(message.get("content") or ""))


def _verdict(sufficiency: str, gaps: list[str]) -> Reply:
    return Say.json(
        {"reasoning": "scripted eval judge", "sufficiency": sufficiency, "gap_queries": gaps}
    )


@contextmanager
def scripted_llm(director: Director) -> Iterator[str]:
    """Run FakeLLM with ``director`` as its script on a thread of its own; yield its URL.

    Its own thread and loop: the stack's start-up checks call it while this thread blocks.
    """
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    stop = asyncio.Event()
    url: list[str] = []

    async def serve() -> None:
        async with FakeLLM(script=director) as llm:
            url.append(llm.url)
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    try:
        if not ready.wait(START_TIMEOUT_S):
            raise RuntimeError("the scripted LLM server did not start")
        yield url[0]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(START_TIMEOUT_S)
        loop.close()


__all__ = ["Director", "Policy", "Record", "default_reply", "scripted_llm", "sources_text"]
