"""The whole stack for end-to-end tests, all on 127.0.0.1: the real embedded LLM server, and the
reader, ranker and orchestrator started by `scripts/run.py` exactly as `make run` starts them.

Every process starts in its own session, so teardown can stop it and everything it started,
even when a test fails halfway; nothing outlives the test run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import httpx

from scripts import embedded_llm
from tests.conftest import ROOT, free_port

# Settings the developer's shell may carry that would point the stack somewhere else.
_FOREIGN = ("OTEL_", "LLM_", "QUARRY_", "SEARXNG_", "READER_", "RANKER_", "ORCHESTRATOR_")
# Loading Gemma takes ~1 s, but CI machines are slow and busy: wait generously, fail clearly.
READY_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 20.0

# Tuned for a small model on 2 shared cores: short generations keep every run quick; a long
# read timeout means only cancellation (never a timeout) can end a slow page's fetch early.
FAST_LLM = {
    "LLM_MAX_TOKENS": "96",
    "LLM_TEMPERATURE": "0",
    "LLM_TIMEOUT_S": "120",
    "LLM_FIRST_TOKEN_TIMEOUT_S": "120",
    "LLM_IDLE_TIMEOUT_S": "60",
}
SLOW_READS = {
    "READER_TIMEOUT_S": "120",
    "ORCHESTRATOR_READ_TIMEOUT_S": "120",
    "ORCHESTRATOR_READ_BATCH_TIMEOUT_S": "150",
}
BUDGET = {"ORCHESTRATOR_QUESTION_BUDGET_S": "240", "ORCHESTRATOR_SYNTHESIS_RESERVE_S": "60"}
# The suite asks more questions a minute than one person would (the default is 10/minute).
RATES = {"ORCHESTRATOR_RATE_QUESTIONS": "600/minute", "ORCHESTRATOR_RATE_INDEXING": "600/minute"}


def clean_env(**extra: str) -> dict[str, str]:
    """The test process's environment minus anything that configures Quarry, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_FOREIGN)}
    env.update({"PYTHONUNBUFFERED": "1", **extra})
    return env


def tail(path: Path, lines: int = 40) -> str:
    """The last lines of a log, for failure messages."""
    if not path.exists():
        return "(no log)"
    return "\n".join(path.read_text("utf-8", "replace").splitlines()[-lines:])


@contextmanager
def process(
    argv: list[str], env: Mapping[str, str], log: Path, stop: int = signal.SIGTERM
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``argv`` in a new session with output to ``log``; on exit stop it and its children."""
    with log.open("ab") as out:
        proc = subprocess.Popen(
            argv,
            env=dict(env),
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            start_new_session=True,
        )
    try:
        yield proc
    finally:
        stop_group(proc, stop)


def stop_group(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> int:
    """Stop ``proc`` gracefully (``sig``), then kill whatever is left of its session."""
    if proc.poll() is None:
        proc.send_signal(sig)
        with suppress(subprocess.TimeoutExpired):
            proc.wait(STOP_TIMEOUT_S)
    # Whatever is left of the session (ProcessLookupError: everything stopped on its own).
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    return proc.wait(STOP_TIMEOUT_S)


def group_members(pgid: int) -> list[str]:
    """Command lines of the live processes in process group ``pgid`` (Linux /proc)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # "pid (comm) state ppid pgrp ...": comm may hold spaces, so split after its ")".
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append((stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, IndexError, ValueError):
            continue  # the process ended while we looked
    return members


def wait_http(url: str, proc: subprocess.Popen[bytes], log: Path, deadline_s: float) -> None:
    """Block until ``url`` answers 2xx; raise with the log's tail if the process dies or stalls."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}:\n{tail(log)}")
        try:
            if httpx.get(url, timeout=2.0).is_success:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{url} not ready within {deadline_s:.0f} s:\n{tail(log)}")


@contextmanager
def run_llm(workdir: Path, spec: embedded_llm.ModelSpec = embedded_llm.GEMMA) -> Iterator[str]:
    """The real llama_cpp.server with ``spec``'s model, as `make run` starts it; yield its URL."""
    model = embedded_llm.assemble(spec, workdir / "models")
    port = free_port()
    argv = embedded_llm.server_command(sys.executable, model, spec, "127.0.0.1", port)
    log = workdir / "llm.log"
    with process(argv, clean_env(**embedded_llm.server_env()), log) as proc:
        url = f"http://127.0.0.1:{port}"
        wait_http(f"{url}/v1/models", proc, log, READY_TIMEOUT_S)
        yield url


def llm_env(url: str, spec: embedded_llm.ModelSpec = embedded_llm.GEMMA) -> dict[str, str]:
    """Orchestrator settings for an already running embedded server at ``url``."""
    env = {
        "LLM_PROVIDER": "openai",
        "LLM_BASE_URL": url,
        "LLM_MODEL": spec.key,
        "LLM_SCHEMA_DIALECT": "json_object",
    }
    if spec.fold_system:
        env["LLM_FOLD_SYSTEM"] = "true"
    return env


@dataclass
class Stack:
    """A running `make run`: the API's URL, the gRPC ports, the supervisor and its log."""

    api: str
    reader_port: int
    ranker_port: int
    proc: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        """Everything the supervisor and its services printed so far."""
        return self.log.read_text("utf-8", "replace") if self.log.exists() else ""


def stack_env(workdir: Path, searx: str, **extra: str) -> tuple[dict[str, str], dict[str, int]]:
    """The environment for `scripts/run.py` over the fixture web, and the ports it will use."""
    ports = {name: free_port() for name in ("reader", "ranker", "orchestrator")}
    env = clean_env(
        READER_PORT=str(ports["reader"]),
        RANKER_PORT=str(ports["ranker"]),
        ORCHESTRATOR_PORT=str(ports["orchestrator"]),
        READER_ADDR=f"127.0.0.1:{ports['reader']}",
        RANKER_ADDR=f"127.0.0.1:{ports['ranker']}",
        SEARXNG_URL=searx,
        # The fixture web is on loopback, which the reader refuses by default.
        READER_ALLOWED_CIDRS="127.0.0.1/32",
        # Every question must really fetch its pages (the tests count fetches).
        READER_CACHE_ENABLED="false",
        READER_WORKERS="1",
        QUARRY_DATA_DIR=str(workdir / "data"),
        **FAST_LLM,
        **SLOW_READS,
        **BUDGET,
        **RATES,
    )
    env.update(extra)
    return env, ports


@contextmanager
def run_stack(workdir: Path, searx: str, **extra: str) -> Iterator[Stack]:
    """`python -m scripts.run` (what `make run` runs) until the API is ready; stopped on exit."""
    env, ports = stack_env(workdir, searx, **extra)
    log = workdir / "run.log"
    with process([sys.executable, "-m", "scripts.run"], env, log, stop=signal.SIGINT) as proc:
        api = f"http://127.0.0.1:{ports['orchestrator']}"
        wait_http(f"{api}/readyz", proc, log, READY_TIMEOUT_S)
        yield Stack(api, ports["reader"], ports["ranker"], proc, log)


@dataclass
class Services:
    """Services started one by one (not under the supervisor), so a test can kill one."""

    api: str
    procs: dict[str, subprocess.Popen[bytes]]


@contextmanager
def run_services(workdir: Path, env: dict[str, str], names: tuple[str, ...]) -> Iterator[Services]:
    """Start ``python -m <name>`` for each name with ``env``, as the supervisor would."""
    with ExitStack() as stack:
        procs = {}
        for name in names:
            log = workdir / f"{name}.log"
            procs[name] = stack.enter_context(process([sys.executable, "-m", name], env, log))
        api = f"http://127.0.0.1:{env['ORCHESTRATOR_PORT']}"
        log = workdir / "orchestrator.log"
        wait_http(f"{api}/readyz", procs["orchestrator"], log, READY_TIMEOUT_S)
        yield Services(api, procs)
