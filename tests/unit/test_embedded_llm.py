"""Model assembly from packaged parts (sha256-pinned) and the llama_cpp.server command line."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts import embedded_llm
from scripts.embedded_llm import ModelError, ModelSpec


@pytest.fixture
def parts(tmp_path: Path) -> Iterator[tuple[ModelSpec, bytes]]:
    blobs = [b"GGUF" + bytes([i]) * 1000 for i in range(3)]
    names = []
    for i, blob in enumerate(blobs, start=1):
        pkg = tmp_path / "site" / f"fake_model_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(blob)
        names.append(pkg.name)
    whole = b"".join(blobs)
    spec = ModelSpec(
        key="fake",
        title="Fake",
        filename="fake.gguf",
        sha256=hashlib.sha256(whole).hexdigest(),
        size=len(whole),
        parts=tuple(names),
    )
    sys.path.insert(0, str(tmp_path / "site"))
    try:
        yield spec, whole
    finally:
        sys.path.remove(str(tmp_path / "site"))
        for name in names:
            sys.modules.pop(name, None)


def test_assembles_in_order_and_verifies(parts: tuple[ModelSpec, bytes], tmp_path: Path) -> None:
    spec, whole = parts
    path = embedded_llm.assemble(spec, tmp_path / "cache")
    assert path.read_bytes() == whole
    assert (tmp_path / "cache" / "fake.gguf.verified").is_file()
    # A second call trusts the verified file and does not rebuild it.
    mtime = path.stat().st_mtime_ns
    assert embedded_llm.assemble(spec, tmp_path / "cache") == path
    assert path.stat().st_mtime_ns == mtime


def test_wrong_hash_is_refused(parts: tuple[ModelSpec, bytes], tmp_path: Path) -> None:
    spec, _ = parts
    bad = ModelSpec(**{**spec.__dict__, "sha256": "0" * 64})
    with pytest.raises(ModelError, match="does not match"):
        embedded_llm.assemble(bad, tmp_path / "cache")
    assert not (tmp_path / "cache" / "fake.gguf").exists()


def test_missing_part_package_says_so(tmp_path: Path) -> None:
    spec = ModelSpec("x", "X", "x.gguf", "0" * 64, 1, parts=("no_such_model_part1",))
    with pytest.raises(ModelError, match="not installed"):
        embedded_llm.assemble(spec, tmp_path)


def test_server_flags_that_matter() -> None:
    cmd = embedded_llm.server_command("py", Path("/m.gguf"), embedded_llm.GEMMA, "127.0.0.1", 9)
    joined = " ".join(cmd)
    assert "--logits_all False" in joined
    assert "--interrupt_requests False" in joined
    assert "--chat_format gemma" in joined
    qwen = embedded_llm.server_command("py", Path("/m.gguf"), embedded_llm.QWEN, "127.0.0.1", 9)
    assert "--chat_format" not in qwen
    assert embedded_llm.server_env()["OMP_WAIT_POLICY"] == "PASSIVE"
