"""Orchestrator settings: `ORCHESTRATOR_*` plus the documented downstream names."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from limits import parse_many
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import SettingsConfigDict
from quarry_common.settings import BaseServiceSettings, Port

from orchestrator.core.domains import MAX_SERVER_RULES, InvalidDomain, normalize_all, split_setting

# Empty (not configured) or an http(s) URL; anything else stops the service at start.
_HTTP_URL = r"^(https?://\S+)?$"
# Empty, or comma-separated http(s) URLs (several SearXNG instances).
_HTTP_URLS = r"^(https?://[^\s,]+(\s*,\s*https?://[^\s,]+)*)?$"


def parsed_urls(value: str) -> str:
    """``value`` (empty, or comma-separated http(s) URLs) when every URL parses with a host and
    a valid port; the patterns above let ``http://[`` or ``http://h:99999`` through, which
    failed later, at the first request (a 500 from the settings API; found by the fuzz)."""
    for url in (u.strip() for u in value.split(",") if u.strip()):
        try:
            parts = urlsplit(url)
            _ = parts.port  # raises ValueError for a port out of range or not a number
        except ValueError as err:
            raise ValueError(f"{url!r} is not a valid URL ({err})") from None
        if not parts.hostname:
            raise ValueError(f"{url!r} names no host")
    return value


# A comma-separated list of search backends.
_BACKENDS = r"^(searxng|brave)(\s*,\s*(searxng|brave))?$"
# A rate for the limits library: "N/second", "N/minute", "N per 2 seconds", ...; empty = none.
_RATE = r"^(\d+\s*(/|per)\s*(\d+\s*)?(second|minute|hour|day|month)s?)?$"
# auto, or a comma-separated list of web and local.
_SOURCES = r"^(auto|(web|local)(\s*,\s*(web|local))?)$"
# Tokens of a synthesis prompt that are not evidence: instructions (~350), the history
# (3 turns of at most 900 characters, ~700), the question and the fences (~250), rounded up.
PROMPT_RESERVE_TOKENS = 1536
MIN_EVIDENCE_TOKENS = 512
# The part of PROMPT_RESERVE_TOKENS that counts on a short history; a longer history (up to
# ORCHESTRATOR_HISTORY_CHARS) takes its extra tokens from the evidence.
HISTORY_RESERVE_TOKENS = 700
# Characters per token when sizing text (the same estimate as core/ask/evidence.py).
CHARS_PER_TOKEN = 4


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class Settings(BaseServiceSettings):
    """Orchestrator configuration; built once in ``main()`` and passed down."""

    model_config = SettingsConfigDict(
        env_prefix="ORCHESTRATOR_", frozen=True, extra="ignore", env_ignore_empty=True
    )

    port: Port = 8080
    reader_addr: str = Field(default="127.0.0.1:50051", validation_alias="READER_ADDR")
    ranker_addr: str = Field(default="127.0.0.1:50052", validation_alias="RANKER_ADDR")
    # The index service: local documents (CORPUS_DIR, `quarry index`), SearchCorpus/Passages.
    index_addr: str = Field(default="127.0.0.1:50053", validation_alias="INDEX_ADDR")
    searxng_url: str = Field(default="", pattern=_HTTP_URLS, validation_alias="SEARXNG_URL")
    llm_provider: Literal["ollama", "openai"] = Field(
        default="openai", validation_alias="LLM_PROVIDER"
    )
    llm_base_url: str = Field(default="", pattern=_HTTP_URL, validation_alias="LLM_BASE_URL")
    llm_model: str = Field(default="", validation_alias="LLM_MODEL")
    # A secret: SecretStr keeps it out of repr, logs, traces and the settings API.
    llm_api_key: SecretStr = Field(default=SecretStr(""), validation_alias="LLM_API_KEY")

    # --- LLM provider details (LLM_*) and SearXNG (SEARXNG_*) ---
    # How an OpenAI-compatible server takes a schema: json_schema (OpenAI, vLLM, llama-server),
    # json_object (llama-cpp-python's server, which answers json_schema with HTTP 500), none.
    llm_schema_dialect: Literal["json_schema", "json_object", "none"] = Field(
        default="json_schema", validation_alias="LLM_SCHEMA_DIALECT"
    )
    # Ollama truncates prompts longer than its (small) default context silently.
    llm_num_ctx: int = Field(default=8192, ge=512, le=1_048_576, validation_alias="LLM_NUM_CTX")
    # Ollama's keep_alive: seconds ("300", "-1" = forever) or a Go duration ("10m", "1h30m").
    llm_keep_alive: str = Field(
        default="10m",
        pattern=r"^-?\d+(\.\d+)?$|^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$",
        validation_alias="LLM_KEEP_ALIVE",
    )
    llm_temperature: float = Field(default=0.2, ge=0, le=2, validation_alias="LLM_TEMPERATURE")
    llm_max_tokens: int = Field(default=1024, ge=16, le=32_768, validation_alias="LLM_MAX_TOKENS")
    # Fold system messages into the first user turn, for chat formats that drop them silently
    # (llama-cpp-python's "gemma" format for the Gemma 3 270M base model).
    llm_fold_system: bool = Field(default=False, validation_alias="LLM_FOLD_SYSTEM")
    # CPU inference: a 1.5B model on 2 cores needs ~40 s to a first token on a 1.5k-token prompt.
    llm_connect_timeout_s: float = Field(
        default=5.0, gt=0, le=300, validation_alias="LLM_CONNECT_TIMEOUT_S"
    )
    llm_timeout_s: float = Field(default=120.0, gt=0, le=3600, validation_alias="LLM_TIMEOUT_S")
    # To the first token of any call (plans and judges are streamed too): well inside the
    # question budget, so a server that hangs costs a quarter of it, not all of it.
    llm_first_token_timeout_s: float = Field(
        default=30.0, gt=0, le=3600, validation_alias="LLM_FIRST_TOKEN_TIMEOUT_S"
    )
    llm_idle_timeout_s: float = Field(
        default=60.0, gt=0, le=3600, validation_alias="LLM_IDLE_TIMEOUT_S"
    )
    searxng_timeout_s: float = Field(
        default=20.0, gt=0, le=300, validation_alias="SEARXNG_TIMEOUT_S"
    )
    searxng_retry_backoff_s: float = Field(
        default=0.5, ge=0, le=30, validation_alias="SEARXNG_RETRY_BACKOFF_S"
    )
    # Retries of a search after a network error or a 5xx, with exponential back-off and jitter
    # from SEARXNG_RETRY_BACKOFF_S, all within SEARXNG_TIMEOUT_S (adapters/search/searxng.py).
    searxng_retries: int = Field(default=2, ge=0, le=5, validation_alias="SEARXNG_RETRIES")

    # --- search backends (ORCHESTRATOR_SEARCH_*, SEARXNG_*, BRAVE_*) ---
    search_backends: str = Field(default="searxng", pattern=_BACKENDS)
    # failover: the first backend that answers; merge: all at once, fused by RRF.
    search_mode: Literal["failover", "merge"] = "failover"
    # Seconds a search result is served from memory; 0 turns the cache off.
    search_cache_s: float = Field(default=300.0, ge=0, le=86400)
    # Process-wide rate per SearXNG instance (limits syntax); Brave has its own below.
    search_rate_limit: str = Field(default="10/second", pattern=_RATE)
    # Pick a SearXNG category and time range from the question (a request's own win).
    search_routing: bool = True
    # An instance that answered 429 is skipped this long (unless it sent Retry-After).
    searxng_backoff_s: float = Field(
        default=30.0, ge=0, le=86400, validation_alias="SEARXNG_BACKOFF_S"
    )
    brave_api_key: SecretStr = Field(default=SecretStr(""), validation_alias="BRAVE_API_KEY")
    brave_url: str = Field(
        default="https://api.search.brave.com", pattern=_HTTP_URL, validation_alias="BRAVE_URL"
    )
    # Brave's free plan allows 1 request per second.
    brave_rate_limit: str = Field(
        default="1/second", pattern=_RATE, validation_alias="BRAVE_RATE_LIMIT"
    )

    # --- agent loop, budgets and limits (ORCHESTRATOR_*) ---
    max_rounds: int = Field(default=3, ge=1, le=10)
    top_urls: int = Field(default=10, ge=1, le=50)
    read_concurrency: int = Field(default=5, ge=1, le=32)
    read_timeout_s: float = Field(default=10.0, gt=0, le=120)
    read_batch_timeout_s: float = Field(default=30.0, gt=0, le=600)
    read_retry_delay_s: float = Field(default=0.2, ge=0, le=5)
    prefetch: bool = True
    chunk_top_k: int = Field(default=8, ge=1, le=50)
    question_budget_s: float = Field(default=120.0, gt=0, le=3600)
    # Time kept back from the research stages so an answer can still be written at the budget.
    synthesis_reserve_s: float = Field(default=30.0, ge=0, le=3600)
    # RankPassages over 10 pages with new vectors took 3-5 s on the loaded 2-core box (make
    # eval); the ranker spends at most 30 % of what is left on vectors, the rest is BM25.
    ranker_timeout_s: float = Field(default=10.0, gt=0, le=120)
    # The support model's one call per answer (CheckSupport, after the stream): its whole
    # time; 0 turns it off (lexical marks only). bench/rerank: p50 ~30 ms for 5 sentences.
    support_check_timeout_s: float = Field(default=3.0, ge=0, le=60)
    # Process-wide limits: one semaphore per downstream, shared by all questions.
    reader_max_inflight: int = Field(default=16, ge=1, le=256)
    ranker_max_inflight: int = Field(default=8, ge=1, le=256)
    index_max_inflight: int = Field(default=8, ge=1, le=256)
    searxng_max_inflight: int = Field(default=8, ge=1, le=256)
    llm_max_inflight: int = Field(default=4, ge=1, le=256)
    # Of those, deep research may hold at most this many (orchestrator/core/lanes.py), so a quick
    # question always finds a slot; 0: one fewer than llm_max_inflight. `make run` sets 1 for
    # the single-slot embedded server.
    llm_research_inflight: int = Field(default=0, ge=0, le=256)
    session_ttl_s: float = Field(default=1800.0, gt=0)
    session_max_chars: int = Field(default=60_000, ge=1000)
    # Conversation carried into the planner and the answer (questions + answers); oldest first out.
    history_chars: int = Field(default=48_000, ge=0, le=1_000_000)
    max_sessions: int = Field(default=1000, ge=1)
    # Characters of turns (answers, sources and the passages each model saw) all sessions in
    # memory may hold; the least recently used idle ones go first (with a data directory they
    # come back from SQLite on their next use).
    session_cache_chars: int = Field(default=16_000_000, ge=100_000)
    max_body_bytes: int = Field(default=64 * 1024, ge=1024)
    ready_timeout_s: float = Field(default=2.0, gt=0, le=30)

    # --- run modes and the embedded model (ORCHESTRATOR_MODE, LLM_EMBEDDED, LLM_WAIT_S) ---
    # auto: speed for make run's embedded CPU model (LLM_EMBEDDED), balanced for a server.
    mode: Literal["auto", "speed", "balanced", "quality"] = "auto"
    # Set by `make run` when it starts the embedded llama.cpp model on this machine's CPU.
    llm_embedded: bool = Field(default=False, validation_alias="LLM_EMBEDDED")
    # A question that arrives while the LLM does not answer yet waits this long for it (make
    # run sets it for its embedded model, which takes a while to load; 0: fail at once).
    llm_wait_s: float = Field(default=0.0, ge=0, le=3600, validation_alias="LLM_WAIT_S")

    # --- the agent mode (ORCHESTRATOR_AGENT*; core/ask/agentic.py) ---
    # off: the fixed pipeline; on: the model picks tools; auto: the agent only for a model that
    # passes the tool-calling probe (never for the embedded model, LLM_EMBEDDED).
    agent: Literal["off", "on", "auto"] = "off"
    # Tool-calling turns per question, and completion tokens over all of them.
    agent_max_steps: int = Field(default=6, ge=1, le=30)
    agent_max_tokens: int = Field(default=4000, ge=128, le=200_000)

    # --- local documents (CORPUS_DIR, ORCHESTRATOR_SOURCES, ORCHESTRATOR_CORPUS_*) ---
    corpus_dir: str = Field(default="", validation_alias="CORPUS_DIR")
    # Default search sources: auto = web when SEARXNG_URL is set, plus local when CORPUS_DIR is.
    sources: str = Field(default="auto", pattern=_SOURCES)
    corpus_rescan_s: float = Field(default=0.0, ge=0, le=7 * 86400)
    # Files above this are skipped (and counted); the reader caps extraction at 2 MiB by default.
    corpus_max_file_bytes: int = Field(default=2 * 1024 * 1024, ge=1024, le=64 * 1024 * 1024)
    corpus_concurrency: int = Field(default=4, ge=1, le=32)
    # Allow refreshing any absolute path over HTTP, not only CORPUS_DIR (make run: same user).
    corpus_allow_any_path: bool = False
    # Corpus hits asked for per search round.
    corpus_top_k: int = Field(default=10, ge=1, le=50)
    # Uploads (POST /v1/corpus/files, the web UI): where they are kept, one folder per user;
    # empty turns uploads off. Must not be inside CORPUS_DIR or a corpus root (nor hold one).
    upload_dir: str = ""
    # Per file (the reader extracts at most READER_MAX_BYTES: raise both together).
    upload_max_bytes: int = Field(default=2 * 1024 * 1024, ge=1024, le=64 * 1024 * 1024)
    upload_max_files: int = Field(default=20, ge=1, le=1000)  # per request
    upload_max_documents: int = Field(default=500, ge=1, le=100_000)  # kept per user

    # --- deep research, the embedded database (ORCHESTRATOR_DATA_DIR, ORCHESTRATOR_RESEARCH_*) ---
    # Where the SQLite database lives (research runs and sessions); empty keeps them in memory
    # (a restart forgets every run and conversation).
    data_dir: str = ""
    research_max_inflight: int = Field(default=2, ge=1, le=64)
    # Finished runs are deleted this long after they finished; 0 keeps them.
    research_ttl_s: float = Field(default=7200.0, ge=0)
    research_review_delay_s: float = Field(default=1.5, ge=0, le=3600)
    research_budget_s: float = Field(default=900.0, gt=0, le=86_400)
    research_max_searches: int = Field(default=60, ge=1, le=10_000)
    research_max_llm_calls: int = Field(default=80, ge=3, le=10_000)
    research_max_dimensions: int = Field(default=6, ge=1, le=12)
    research_max_iterations: int = Field(default=3, ge=1, le=10)
    # Dimensions researched at once (each runs its own rounds and LLM calls).
    research_dimension_concurrency: int = Field(default=2, ge=1, le=12)
    research_max_evaluations: int = Field(default=3, ge=0, le=10)
    # Characters of findings and passages one report prompt may carry (about 4 per token).
    research_context_chars: int = Field(default=12_000, ge=2000, le=1_000_000)
    research_heartbeat_s: float = Field(default=15.0, gt=0, le=300)

    # --- scheduled research (docs/schedules.md: /v1/schedules, webhooks) ---
    # How often each replica looks for due schedules and finished scheduled runs.
    schedule_poll_s: float = Field(default=30.0, ge=1, le=3600)
    # The shortest interval between two firings a schedule may ask for.
    schedule_min_interval_s: float = Field(default=900.0, ge=60, le=86_400 * 7)
    schedule_max_per_owner: int = Field(default=50, ge=1, le=10_000)
    # Webhooks: private, loopback, CGNAT and ULA addresses are refused unless this is on (a
    # receiver on the LAN); link-local (cloud metadata) and reserved addresses always are.
    webhook_allow_private: bool = False
    webhook_timeout_s: float = Field(default=10.0, gt=0, le=120)
    webhook_attempts: int = Field(default=4, ge=1, le=10)
    # The first retry's wait; each next one doubles (with jitter), at most 60 s.
    webhook_backoff_s: float = Field(default=1.0, ge=0, le=60)

    # --- scaling out (docs/scaling.md): shared datastores, research workers ---
    # postgresql://… keeps runs, events and sessions in PostgreSQL instead of the SQLite file
    # (several orchestrators and workers share it); empty: SQLite (ORCHESTRATOR_DATA_DIR).
    database_url: str = Field(default="", pattern=r"^(postgres(ql)?://\S+)?$", repr=False)
    # Connections each process's PostgreSQL pool may open.
    database_pool_max: int = Field(default=10, ge=1, le=200)
    # redis://… shares rate limits and the search/page caches between replicas.
    redis_url: str = Field(default="", pattern=r"^(rediss?://\S+)?$", repr=False)
    # With a database URL, research runs are queued for `python -m orchestrator.worker`
    # ("worker"); "inline" keeps executing them in the API process that started them.
    research_executor: Literal["worker", "inline"] = "worker"
    # A worker holds a run by a lease it renews every third of this; a worker silent this long
    # loses the run to another, which resumes it from its last saved state.
    research_lease_s: float = Field(default=15.0, ge=1, le=3600)
    # Runs queued or running across every replica before new ones are refused (429).
    research_cluster_max: int = Field(default=32, ge=1, le=100_000)

    # --- exports and run bundles (orchestrator/core/exports/, docs/exports.md) ---
    # The Chromium that prints PDF exports (headless, no network); missing: PDF exports are 503.
    export_chromium: str = "/usr/bin/chromium"
    export_pdf_timeout_s: float = Field(default=60.0, gt=0, le=600)
    # What a research run records for its bundle (prompts, model outputs, page texts), at most.
    bundle_max_bytes: int = Field(default=8 * 1024 * 1024, ge=0, le=256 * 1024 * 1024)

    # --- access control and HTTP bounds (orchestrator/api/http/security.py, ratelimit.py,
    # server.py) ---
    # Host names (besides localhost, 127.0.0.1, [::1] and the bind address) the API answers to;
    # anything else is a DNS-rebinding attempt. Comma-separated; "*.example.com" allowed.
    allowed_hosts: str = ""
    # Origins a browser may call the API from (CORS); empty: no cross-origin access at all.
    cors_origins: str = ""
    # Bearer tokens (comma-separated) and/or a file holding one token per line. Kept out of repr.
    api_tokens: str = Field(default="", repr=False)
    api_token_file: str = ""
    # Tokens of admins, who see and act on every principal's data (orchestrator/core/principals.py).
    admin_tokens: str = Field(default="", repr=False)
    # Allow a non-loopback bind without tokens (only where something else keeps strangers out,
    # e.g. compose publishing the port on 127.0.0.1 only).
    insecure_no_auth: bool = False
    # Folders besides CORPUS_DIR that refreshes may index (comma-separated absolute paths).
    corpus_roots: str = ""
    # Honour a refresh request's "allow_outside": true (its client asked the user) for folders
    # outside CORPUS_DIR and ORCHESTRATOR_CORPUS_ROOTS. make run sets it (same user, same host).
    corpus_allow_outside: bool = False
    # Rate limits per client (token, else address) and endpoint family, in the `limits`
    # package's notation ("10/minute", "10/minute;100/day"), "off", or "auto": sized for one
    # person's UI, API clients and scripts without API tokens, tighter per token when tokens
    # are set (the profiles are in api/http/ratelimit.py).
    rate_questions: str = "auto"
    rate_research: str = "auto"
    rate_indexing: str = "auto"
    # A `rate_limit_near` warning once a client has used this share of a limit.
    rate_warn_at: float = Field(default=0.8, gt=0, le=1)
    # SSE / NDJSON streams send a keep-alive comment after this long without an event.
    keepalive_s: float = Field(default=15.0, gt=0, le=300)
    # HTTP server bounds: request line + headers size, time to send them, connections per client.
    max_header_bytes: int = Field(default=64 * 1024, ge=4096, le=16 * 1024 * 1024)
    header_timeout_s: float = Field(default=10.0, gt=0, le=300)
    max_client_connections: int = Field(default=32, ge=1, le=10_000)
    # Time to send a request body once its head has arrived (a 64 KiB body takes well under a
    # second even on a slow link); a body trickled slower is answered 408 and closed.
    body_timeout_s: float = Field(default=30.0, gt=0, le=3600)

    @field_validator("searxng_url", "llm_base_url", "brave_url")
    @classmethod
    def _urls(cls, value: str) -> str:
        return parsed_urls(value)

    @field_validator("rate_questions", "rate_research", "rate_indexing")
    @classmethod
    def _rate(cls, value: str) -> str:
        if value.strip().lower() not in ("off", "auto"):
            parse_many(value)  # raises ValueError with the library's message
        return value.strip()

    @field_validator("domains_allow", "domains_deny")
    @classmethod
    def _domains(cls, value: str) -> str:
        try:
            return ",".join(normalize_all(split_setting(value), "the list", MAX_SERVER_RULES))
        except InvalidDomain as err:  # pydantic reports a ValueError with the setting's name
            raise ValueError(err.detail) from None

    @field_validator("corpus_roots")
    @classmethod
    def _roots(cls, value: str) -> str:
        roots = [r.strip() for r in value.split(",") if r.strip()]
        if any(not Path(r).is_absolute() for r in roots):
            raise ValueError("every root must be an absolute path")
        return ",".join(os.path.normpath(r) for r in roots)

    def corpus_root_list(self) -> tuple[str, ...]:
        """CORPUS_DIR and ORCHESTRATOR_CORPUS_ROOTS: the folders refreshes may index."""
        extra = [r for r in self.corpus_roots.split(",") if r]
        return tuple(dict.fromkeys(([self.corpus_dir] if self.corpus_dir else []) + extra))

    # --- evidence given to the model (ORCHESTRATOR_EVIDENCE*, ORCHESTRATOR_PASSAGE_WORDS) ---
    # passages: RankPassages (BM25 + dense, several per page, token budget) plus the best
    # snippets; chunk_per_url: one ~500-word chunk per URL by BM25, 8 at most, each cut to
    # 2,000 characters (the behaviour before passages; the eval baseline).
    evidence: Literal["passages", "chunk_per_url"] = "passages"
    # Tokens of evidence per prompt; 0 sizes it to the model: LLM_NUM_CTX - LLM_MAX_TOKENS -
    # the tokens kept for instructions, history and question (PROMPT_RESERVE_TOKENS).
    evidence_tokens: int = Field(default=0, ge=0, le=1_000_000)
    passage_words: int = Field(default=120, ge=16, le=2000)
    # Send each page to the ranker (PreparePassages) as soon as it is read, so its likely
    # passages are embedded while the other pages are still being read, off the path from
    # the last read to RankPassages.
    prepare_passages: bool = True
    # Search snippets kept as evidence beside the passages.
    evidence_snippets: int = Field(default=5, ge=0, le=50)

    # --- degradation (ORCHESTRATOR_WEB_SEARCH, ORCHESTRATOR_ALLOW_UNSOURCED) ---
    # Web search is an explicit choice: "off" sends nothing to any search engine.
    web_search: Literal["on", "off"] = "on"
    # Answer from the model alone, clearly labelled, when search is off, down or finds nothing.
    allow_unsourced: bool = True
    # --- source policy by domain (orchestrator/core/domains.py; docs/sources.md) ---
    # Comma- or space-separated domains: example.com (and its subdomains), *.example.com (only
    # its subdomains). Empty allow list: every domain not denied. A request narrows these only.
    domains_allow: str = Field(default="", max_length=1_000_000)
    domains_deny: str = Field(default="", max_length=1_000_000)

    @field_validator("corpus_dir", "data_dir", "upload_dir")
    @classmethod
    def _absolute_dir(cls, value: str) -> str:
        # A relative path would silently depend on the working directory of the process.
        if value and not Path(value).is_absolute():
            raise ValueError("must be an absolute path")
        return os.path.normpath(value) if value else value

    @model_validator(mode="after")
    def _uploads_apart(self) -> Settings:
        # Uploads are private to their owner only while no shared folder holds them (or is
        # held by them): the index tells users apart by where a document's path starts.
        up = self.upload_dir
        for root in self.corpus_root_list() if up else ():
            if _within(up, root) or _within(root, up):
                raise ValueError(
                    f"ORCHESTRATOR_UPLOAD_DIR {up!r} and the corpus root {root!r} must not "
                    "contain one another"
                )
        return self

    def evidence_budget_tokens(self) -> int:
        """Tokens of evidence a prompt may carry (``evidence_tokens``, else sized to the
        model's context)."""
        if self.evidence_tokens:
            return self.evidence_tokens
        return max(
            MIN_EVIDENCE_TOKENS, self.llm_num_ctx - self.llm_max_tokens - PROMPT_RESERVE_TOKENS
        )

    def history_budget_chars(self) -> int:
        """``history_chars``, capped so the model's context still holds the minimum evidence:
        a long history takes its tokens from the evidence, never past MIN_EVIDENCE_TOKENS."""
        room = (
            self.llm_num_ctx
            - self.llm_max_tokens
            - PROMPT_RESERVE_TOKENS
            - MIN_EVIDENCE_TOKENS
            + HISTORY_RESERVE_TOKENS
        )
        return max(0, min(self.history_chars, room * CHARS_PER_TOKEN))

    def default_sources(self) -> tuple[str, ...]:
        """The sources a request without ``options.sources`` searches."""
        if self.sources != "auto":
            picked = list(dict.fromkeys(s.strip() for s in self.sources.split(",")))
        else:
            web = bool(self.searxng_url) or "brave" in self.backend_names()
            local = self.corpus_dir or self.upload_dir
            picked = (["web"] if web else []) + (["local"] if local else [])
            picked = picked or ["web"]
        return self.allowed_sources(picked)

    def searxng_urls(self) -> list[str]:
        """The SearXNG instances, in failover order."""
        return [u.strip() for u in self.searxng_url.split(",") if u.strip()]

    def backend_names(self) -> list[str]:
        """The configured search backends, in order."""
        return list(dict.fromkeys(b.strip() for b in self.search_backends.split(",")))

    def allowed_sources(self, sources: Sequence[str]) -> tuple[str, ...]:
        """``sources`` without the web when web search is off (possibly none at all)."""
        return tuple(s for s in dict.fromkeys(sources) if s != "web" or self.web_search == "on")
