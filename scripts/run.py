"""`make run`: start reader, ranker and orchestrator as local processes under one supervisor.

Log lines are prefixed by service; Ctrl-C (or SIGTERM) stops everything cleanly; a service that
exits is reported and the whole stack stops instead of restarting it forever.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from dataclasses import dataclass, field

# Wait this long for a graceful stop before killing (services stop within 5 s by contract).
STOP_TIMEOUT_S = 8.0
COLOURS = {"reader": "36", "ranker": "35", "orchestrator": "32"}


@dataclass
class Service:
    """One supervised child process."""

    name: str
    env: dict[str, str] = field(default_factory=dict)
    proc: asyncio.subprocess.Process | None = None


def _prefix(name: str) -> str:
    width = max(len(n) for n in COLOURS)
    if sys.stdout.isatty():
        return f"\033[{COLOURS.get(name, '0')}m{name:<{width}}\033[0m | "
    return f"{name:<{width}} | "


async def _pump(svc: Service) -> None:
    if svc.proc is None or svc.proc.stdout is None:
        return
    prefix = _prefix(svc.name)
    async for raw in svc.proc.stdout:
        sys.stdout.write(prefix + raw.decode("utf-8", "replace"))
        sys.stdout.flush()


async def _start(svc: Service) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **svc.env}
    svc.proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        svc.name,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )


async def _stop(services: list[Service]) -> None:
    running = [(s.name, s.proc) for s in services if s.proc and s.proc.returncode is None]
    for _, proc in reversed(running):
        proc.send_signal(signal.SIGTERM)
    for name, proc in running:
        try:
            await asyncio.wait_for(proc.wait(), STOP_TIMEOUT_S)
        except TimeoutError:
            sys.stderr.write(f"{name} did not stop in {STOP_TIMEOUT_S:.0f} s; killing it\n")
            proc.kill()
            await proc.wait()


async def supervise(services: list[Service]) -> int:
    """Run ``services`` until one exits or a stop signal arrives; return the exit status."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    for svc in services:
        await _start(svc)
    pumps = [asyncio.create_task(_pump(s)) for s in services]
    waits = {asyncio.create_task(s.proc.wait()): s for s in services if s.proc is not None}
    stopper = asyncio.create_task(stop.wait())
    port = os.environ.get("ORCHESTRATOR_PORT", "8080")
    sys.stderr.write(f"\nQuarry API: http://127.0.0.1:{port}  (Ctrl-C stops everything)\n\n")
    done, _ = await asyncio.wait([*waits, stopper], return_when=asyncio.FIRST_COMPLETED)
    status = 0
    for task in done:
        if task in waits:
            svc = waits[task]
            status = 1
            sys.stderr.write(f"\n{svc.name} exited with status {task.result()}; stopping Quarry\n")
    await _stop(services)
    stopper.cancel()
    await asyncio.gather(*pumps, return_exceptions=True)
    return status


def main() -> None:
    """Start the stack and block until it stops."""
    services = [Service("reader"), Service("ranker"), Service("orchestrator")]
    raise SystemExit(asyncio.run(supervise(services)))


if __name__ == "__main__":
    main()
