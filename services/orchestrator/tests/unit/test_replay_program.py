"""`quarry-replay` (orchestrator/replay.py), the program `quarry replay` runs: a file it cannot
read, or one that is not a bundle, is a one-line error and exit 2, never a traceback.
(test_exports_api.py replays real bundles, in this process and through the client.)"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from orchestrator.replay import EXIT_USAGE, main


def test_a_missing_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = io.StringIO()
    assert main([str(tmp_path / "nope.zip")], out) == EXIT_USAGE
    assert out.getvalue() == ""
    assert "quarry-replay: cannot read" in capsys.readouterr().err


def test_the_installed_program_refuses_a_file_that_is_not_a_bundle(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a zip")
    program = Path(sys.executable).with_name("quarry-replay")
    done = subprocess.run([program, str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == EXIT_USAGE
    assert done.stdout == ""
    assert done.stderr.startswith(f"quarry-replay: {path}: ")
    assert "Traceback" not in done.stderr
