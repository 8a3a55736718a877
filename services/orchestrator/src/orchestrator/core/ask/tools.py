"""The agent mode's tools: what a tool-calling model may do, and how each call runs.

Every search goes through the quick search's own step (core/ask/round.py ``find``), so the
sources policy (web search off, ``options.sources``; orchestrator/core/policy.py), the search cache
and the typed events (``search.started``/``search.completed``, ``read.*``) are the pipeline's.
A tool is offered only when the run may use it: no web tools when web search is off.

Each tool returns text for the model (kept short: it goes back into the prompt) and may add
evidence, which the answer then cites through the pipeline's synthesis and citation check.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from orchestrator.core.ask import calc, clock
from orchestrator.core.ask.domain import CorpusError, Evidence
from orchestrator.core.ask.round import find, gather
from orchestrator.core.ask.state import RunState
from orchestrator.core.ask.toolports import DocumentLister
from orchestrator.core.errors import RunFailed

#: Characters of a page or document a tool hands back to the model.
RESULT_CHARS = 2400
_URL_SCHEMES = ("http://", "https://")


@dataclass
class Toolbox:
    """The tools of one run, and the evidence their calls gathered (besides the state's)."""

    state: RunState
    documents: DocumentLister | None = None
    now: clock.Clock = clock.system_now
    extra: list[Evidence] = field(default_factory=list)

    def specs(self) -> list[dict[str, Any]]:
        """The tools offered to the model, in the OpenAI ``tools`` format."""
        allowed = self.state.settings.allowed_sources(self.state.options.sources)
        names = [n for n, t in _TOOLS.items() if t.needs is None or t.needs in allowed]
        if self.documents is None:
            names = [n for n in names if n != "list_documents"]
        return [_TOOLS[n].spec(n) for n in names]

    def offered(self) -> set[str]:
        """Names of the tools offered."""
        return {s["function"]["name"] for s in self.specs()}

    async def run(self, name: str, arguments: str) -> str:
        """Run one call; the text for the model (errors are results too: the model may retry)."""
        if name not in self.offered():
            return f"error: no tool named {name!r} is available"
        try:
            args = json.loads(arguments or "{}")
        except ValueError:
            return "error: the arguments are not valid JSON"
        if not isinstance(args, dict):
            return "error: the arguments must be a JSON object"
        try:
            return await _TOOLS[name].run(self, args)
        except (RunFailed, CorpusError, calc.CalcError) as err:
            return f"error: {getattr(err, 'message', None) or err}"
        except (KeyError, TypeError):
            return "error: missing or wrong arguments; see the tool's parameters"

    def evidence(self) -> list[Evidence]:
        """What the answer may cite: passages of pages read, else snippets; then tool results."""
        return self.state.best_evidence() + self.extra


def _with_sources(state: RunState, source: str) -> RunState:
    """``state`` searching only ``source`` (the same evidence, the same policy check)."""
    return replace(state, options=replace(state.options, sources=(source,)))


async def _search(box: Toolbox, args: dict[str, Any], source: str) -> str:
    query = str(args["query"]).strip()[:400]
    if not query:
        return "error: the query is empty"
    state = box.state
    state.rounds += 1
    state.add_queries([query])
    view = _with_sources(state, source)
    ranked, _ = await find(view, [query], typed=query)
    _merge(state, view)
    if source == "local" and state.has_material:
        await gather(state, [h.url for h in ranked])
    if not ranked:
        return "no results"
    lines = [f"- {h.title} <{h.url}>: {h.snippet}" for h in ranked[: state.top_urls]]
    return "\n".join(lines)


def _merge(state: RunState, view: RunState) -> None:
    """Counters a narrowed view replaced rather than mutated (lists and sets are shared)."""
    state.reader_down = state.reader_down or view.reader_down
    state.llm_calls = max(state.llm_calls, view.llm_calls)


async def _web(box: Toolbox, args: dict[str, Any]) -> str:
    return await _search(box, args, "web")


async def _local(box: Toolbox, args: dict[str, Any]) -> str:
    return await _search(box, args, "local")


async def _read(box: Toolbox, args: dict[str, Any]) -> str:
    url = str(args["url"]).strip()
    if not url.startswith(_URL_SCHEMES):
        return "error: only http(s) URLs can be read"
    state = box.state
    await gather(state, [url])
    page = state.pages.get(url)
    if page is None or not page.usable:
        return "error: the page could not be read"
    return f"{page.title}\n\n{page.markdown[:RESULT_CHARS]}"


async def _list(box: Toolbox, args: dict[str, Any]) -> str:
    if box.documents is None:  # offered only when there is a list
        return "error: no document list is available"
    limit = max(1, min(int(args.get("limit") or 50), 200))
    visible = box.state.options.visible  # a named user sees the shared folders and their own
    docs = await box.documents.list_documents(limit=200 if visible else limit)
    docs = [d for d in docs if not visible or str(d.get("id", "")).startswith(visible)][:limit]
    if not docs:
        return "no local documents are indexed"
    return "\n".join(json.dumps(d, ensure_ascii=False, default=str) for d in docs)


async def _passages_of(box: Toolbox, target: str, aspect: str) -> Evidence:
    """What ``target`` says about ``aspect``: a local document's best passages, or a page's."""
    state = box.state
    if target.startswith("local:"):
        corpus = state.deps.corpus
        if corpus is None:
            raise RunFailed("local_unavailable", "Local documents are not configured.")
        found = await corpus.search_passages(
            [aspect],
            top_k=3,
            timeout=state.research_left(),
            id_prefix=target,
            id_prefixes=state.options.visible,
        )
        if not found.passages:
            raise RunFailed("not_found", f"No passages of {target} match {aspect!r}.")
        parts = tuple(p.text for p in found.passages)
        return Evidence(target, found.passages[0].title, "\n\n".join(parts), "passages", parts)
    if not target.startswith(_URL_SCHEMES):
        raise RunFailed("bad_target", f"{target!r} is neither a local: id nor an http(s) URL.")
    if "web" not in state.settings.allowed_sources(state.options.sources):
        raise RunFailed("search_off", "Web pages cannot be read: web search is off.")
    await gather(state, [target])
    page = state.pages.get(target)
    if page is None or not page.usable:
        raise RunFailed("unreadable", f"{target} could not be read.")
    return Evidence(target, page.title, page.markdown[:RESULT_CHARS])


async def _compare(box: Toolbox, args: dict[str, Any]) -> str:
    aspect = str(args.get("aspect") or box.state.question)
    first = await _passages_of(box, str(args["first"]), aspect)
    second = await _passages_of(box, str(args["second"]), aspect)
    box.extra.extend([first, second])
    half = RESULT_CHARS // 2
    return (
        f"FIRST: {first.title} <{first.url}>\n{first.text[:half]}\n\n"
        f"SECOND: {second.title} <{second.url}>\n{second.text[:half]}"
    )


async def _calculate(box: Toolbox, args: dict[str, Any]) -> str:
    result = calc.evaluate(str(args["expression"]))
    box.extra.append(Evidence("quarry:calculator", "Calculator", result.sentence(), "tool"))
    return result.value


async def _now(box: Toolbox, args: dict[str, Any]) -> str:
    moment = box.now()
    box.extra.append(Evidence("quarry:clock", "Server clock", clock.describe(moment), "tool"))
    return json.dumps(clock.iso(moment))


@dataclass(frozen=True)
class _Tool:
    description: str
    parameters: dict[str, Any]
    run: Callable[[Toolbox, dict[str, Any]], Awaitable[str]]
    # The source the tool reaches ("web", "local"); None: nothing leaves the process.
    needs: str | None = None

    def spec(self, name: str) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


def _params(required: Sequence[str], **props: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {k: {"type": "string", "description": v} for k, v in props.items()},
        "required": list(required),
    }


_TOOLS: dict[str, _Tool] = {
    "search_web": _Tool(
        "Search the web; returns titles, URLs and snippets.",
        _params(["query"], query="what to search for"),
        _web,
        "web",
    ),
    "search_documents": _Tool(
        "Search the user's local documents; returns titles, ids (local:...) and snippets.",
        _params(["query"], query="what to search for"),
        _local,
        "local",
    ),
    "read_url": _Tool(
        "Read a web page (http/https) and return its text.",
        _params(["url"], url="the page's URL"),
        _read,
        "web",
    ),
    "list_documents": _Tool(
        "List the user's indexed local documents (ids and titles).",
        {"type": "object", "properties": {"limit": {"type": "integer"}}, "required": []},
        _list,
        "local",
    ),
    "compare_documents": _Tool(
        "Put what two documents (local:... ids or URLs) say about an aspect side by side.",
        _params(
            ["first", "second"],
            first="a local:... id or URL",
            second="a local:... id or URL",
            aspect="what to compare",
        ),
        _compare,
    ),
    "calculator": _Tool(
        "Evaluate an arithmetic expression exactly (+ - * / ^ %, sqrt, log, sin, ...).",
        _params(["expression"], expression="e.g. (17 * 23) / 4 or 2^10"),
        _calculate,
    ),
    "current_datetime": _Tool(
        "The current date, time, weekday and time zone.",
        {"type": "object", "properties": {}, "required": []},
        _now,
    ),
}

#: Every tool's name.
TOOL_NAMES = tuple(_TOOLS)
