"""`quarry research "…"`: start (or `--resume`) a deep-research run and follow it live.

Phases, dimensions, findings and counters go to stderr; the checked report goes to stdout (or
to ``-o FILE``). Ctrl-C cancels the run on the server and still prints the partial report. A
dropped connection is picked up again with Last-Event-ID, so nothing is shown twice.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import httpx
from httpx_sse import EventSource
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from quarry_cli import export
from quarry_cli.status import (
    EXIT_CANCELLED,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    problem_message,
)

RECONNECTS = 3
_FINAL = frozenset({"research.completed", "research.cancelled", "error"})


def add_parser(sub: Any) -> None:
    """Register ``quarry research`` on the subcommand parsers ``sub``."""
    research = sub.add_parser("research", help="write a long, cited research report")
    research.add_argument("query", nargs="?", default="", help="what to research")
    research.add_argument(
        "--mode", choices=("deep-research", "due-diligence"), default="deep-research"
    )
    research.add_argument("--resume", metavar="ID", help="follow (or resume) an existing run")
    research.add_argument("-o", "--output", help="write the report to this file")
    research.add_argument("--session", help="add the report's gist to this chat session")
    research.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    research.add_argument("--timeout", type=float, default=3600.0, help="seconds")


@dataclass
class Follow:
    """Where the stream is and how the run ended."""

    last_id: int = -1
    final: str = ""
    report: str = ""
    error: str = ""


def _show(kind: str, data: dict[str, Any], err: TextIO, quiet: bool) -> None:
    line = ""
    if kind == "phase.started":
        line = f"phase: {data.get('phase')}" + (
            f" (round {data['round']})" if "round" in data else ""
        )
    elif kind == "scope.completed":
        titles = "; ".join(str(d.get("title")) for d in data.get("dimensions", []))
        line = f"dimensions: {titles}"
    elif kind == "research.finding":
        line = f"finding [{data.get('title')}]: {data.get('key_finding')}"
    elif kind == "research.evaluation":
        line = f"evaluation: {data.get('coverage')}"
    elif kind == "counters.update":
        line = (
            f"searches {data.get('searches')} · sources {data.get('sources')} · "
            f"pages {data.get('pages_read')} · LLM calls {data.get('llm_calls')}"
        )
    elif kind == "warning":
        line = f"warning: {data.get('message')}"
    if line and not quiet:
        err.write(line + "\n")
        err.flush()


def _stream_once(
    client: httpx.Client, run_id: str, state: Follow, err: TextIO, quiet: bool
) -> None:
    headers = {"Accept": "text/event-stream"}
    if state.last_id >= 0:
        headers["Last-Event-ID"] = str(state.last_id)
    with client.stream("GET", f"/v1/research/{run_id}/events", headers=headers) as reply:
        if reply.status_code >= 400:
            reply.read()
            raise RuntimeError(problem_message(reply))
        for event in EventSource(reply).iter_sse():
            if not event.id:  # every run event has an id; nothing else is worth a resume
                continue
            kind, data = event.event, json.loads(event.data or "{}")
            state.last_id = int(event.id)
            _show(kind, data, err, quiet)
            if kind == "report.completed":
                state.report = str(data.get("report", ""))
            elif kind == "error":
                state.error = str(data.get("message", ""))
            elif kind == "state" and data.get("status") == "interrupted":
                state.final = "interrupted"
            if kind in _FINAL:
                state.final = kind


def _follow(client: httpx.Client, run_id: str, err: TextIO, quiet: bool) -> Follow:
    """Follow the run's events, resuming after the last one seen when the stream breaks (the
    run goes on on the server); a server that refuses connections is not retried."""
    state = Follow()

    def say(_: RetryCallState) -> None:
        err.write("connection lost; reconnecting…\n")

    retrying = Retrying(
        stop=stop_after_attempt(RECONNECTS + 1),
        wait=wait_exponential_jitter(multiplier=0.5, max=8.0),
        retry=retry_if_exception(_lost),
        before_sleep=say,
        sleep=lambda seconds: _pause(seconds),
        reraise=True,
    )
    retrying(_stream_once, client, run_id, state, err, quiet)
    return state


def _pause(seconds: float) -> None:
    time.sleep(seconds)  # a module function, so tests can stop the clock


def _lost(exc: BaseException) -> bool:
    """A stream that broke mid-way (worth resuming), not a server that is not there."""
    return isinstance(exc, httpx.TransportError) and not isinstance(exc, httpx.ConnectError)


def _emit(
    report: str, args: argparse.Namespace, out: TextIO, client: httpx.Client, run_id: str
) -> None:
    fmt = export.format_for(args.output)
    if args.output and fmt not in (None, "md"):  # -o report.pdf: the server's export
        export.save(client, f"/v1/research/{run_id}/export?format={fmt}", args.output)
        return
    if args.output:
        Path(args.output).write_text(report, encoding="utf-8")
        sys.stderr.write(f"report written to {args.output}\n")
    else:
        out.write(report if report.endswith("\n") else report + "\n")
        out.flush()


def _start(client: httpx.Client, args: argparse.Namespace) -> str:
    if args.resume:
        reply = client.get(f"/v1/research/{args.resume}")
        if reply.status_code >= 400:
            raise RuntimeError(problem_message(reply))
        if reply.json().get("status") in ("interrupted", "failed"):
            resumed = client.post(f"/v1/research/{args.resume}/resume", json={})
            if resumed.status_code >= 400:
                raise RuntimeError(problem_message(resumed))
        return str(args.resume)
    body: dict[str, Any] = {"query": args.query, "mode": args.mode}
    if args.session:
        body["session_id"] = args.session
    reply = client.post("/v1/research", json=body)
    if reply.status_code >= 400:
        raise RuntimeError(problem_message(reply))
    run_id = str(reply.json()["research_id"])
    sys.stderr.write(f"research run {run_id} (resume with --resume {run_id})\n")
    return run_id


def run_research(client: httpx.Client, args: argparse.Namespace, out: TextIO) -> int:
    """Start or resume a run, follow it, print the report; the exit status."""
    if not args.resume and not args.query.strip():
        sys.stderr.write("quarry: give a query, or --resume ID\n")
        return EXIT_USAGE
    run_id = ""
    try:
        run_id = _start(client, args)
        state = _follow(client, run_id, sys.stderr, args.quiet)
    except RuntimeError as err:
        sys.stderr.write(f"quarry: {err}\n")
        return EXIT_FAILED
    except KeyboardInterrupt:
        if not run_id:
            return EXIT_CANCELLED
        client.delete(f"/v1/research/{run_id}")
        sys.stderr.write("\nquarry: cancelled; the partial report follows\n")
        _emit(client.get(f"/v1/research/{run_id}/report.md").text, args, out, client, run_id)
        return EXIT_CANCELLED
    if state.final == "research.completed":
        _emit(state.report, args, out, client, run_id)
        return EXIT_OK
    if state.final in ("research.cancelled", "interrupted"):
        sys.stderr.write(f"quarry: the run was {state.final.split('.')[-1]}\n")
        _emit(client.get(f"/v1/research/{run_id}/report.md").text, args, out, client, run_id)
        return EXIT_CANCELLED
    sys.stderr.write(f"quarry: the run failed: {state.error or 'no final event'}\n")
    return EXIT_FAILED
