"""A question's run: the services it calls, its rounds, reads, budgets and the agent mode."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class AskSettings(BaseModel):
    """The agent loop, its budgets and its downstream services; a part of ``Settings``."""

    reader_addr: str = Field(default="127.0.0.1:50051", validation_alias="READER_ADDR")
    ranker_addr: str = Field(default="127.0.0.1:50052", validation_alias="RANKER_ADDR")
    # The index service: local documents (CORPUS_DIR, `quarry index`), SearchCorpus/Passages.
    index_addr: str = Field(default="127.0.0.1:50053", validation_alias="INDEX_ADDR")
    # Process-wide limits: one semaphore per downstream, shared by all questions.
    reader_max_inflight: int = Field(default=16, ge=1, le=256)
    ranker_max_inflight: int = Field(default=8, ge=1, le=256)
    index_max_inflight: int = Field(default=8, ge=1, le=256)

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

    # --- the agent mode (ORCHESTRATOR_AGENT*; core/ask/agentic.py) ---
    # off: the fixed pipeline; on: the model picks tools; auto: the agent only for a model that
    # passes the tool-calling probe (never for the embedded model, LLM_EMBEDDED).
    agent: Literal["off", "on", "auto"] = "off"
    # Tool-calling turns per question, and completion tokens over all of them.
    agent_max_steps: int = Field(default=6, ge=1, le=30)
    agent_max_tokens: int = Field(default=4000, ge=128, le=200_000)
