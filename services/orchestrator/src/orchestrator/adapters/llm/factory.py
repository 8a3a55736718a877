"""Build the configured LLM provider."""

from __future__ import annotations

import httpx

from orchestrator.adapters.llm.chat import LLMOptions
from orchestrator.adapters.llm.ollama import OllamaClient
from orchestrator.adapters.llm.openai import OpenAIClient
from orchestrator.config import Settings
from orchestrator.core.llm import LLMClient


def llm_options(settings: Settings) -> LLMOptions:
    """The provider options from ``LLM_*`` settings."""
    return LLMOptions(
        model=settings.llm_model,
        api_key=settings.llm_api_key.get_secret_value(),
        temperature=settings.llm_temperature,
        repeat_penalty=settings.llm_repeat_penalty,
        max_tokens=settings.llm_max_tokens,
        connect_timeout_s=settings.llm_connect_timeout_s,
        timeout_s=settings.llm_timeout_s,
        first_token_timeout_s=settings.llm_first_token_timeout_s,
        idle_timeout_s=settings.llm_idle_timeout_s,
        num_ctx=settings.llm_num_ctx,
        keep_alive=settings.llm_keep_alive,
        schema_dialect=settings.llm_schema_dialect,
        fold_system=settings.llm_fold_system,
    )


def build_llm(settings: Settings, http: httpx.AsyncClient) -> LLMClient:
    """An LLMClient for ``LLM_PROVIDER`` at ``LLM_BASE_URL``, sharing ``http``'s pool."""
    options = llm_options(settings)
    if settings.llm_provider == "ollama":
        return OllamaClient(settings.llm_base_url, http, options)
    return OpenAIClient(settings.llm_base_url, http, options)
