"""The default experience: `make run` offline (the project's docs), the embedded Qwen model.

Starts `python -m scripts.run` exactly as `make run` does (no SearXNG, no CORPUS_DIR: Quarry
answers from its README and docs/), then asks 10 fixed questions about Quarry, each once in
``speed`` mode (what auto picks for the embedded model) and once in ``balanced`` (the full
loop), in alternating order so a busy neighbour hits both alike. Reported per mode: median
and max time to the final answer, median time to the first answer token, LLM calls, how many
answers cite a source and how many citations the engine added.

Then time to first token of the answer after a chunk judge over the same sources, straight
against the model server: with the run's one fence marker (the prompts share everything up to
the task, so llama.cpp reuses its KV cache) vs a fresh marker per call (the old layout: nothing
after the system message is shared).

Slow: ~30-45 min on 2 shared cores (20 questions on a 1.5B CPU model). Downloads the model
packages (~1.1 GB) once, like `make run`. ``--questions N`` runs the first N only;
``--prefix-trials N`` sets the number of TTFT pairs (default 2).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from orchestrator.core.prompts import (  # noqa: E402 - after the sys.path entry above
    judge_messages,
    new_boundary,
    synthesis_messages,
)

QUESTIONS = (
    "What does Quarry do?",
    "How do I make Quarry search my own documents?",
    "Which environment variable sets the folder of local documents that Quarry indexes?",
    "How do I point Quarry at an Ollama server?",
    "What does ORCHESTRATOR_MAX_ROUNDS control?",
    "Which port does the Quarry API listen on by default?",
    "How does Quarry check the citations in an answer?",
    "What events does the search API stream?",
    "How do I run the tests?",
    "What does the reader service do?",
)
MODES = ("speed", "balanced")
READY_TIMEOUT_S = 900.0
CLIENT_TIMEOUT_S = 900.0
PREFIX_TRIALS = 2


@dataclass
class Result:
    """One question in one mode."""

    mode: str
    question: str
    status: str = "error"
    total_s: float = 0.0
    ttft_s: float | None = None
    llm_calls: int = 0
    cited: int = 0
    added: int = 0
    answer: str = ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(url: str, proc: subprocess.Popen[bytes], what: str, log: Path) -> None:
    end = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < end:
        if proc.poll() is not None:
            tail = "\n".join(log.read_text("utf-8", "replace").splitlines()[-20:])
            raise SystemExit(f"bench: make run exited ({proc.returncode}) before {what}:\n{tail}")
        try:
            if httpx.get(url, timeout=3).is_success:
                return
        except httpx.TransportError:
            pass
        time.sleep(1.0)
    raise SystemExit(f"bench: {what} not ready within {READY_TIMEOUT_S:.0f} s")


def _wait_indexed(api: str, proc: subprocess.Popen[bytes]) -> int:
    end = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit("bench: make run exited while indexing")
        try:
            stats = httpx.get(f"{api}/v1/corpus", timeout=3).json()
            if stats.get("documents") and not stats.get("refreshing"):
                return int(stats["documents"])
        except (httpx.TransportError, ValueError):
            pass
        time.sleep(1.0)
    raise SystemExit("bench: the project docs were not indexed in time")


def ask(api: str, question: str, mode: str) -> Result:
    """One question through the HTTP API (NDJSON), timed from the request."""
    result = Result(mode, question)
    body = {"query": question, "options": {"mode": mode}}
    start = time.monotonic()
    with (
        httpx.Client(timeout=CLIENT_TIMEOUT_S) as client,
        client.stream(
            "POST", f"{api}/v1/search", json=body, headers={"Accept": "application/x-ndjson"}
        ) as reply,
    ):
        for line in reply.iter_lines():
            if not line.strip():
                continue
            event = json.loads(line)
            kind, data = event["type"], event["data"]
            if kind == "answer.delta" and result.ttft_s is None:
                result.ttft_s = time.monotonic() - start
            elif kind == "answer.completed":
                result.cited = len(data.get("cited", []))
                result.added = len(data.get("added_citations", []))
                result.answer = data.get("text", "")
            elif kind == "run.completed":
                result.status = data["status"]
                result.llm_calls = int(data.get("llm_calls", 0))
    result.total_s = time.monotonic() - start
    return result


@dataclass(frozen=True)
class Src:
    """A source as the prompts take it."""

    url: str
    title: str
    text: str


def _sources() -> list[Src]:
    """Three README sections cut to speed mode's 900 characters, as an answer sees them."""
    readme = ROOT / "README.md"
    parts = [p.strip() for p in readme.read_text("utf-8").split("\n## ") if len(p.strip()) > 400]
    return [
        Src(f"local:{readme}#{i}", f"README part {i}", p[:900]) for i, p in enumerate(parts[:3])
    ]


def _ttft(llm: str, messages: list[Any], *, stream: bool) -> float:
    body = {"model": "qwen", "messages": messages, "temperature": 0, "max_tokens": 16}
    start = time.monotonic()
    if not stream:
        httpx.post(f"{llm}/v1/chat/completions", json=body, timeout=CLIENT_TIMEOUT_S)
        return time.monotonic() - start
    body["stream"] = True
    with (
        httpx.Client(timeout=CLIENT_TIMEOUT_S) as client,
        client.stream("POST", f"{llm}/v1/chat/completions", json=body) as reply,
    ):
        for line in reply.iter_lines():
            if line.startswith("data:") and '"content"' in line:
                payload = json.loads(line[5:])
                if payload["choices"][0]["delta"].get("content"):
                    return time.monotonic() - start
    return time.monotonic() - start


def prefix_ttft(llm: str, trials: int) -> dict[str, list[float]]:
    """TTFT of the answer right after a chunk judge: one marker per run vs one per call."""
    sources = _sources()
    question = "What does Quarry do?"
    today = date.today()
    out: dict[str, list[float]] = {"shared": [], "fresh": []}
    for trial in range(trials):
        for layout in ("shared", "fresh") if trial % 2 == 0 else ("fresh", "shared"):
            judge_marker = new_boundary()
            answer_marker = judge_marker if layout == "shared" else new_boundary()
            judge = judge_messages(
                question, sources, stage="chunks", today=today, boundary=judge_marker
            )
            _ttft(llm, list(judge), stream=False)
            answer = synthesis_messages(question, sources, today=today, boundary=answer_marker)
            out[layout].append(_ttft(llm, list(answer), stream=True))
    return out


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report(results: list[Result], prefix: dict[str, list[float]], docs: int) -> None:
    """Print the per-mode table."""
    print(f"\nmake run offline: {docs} project documents, embedded Qwen2.5-Coder-1.5B, 2 cores")
    print(
        f"{'mode':<9} {'n':>2} {'median s':>9} {'max s':>7} {'TTFT s':>7} {'LLM calls':>9} "
        f"{'cite':>5} {'added':>5} {'answered':>8}"
    )
    for mode in MODES:
        rows = [r for r in results if r.mode == mode]
        ttfts = [r.ttft_s for r in rows if r.ttft_s is not None]
        print(
            f"{mode:<9} {len(rows):>2} {_median([r.total_s for r in rows]):>9.1f} "
            f"{max((r.total_s for r in rows), default=0):>7.1f} {_median(ttfts):>7.1f} "
            f"{_median([float(r.llm_calls) for r in rows]):>9.1f} "
            f"{sum(1 for r in rows if r.cited):>2}/{len(rows):<2} "
            f"{sum(r.added for r in rows):>5} "
            f"{sum(1 for r in rows if r.status in ('answered', 'from_history')):>5}/{len(rows)}"
        )
    print("\nper question (s):")
    for q in dict.fromkeys(r.question for r in results):
        cells = "  ".join(
            f"{r.mode} {r.total_s:6.1f} ({r.status}, {r.cited} cited)"
            for r in results
            if r.question == q
        )
        print(f"  {q[:60]:<60} {cells}")
    print(
        "\nTTFT of the answer after a chunk judge over the same 3 sources: "
        f"shared prefix (one marker per run) {_median(prefix['shared']):.1f} s "
        f"{[round(x, 1) for x in prefix['shared']]} vs fresh marker per call "
        f"{_median(prefix['fresh']):.1f} s {[round(x, 1) for x in prefix['fresh']]}"
    )


def main() -> None:
    """Start make run, ask, measure, report, stop."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    parser.add_argument("--prefix-trials", type=int, default=PREFIX_TRIALS)
    args = parser.parse_args()
    models = ROOT / ".data" / "models"
    with tempfile.TemporaryDirectory(prefix="quarry-bench-") as tmp:
        data = Path(tmp)
        if models.is_dir():  # reuse the assembled model (1.1 GB) instead of a second copy
            (data / "models").symlink_to(models)
        ports = {n: _free_port() for n in ("orchestrator", "reader", "ranker", "llm")}
        # The shell's environment minus anything that configures Quarry (as the e2e tests do).
        foreign = ("OTEL_", "LLM_", "QUARRY_", "SEARXNG_", "READER_", "RANKER_", "ORCHESTRATOR_")
        env = {k: v for k, v in os.environ.items() if not k.startswith(foreign)} | {
            "PYTHONUNBUFFERED": "1",
            "QUARRY_DATA_DIR": str(data),
            "QUARRY_MODEL": "qwen",
            "QUARRY_LLM_PORT": str(ports["llm"]),
            "ORCHESTRATOR_PORT": str(ports["orchestrator"]),
            "READER_PORT": str(ports["reader"]),
            "RANKER_PORT": str(ports["ranker"]),
            "READER_ADDR": f"127.0.0.1:{ports['reader']}",
            "RANKER_ADDR": f"127.0.0.1:{ports['ranker']}",
        }
        log = (data / "run.log").open("wb")
        print(f">> make run (log {data / 'run.log'})", file=sys.stderr)
        proc = subprocess.Popen(
            [sys.executable, "-m", "scripts.run"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            api = f"http://127.0.0.1:{ports['orchestrator']}"
            _wait(f"{api}/readyz", proc, "the stack", data / "run.log")
            docs = _wait_indexed(api, proc)
            prefix = prefix_ttft(f"http://127.0.0.1:{ports['llm']}", args.prefix_trials)
            print(f"  prefix TTFT: {prefix}", file=sys.stderr)
            results: list[Result] = []
            for i, question in enumerate(QUESTIONS[: args.questions]):
                for mode in MODES if i % 2 == 0 else tuple(reversed(MODES)):
                    r = ask(api, question, mode)
                    print(
                        f"  {mode:<8} {r.total_s:6.1f} s  TTFT {r.ttft_s or 0:5.1f}  "
                        f"{r.status}  calls {r.llm_calls}  cited {r.cited}  {question}",
                        file=sys.stderr,
                    )
                    results.append(r)
            report(results, prefix, docs)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
            log.close()


if __name__ == "__main__":
    main()
