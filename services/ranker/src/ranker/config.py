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
    # Analyser steps; the defaults were chosen by measurement (see ranker/analyzer.py).
    stem: bool = True
    stopwords: bool = True
    # CPU-heavy calls (RankChunks, large RankResults) running at once in worker threads;
    # more than the core count only adds GIL contention (2 cores: 2).
    cpu_concurrency: int = Field(default=2, ge=1, le=64)
