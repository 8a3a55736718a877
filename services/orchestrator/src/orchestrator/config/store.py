"""Where runs and conversations are kept: in memory, SQLite, or shared PostgreSQL and Redis."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from orchestrator.config.checks import absolute_dir


class StoreSettings(BaseModel):
    """Sessions and datastores (ORCHESTRATOR_SESSION_*, _DATA_DIR, _DATABASE_URL, _REDIS_URL);
    a part of ``Settings``."""

    session_ttl_s: float = Field(default=1800.0, gt=0)
    session_max_chars: int = Field(default=60_000, ge=1000)
    # Conversation carried into the planner and the answer (questions + answers); oldest first out.
    history_chars: int = Field(default=48_000, ge=0, le=1_000_000)
    max_sessions: int = Field(default=1000, ge=1)
    # Characters of turns (answers, sources and the passages each model saw) all sessions in
    # memory may hold; the least recently used idle ones go first (with a data directory they
    # come back from SQLite on their next use).
    session_cache_chars: int = Field(default=16_000_000, ge=100_000)

    # --- the embedded database (ORCHESTRATOR_DATA_DIR) ---
    # Where the SQLite database lives (research runs and sessions); empty keeps them in memory
    # (a restart forgets every run and conversation).
    data_dir: str = ""

    # --- scaling out (docs/scaling.md): shared datastores ---
    # postgresql://… keeps runs, events and sessions in PostgreSQL instead of the SQLite file
    # (several orchestrators and workers share it); empty: SQLite (ORCHESTRATOR_DATA_DIR).
    database_url: str = Field(default="", pattern=r"^(postgres(ql)?://\S+)?$", repr=False)
    # Connections each process's PostgreSQL pool may open.
    database_pool_max: int = Field(default=10, ge=1, le=200)
    # redis://… shares rate limits and the search/page caches between replicas.
    redis_url: str = Field(default="", pattern=r"^(rediss?://\S+)?$", repr=False)

    @field_validator("data_dir")
    @classmethod
    def _absolute_data_dir(cls, value: str) -> str:
        return absolute_dir(value)
