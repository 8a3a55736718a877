"""`quarry research` against a served app: a run to its report file, and Ctrl-C (a real SIGINT
to a real CLI process) cancelling the run on the server and printing the partial report."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import sys
from pathlib import Path

import pytest
from orchestrator.cli import main

from services.orchestrator.tests.fakes.fake_llm import Hang
from services.orchestrator.tests.integration.research_support import research_app
from services.orchestrator.tests.integration.support import World, world

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here


async def test_cli_writes_the_report_to_a_file(world: World, tmp_path: Path) -> None:
    out_file = tmp_path / "report.md"
    async with research_app(world, research_max_evaluations=0) as (api, _):
        argv = ["--url", api.base, "research", "how do tides work", "-o", str(out_file), "-q"]
        status = await asyncio.to_thread(main, argv, io.StringIO())
    assert status == 0
    report = out_file.read_text()
    assert report.startswith("# how do tides work")
    assert "## Contents" in report
    assert "## Sources" in report


async def test_ctrl_c_cancels_the_run_and_prints_the_partial_report(world: World) -> None:
    async with research_app(world, research_max_evaluations=0) as (api, f):
        f.llm.queue("synthesis", Hang(after_tokens=3))
        code = "from orchestrator.cli import entrypoint; entrypoint()"
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            code,
            "--url",
            api.base,
            "research",
            "how do tides work",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert proc.stderr is not None
        assert proc.stdout is not None
        lines: list[str] = []
        async with asyncio.timeout(60):
            while not any("phase: synthesis" in line for line in lines):
                line = (await proc.stderr.readline()).decode()
                assert line, "".join(lines)
                lines.append(line)
            await f.llm.wait_until(lambda: len(f.llm.calls_of("synthesis")) == 1, 10)
            proc.send_signal(signal.SIGINT)
            stdout, stderr = await proc.communicate()
        assert proc.returncode == 5, "".join(lines) + stderr.decode()
        assert stdout.decode().startswith("# how do tides work")
        run_id = next(x.split()[2] for x in lines if x.startswith("research run "))
        view = await api.show(run_id)
        assert view["status"] == "cancelled"
        assert view["phase"] == "synthesis"
