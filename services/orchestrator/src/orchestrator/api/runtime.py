"""The long-lived objects behind the API, and the production wiring that builds them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field

import httpx

from orchestrator.agent.brain import LLMBrain
from orchestrator.agent.search import LimitedSearcher
from orchestrator.agent.state import Deps
from orchestrator.clients import calls
from orchestrator.clients.corpus import CorpusClient, Extractor
from orchestrator.clients.ranker import RankerClient
from orchestrator.clients.reader import ReaderClient
from orchestrator.clients.searxng import SearxngClient
from orchestrator.config import Settings
from orchestrator.corpus.indexer import Indexer
from orchestrator.corpus.service import CorpusService
from orchestrator.llm.factory import build_llm
from orchestrator.sessions import SessionStore

# Corpus documents (GetDocument) and extraction requests can be megabytes; gRPC's client
# default of 4 MiB would refuse them. The servers accept 64 MiB.
_CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
]

#: A readiness probe: True when the dependency answers within ``timeout`` seconds.
Probe = Callable[[float], Awaitable[bool]]


@dataclass(frozen=True)
class Runtime:
    """What the routes need; built in the app's lifespan and kept on ``app.state``."""

    deps: Deps
    sessions: SessionStore
    probes: dict[str, Probe] = field(default_factory=dict)
    corpus: CorpusService | None = None


RuntimeFactory = Callable[[Settings], AbstractAsyncContextManager[Runtime]]


def session_store(settings: Settings) -> SessionStore:
    """The session store sized by ``settings``."""
    return SessionStore(
        ttl_s=settings.session_ttl_s,
        max_chars=settings.session_max_chars,
        max_sessions=settings.max_sessions,
    )


def corpus_service(settings: Settings, corpus: CorpusClient, extractor: Extractor) -> CorpusService:
    """The corpus service configured by ``settings``."""
    indexer = Indexer(
        corpus,
        extractor,
        max_file_bytes=settings.corpus_max_file_bytes,
        concurrency=settings.corpus_concurrency,
    )
    return CorpusService(
        corpus,
        indexer,
        corpus_dir=settings.corpus_dir,
        allow_any_path=settings.corpus_allow_any_path,
        rescan_s=settings.corpus_rescan_s,
        roots=settings.corpus_root_list(),
        allow_outside=settings.corpus_allow_outside,
    )


@asynccontextmanager
async def production_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """Open the gRPC channels and the HTTP client; close them when the app stops."""
    # One pool for SearXNG and the LLM; connections are reused across questions.
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=32)
    # Each call passes its own timeout from the question's budget; this is only the fallback.
    timeout = httpx.Timeout(settings.question_budget_s, connect=5.0)
    async with httpx.AsyncClient(limits=limits, timeout=timeout) as http:
        # (OpenTelemetry's instrumentor adds its interceptor in front of ours.)
        reader_ch = calls.channel(settings.reader_addr, _CHANNEL_OPTIONS)
        ranker_ch = calls.channel(settings.ranker_addr, _CHANNEL_OPTIONS)
        background: asyncio.Task[None] | None = None
        service: CorpusService | None = None
        try:
            reader = ReaderClient(
                reader_ch,
                limit=asyncio.Semaphore(settings.reader_max_inflight),
                retry_delay_s=settings.read_retry_delay_s,
            )
            ranker_limit = asyncio.Semaphore(settings.ranker_max_inflight)
            ranker = RankerClient(ranker_ch, limit=ranker_limit)
            corpus = CorpusClient(ranker_ch, limit=ranker_limit)
            llm = build_llm(settings, http)
            searxng = SearxngClient(
                settings.searxng_url,
                http,
                settings.searxng_timeout_s,
                retry_backoff_s=settings.searxng_retry_backoff_s,
            )
            deps = Deps(
                settings=settings,
                brain=LLMBrain(llm, settings, asyncio.Semaphore(settings.llm_max_inflight)),
                searcher=LimitedSearcher(searxng, asyncio.Semaphore(settings.searxng_max_inflight)),
                reader=reader,
                ranker=ranker,
                corpus=corpus,
            )
            probes: dict[str, Probe] = {
                "reader": lambda t: reader.ping(timeout=t),
                "ranker": lambda t: ranker.ping(timeout=t),
                "searxng": lambda t: searxng.ping(timeout=t),
                "llm": lambda t: llm.ping(timeout=t),
            }
            service = corpus_service(settings, corpus, Extractor(reader_ch))
            if settings.corpus_dir:
                background = asyncio.create_task(service.run_background())
            yield Runtime(deps, session_store(settings), probes, service)
        finally:
            if background is not None:
                background.cancel()
                await asyncio.wait([background])
            if service is not None:
                await service.aclose()
            await reader_ch.close()
            await ranker_ch.close()
