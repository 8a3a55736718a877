"""``quarry ask``: one question through ``POST /v1/search``, its progress on stderr.

The answer streams to stdout as the engine's checked sentences (with its corrected citations),
then the numbered sources, each marked web or local and starred when cited.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import httpx

from quarry_cli.index import pages_note
from quarry_cli.status import (
    EXIT_CLARIFY,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    problem_message,
    refused,
)

# Long enough for CPU inference with a 1.5B model (first tokens take ~40 s on 2 cores); the
# server enforces its own whole-question budget and ends the stream itself.
DEFAULT_TIMEOUT_S = 600.0
BAR_WIDTH = 20


@dataclass
class Progress:
    """Renders stage progress on stderr: one rewritten line on a TTY, plain lines otherwise."""

    out: TextIO
    enabled: bool = True
    tty: bool = False
    reads_total: int = 0
    reads_done: int = 0
    _dirty: bool = False

    def line(self, text: str) -> None:
        """Show ``text`` as the current status."""
        if not self.enabled:
            return
        if self.tty:
            self.out.write("\r\033[K" + text)
            self._dirty = True
        else:
            self.out.write(text + "\n")
        self.out.flush()

    def note(self, text: str) -> None:
        """Print a line that stays (warnings), even when progress is off."""
        self.clear()
        self.out.write(text + "\n")
        self.out.flush()

    def clear(self) -> None:
        """Erase the status line before other output."""
        if self._dirty:
            self.out.write("\r\033[K")
            self.out.flush()
            self._dirty = False

    def reading(self) -> None:
        """Show the read stage as a bar."""
        total = max(self.reads_total, self.reads_done, 1)
        filled = round(BAR_WIDTH * self.reads_done / total)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        self.line(f"[{bar}] reading {self.reads_done}/{total} pages")


@dataclass
class Run:
    """What the event stream told us."""

    sources: list[dict[str, Any]] = field(default_factory=list)
    answer_started: bool = False
    cited: list[int] = field(default_factory=list)
    status: str = ""
    clarifying_question: str = ""
    error: str = ""
    # --show-thinking: a reasoning model's thinking goes to stderr as it streams
    show_thinking: bool = False
    thinking_started: bool = False
    # share of the answer's claims its sources support (None: no claim, or no check)
    support_score: float | None = None


def _on_event(kind: str, data: dict[str, Any], run: Run, progress: Progress, out: TextIO) -> None:
    if kind == "progress":
        progress.note(str(data.get("message", data.get("stage", ""))))
    elif kind == "plan" and data.get("optimized_query"):
        progress.line(f"planning: searching for {data['optimized_query']!r}")
    elif kind == "search.started":
        progress.line(f"searching: {data.get('query', '')}…")
    elif kind == "search.completed":
        where = f" {data['source']}" if data.get("source") else ""
        progress.line(f"found {data.get('count', len(data.get('results', [])))}{where} results")
    elif kind == "read.started":
        urls = data.get("urls")
        progress.reads_total += len(urls) if isinstance(urls, list) else int(data.get("count", 1))
        progress.reading()
    elif kind == "read.completed":
        progress.reads_done += 1
        progress.reading()
    elif kind == "judge":
        progress.line(f"judging {data.get('stage', '')}: {data.get('verdict', '')}")
    elif kind == "warning":
        progress.note(f"warning: {data.get('message', data.get('code', ''))}")
    elif kind == "sources":
        run.sources = list(data.get("sources", []))
        progress.line(f"writing the answer from {len(run.sources)} sources…")
    elif kind == "thinking":
        _thinking(str(data.get("text", "")), run, progress)
    elif kind == "answer.sentence":
        # Checked sentences, not raw deltas: what reaches stdout is the answer with the
        # engine's corrected citations (a terminal cannot take printed text back).
        if run.thinking_started and not run.answer_started:
            progress.out.write("\n")
        if not run.answer_started:
            progress.clear()
            run.answer_started = True
        out.write(str(data.get("text", "")))
        out.flush()
    elif kind == "answer.completed":
        run.cited = [int(n) for n in data.get("cited", [])]
        run.support_score = data.get("support_score")
        if not run.answer_started:  # a server that sends no answer.sentence: the final text
            progress.clear()
            run.answer_started = True
            out.write(str(data.get("text", "")))
            out.flush()
    elif kind == "clarify":
        run.clarifying_question = str(data.get("question", data.get("text", "")))
    elif kind == "error":
        run.error = str(data.get("message", data.get("code", "error")))
    elif kind == "run.completed":
        run.status = str(data.get("status", ""))


def _thinking(text: str, run: Run, progress: Progress) -> None:
    """Show thinking on stderr (stdout keeps the answer alone), only with --show-thinking."""
    if not run.show_thinking or not text:
        return
    progress.clear()
    if not run.thinking_started:
        progress.out.write("thinking: ")
        run.thinking_started = True
    progress.out.write(text)
    progress.out.flush()


def _print_sources(run: Run, out: TextIO) -> None:
    if not run.sources:
        return
    if run.support_score is not None:
        out.write(f"\n\nSupported by the sources: {run.support_score:.0%} of the answer's claims")
    out.write("\n\nSources:\n")
    for src in run.sources:
        n = src.get("n")
        mark = "*" if n in run.cited else " "
        origin = f" ({src['origin']})" if src.get("origin") else ""
        title = src.get("title") or src.get("url")
        pages = pages_note(src.get("pages") or [])
        out.write(f"{mark}[{n}] {title}{origin}\n     {src.get('url')}{pages}\n")
    out.flush()


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _request_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {"query": args.question}
    if args.session:
        body["session_id"] = args.session
    if args.edit_turn:
        body["edit_turn"] = args.edit_turn
    options: dict[str, Any] = {}
    if args.sources:
        options["sources"] = _split(args.sources)
    if args.mode:
        options["mode"] = args.mode
    if args.detail:
        options["detail"] = args.detail
    if args.scope:
        options["scope"] = str(Path(args.scope).absolute())
    if args.engines:
        options["engines"] = _split(args.engines)
    if args.page:
        options["pageno"] = args.page
    if options:
        body["options"] = options
    return body


def usage(args: argparse.Namespace) -> str:
    """What is wrong with ``quarry ask``'s arguments ("" when nothing)."""
    if args.regenerate and args.edit_turn:
        return "--regenerate and --edit-turn are one or the other"
    if (args.regenerate or args.edit_turn) and not args.session:
        return "--edit-turn and --regenerate need --session (the conversation to edit)"
    if not args.regenerate and not (args.question or "").strip():
        return "the question is empty"
    return ""


def _regenerate(client: httpx.Client, args: argparse.Namespace) -> str:
    """Turn ``--regenerate N``'s question, as the server keeps it ("" with a message when the
    session or turn does not exist); the run then edits that turn with the same text."""
    reply = client.get(f"/v1/sessions/{args.session}")
    if reply.status_code >= 400:
        sys.stderr.write(f"quarry: {problem_message(reply)}\n")
        return ""
    turns = reply.json().get("turns") or []
    if not 1 <= args.regenerate <= len(turns):
        sys.stderr.write(
            f"quarry: session {args.session!r} has {len(turns)} turn(s); "
            f"--regenerate must be 1 to {len(turns)}\n"
        )
        return ""
    return str(turns[args.regenerate - 1]["question"])


def _ask_json(client: httpx.Client, args: argparse.Namespace, out: TextIO) -> int:
    reply = client.post(
        "/v1/search", json=_request_body(args), headers={"Accept": "application/json"}
    )
    if reply.status_code >= 400:
        sys.stderr.write(f"quarry: {problem_message(reply)}\n")
        return refused(reply)
    result = reply.json()
    out.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    status = result.get("status") if isinstance(result, dict) else None
    return {"clarify": EXIT_CLARIFY, "error": EXIT_FAILED}.get(str(status), EXIT_OK)


def _ask_stream(client: httpx.Client, args: argparse.Namespace, out: TextIO) -> int:
    progress = Progress(sys.stderr, enabled=not args.quiet, tty=sys.stderr.isatty())
    run = Run(show_thinking=bool(getattr(args, "show_thinking", False)))
    headers = {"Accept": "application/x-ndjson"}
    with client.stream("POST", "/v1/search", json=_request_body(args), headers=headers) as reply:
        if reply.status_code >= 400:
            reply.read()
            sys.stderr.write(f"quarry: {problem_message(reply)}\n")
            return refused(reply)
        for line in reply.iter_lines():
            if not line.strip():
                continue
            event = json.loads(line)
            _on_event(str(event.get("type")), event.get("data") or {}, run, progress, out)
    progress.clear()
    if run.clarifying_question or run.status == "clarify":
        out.write(run.clarifying_question + "\n")
        return EXIT_CLARIFY
    if run.error or run.status == "error":
        sys.stderr.write(f"quarry: {run.error or 'the run failed'}\n")
        return EXIT_FAILED
    _print_sources(run, out)
    return EXIT_OK


def run_ask(client: httpx.Client, args: argparse.Namespace, out: TextIO) -> int:
    """``quarry ask``: the streamed answer (or ``--json``'s result object); the exit status."""
    if args.regenerate:
        args.question, args.edit_turn = _regenerate(client, args), args.regenerate
        if not args.question:
            return EXIT_USAGE
    if args.json:
        return _ask_json(client, args, out)
    return _ask_stream(client, args, out)


def add_parser(sub: Any) -> None:
    """Register ``quarry ask`` on the subcommand parsers ``sub``."""
    ask = sub.add_parser("ask", help="ask a question; the answer streams to stdout")
    ask.add_argument("question", nargs="?", default="", help="the question (1-2000 characters)")
    _conversation_args(ask)
    ask.add_argument("--json", action="store_true", help="print the final result object as JSON")
    _search_args(ask)
    ask.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    ask.add_argument(
        "--show-thinking",
        action="store_true",
        help="print a reasoning model's thinking on stderr as it streams",
    )
    ask.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds")


def _conversation_args(ask: argparse.ArgumentParser) -> None:
    ask.add_argument("--session", help="continue the conversation with this session id")
    ask.add_argument(
        "--edit-turn",
        type=int,
        metavar="N",
        help="edit turn N (1-based) of --session: ask the question given instead, replacing "
        "that turn and every turn after it",
    )
    ask.add_argument(
        "--regenerate",
        type=int,
        metavar="N",
        help="ask turn N of --session again (its question as stored), replacing that turn and "
        "every turn after it",
    )


def _search_args(ask: argparse.ArgumentParser) -> None:
    """The per-question options (the API's ``options``)."""
    ask.add_argument("--sources", help="comma-separated search sources, e.g. web,local")
    ask.add_argument(
        "--scope", help="pin the question to this folder or file of the local documents"
    )
    ask.add_argument(
        "--mode",
        choices=("speed", "balanced", "quality"),
        help="speed (one LLM call in the common case), balanced or quality; "
        "default: the server's ORCHESTRATOR_MODE",
    )
    ask.add_argument(
        "--detail", choices=("brief", "full"), help="answer length (default: fits the question)"
    )
    ask.add_argument(
        "--engines", help="comma-separated SearXNG engines to ask, e.g. wikipedia,arxiv"
    )
    ask.add_argument("--page", type=int, metavar="N", help="search results page, 1-10")
