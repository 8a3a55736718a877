"""``quarry replay BUNDLE``: a run replayed offline from its bundle, and re-graded.

No network and no model: the replay runs the report phase again — the very code a run uses
(``core/research/synthesis.py``: each section's prompt cut to the context budget, the model's
output,
the citation check) — with the model's recorded outputs served in place of the model, over the
run's recorded findings and sources, with every socket refused (``no_network``). It says
whether that gives the same report and the same citations as the run did, and whether each
replayed prompt is the one the model saw. Then it re-grades the report: every sentence that
cites a source, against the passage of that source (``support.mark_sentence``), so a reader
can see which citations their passages support. A conversation's bundle has no recorded calls
(quick answers keep their passages, not their prompts): it is re-graded only.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import socket
import zipfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, NoReturn, cast

import orjson

from orchestrator.config import Settings
from orchestrator.core.ask.state import Deps
from orchestrator.core.budget import Deadline
from orchestrator.core.exports.bundle import FORMAT, VERSION
from orchestrator.core.exports.document import Part, Source, without_source_list
from orchestrator.core.exports.formats import graded_sentences
from orchestrator.core.llm import LLMError, Message
from orchestrator.core.prompts import MARKER_PATTERN
from orchestrator.core.research.context import Ctx
from orchestrator.core.research.events import EventLog
from orchestrator.core.research.state import ResearchState
from orchestrator.core.research.synthesis import plan_sections, synthesise

MAX_BUNDLE_BYTES = 512 * 1024 * 1024
# What a replayed prompt may differ in: the date (a replay on another day) and the fence
# marker (core/prompts.py draws one at random per prompt).
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_MARKER = re.compile(rf"use the marker ({MARKER_PATTERN})\b")


def _normal(messages: object) -> str:
    text = _DATE.sub("DATE", orjson.dumps(messages).decode())
    for marker in set(_MARKER.findall(text)):
        text = text.replace(marker, "MARKER")
    return text


class BadBundle(ValueError):
    """The file is not a Quarry run bundle (or not one this version reads)."""


@dataclass
class Bundle:
    """A bundle's parts, as read."""

    manifest: dict[str, Any]
    files: dict[str, bytes]

    def json(self, name: str) -> Any:
        """A JSON file of the bundle."""
        return orjson.loads(self.files[name])

    def jsonl(self, name: str) -> list[dict[str, Any]]:
        """A JSON-lines file of the bundle."""
        return [orjson.loads(line) for line in self.files.get(name, b"").splitlines() if line]


def read_bundle(data: bytes) -> Bundle:
    """Open a bundle.

    Raises:
        BadBundle: not a zip, no manifest, another format or a newer version.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            sizes = sum(i.file_size for i in archive.infolist())
            if sizes > MAX_BUNDLE_BYTES:
                raise BadBundle(f"the bundle unpacks to {sizes} bytes (at most {MAX_BUNDLE_BYTES})")
            files = {i.filename: archive.read(i) for i in archive.infolist() if not i.is_dir()}
        manifest = orjson.loads(files["manifest.json"])
    except (zipfile.BadZipFile, KeyError, orjson.JSONDecodeError) as err:
        raise BadBundle(f"not a Quarry run bundle ({err})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BadBundle("not a Quarry run bundle (no quarry.bundle manifest)")
    if manifest.get("version") != VERSION:
        raise BadBundle(f"bundle version {manifest.get('version')!r}; this Quarry reads {VERSION}")
    return Bundle(manifest, files)


@contextlib.contextmanager
def no_network() -> Iterator[None]:
    """Every socket connect and name lookup in this process refused, for the block's time."""

    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        raise OSError("network access is blocked during a replay")

    saved = (socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo)
    socket.socket.connect = refuse  # type: ignore[method-assign]
    socket.socket.connect_ex = refuse  # type: ignore[method-assign]
    socket.getaddrinfo = refuse
    try:
        yield
    finally:
        socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = saved  # type: ignore[method-assign]


class ReplayLLM:
    """The model's recorded report outputs, served in order, in place of the model."""

    def __init__(self, recorded: list[dict[str, Any]]) -> None:
        self._recorded = list(recorded)
        self.prompts_matched = 0
        self.prompts_differ = 0

    async def structured(self, *args: Any, **kwargs: Any) -> NoReturn:
        """The report phase makes no structured call."""
        raise LLMError("a replay has no recorded structured call here", "replay")

    async def stream(self, messages: list[Message], *, timeout: float) -> AsyncIterator[str]:
        """The next recorded section output (its recorded error, if it failed)."""
        if not self._recorded:
            raise LLMError("the bundle records no more model outputs", "replay")
        entry = self._recorded.pop(0)
        if "messages" in entry:  # a slimmed record kept only the prompt's hash
            same = _normal(messages) == _normal(entry["messages"])
            self.prompts_matched += same
            self.prompts_differ += not same
        if entry.get("error"):
            raise LLMError(str(entry["error"]), "replay")
        yield str(entry.get("output", ""))


@dataclass
class ReplayResult:
    """What a replay found."""

    kind: str
    id: str
    replayed: bool
    same_answer: bool | None = None
    same_citations: bool | None = None
    cited: list[int] = field(default_factory=list)
    recorded_cited: list[int] = field(default_factory=list)
    prompts_matched: int = 0
    prompts_differ: int = 0
    answer: str = ""
    sentences: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """The replay gave what the run gave (True for a bundle that is only re-graded)."""
        return not self.replayed or bool(self.same_answer and self.same_citations)

    def grades(self) -> dict[str, int]:
        """How many cited sentences are supported, partly supported, unsupported."""
        out = {"supported": 0, "partly": 0, "unsupported": 0}
        for s in self.sentences:
            if s["support"] in out:
                out[s["support"]] += 1
        return out

    def as_json(self) -> dict[str, Any]:
        """The result as ``quarry replay --json`` prints it."""
        return {
            "kind": self.kind,
            "id": self.id,
            "replayed": self.replayed,
            "ok": self.ok,
            "same_answer": self.same_answer,
            "same_citations": self.same_citations,
            "cited": self.cited,
            "recorded_cited": self.recorded_cited,
            "prompts": {"matched": self.prompts_matched, "differ": self.prompts_differ},
            "grades": self.grades(),
            "answer": self.answer,
            "sentences": self.sentences,
            "notes": self.notes,
        }


class _Offline:
    """Any collaborator a replay must never call."""

    def __getattr__(self, name: str) -> NoReturn:
        raise RuntimeError(f"a replay made a live call ({name})")


def _sources(state: ResearchState) -> tuple[Source, ...]:
    return tuple(Source(s.n, s.url, s.title, s.origin, (s.text,)) for s in state.sources)


async def _replay_report(bundle: Bundle, result: ReplayResult) -> None:
    run = bundle.json("run.json")
    state = ResearchState.model_validate(run["state"])
    recorded_report, result.recorded_cited = state.report, list(state.cited)
    plans = plan_sections(state, run.get("mode", "deep-research"))
    streams = [
        e
        for e in bundle.jsonl("recording.jsonl")
        if e.get("kind") == "llm.stream" and e.get("phase") == "synthesis"
    ][-len(plans) :]
    if len(streams) < len(plans) or not recorded_report:
        result.replayed = False
        result.notes.append("the bundle records no complete report phase: re-graded only")
        return
    settings = Settings(**bundle.manifest.get("settings", {}))
    llm = ReplayLLM(streams)
    offline = cast(Any, _Offline())
    ctx = Ctx(
        run_id=str(run["id"]),
        query=str(run["query"]),
        mode="due-diligence" if run.get("mode") == "due-diligence" else "deep-research",
        state=state,
        log=EventLog(0, _discard),
        deps=Deps(settings, offline, offline, offline, offline),
        llm=llm,
        deadline=Deadline(settings.research_budget_s),
    )
    await synthesise(ctx)
    result.answer, result.cited = state.report, list(state.cited)
    result.same_answer = state.report == recorded_report
    result.same_citations = result.cited == result.recorded_cited
    result.prompts_matched, result.prompts_differ = llm.prompts_matched, llm.prompts_differ


async def _discard(events: object) -> None:
    return None


def _regrade_research(bundle: Bundle, result: ReplayResult) -> None:
    state = ResearchState.model_validate(bundle.json("run.json")["state"])
    report = result.answer or state.report_so_far(str(bundle.manifest.get("id", "")))
    part = Part("", without_source_list(report), _sources(state))
    result.sentences = graded_sentences(part)
    result.answer = result.answer or report


def _regrade_session(bundle: Bundle, result: ReplayResult) -> None:
    session = bundle.json("session.json")
    for number, turn in enumerate(session.get("turns", []), start=1):
        sources = tuple(
            Source(
                int(s.get("n", 0)),
                str(s.get("url", "")),
                str(s.get("title", "")),
                str(s.get("origin", "web")),
                tuple(str(p) for p in (s.get("passages") or [s.get("excerpt", "")])),
            )
            for s in turn.get("sources", [])
        )
        part = Part(str(turn.get("question", "")), str(turn.get("answer", "")), sources)
        result.sentences += [{"turn": number, **s} for s in graded_sentences(part)]
    result.notes.append("a conversation records no model calls: re-graded only")


async def replay(bundle: Bundle) -> ReplayResult:
    """Replay ``bundle`` offline (research: the report phase) and re-grade its citations."""
    kind = str(bundle.manifest.get("kind", ""))
    result = ReplayResult(kind, str(bundle.manifest.get("id", "")), replayed=kind == "research")
    with no_network():
        if kind == "research":
            await _replay_report(bundle, result)
            _regrade_research(bundle, result)
        elif kind == "conversation":
            _regrade_session(bundle, result)
        else:
            raise BadBundle(f"unknown bundle kind {kind!r}")
    return result


def replay_file(data: bytes) -> ReplayResult:
    """``replay`` for a command line (its own event loop)."""
    return asyncio.run(replay(read_bundle(data)))
