"""Which LLM `make run` uses: LLM_BASE_URL, else a local Ollama, else the embedded server."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import httpx

from scripts import embedded_llm

OLLAMA_DEFAULT = "http://127.0.0.1:11434"
EMBEDDED_PORT_DEFAULT = 8091
# CPU inference: a 1.5B model needs ~40 s to a first token on a 1,500-token prompt with 2 cores
# (shared/notes/embedded-llm.md §3); give every call generous room.
EMBEDDED_TIMEOUTS = {
    "LLM_TIMEOUT_S": "240",
    "LLM_FIRST_TOKEN_TIMEOUT_S": "240",
    "LLM_IDLE_TIMEOUT_S": "120",
    "ORCHESTRATOR_QUESTION_BUDGET_S": "600",
    # A 1.5B model writes a cited answer in ~50 s on 2 cores: keep that much back for it.
    "ORCHESTRATOR_SYNTHESIS_RESERVE_S": "150",
    # A question asked while the model loads waits for it (loading takes 8-60 s).
    "LLM_WAIT_S": "300",
    # One slot: deep research sends one call at a time, so a question waits for one at most.
    "ORCHESTRATOR_LLM_RESEARCH_INFLIGHT": "1",
}

# Greedy, without llama.cpp's default repeat penalty (1.1): the answer copies values from its
# sources, and a penalty on tokens just written pushes it off them ("-1 to 9" became "-1 ... 7").
# Over 30 stored tuning prompts: 18 of 24 right and 6 of 6 unanswerable abstained, against
# 15-18 and 5-6 sampled at 0.2 with the penalty (docs/models.md, Sampling); and the same
# question gets the same answer.
EMBEDDED_SAMPLING = {"LLM_TEMPERATURE": "0", "LLM_REPEAT_PENALTY": "1.0"}


@dataclass
class LlmChoice:
    """The decision, the environment the orchestrator needs for it, and what to tell the user."""

    kind: str  # "configured" | "ollama" | "embedded"
    env: dict[str, str] = field(default_factory=dict)
    banner: str = ""
    model_key: str = ""


def _ollama_models(base: str) -> list[str] | None:
    try:
        reply = httpx.get(f"{base}/api/tags", timeout=1.5)
    except httpx.TransportError:
        return None
    if not reply.is_success:
        return None
    try:
        return [str(m["name"]) for m in reply.json().get("models", [])]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def choose(environ: dict[str, str] | None = None, ollama: str = OLLAMA_DEFAULT) -> LlmChoice:
    """Decide which LLM to use from ``environ`` (default: the process environment)."""
    env = dict(os.environ if environ is None else environ)
    if env.get("LLM_BASE_URL"):
        provider = env.get("LLM_PROVIDER", "openai")
        model = env.get("LLM_MODEL") or "?"
        return LlmChoice(
            "configured", banner=f"LLM: {provider} at {env['LLM_BASE_URL']} (model {model})"
        )
    models = _ollama_models(ollama)
    if models is not None:
        model = env.get("LLM_MODEL") or (models[0] if models else "")
        if not model:
            return LlmChoice(
                "ollama",
                env={"LLM_PROVIDER": "ollama", "LLM_BASE_URL": ollama},
                banner=f"LLM: Ollama answers at {ollama} but has no model: "
                "run `ollama pull qwen2.5:3b` (or set LLM_MODEL)",
            )
        return LlmChoice(
            "ollama",
            env={"LLM_PROVIDER": "ollama", "LLM_BASE_URL": ollama, "LLM_MODEL": model},
            banner=f"LLM: Ollama at {ollama}, model {model}",
        )
    key = env.get("QUARRY_MODEL", "qwen")
    port = env.get("QUARRY_LLM_PORT", str(EMBEDDED_PORT_DEFAULT))
    out = {
        "LLM_PROVIDER": "openai",
        "LLM_BASE_URL": f"http://127.0.0.1:{port}",
        "LLM_MODEL": key,
        # llama-cpp-python's server answers the json_schema form with HTTP 500.
        "LLM_SCHEMA_DIALECT": "json_object",
        # ORCHESTRATOR_MODE=auto picks the speed mode for a model on this machine's CPU.
        "LLM_EMBEDDED": "true",
    }
    spec = embedded_llm.MODELS.get(key)
    if spec is not None and spec.fold_system and "LLM_FOLD_SYSTEM" not in env:
        # The Gemma chat format drops system messages: without this the prompts' rules vanish.
        out["LLM_FOLD_SYSTEM"] = "true"
    out.update({k: v for k, v in (EMBEDDED_TIMEOUTS | EMBEDDED_SAMPLING).items() if k not in env})
    return LlmChoice("embedded", env=out, model_key=key)
