"""The long-lived objects behind the API, and the production wiring that builds them."""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

import grpc
import httpx

from orchestrator import overrides
from orchestrator.adapters.corpus.indexer import Indexer
from orchestrator.adapters.corpus.service import CorpusService
from orchestrator.adapters.corpus.uploads import Uploads
from orchestrator.adapters.grpc import calls
from orchestrator.adapters.grpc.corpus import CorpusClient, Extractor
from orchestrator.adapters.grpc.ranker import RankerClient
from orchestrator.adapters.grpc.reader import ReaderClient
from orchestrator.adapters.llm.factory import build_llm
from orchestrator.adapters.offline import NoWebReader, NoWebSearcher
from orchestrator.adapters.search.brave import BraveClient
from orchestrator.adapters.search.cache import search_cache
from orchestrator.adapters.search.ratelimit import BackendRates
from orchestrator.adapters.search.searxng import SearxngClient
from orchestrator.adapters.search.service import Backend, SearchService
from orchestrator.adapters.store.select import SharedSessionStore, open_session_db, shared
from orchestrator.adapters.store.settings_db import MemorySettingsDB, SettingsDB, SqliteSettingsDB
from orchestrator.config import Settings
from orchestrator.core.ask import smalltalk
from orchestrator.core.ask.brain import LLMBrain
from orchestrator.core.ask.state import Deps
from orchestrator.core.lanes import LlmLanes
from orchestrator.core.ready import ReadyGate
from orchestrator.core.sessions import SessionDB, SessionStore
from orchestrator.wiring.agent import agent_deps

# Corpus documents (GetDocument) and extraction requests can be megabytes; gRPC's client
# default of 4 MiB would refuse them. The servers accept 64 MiB.
_CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
    # gRPC's default reconnect backoff (1 s growing to 120 s, with jitter) left questions
    # degraded for 4-9 s after a reader or ranker restart; retry within a second instead
    # (a connection attempt to 127.0.0.1 or a compose neighbour costs next to nothing).
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]

#: A readiness probe: True when the dependency answers within ``timeout`` seconds.
Probe = Callable[[float], Awaitable[bool]]
#: True while a gRPC channel is between connections (shown as "reconnecting" in /readyz).
Reconnecting = Callable[[], bool]


def reconnecting(channel: grpc.aio.Channel) -> Reconnecting:
    """Whether ``channel`` is (re)connecting or waiting to retry after a failed attempt.

    Asks without connecting: asking must not change what it reports.
    """

    def check() -> bool:
        state = channel.get_state(try_to_connect=False)
        return state in (
            grpc.ChannelConnectivity.TRANSIENT_FAILURE,
            grpc.ChannelConnectivity.CONNECTING,
        )

    return check


@dataclass(frozen=True)
class Runtime:
    """What the routes need; built in the app's lifespan and kept on ``app.state``."""

    deps: Deps
    sessions: SessionStore
    probes: dict[str, Probe] = field(default_factory=dict)
    corpus: CorpusService | None = None
    # gRPC channels by dependency name, for /readyz's "reconnecting".
    channels: dict[str, Reconnecting] = field(default_factory=dict)
    # The web search backends (shown in /readyz with Brave's quota).
    search: SearchService | None = None
    # Settings overrides (PATCH /v1/settings): where they are kept, the environment's settings
    # they apply to, and how to build the next runtime from changed settings (None: fixed).
    settings_db: SettingsDB | None = None
    defaults: Settings | None = None
    rewire: Callable[[Settings], Runtime] | None = None
    settings_lock: asyncio.Lock = field(default_factory=asyncio.Lock)


async def _llm_probe(gate: ReadyGate, ping: Callable[..., Awaitable[bool]], t: float) -> bool:
    if gate.ready:
        return True
    gate.ready = bool(await ping(timeout=t))
    return gate.ready


RuntimeFactory = Callable[[Settings], AbstractAsyncContextManager[Runtime]]


def session_store(settings: Settings, db: SessionDB | None = None) -> SessionStore:
    """The session store sized by ``settings`` (over ``db`` when sessions are persisted)."""
    # A database shared with other replicas: sessions are read again at each use (select.py).
    store = SharedSessionStore if shared(settings) else SessionStore
    return store(
        ttl_s=settings.session_ttl_s,
        max_chars=settings.session_max_chars,
        max_sessions=settings.max_sessions,
        max_total_chars=settings.session_cache_chars,
        db=db,
    )


def search_service(settings: Settings, http: httpx.AsyncClient) -> SearchService:
    """The configured web search backends behind one service (cache, rates, failover)."""
    backends: list[Backend] = []
    for name in settings.backend_names():
        if name == "brave":
            brave = BraveClient(
                settings.brave_api_key.get_secret_value(),
                http,
                base_url=settings.brave_url,
                timeout=settings.searxng_timeout_s,
            )
            backends.append(Backend("brave", brave))
            continue
        urls = settings.searxng_urls() or [""]  # "": searches fail saying SEARXNG_URL is unset
        for url in urls:
            client = SearxngClient(
                url,
                http,
                settings.searxng_timeout_s,
                retry_backoff_s=settings.searxng_retry_backoff_s,
                retries=settings.searxng_retries,
            )
            label = "searxng" if len(urls) == 1 else f"searxng@{urlsplit(url).netloc}"
            backends.append(Backend(label, client))
    rates = {"searxng": settings.search_rate_limit, "brave": settings.brave_rate_limit}
    # In memory, or shared through Redis by every replica (ORCHESTRATOR_REDIS_URL).
    cache = search_cache(settings.search_cache_s, settings.redis_url)
    return SearchService(
        backends,
        mode=settings.search_mode,
        cache=cache,
        rates=BackendRates(rates, redis_url=settings.redis_url),
        limit=asyncio.Semaphore(settings.searxng_max_inflight),
        backoff_s=settings.searxng_backoff_s,
        rate_wait_s=settings.searxng_timeout_s,
    )


def search_probes(service: SearchService) -> dict[str, Probe]:
    """/readyz probes: "searxng" (any instance answers) and "brave" (a key is set)."""

    async def any_up(kind: str, timeout: float) -> bool:
        mine = [b for b in service.backends if b.name.split("@", 1)[0] == kind]
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(b.client.ping(timeout=timeout)) for b in mine]
        return any(t.result() for t in tasks)

    kinds = dict.fromkeys(b.name.split("@", 1)[0] for b in service.backends)
    return {k: functools.partial(any_up, k) for k in kinds}


def corpus_service(settings: Settings, corpus: CorpusClient, extractor: Extractor) -> CorpusService:
    """The corpus service configured by ``settings``."""
    indexer = Indexer(
        corpus,
        extractor,
        max_file_bytes=settings.corpus_max_file_bytes,
        concurrency=settings.corpus_concurrency,
    )
    # Canonical, like every document id: the owner's prefix must match the ids of their files.
    upload_dir = os.path.realpath(settings.upload_dir) if settings.upload_dir else ""
    service = CorpusService(
        corpus,
        indexer,
        corpus_dir=settings.corpus_dir,
        allow_any_path=settings.corpus_allow_any_path,
        rescan_s=settings.corpus_rescan_s,
        roots=settings.corpus_root_list(),
        allow_outside=settings.corpus_allow_outside,
        upload_dir=upload_dir,
    )
    if upload_dir:
        service.uploads = Uploads(
            corpus,
            extractor,
            service.documents,
            max_bytes=settings.upload_max_bytes,
            max_files=settings.upload_max_files,
            max_documents=settings.upload_max_documents,
        )
    return service


@dataclass(frozen=True)
class _Fixed:
    """What stays when settings change: the HTTP pool, the gRPC clients, the LLM lanes."""

    http: httpx.AsyncClient
    reader: ReaderClient
    ranker: RankerClient
    corpus: CorpusClient
    lanes: LlmLanes


def _wire(settings: Settings, fixed: _Fixed) -> tuple[Deps, SearchService | None, dict[str, Probe]]:
    """The settings-dependent part of the runtime: the LLM, the search backends, the agent's
    tools, and their readiness probes (built again when settings change)."""
    llm = build_llm(settings, fixed.http)
    # Web search off: no search client and no page reads exist to be reached by mistake.
    web_on = settings.web_search == "on"
    searcher = search_service(settings, fixed.http) if web_on else None
    gate = ReadyGate(lambda t: llm.ping(timeout=t))
    deps = Deps(
        settings=settings,
        brain=LLMBrain(llm, settings, fixed.lanes),
        searcher=searcher if searcher is not None else NoWebSearcher(),
        reader=fixed.reader if web_on else NoWebReader(),
        ranker=fixed.ranker,
        corpus=fixed.corpus,
        llm_gate=gate,
        **agent_deps(settings, fixed.http, fixed.corpus),
    )
    probes: dict[str, Probe] = {}
    web = settings.searxng_url or "web" in settings.default_sources()
    if searcher is not None and web:
        # Offline (web search off, or `make run` with only local documents) nothing needs a
        # search backend.
        probes.update(search_probes(searcher))
    # Ready once, ready for good (see core/ready.py): a busy server is not down.
    probes["llm"] = lambda t: _llm_probe(gate, llm.ping, t)
    return deps, searcher, probes


async def open_settings_db(data_dir: str) -> SettingsDB:
    """The overrides' store: the database in ``data_dir``, else this process's memory."""
    if data_dir:
        return await SqliteSettingsDB.open(data_dir)
    return MemorySettingsDB()


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
        index_ch = calls.channel(settings.index_addr, _CHANNEL_OPTIONS)
        background: asyncio.Task[None] | None = None
        # The small-talk classifier loads its embedder in a thread (~1-3 s), not on question 1.
        warming = asyncio.create_task(smalltalk.preload())
        service: CorpusService | None = None
        searcher: SearchService | None = None
        db = await open_session_db(settings)  # SQLite, PostgreSQL or none: adapters/store/select.py
        settings_db: SettingsDB | None = None
        try:
            reader = ReaderClient(
                reader_ch,
                limit=asyncio.Semaphore(settings.reader_max_inflight),
                retry_delay_s=settings.read_retry_delay_s,
            )
            ranker = RankerClient(ranker_ch, limit=asyncio.Semaphore(settings.ranker_max_inflight))
            corpus = CorpusClient(index_ch, limit=asyncio.Semaphore(settings.index_max_inflight))
            lanes = LlmLanes(settings.llm_max_inflight, settings.llm_research_inflight)
            fixed = _Fixed(http, reader, ranker, corpus, lanes)
            # Overrides from PATCH /v1/settings, kept in the database, over the environment.
            settings_db = await open_settings_db(settings.data_dir)
            # (an invalid stored value stops the start, naming it, as a bad variable would)
            current = overrides.apply(settings, await settings_db.load())
            deps, searcher, live = _wire(current, fixed)
            probes: dict[str, Probe] = {
                "reader": lambda t: reader.ping(timeout=t),
                "ranker": lambda t: ranker.ping(timeout=t),
                "index": lambda t: corpus.ping(timeout=t),
            }
            service = corpus_service(settings, corpus, Extractor(reader_ch))
            if settings.corpus_dir:
                background = asyncio.create_task(service.run_background())
            channels = {"reader": reconnecting(reader_ch), "ranker": reconnecting(ranker_ch)}
            sessions = session_store(settings, db)
            fixed_probes = dict(probes)

            def rewire(changed: Settings) -> Runtime:
                deps, searcher, live = _wire(changed, fixed)
                return replace(runtime, deps=deps, search=searcher, probes=fixed_probes | live)

            runtime = Runtime(
                deps,
                sessions,
                probes | live,
                service,
                channels,
                searcher,
                settings_db=settings_db,
                defaults=settings,
                rewire=rewire,
            )
            yield runtime
        finally:
            warming.cancel()  # a load still running finishes in its thread, unawaited
            if background is not None:
                background.cancel()
                await asyncio.wait([background])
            if service is not None:
                await service.aclose()
            if searcher is not None:
                await searcher.aclose()
            await reader_ch.close()
            await ranker_ch.close()
            await index_ch.close()
            if db is not None:
                await db.close()
            if settings_db is not None:
                await settings_db.close()
