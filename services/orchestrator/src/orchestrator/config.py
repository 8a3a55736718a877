"""Orchestrator settings: `ORCHESTRATOR_*` plus the documented downstream names."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import SettingsConfigDict
from quarry_common.settings import BaseServiceSettings, Port


class Settings(BaseServiceSettings):
    """Orchestrator configuration; built once in ``main()`` and passed down."""

    model_config = SettingsConfigDict(
        env_prefix="ORCHESTRATOR_", frozen=True, extra="ignore", env_ignore_empty=True
    )

    port: Port = 8080
    reader_addr: str = Field(default="127.0.0.1:50051", validation_alias="READER_ADDR")
    ranker_addr: str = Field(default="127.0.0.1:50052", validation_alias="RANKER_ADDR")
    searxng_url: str = Field(default="", validation_alias="SEARXNG_URL")
    llm_provider: Literal["ollama", "openai"] = Field(
        default="openai", validation_alias="LLM_PROVIDER"
    )
    llm_base_url: str = Field(default="", validation_alias="LLM_BASE_URL")
    llm_model: str = Field(default="", validation_alias="LLM_MODEL")
    llm_api_key: str = Field(default="", validation_alias="LLM_API_KEY")
