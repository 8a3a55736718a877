"""Ranker settings, read from `RANKER_*` environment variables."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import SettingsConfigDict
from quarry_common.settings import BaseServiceSettings, Port


class Settings(BaseServiceSettings):
    """Ranker configuration; built once in ``main()`` and passed down."""

    model_config = SettingsConfigDict(
        env_prefix="RANKER_", frozen=True, extra="ignore", env_ignore_empty=True
    )

    port: Port = 50052
    # Analyser steps; the defaults were chosen by measurement (libs/text: quarry_text/analyzer.py).
    stem: bool = True
    stopwords: bool = True
    # CPU-heavy calls (RankChunks, large RankResults) running at once in worker threads;
    # more than the core count only adds GIL contention (2 cores: 2).
    cpu_concurrency: int = Field(default=2, ge=1, le=64)
    # --- RankPassages: dense retrieval and caches ---
    # Load the embedding model (all-MiniLM-L6-v2, quarry-embed) and fuse dense with BM25;
    # false, or a model that cannot load, ranks passages by BM25 alone.
    dense: bool = True
    # Threads of one embedding call; calls are bounded by cpu_concurrency like the rest.
    embed_threads: int = Field(default=1, ge=1, le=64)
    # Vectors kept by text hash (1.5 KiB each) and prepared pages kept by (url, hash).
    embed_cache: int = Field(default=50_000, ge=1, le=10_000_000)
    page_cache: int = Field(default=512, ge=1, le=100_000)
    # Per query, the BM25 top passages that are embedded when not cached yet.
    dense_candidates: int = Field(default=8, ge=1, le=1000)
    # Time one call may spend computing new vectors (the rest ranks by BM25 alone); also
    # at most 30 % of what is left of the caller's deadline.
    dense_seconds: float = Field(default=1.0, gt=0, le=60)
    # PreparePassages (passages embedded while pages are still being read): per query and
    # page, the BM25 top passages embedded, and such calls running at once (kept below
    # cpu_concurrency so RankPassages never waits behind them for long).
    prepare_candidates: int = Field(default=3, ge=1, le=100)
    prepare_concurrency: int = Field(default=1, ge=1, le=64)
    # --- RankPassages: the rerank step (ranker/rerank.py) ---
    # Reorder the fused shortlist with quarry_rerank (sentence-level MaxSim over the embedding
    # model; no cross-encoder ships in a PyPI package); "off" keeps BM25 + dense alone.
    rerank: bool = False
    # The fused top passages rescored, and the time one call may spend on them (past it the
    # fused order stands and the response says why).
    rerank_candidates: int = Field(default=20, ge=2, le=200)
    rerank_seconds: float = Field(default=2.0, gt=0, le=60)
