"""Every source file stays under ~400 lines and every function under ~60 (issue 22): a newcomer
reads a module in one sitting and a function on one screen. Covers the code under
services/*/src, libs/*/src, clients/*/src and bench/; the tests are not held to it."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

from tests.conftest import ROOT

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
SOURCES = ("services/*/src", "libs/*/src", "clients/*/src", "bench")
# Written by protoc (`make proto`), never by hand: their size follows the .proto files.
GENERATED = ("*_pb2.py", "*_pb2_grpc.py")

# What may stay over a limit, and why (empty: everything is within them). An entry names a
# file or `file::function` and says why it cannot be split; a stale entry (now within the
# limits, or gone) is a warning, not a failure. Prefer splitting to adding a line here.
ALLOWED: dict[str, str] = {}


def source_files(root: Path = ROOT) -> list[Path]:
    """The hand-written Python files the limits apply to."""
    found = {p for pattern in SOURCES for p in root.glob(f"{pattern}/**/*.py")}
    return sorted(
        p for p in found if not any(p.match(g) for g in GENERATED) and ".venv" not in p.parts
    )


def measure(path: Path, root: Path = ROOT) -> dict[str, int]:
    """Every file's and function's length in lines, keyed ``path`` and ``path::function``
    (a nested function also counts towards the one around it; a method is ``Class.method``)."""
    text = path.read_text(encoding="utf-8")
    rel = path.relative_to(root).as_posix()
    sizes = {rel: len(text.splitlines())}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                # From the `def` line to the last line of the body (decorators not counted).
                length = (child.end_lineno or child.lineno) - child.lineno + 1
                sizes[f"{rel}::{prefix}{child.name}"] = length
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(text, filename=str(path)), "")
    return sizes


def over_the_limits(sizes: dict[str, int]) -> dict[str, tuple[int, int]]:
    """The entries over their limit and not allowed: name -> (lines, limit)."""
    out = {}
    for name, lines in sizes.items():
        limit = MAX_FUNCTION_LINES if "::" in name else MAX_FILE_LINES
        if lines > limit and name not in ALLOWED:
            out[name] = (lines, limit)
    return out


def test_the_sources_are_found() -> None:
    files = {p.relative_to(ROOT).as_posix() for p in source_files()}
    assert "services/orchestrator/src/orchestrator/app.py" in files
    assert "libs/common/src/quarry_common/settings.py" in files
    assert "bench/pipeline/bench_pipeline.py" in files
    assert "clients/cli/src/quarry_cli/main.py" in files
    assert not any(f.endswith("_pb2.py") for f in files)


def test_every_file_and_function_is_within_its_limit() -> None:
    sizes = {k: v for path in source_files() for k, v in measure(path).items()}
    over = over_the_limits(sizes)
    assert not over, "split these (lines, limit): " + "; ".join(
        f"{name} {lines} > {limit}" for name, (lines, limit) in sorted(over.items())
    )
    stale = [
        name
        for name in ALLOWED
        if sizes.get(name, 0) <= (MAX_FUNCTION_LINES if "::" in name else MAX_FILE_LINES)
    ]
    if stale:
        warnings.warn(
            f"within the limits now (or gone), remove from ALLOWED: {stale}", stacklevel=1
        )


def test_a_long_function_and_a_long_file_are_caught(tmp_path: Path) -> None:
    body = [f"        x{i} = {i}" for i in range(MAX_FUNCTION_LINES)]
    code = "class C:\n    async def long(self) -> None:\n" + "\n".join(body) + "\n"
    code += "\n" * (MAX_FILE_LINES + 1 - code.count("\n"))
    path = tmp_path / "big.py"
    path.write_text(code, encoding="utf-8")
    sizes = measure(path, tmp_path)
    assert sizes["big.py::C.long"] == MAX_FUNCTION_LINES + 1
    assert set(over_the_limits(sizes)) == {"big.py", "big.py::C.long"}
