"""The long-lived objects behind the API, and the production wiring that builds them."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace

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
from orchestrator.adapters.search.service import SearchService
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
from orchestrator.wiring.search import Probe as Probe  # the readiness probe type, for the app
from orchestrator.wiring.search import SearchShared, search_probes, search_service

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
    """What stays when settings change: the HTTP pool, the gRPC channels and clients, the LLM
    lanes, and the search cache and rates (wiring/search.py)."""

    http: httpx.AsyncClient
    channels: dict[str, grpc.aio.Channel]
    reader: ReaderClient
    ranker: RankerClient
    corpus: CorpusClient
    lanes: LlmLanes
    search: SearchShared


def _wire(settings: Settings, fixed: _Fixed) -> tuple[Deps, SearchService | None, dict[str, Probe]]:
    """The settings-dependent part of the runtime: the LLM, the search backends, the agent's
    tools, and their readiness probes (built again when settings change)."""
    llm = build_llm(settings, fixed.http)
    # Web search off: no search client and no page reads exist to be reached by mistake.
    web_on = settings.web_search == "on"
    searcher = search_service(settings, fixed.http, fixed.search) if web_on else None
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


async def _open_fixed(settings: Settings, stack: AsyncExitStack) -> _Fixed:
    """The HTTP pool, gRPC channels and clients, lanes and search cache; ``stack`` closes them."""
    # One pool for SearXNG and the LLM; connections are reused across questions.
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=32)
    # Each call passes its own timeout from the question's budget; this is only the fallback.
    timeout = httpx.Timeout(settings.question_budget_s, connect=5.0)
    http = await stack.enter_async_context(httpx.AsyncClient(limits=limits, timeout=timeout))
    # (OpenTelemetry's instrumentor adds its interceptor in front of ours.)
    addrs = {"reader": settings.reader_addr, "ranker": settings.ranker_addr}
    channels = {k: calls.channel(a, _CHANNEL_OPTIONS) for k, a in addrs.items()}
    channels["index"] = calls.channel(settings.index_addr, _CHANNEL_OPTIONS)
    for channel in channels.values():
        stack.push_async_callback(channel.close)
    search = SearchShared.open(settings)
    stack.push_async_callback(search.aclose)
    reader = ReaderClient(
        channels["reader"],
        limit=asyncio.Semaphore(settings.reader_max_inflight),
        retry_delay_s=settings.read_retry_delay_s,
    )
    ranker = RankerClient(channels["ranker"], limit=asyncio.Semaphore(settings.ranker_max_inflight))
    corpus = CorpusClient(channels["index"], limit=asyncio.Semaphore(settings.index_max_inflight))
    lanes = LlmLanes(settings.llm_max_inflight, settings.llm_research_inflight)
    return _Fixed(http, channels, reader, ranker, corpus, lanes, search)


async def _open_corpus(settings: Settings, fixed: _Fixed, stack: AsyncExitStack) -> CorpusService:
    """The corpus service, refreshing CORPUS_DIR in the background when one is set."""
    service = corpus_service(settings, fixed.corpus, Extractor(fixed.channels["reader"]))
    stack.push_async_callback(service.aclose)
    if settings.corpus_dir:
        background = asyncio.create_task(service.run_background())

        async def stop() -> None:
            background.cancel()
            await asyncio.wait([background])

        stack.push_async_callback(stop)
    return service


def _runtime(
    settings: Settings,
    current: Settings,
    fixed: _Fixed,
    *,
    sessions: SessionStore,
    corpus: CorpusService,
    settings_db: SettingsDB,
) -> Runtime:
    """The runtime over ``fixed`` for ``current`` (the settings with their overrides), with a
    ``rewire`` that builds the next one when they change."""
    probes: dict[str, Probe] = {
        "reader": lambda t: fixed.reader.ping(timeout=t),
        "ranker": lambda t: fixed.ranker.ping(timeout=t),
        "index": lambda t: fixed.corpus.ping(timeout=t),
    }
    channels = {k: reconnecting(fixed.channels[k]) for k in ("reader", "ranker")}

    def rewire(changed: Settings) -> Runtime:
        # The old runtime's searcher needs no closing: it owns no connection (wiring/search.py),
        # so questions still running on it finish undisturbed.
        deps, searcher, live = _wire(changed, fixed)
        return replace(runtime, deps=deps, search=searcher, probes=probes | live)

    deps, searcher, live = _wire(current, fixed)
    runtime = Runtime(
        deps,
        probes=probes | live,
        channels=channels,
        search=searcher,
        defaults=settings,
        rewire=rewire,
        sessions=sessions,
        corpus=corpus,
        settings_db=settings_db,
    )
    return runtime


@asynccontextmanager
async def production_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """Open the channels, HTTP client and databases; close them when the app stops."""
    async with AsyncExitStack() as stack:
        # The small-talk classifier loads its embedder in a thread (~1-3 s), not on question 1.
        warming = asyncio.create_task(smalltalk.preload())
        stack.callback(warming.cancel)  # a load still running finishes in its thread, unawaited
        fixed = await _open_fixed(settings, stack)
        db = await open_session_db(settings)  # SQLite, PostgreSQL or none: adapters/store/select.py
        if db is not None:
            stack.push_async_callback(db.close)
        # Overrides from PATCH /v1/settings, kept in the database, over the environment.
        settings_db = await open_settings_db(settings.data_dir)
        stack.push_async_callback(settings_db.close)
        # (an invalid stored value stops the start, naming it, as a bad variable would)
        current = overrides.apply(settings, await settings_db.load())
        service = await _open_corpus(settings, fixed, stack)
        sessions = session_store(settings, db)
        yield _runtime(
            settings, current, fixed, sessions=sessions, corpus=service, settings_db=settings_db
        )
