"""`quarry index [PATH]`: refresh the server's local documents and show the progress.

The folder is indexed by the server (it reads the files), so PATH must be a folder the server
can see: CORPUS_DIR or inside it, or anywhere with ORCHESTRATOR_CORPUS_ALLOW_ANY_PATH=true
(`make run` sets it: the server runs as the same user on the same machine).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

import httpx

BAR_WIDTH = 20
# Exit statuses shared with `quarry ask` (see orchestrator.cli).
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
_COUNTS = ("added", "updated", "removed", "unchanged", "skipped", "failed")


def add_parser(sub: Any) -> None:
    """Register ``quarry index`` on the subcommand parsers ``sub``."""
    index = sub.add_parser("index", help="index a folder of documents on the server")
    index.add_argument(
        "path", nargs="?", default=None, help="folder to index (default: the server's CORPUS_DIR)"
    )
    index.add_argument("--json", action="store_true", help="print the final counts as JSON")
    index.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    index.add_argument("--timeout", type=float, default=3600.0, help="seconds")


def _bar(counts: dict[str, Any]) -> str:
    total = max(int(counts.get("total", 0)), 1)
    done = min(int(counts.get("done", 0)), total)
    filled = round(BAR_WIDTH * done / total)
    return f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] indexing {done}/{total} files…"


def _summary(result: dict[str, Any]) -> str:
    parts = ", ".join(f"{result.get(k, 0)} {k}" for k in _COUNTS)
    line = f"{result.get('root')}: {result.get('total', 0)} files ({parts})"
    if result.get("documents") is not None:
        line += f"; the corpus holds {result['documents']} documents"
    return line


def problem_message(reply: httpx.Response) -> str:
    """The ``detail`` of a problem+json reply (shared with ``quarry ask``), else the status."""
    try:
        body = reply.json()
    except ValueError:
        return f"HTTP {reply.status_code}"
    if isinstance(body, dict):
        return str(body.get("detail") or body.get("title") or f"HTTP {reply.status_code}")
    return f"HTTP {reply.status_code}"


def _worth_showing(counts: dict[str, Any], shown: int, tty: bool) -> bool:
    """On a terminal every update rewrites one line; in a log, one line per 5 % (and the end)."""
    done, total = int(counts.get("done", 0)), int(counts.get("total", 0))
    if tty or done >= total:
        return done != shown
    return done - shown >= max(1, total // 20)


def _body(args: argparse.Namespace) -> dict[str, Any]:
    return {"path": str(Path(args.path).absolute())} if args.path else {}


def run_index(client: httpx.Client, args: argparse.Namespace, out: TextIO) -> int:
    """Call POST /v1/corpus/refresh, render progress on stderr, print the final counts."""
    err = sys.stderr
    tty = err.isatty()
    headers = {"Accept": "application/x-ndjson"}
    result: dict[str, Any] | None = None
    shown = -1
    with client.stream("POST", "/v1/corpus/refresh", json=_body(args), headers=headers) as reply:
        if reply.status_code >= 400:
            reply.read()
            err.write(f"quarry: {problem_message(reply)}\n")
            return EXIT_USAGE if reply.status_code < 500 else EXIT_FAILED
        for line in reply.iter_lines():
            if not line.strip():
                continue
            event = json.loads(line)
            kind, data = event.get("type"), event.get("data") or {}
            if kind == "refresh.started" and not args.quiet:
                waiting = " (waiting for the refresh already running)" if data.get("queued") else ""
                err.write(f"indexing {data.get('root')}{waiting}\n")
            elif kind == "progress" and not args.quiet and _worth_showing(data, shown, tty):
                shown = int(data.get("done", 0))
                err.write(("\r\033[K" + _bar(data)) if tty else _bar(data) + "\n")
                err.flush()
            elif kind == "error":
                err.write(f"\nquarry: {data.get('message', data.get('code', 'error'))}\n")
                return EXIT_FAILED
            elif kind == "refresh.completed":
                result = data
    if tty and not args.quiet:
        err.write("\r\033[K")
    if result is None:
        err.write("quarry: the refresh ended without a result\n")
        return EXIT_FAILED
    out.write((json.dumps(result, indent=2) if args.json else _summary(result)) + "\n")
    if result.get("status") != "ok":
        err.write(f"quarry: indexing stopped: {result.get('error')}\n")
        return EXIT_FAILED
    return EXIT_OK
