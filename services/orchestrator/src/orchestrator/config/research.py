"""Deep research: its budgets, its workers, and the exports and bundles of its reports."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ResearchSettings(BaseModel):
    """Deep research (ORCHESTRATOR_RESEARCH_*) and exports; a part of ``Settings``."""

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

    # --- scaling out (docs/scaling.md): research workers ---
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
