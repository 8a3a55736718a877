"""What one client can hold of the orchestrator's HTTP server: the guarded server (`python -m
orchestrator`, default settings) beside the baseline of plain `uvicorn.run(app)` (what
`python -m orchestrator` ran before the bounds), both as real processes on 127.0.0.1.

Measured per server: a 64 MiB header (bytes the client got to send, the answer, resident memory
before / peak / after), 40 slow-header connections (how many the server closed, and when), and
100 idle connections from one address (how many it kept).

Run: ``.venv/bin/python bench/http/bench_http_bounds.py`` (``make bench``), about 70 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HUGE = 64 * 1024 * 1024
SLOW = 40
SLOW_WINDOW_S = 20.0
IDLE = 100
BASELINE = (
    "import uvicorn\n"
    "from orchestrator.app import create_app\n"
    "from orchestrator.config import Settings\n"
    "s = Settings()\n"
    "uvicorn.run(create_app(s), host=s.host, port=s.port, log_config=None)\n"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _rss_kb(pid: int, key: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


@contextlib.contextmanager
def _server(argv: list[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORCHESTRATOR_", "OTEL_"))}
    env |= {"ORCHESTRATOR_PORT": str(port), "ORCHESTRATOR_LOG_LEVEL": "ERROR"}
    proc = subprocess.Popen(argv, env=env, cwd=ROOT, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            time.sleep(0.1)
        time.sleep(0.5)  # let the import-time allocations settle before measuring
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)


def huge_header(port: int, pid: int) -> str:
    before = _rss_kb(pid)
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
    sent, chunk, answer = 0, b"a" * 65536, b""
    with sock:
        with contextlib.suppress(OSError):
            while sent < HUGE:
                sock.sendall(chunk)
                sent += len(chunk)
            sock.sendall(b"\r\n\r\n")
        with contextlib.suppress(OSError):
            answer = sock.recv(100).split(b"\r\n")[0]
    time.sleep(0.5)
    peak, after = _rss_kb(pid, "VmHWM"), _rss_kb(pid)
    return (
        f"64 MiB header: sent {sent / 2**20:.1f} MiB, answer {answer.decode() or '(reset)'}; "
        f"RSS {before / 1024:.0f} -> peak {peak / 1024:.0f} -> {after / 1024:.0f} MB"
    )


async def slow_headers(port: int) -> str:
    async def one() -> float | None:
        start = time.monotonic()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            return 0.0
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        try:
            for i in range(int(SLOW_WINDOW_S)):
                if await _closed_within(reader, 1.0):
                    return time.monotonic() - start
                writer.write(b"X-%d: y\r\n" % i)
        finally:
            writer.close()
        return None

    closed = await asyncio.gather(*(one() for _ in range(SLOW)))
    done = sorted(c for c in closed if c is not None)
    open_left = SLOW - len(done)
    when = f"closed after {done[0]:.1f}-{done[-1]:.1f} s" if done else "none closed"
    window = f"{SLOW_WINDOW_S:.0f} s"
    return f"{SLOW} slow-header connections: {len(done)} {when}; {open_left} open at {window}"


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    """True when the server closes (EOF or reset) within ``seconds``."""
    try:
        async with asyncio.timeout(seconds):
            await reader.read()
    except TimeoutError:
        return False
    except OSError:
        return True
    return True


async def idle_connections(port: int) -> str:
    conns = []
    for _ in range(IDLE):
        with contextlib.suppress(OSError):
            conns.append(await asyncio.open_connection("127.0.0.1", port))
    for _, w in conns:
        w.write(b"GET /healthz HTTP/1.1\r\n")
    await asyncio.sleep(1.0)
    alive = 0
    for r, _ in conns:
        alive += 0 if await _closed_within(r, 0.05) else 1
    for _, w in conns:
        w.close()
    return f"{IDLE} connections from one address: {alive} kept after 1 s"


def measure(name: str, argv: list[str]) -> None:
    port = _free_port()
    with _server(argv, port) as proc:
        print(f"{name}: {huge_header(port, proc.pid)}")
    with _server(argv, port) as proc:
        print(f"{name}: {asyncio.run(slow_headers(port))}")
        print(f"{name}: {asyncio.run(idle_connections(port))}")
        print(f"{name}: RSS at the end {_rss_kb(proc.pid) / 1024:.0f} MB")


def main() -> None:
    measure("baseline uvicorn.run(app)", [sys.executable, "-c", BASELINE])
    measure("guarded python -m orchestrator", [sys.executable, "-m", "orchestrator"])


if __name__ == "__main__":
    main()
