"""Index settings, read from `INDEX_*` environment variables."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import SettingsConfigDict
from quarry_common.settings import BaseServiceSettings, Port


class Settings(BaseServiceSettings):
    """Index configuration; built once in ``main()`` and passed down."""

    model_config = SettingsConfigDict(
        env_prefix="INDEX_", frozen=True, extra="ignore", env_ignore_empty=True
    )

    port: Port = 50053
    # The analyser: the ranker's too, with the same defaults (libs/text, quarry_text/analyzer.py).
    stem: bool = True
    stopwords: bool = True
    # Analysis, commits (embedding included) and searches computing at once in worker
    # threads; more than the core count only adds GIL contention (2 cores: 2).
    cpu_concurrency: int = Field(default=2, ge=1, le=64)
    # Where the index persists ({data_dir}/corpus/); unset: in memory only.
    data_dir: Path | None = None
    # Passage size in words (sentence-aware chunks): what SearchPassages returns and what is
    # embedded; MiniLM reads at most 256 word pieces, about 180 English words.
    passage_words: int = Field(default=120, ge=16, le=2000)
    # Embed passages at commit and rank SearchPassages by BM25 + dense; false (or a model
    # that cannot be loaded) leaves BM25 alone.
    dense: bool = True
