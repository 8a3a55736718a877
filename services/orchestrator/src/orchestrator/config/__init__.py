"""Orchestrator settings: `ORCHESTRATOR_*` plus the documented downstream names.

One ``Settings`` class, composed of one part per concern (this package's modules), so every
setting is read from the environment and validated once, in ``main()``. Each part is a plain
pydantic model: the environment prefix and the loading are the composed class's.
"""

from __future__ import annotations

from pydantic_settings import SettingsConfigDict
from quarry_common.settings import BaseServiceSettings, Port

from orchestrator.config.ask import AskSettings
from orchestrator.config.checks import is_loopback, parsed_urls
from orchestrator.config.corpus import CorpusSettings
from orchestrator.config.evidence import (
    CHARS_PER_TOKEN,
    HISTORY_RESERVE_TOKENS,
    MIN_EVIDENCE_TOKENS,
    PROMPT_RESERVE_TOKENS,
    EvidenceSettings,
)
from orchestrator.config.llm import LLMSettings
from orchestrator.config.research import ResearchSettings
from orchestrator.config.schedules import ScheduleSettings
from orchestrator.config.search import SearchSettings
from orchestrator.config.server import ServerSettings
from orchestrator.config.store import StoreSettings

__all__ = [
    "CHARS_PER_TOKEN",
    "HISTORY_RESERVE_TOKENS",
    "MIN_EVIDENCE_TOKENS",
    "PROMPT_RESERVE_TOKENS",
    "Settings",
    "is_loopback",
    "parsed_urls",
]


class Settings(
    ServerSettings,
    ScheduleSettings,
    ResearchSettings,
    StoreSettings,
    CorpusSettings,
    EvidenceSettings,
    AskSettings,
    SearchSettings,
    LLMSettings,
    BaseServiceSettings,
):
    """Orchestrator configuration; built once in ``main()`` and passed down.

    (The parts are listed last-first: pydantic orders fields from the last base up, so the
    settings read LLM, search, the ask loop, evidence, corpus, store, research, schedules,
    server.)
    """

    model_config = SettingsConfigDict(
        env_prefix="ORCHESTRATOR_", frozen=True, extra="ignore", env_ignore_empty=True
    )

    port: Port = 8080

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
