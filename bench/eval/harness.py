"""Runs the question set through the real stack and collects one Outcome per question and
configuration.

The world: the doc web on 127.0.0.1, Debian's searx over it, the scripted LLM (or a relay to a
real model), and `make run`'s own supervisor (scripts/run.py) starting reader, ranker, index and
orchestrator, once per evidence mode (``ORCHESTRATOR_EVIDENCE``) and once more with a local
corpus (Quarry's own README and docs, as `make run` stages them) for the off-topic questions.
The run mode (speed, balanced, quality) is the request's own ``options.mode``, as a client
chooses it. Questions go through the HTTP API as NDJSON; the pages read are captured from the
reader itself (its cache is on, so the capture is the very text the orchestrator got).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import httpx
from orchestrator.core.ask.modes import Mode
from quarry.v1 import reader_pb2, reader_pb2_grpc

from bench.eval import docweb
from bench.eval.metrics import Outcome
from bench.eval.questions import KINDS, Kind, Question
from bench.eval.scripted import Director, Policy, Record, scripted_llm
from scripts.run import stage_project_docs
from tests.conftest import ROOT, free_port
from tests.e2e.stack import Stack, run_stack
from tests.offline.searx import run_searx, searx_available
from tests.offline.web import LocalWeb, serve

ASK_TIMEOUT_S = 300.0
READ_TIMEOUT_S = 60.0
NO_CAPS = {  # each at its setting's maximum
    "READER_EXTRACT_TIMEOUT_S": "120",
    "READER_TIMEOUT_S": "120",
    "RANKER_DENSE_SECONDS": "60",
    "ORCHESTRATOR_RANKER_TIMEOUT_S": "120",
    "ORCHESTRATOR_READ_TIMEOUT_S": "120",
    "ORCHESTRATOR_READ_BATCH_TIMEOUT_S": "600",
    "ORCHESTRATOR_QUESTION_BUDGET_S": "900",
    "ORCHESTRATOR_SYNTHESIS_RESERVE_S": "120",
}
# searx gives its engine this long: the doc web's big pages on a busy machine need more than 3 s.
SEARX_TIMEOUT_S = 10.0
# Indexing Quarry's docs (a few files) with dense embeddings on a busy 2-core machine.
CORPUS_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Config:
    """One row group of the table: a stack setting, an LLM policy, the kinds it runs."""

    name: str
    evidence: str | None  # ORCHESTRATOR_EVIDENCE; None leaves the orchestrator's default
    policy: Policy
    kinds: tuple[Kind, ...] = KINDS
    mode: Mode | None = None  # the request's options.mode; None: the server's (auto)
    # Ask the local corpus only (options.sources = ["local"]), on a stack with CORPUS_DIR set.
    local: bool = False

    @property
    def stack(self) -> tuple[str | None, bool]:
        """The stack this configuration runs on: its evidence mode and whether it has a corpus."""
        return (self.evidence, self.local)


def mode_configs(modes: Sequence[Mode]) -> list[Config]:
    """What `make eval` measures by default: each run mode as a client asks for it, with the
    orchestrator's default evidence; a gap round for two-page questions where judges run; and
    the off-topic questions against the local corpus."""
    configs = []
    for mode in modes:
        configs.append(Config(mode, None, "one_round", mode=mode))
        if mode != "speed":  # speed has no judges: one round
            configs.append(Config(f"{mode} +gap", None, "gap", ("two_page",), mode=mode))
    configs += [
        Config(f"{mode} local", None, "one_round", ("offtopic",), mode=mode, local=True)
        for mode in modes
    ]
    return configs


def relay_configs(modes: Sequence[Mode]) -> list[Config]:
    """A real model decides everything, per mode: the answerable and unanswerable questions on
    the doc web, the off-topic ones against the local corpus."""
    asked: tuple[Kind, ...] = (*KINDS, "unanswerable")
    configs = [Config(f"llm {m}", None, "relay", asked, mode=m) for m in modes]
    configs += [
        Config(f"llm {m} local", None, "relay", ("offtopic",), mode=m, local=True) for m in modes
    ]
    return configs


def evidence_configs() -> list[Config]:
    """Snippets only, today's one chunk per URL, and the passages mode, each with its gap run
    (the server's default mode: the evidence comparison `make eval` made before modes)."""
    return [
        Config("snippets-only", "chunk_per_url", "snippets"),
        Config("bm25 chunk/url", "chunk_per_url", "one_round"),
        Config("bm25 chunk/url +gap", "chunk_per_url", "gap", ("two_page",)),
        Config("passages", "passages", "one_round"),
        Config("passages +gap", "passages", "gap", ("two_page",)),
    ]


@dataclass
class World:
    """The running doc web and search engine."""

    web: LocalWeb
    searx: str
    workdir: Path


@contextmanager
def world(workdir: Path) -> Iterator[World]:
    """Serve the doc web and run searx over it."""
    reason = searx_available() or docweb.docs_available()
    if reason:
        raise RuntimeError(reason)
    with serve(docweb.route()) as web:
        engine_dir = workdir / "searx"
        engine_dir.mkdir(parents=True, exist_ok=True)
        entries = docweb.entries(web.base_url)
        with run_searx(engine_dir, entries, free_port(), SEARX_TIMEOUT_S) as searx:
            yield World(web, searx, workdir)


class PageCapture:
    """The reader's text of each URL read (memoised: extraction is deterministic)."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._stub: reader_pb2_grpc.ReaderStub | None = None
        self._channel: grpc.Channel | None = None

    def attach(self, reader_port: int) -> None:
        """Read through the reader at ``reader_port`` from now on."""
        self.close()
        self._channel = grpc.insecure_channel(f"127.0.0.1:{reader_port}")
        self._stub = reader_pb2_grpc.ReaderStub(self._channel)

    def close(self) -> None:
        """Drop the channel."""
        if self._channel is not None:
            self._channel.close()
        self._channel = self._stub = None

    def text(self, url: str) -> str:
        """The markdown the reader gives for ``url``."""
        if url not in self._texts:
            if self._stub is None:
                raise RuntimeError("no reader attached")
            reply = self._stub.Read(reader_pb2.ReadRequest(url=url), timeout=READ_TIMEOUT_S)
            self._texts[url] = reply.markdown
        return self._texts[url]


def stack_env(llm_url: str, evidence: str | None, model: str) -> dict[str, str]:
    """Settings for one stack over the scripted (or relayed) LLM."""
    env = {
        "LLM_PROVIDER": "openai",
        "LLM_BASE_URL": llm_url,
        "LLM_MODEL": model,
        # As deployed: recent reads are cached, so capturing a page costs no second extraction.
        "READER_CACHE_ENABLED": "true",
        "READER_WORKERS": "2",
        # Quality, not the time caps: on a busy 2-core machine a capped stage degrades at random
        # (an extraction killed, dense ranking cut short, the ranker timed out to page order),
        # so every cap is lifted well above what an idle machine needs and the numbers repeat.
        **NO_CAPS,
    }
    if evidence is not None:
        env["ORCHESTRATOR_EVIDENCE"] = evidence
    return env


def ask(api: str, q: Question, config: Config) -> list[dict[str, Any]]:
    """Ask ``q`` through the HTTP API (NDJSON) as ``config`` says; every event."""
    options: dict[str, Any] = {"prefetch": config.policy != "snippets"}
    if config.mode is not None:
        options["mode"] = config.mode
    if config.local:
        options["sources"] = ["local"]
    body = {"query": q.question, "options": options}
    headers = {"Accept": "application/x-ndjson"}
    events = []
    with httpx.stream(
        "POST", f"{api}/v1/search", json=body, headers=headers, timeout=ASK_TIMEOUT_S
    ) as reply:
        reply.raise_for_status()
        for line in reply.iter_lines():
            if line.strip():
                events.append(json.loads(line))
    return events


def outcome(
    q: Question,
    config: str,
    events: Sequence[dict[str, Any]],
    record: Record,
    web: LocalWeb,
    capture: PageCapture,
) -> Outcome:
    """Turn one run's events and the LLM's record into an Outcome."""
    out = Outcome(q, config)
    read: list[str] = []
    for event in events:
        kind, data = event["type"], event["data"]
        if kind == "rank.completed":
            out.searched += [web.path_of(u) for u in data["urls"]]
        elif kind == "read.completed" and data["status"] == "OK":
            read.append(data["url"])
        elif kind == "sources":
            out.cited = [web.path_of(s["url"]) for s in data["sources"]]
            out.local_sources = sum(not s["url"].startswith(web.base_url) for s in data["sources"])
        elif kind == "error":
            out.error = f"{data['code']}: {data['message']}"
        elif kind == "answer.completed":
            out.answer = data["text"]  # as checked against the sources, what the user sees
            out.support_score = data.get("support_score")
            out.sentences = list(data.get("sentences") or [])
        elif kind == "run.completed":
            out.status = data["status"]
            out.timings_ms = {k: float(v) for k, v in data["timings_ms"].items()}
            out.duration_ms = float(data["duration_ms"])
    out.pages_read = len(read)
    out.page_text = "\n\n".join(capture.text(u) for u in dict.fromkeys(read))
    out.evidence = record.synthesis[-1] if record.synthesis else ""
    out.draft = record.drafts[-1] if record.drafts else ""
    return out


def run_configs(
    w: World,
    questions: Sequence[Question],
    configs: Sequence[Config],
    *,
    relay: str = "",
    model: str = "fake-model",
    extra_env: Mapping[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Every question under every configuration; one stack per evidence mode (and corpus).
    ``on_outcome`` sees each outcome as it comes (a long run's partial results)."""
    director = Director(relay, model if relay else "")
    capture = PageCapture()
    outcomes: list[Outcome] = []
    stacks = list(dict.fromkeys(c.stack for c in configs))
    with ExitStack() as stack:
        llm_url = stack.enter_context(scripted_llm(director))
        stack.callback(capture.close)
        for evidence, local in stacks:
            workdir = w.workdir / f"stack-{evidence or 'default'}{'-local' if local else ''}"
            workdir.mkdir(parents=True, exist_ok=True)
            env = stack_env(llm_url, evidence, model) | dict(extra_env or {})
            if local:
                env["CORPUS_DIR"] = str(stage_project_docs(ROOT, workdir / "corpus"))
            with run_stack(workdir, w.searx, **env) as running:
                if local:
                    wait_corpus(running.api)
                capture.attach(running.reader_port)
                for config in (c for c in configs if c.stack == (evidence, local)):
                    outcomes += _run_config(
                        running, w, questions, config, director, capture, on_outcome
                    )
                    if progress:
                        progress(f"done: {config.name}")
    return outcomes


def wait_corpus(api: str, timeout_s: float = CORPUS_TIMEOUT_S) -> None:
    """Block until the orchestrator's local corpus is indexed (documents in, nothing pending)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        view = httpx.get(f"{api}/v1/corpus", timeout=30).json()
        if view.get("documents") and not view.get("refreshing") and not view.get("pending"):
            return
        time.sleep(2)
    raise RuntimeError(f"the local corpus was not indexed within {timeout_s:.0f} s")


def _run_config(
    running: Stack,
    w: World,
    questions: Sequence[Question],
    config: Config,
    director: Director,
    capture: PageCapture,
    on_outcome: Callable[[Outcome], None] | None,
) -> list[Outcome]:
    results = []
    for q in questions:
        if q.kind not in config.kinds:
            continue
        record = director.begin(q, config.policy)
        events = ask(running.api, q, config)
        results.append(outcome(q, config.name, events, record, w.web, capture))
        if on_outcome:
            on_outcome(results[-1])
        print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return results
