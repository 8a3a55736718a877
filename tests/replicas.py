"""Service processes for the multi-replica test and the scale bench: started with their logs in a
file (a pipe nobody reads would fill and stall them), health-checked over HTTP, stopped with
SIGTERM (then SIGKILL)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.conftest import ROOT, START_DEADLINE_S


@dataclass
class Proc:
    """A started service process, its port and its log file."""

    name: str
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    def lines(self) -> list[str]:
        return self.log.read_text(errors="replace").splitlines()


def spawn(name: str, module: str, env: dict[str, str], folder: Path, port: int) -> Proc:
    """Start ``python -m module`` with ``env``, logging to ``folder/name.log``."""
    log = folder / f"{name}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", module], env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT
        )
    return Proc(name, proc, port, log)


async def healthy(p: Proc) -> None:
    """Wait until the process answers GET /healthz (or fail, with its log)."""
    async with httpx.AsyncClient(timeout=2) as client:
        for _ in range(int(START_DEADLINE_S * 10)):
            if p.proc.poll() is not None:
                raise AssertionError(f"{p.name} exited: {p.lines()[-20:]}")
            with contextlib.suppress(httpx.HTTPError):
                reply = await client.get(f"http://127.0.0.1:{p.port}/healthz")
                if reply.status_code == 200:
                    return
            await asyncio.sleep(0.1)
    raise AssertionError(f"{p.name} did not start: {p.lines()[-20:]}")


def stop_all(procs: list[Proc]) -> None:
    """SIGTERM every process, then wait (SIGKILL after 20 s)."""
    for p in procs:
        if p.proc.poll() is None:
            p.proc.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.proc.wait(20)
        except subprocess.TimeoutExpired:
            p.proc.kill()
            p.proc.wait(5)
