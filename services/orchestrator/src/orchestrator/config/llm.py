"""The LLM provider (LLM_*), its slots and the embedded model's run modes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator

from orchestrator.config.checks import HTTP_URL, parsed_urls


class LLMSettings(BaseModel):
    """The model that plans, judges and writes; a part of ``Settings``."""

    llm_provider: Literal["ollama", "openai"] = Field(
        default="openai", validation_alias="LLM_PROVIDER"
    )
    llm_base_url: str = Field(default="", pattern=HTTP_URL, validation_alias="LLM_BASE_URL")
    llm_model: str = Field(default="", validation_alias="LLM_MODEL")
    # A secret: SecretStr keeps it out of repr, logs, traces and the settings API.
    llm_api_key: SecretStr = Field(default=SecretStr(""), validation_alias="LLM_API_KEY")
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
    # Sent only when set: llama.cpp's servers and Ollama penalise repeated tokens (1.1) unless
    # told otherwise; `make run` sets 1.0 for the embedded model (docs/models.md, Sampling).
    llm_repeat_penalty: float | None = Field(
        default=None, gt=0, le=2, validation_alias="LLM_REPEAT_PENALTY"
    )
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
    # Process-wide: one semaphore of LLM slots, shared by all questions and research runs.
    llm_max_inflight: int = Field(default=4, ge=1, le=256)
    # Of those, deep research may hold at most this many (orchestrator/core/lanes.py), so a quick
    # question always finds a slot; 0: one fewer than llm_max_inflight. `make run` sets 1 for
    # the single-slot embedded server.
    llm_research_inflight: int = Field(default=0, ge=0, le=256)

    # --- run modes and the embedded model (ORCHESTRATOR_MODE, LLM_EMBEDDED, LLM_WAIT_S) ---
    # auto: speed for make run's embedded CPU model (LLM_EMBEDDED), balanced for a server.
    mode: Literal["auto", "speed", "balanced", "quality"] = "auto"
    # Set by `make run` when it starts the embedded llama.cpp model on this machine's CPU.
    llm_embedded: bool = Field(default=False, validation_alias="LLM_EMBEDDED")
    # A question that arrives while the LLM does not answer yet waits this long for it (make
    # run sets it for its embedded model, which takes a while to load; 0: fail at once).
    llm_wait_s: float = Field(default=0.0, ge=0, le=3600, validation_alias="LLM_WAIT_S")

    @field_validator("llm_base_url")
    @classmethod
    def _llm_url(cls, value: str) -> str:
        return parsed_urls(value)
