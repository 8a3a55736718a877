"""The default experience (issue 14) through the real stack: a question asked while the model
loads waits and answers; the mode changes how many LLM calls a question makes; an answer the
model left uncited gets citations from the engine.

Gemma 3 270M does the plumbing (never judged on its decisions). The citation test needs an
answer with no `[n]` at all, which no real model writes on demand: there the LLM is the
scripted server speaking the real OpenAI wire format, and everything else is real.
"""

from __future__ import annotations

import asyncio
import re
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest

from services.orchestrator.tests.fakes.fake_llm import FakeLLM, Say
from services.orchestrator.tests.fakes.llm_script import (
    Call,
    Reply,
    default_reply,
    synthesis_from_sources,
)
from tests.conftest import free_port
from tests.e2e.protocol import (
    CITATION,
    CLIENT_TIMEOUT,
    Event,
    ask,
    check_citations,
    check_protocol,
    first,
    ndjson_lines,
    wait_for,
)
from tests.e2e.proxy import CountingProxy
from tests.e2e.stack import (
    Stack,
    llm_env,
    process,
    run_llm,
    run_stack,
    stack_env,
    wait_http,
)
from tests.e2e.web import FixtureWeb

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

QUESTION = "Who designed the Zephyrine Lighthouse?"


def test_speed_mode_makes_one_llm_call_and_balanced_more(stack: Stack, llm: CountingProxy) -> None:
    calls = {}
    for mode in ("speed", "balanced"):
        before = llm.counts.total
        events = ask(stack.api, QUESTION, options={"mode": mode})
        check_protocol(events)
        assert first(events, "run.started").data["mode"] == mode
        assert events[-1].data["status"] == "answered", events[-1].data
        calls[mode] = (events[-1].data["llm_calls"], llm.counts.total - before)
    # speed: a clear question needs no planner and no judges, only the answer
    assert calls["speed"] == (1, 1), calls
    # balanced: planner, snippet judge (and maybe more), answer; invalid JSON adds retries
    assert calls["balanced"][0] >= 3, calls
    assert calls["balanced"][1] >= calls["balanced"][0], calls


def _ask_in_background(api: str, query: str, seen: list[Event]) -> list[Event]:
    with (
        httpx.Client(base_url=api, timeout=CLIENT_TIMEOUT) as client,
        client.stream(
            "POST",
            "/v1/search",
            # speed: one LLM call, so the test is about waiting, not about a slow machine
            json={"query": query, "options": {"mode": "speed"}},
            headers={"Accept": "application/x-ndjson"},
        ) as reply,
    ):
        assert reply.status_code == 200, reply.read()
        for event in ndjson_lines(reply):
            seen.append(event)
    return seen


def test_a_question_asked_while_the_model_loads_waits_and_answers(
    searx: str, web: FixtureWeb, tmp_path: Path
) -> None:
    llm_port = free_port()
    url = f"http://127.0.0.1:{llm_port}"
    env = llm_env(url) | {"LLM_WAIT_S": "300"}
    with ExitStack() as stack, ThreadPoolExecutor(1) as pool:
        env_all, ports = stack_env(tmp_path, searx, **env)
        procs = {
            name: stack.enter_context(
                process([sys.executable, "-m", name], env_all, tmp_path / f"{name}.log")
            )
            for name in ("reader", "ranker", "index", "orchestrator")
        }
        api = f"http://127.0.0.1:{ports['orchestrator']}"
        wait_http(f"{api}/healthz", procs["orchestrator"], tmp_path / "orchestrator.log", 120)

        def only_llm_down() -> bool:
            # The reader and ranker start beside the orchestrator: wait until they answer.
            return bool(httpx.get(f"{api}/readyz", timeout=10).json()["down"] == ["llm"])

        assert wait_for(only_llm_down, 60)
        ready = httpx.get(f"{api}/readyz", timeout=10)
        assert ready.status_code == 503, ready.text
        assert "loading" in ready.json()["detail"]

        seen: list[Event] = []
        future: Future[list[Event]] = pool.submit(_ask_in_background, api, QUESTION, seen)
        assert wait_for(lambda: any(e.type == "progress" for e in seen), 60), seen
        assert first(seen, "progress").data["stage"] == "llm_loading"
        assert not future.done()
        # Now the model arrives on the port the orchestrator was told about.
        stack.enter_context(run_llm(tmp_path, port=llm_port))
        events = future.result(timeout=400)
    check_protocol(events)
    stages = [e.data["stage"] for e in events if e.type == "progress"]
    assert stages == ["llm_loading", "llm_ready"], stages
    errors = [e.data for e in events if e.type == "error"]
    assert events[-1].data["status"] == "answered", (events[-1].data, errors)
    assert first(events, "answer.completed").data["text"].strip()


def _uncited(call: Call) -> Reply:
    """Valid plans and verdicts; an answer copied from the sources with every [n] left out."""
    if call.kind == "synthesis":
        return Say(re.sub(r"\s*\[\d+\]", "", synthesis_from_sources(call.sources)))
    return default_reply(call)


@contextmanager
def scripted_llm() -> Iterator[str]:
    """The scripted LLM server in a background thread's event loop; yields its base URL."""
    box: Future[tuple[str, asyncio.AbstractEventLoop, asyncio.Event]] = Future()

    async def serve() -> None:
        stop = asyncio.Event()
        async with FakeLLM(model="scripted", script=_uncited) as llm:
            box.set_result((llm.url, asyncio.get_running_loop(), stop))
            await stop.wait()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    url, loop, stop = box.result(timeout=30)
    try:
        yield url
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)


def test_an_answer_without_citations_gets_them_from_the_engine(
    searx: str, web: FixtureWeb, tmp_path: Path
) -> None:
    with scripted_llm() as url:
        env = {"LLM_PROVIDER": "openai", "LLM_BASE_URL": url, "LLM_MODEL": "scripted"}
        with run_stack(tmp_path, searx, **env) as running:
            events = ask(running.api, QUESTION, options={"mode": "speed"})
    check_protocol(events)
    assert events[-1].data["status"] == "answered", events[-1].data
    streamed = "".join(e.data["text"] for e in events if e.type == "answer.delta")
    assert streamed.strip()
    assert not CITATION.search(streamed), streamed
    done = first(events, "answer.completed").data
    assert done["added_citations"], done
    assert set(done["added_citations"]) <= set(done["cited"])
    check_citations(events)
