"""Runs the question set through the real stack and collects one Outcome per question and
configuration.

The world: the doc web on 127.0.0.1, Debian's searx over it, the scripted LLM (or a relay to a
real model), and `make run`'s own supervisor (scripts/run.py) starting reader, ranker and
orchestrator, once per evidence mode (``ORCHESTRATOR_EVIDENCE``). Questions go through the HTTP
API as NDJSON; the pages read are captured from the reader itself (its cache is on, so the
capture is the very text the orchestrator got).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import httpx
from quarry.v1 import reader_pb2, reader_pb2_grpc

from bench.eval import docweb
from bench.eval.metrics import Outcome
from bench.eval.questions import KINDS, Kind, Question
from bench.eval.scripted import Director, Policy, Record, scripted_llm
from tests.conftest import free_port
from tests.e2e.stack import Stack, run_stack
from tests.offline.searx import run_searx, searx_available
from tests.offline.web import LocalWeb, serve

ASK_TIMEOUT_S = 300.0
READ_TIMEOUT_S = 60.0
# searx gives its engine this long: the doc web's big pages on a busy machine need more than 3 s.
SEARX_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Config:
    """One row group of the table: a stack setting, an LLM policy, the kinds it runs."""

    name: str
    evidence: str | None  # ORCHESTRATOR_EVIDENCE; None leaves the orchestrator's default
    policy: Policy
    kinds: tuple[Kind, ...] = KINDS


def default_configs() -> list[Config]:
    """Snippets only, today's one chunk per URL, and the passages mode, each with its gap run."""
    return [
        Config("snippets-only", "chunk_per_url", "snippets"),
        Config("bm25 chunk/url", "chunk_per_url", "one_round"),
        Config("bm25 chunk/url +gap", "chunk_per_url", "gap", ("two_page",)),
        Config("passages", "passages", "one_round"),
        Config("passages +gap", "passages", "gap", ("two_page",)),
    ]


def llm_configs() -> list[Config]:
    """A real model decides everything: each evidence mode once."""
    return [
        Config("llm chunk/url", "chunk_per_url", "relay"),
        Config("llm passages", "passages", "relay"),
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
        "LLM_MAX_TOKENS": "512",
        # As deployed: recent reads are cached, so capturing a page costs no second extraction.
        "READER_CACHE_ENABLED": "true",
        "READER_WORKERS": "2",
    }
    if evidence is not None:
        env["ORCHESTRATOR_EVIDENCE"] = evidence
    return env


def ask(api: str, q: Question, policy: Policy) -> list[dict[str, Any]]:
    """Ask ``q`` through the HTTP API (NDJSON); every event."""
    body = {"query": q.question, "options": {"prefetch": policy != "snippets"}}
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
        elif kind == "error":
            out.error = f"{data['code']}: {data['message']}"
        elif kind == "answer.completed":
            out.answer = data["text"]
        elif kind == "run.completed":
            out.status = data["status"]
            out.timings_ms = {k: float(v) for k, v in data["timings_ms"].items()}
            out.duration_ms = float(data["duration_ms"])
    out.pages_read = len(read)
    out.page_text = "\n\n".join(capture.text(u) for u in dict.fromkeys(read))
    out.evidence = record.synthesis[-1] if record.synthesis else ""
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
) -> list[Outcome]:
    """Every question under every configuration; one stack per evidence mode."""
    director = Director(relay, model if relay else "")
    capture = PageCapture()
    outcomes: list[Outcome] = []
    modes = list(dict.fromkeys(c.evidence for c in configs))
    with ExitStack() as stack:
        llm_url = stack.enter_context(scripted_llm(director))
        stack.callback(capture.close)
        for mode in modes:
            workdir = w.workdir / f"stack-{mode or 'default'}"
            workdir.mkdir(parents=True, exist_ok=True)
            env = stack_env(llm_url, mode, model) | dict(extra_env or {})
            with run_stack(workdir, w.searx, **env) as running:
                capture.attach(running.reader_port)
                for config in (c for c in configs if c.evidence == mode):
                    outcomes += _run_config(running, w, questions, config, director, capture)
                    if progress:
                        progress(f"done: {config.name}")
    return outcomes


def _run_config(
    running: Stack,
    w: World,
    questions: Sequence[Question],
    config: Config,
    director: Director,
    capture: PageCapture,
) -> list[Outcome]:
    results = []
    for q in questions:
        if q.kind not in config.kinds:
            continue
        record = director.begin(q, config.policy)
        events = ask(running.api, q, config.policy)
        results.append(outcome(q, config.name, events, record, w.web, capture))
        print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return results
