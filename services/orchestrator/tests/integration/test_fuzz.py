"""A bounded schema fuzz: Schemathesis draws requests from the served `/openapi.json`, valid ones
and ones that break the schema, and sends them to the real app on 127.0.0.1 (uvicorn with the
production protocol, the real reader, ranker and index, the scripted LLM and SearXNG). No
request may get a 5xx. Derandomized and bounded (``CASES``): the same cases every run."""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from services.orchestrator.tests.fakes.fake_llm import FakeLLM
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng
from services.orchestrator.tests.integration.research_support import research_reply
from services.orchestrator.tests.integration.support import (
    results_for,
    serve_production,
    serve_world,
    stack_settings,
)

# About 90 s on a quiet 2-core machine; every operation gets drawn many times over.
CASES = 400


class Served:
    """The app and everything under it on an event loop of its own (the fuzz is synchronous)."""

    def __init__(self) -> None:
        self.url = ""
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="fuzzed-app", daemon=True)

    def __enter__(self) -> Served:
        self._thread.start()
        self._ready.wait(120)
        if self._error is not None or not self.url:
            raise RuntimeError("the app did not start") from self._error
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(60)

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except Exception as err:  # noqa: BLE001 - reported by __enter__
            self._error = err
            self._ready.set()

    async def _serve(self) -> None:
        async with (
            serve_world() as world,
            FakeLLM(script=research_reply) as llm,
            FakeSearxng(results_for(world)) as searx,
        ):
            # Uploads on, so the fuzz reaches their checks (off, every upload is a plain 503).
            uploads = Path(tempfile.mkdtemp(prefix="quarry-fuzz-uploads-"))
            config = stack_settings(
                world,
                llm,
                searx,
                upload_dir=str(uploads),
                llm_provider="openai",
                question_budget_s=30,
                research_review_delay_s=0,
                # a fuzz is many clients in one: counted, but never stopped by the limits
                rate_questions="100000/minute",
                rate_research="100000/minute",
                rate_indexing="100000/minute",
            )
            async with serve_production(config) as url:
                self.url = url
                self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
                self._ready.set()
                await self._stop.wait()
            shutil.rmtree(uploads, ignore_errors=True)


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with Served() as app:
        yield app


def test_no_fuzzed_request_gets_a_5xx(served: Served) -> None:
    schema = schemathesis.openapi.from_url(served.url + "/openapi.json")
    cases = st.one_of(
        schema.as_strategy(GenerationMode.POSITIVE), schema.as_strategy(GenerationMode.NEGATIVE)
    )
    statuses: Counter[int] = Counter()
    failures: list[str] = []

    @settings(
        max_examples=CASES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=cases)
    def send(case: Any) -> None:
        try:
            response = case.call(base_url=served.url, timeout=60)
        except (requests.exceptions.InvalidHeader, requests.exceptions.InvalidURL, ValueError):
            statuses[0] += 1  # a request the client library will not send at all
            return
        statuses[response.status_code] += 1
        if response.status_code >= 500:
            failures.append(f"{case.method} {case.formatted_path}: {response.text[:300]}")

    send()
    sys.stdout.write(
        f"\nfuzz: {sum(statuses.values())} cases, statuses {sorted(statuses.items())}\n"
    )
    assert sum(statuses.values()) == CASES
    assert not failures, "\n".join(failures)
