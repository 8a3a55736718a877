"""`quarry replay` runs the server package's `quarry-replay` (beside the interpreter, else on
PATH) and passes on its output and exit status; without it, it says what is missing.
(services/orchestrator/tests/integration/test_exports_api.py replays real bundles through it.)"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from quarry_cli import main as cli


def _program(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "quarry-replay"
    program.write_text(f"#!/bin/sh\n{body}\n")
    program.chmod(0o755)
    return program


def test_the_replay_program_beside_the_interpreter_gets_the_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv_bin = tmp_path / "venv" / "bin"
    _program(venv_bin, 'echo "replayed $*"; echo ünïcode; exit 1')
    _program(tmp_path / "elsewhere", "echo wrong one; exit 0")
    monkeypatch.setattr(sys, "executable", str(venv_bin / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    out = io.StringIO()
    code = cli.main(["replay", "run.zip", "--json"], out)
    assert code == cli.EXIT_FAILED  # the program's own status
    assert out.getvalue() == "replayed run.zip --json\nünïcode\n"


def test_the_replay_program_on_path_when_none_is_beside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _program(tmp_path / "elsewhere", 'echo "from PATH $1"')
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "bin" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    out = io.StringIO()
    assert cli.main(["replay", "run.zip"], out) == cli.EXIT_OK
    assert out.getvalue() == "from PATH run.zip\n"


def test_without_the_server_package_it_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    out = io.StringIO()
    assert cli.main(["replay", "run.zip"], out) == cli.EXIT_USAGE
    assert out.getvalue() == ""
    err = capsys.readouterr().err
    assert "needs the Quarry server package (quarry-replay)" in err
