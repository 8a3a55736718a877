"""`make run` picks LLM_BASE_URL, else a local Ollama (real /api/tags format), else embedded."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from scripts import llm_select
from tests.conftest import free_port


class _Tags(BaseHTTPRequestHandler):
    models: ClassVar[list[str]] = []

    def log_message(self, *_: Any) -> None:
        return

    def do_GET(self) -> None:
        body = json.dumps({"models": [{"name": m, "size": 1} for m in self.models]}).encode()
        self.send_response(200 if self.path == "/api/tags" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def ollama() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Tags)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_configured_url_wins(ollama: str) -> None:
    choice = llm_select.choose({"LLM_BASE_URL": "http://x:1", "LLM_MODEL": "m"}, ollama)
    assert choice.kind == "configured"
    assert choice.env == {}
    assert "http://x:1" in choice.banner


def test_local_ollama_with_its_first_model(ollama: str) -> None:
    _Tags.models = ["qwen2.5:3b", "llama3.2:1b"]
    choice = llm_select.choose({}, ollama)
    assert choice.kind == "ollama"
    assert choice.env == {
        "LLM_PROVIDER": "ollama",
        "LLM_BASE_URL": ollama,
        "LLM_MODEL": "qwen2.5:3b",
    }


def test_ollama_without_models_says_how_to_pull(ollama: str) -> None:
    _Tags.models = []
    choice = llm_select.choose({}, ollama)
    assert "ollama pull" in choice.banner


def test_embedded_default_is_qwen_with_cpu_timeouts() -> None:
    nobody = f"http://127.0.0.1:{free_port()}"
    choice = llm_select.choose({"LLM_TIMEOUT_S": "999"}, nobody)
    assert choice.kind == "embedded"
    assert choice.model_key == "qwen"
    assert choice.env["LLM_SCHEMA_DIALECT"] == "json_object"
    assert choice.env["LLM_PROVIDER"] == "openai"
    # A value the user set is never overridden.
    assert "LLM_TIMEOUT_S" not in choice.env
    assert float(choice.env["LLM_FIRST_TOKEN_TIMEOUT_S"]) >= 120
    assert "LLM_FOLD_SYSTEM" not in choice.env
    # ORCHESTRATOR_MODE=auto then picks speed for the CPU model.
    assert choice.env["LLM_EMBEDDED"] == "true"
    # Greedy, without llama.cpp's repeat penalty (docs/models.md, Sampling).
    assert choice.env["LLM_TEMPERATURE"] == "0"
    assert choice.env["LLM_REPEAT_PENALTY"] == "1.0"
    assert "LLM_TEMPERATURE" not in llm_select.choose({"LLM_TEMPERATURE": "0.7"}, nobody).env


def test_embedded_gemma_folds_the_system_prompt() -> None:
    nobody = f"http://127.0.0.1:{free_port()}"
    choice = llm_select.choose({"QUARRY_MODEL": "gemma"}, nobody)
    assert choice.model_key == "gemma"
    assert choice.env["LLM_FOLD_SYSTEM"] == "true"
    kept = llm_select.choose({"QUARRY_MODEL": "gemma", "LLM_FOLD_SYSTEM": "false"}, nobody)
    assert "LLM_FOLD_SYSTEM" not in kept.env


def test_embedded_choice_env_names_are_orchestrator_settings() -> None:
    """Every variable the embedded choice sets is one the orchestrator reads (no typos)."""
    from orchestrator.config import Settings
    from quarry_common.settings import env_name

    known = {env_name(Settings, (field,)) for field in Settings.model_fields}
    for model in ("qwen", "gemma"):
        env = {"QUARRY_LLM_PORT": "1", "QUARRY_MODEL": model}
        choice = llm_select.choose(env, ollama="http://127.0.0.1:1")
        assert choice.kind == "embedded"
        assert set(choice.env) <= known, sorted(set(choice.env) - known)
