"""Service processes for the multi-replica test and the scale bench: started with their logs in a
file (a pipe nobody reads would fill and stall them), health-checked over HTTP, stopped with
SIGTERM (then SIGKILL); and the cluster both build: reader processes, orchestrators over the
test world, the scripted LLM and SearXNG, PostgreSQL and Redis."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from tests.conftest import ROOT, START_DEADLINE_S, free_port, service_env, wait_serving

if TYPE_CHECKING:
    from services.orchestrator.tests.fakes.fake_llm import FakeLLM
    from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng
    from services.orchestrator.tests.integration.support import World


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


async def start_readers(folder: Path, procs: list[Proc], count: int = 2) -> list[Proc]:
    """``count`` reader processes (one extraction worker each), serving; added to ``procs``."""
    readers = []
    for i in range(count):
        port = free_port()
        env = service_env(
            READER_PORT=str(port), READER_ALLOW_PRIVATE_NETWORKS="true", READER_WORKERS="1"
        )
        readers.append(spawn(f"reader{i}", "reader", env, folder, port))
    procs += readers
    for r in readers:
        await asyncio.to_thread(wait_serving, r.port, r.proc)
    return readers


def readers_addr(readers: list[Proc]) -> str:
    """Every reader behind one name: the channel's round_robin spreads the calls."""
    return "ipv4:" + ",".join(f"127.0.0.1:{r.port}" for r in readers)


def cluster_env(
    world: World, llm: FakeLLM, searx: FakeSearxng, db_url: str, redis_url: str, **extra: str
) -> dict[str, str]:
    """What every orchestrator of the cluster shares: the test world's ranker and index, the
    scripted LLM and SearXNG, one PostgreSQL database and one Redis (``extra`` adds or wins)."""
    return service_env(
        RANKER_ADDR=world.ranker_addr,
        INDEX_ADDR=world.index_addr,
        SEARXNG_URL=searx.url,
        LLM_PROVIDER="ollama",
        LLM_BASE_URL=llm.url,
        LLM_MODEL=llm.model,
        ORCHESTRATOR_DATABASE_URL=db_url,
        ORCHESTRATOR_REDIS_URL=redis_url,
        **extra,
    )


async def start_orchestrators(
    folder: Path,
    procs: list[Proc],
    env: dict[str, str],
    names: list[str],
    module: str = "orchestrator",
) -> list[Proc]:
    """One ``python -m module`` per name over ``env``, each on a free port, healthy; added to
    ``procs``."""
    started = []
    for name in names:
        port = free_port()
        started.append(spawn(name, module, {**env, "ORCHESTRATOR_PORT": str(port)}, folder, port))
    procs += started
    await asyncio.gather(*(healthy(p) for p in started))
    return started
