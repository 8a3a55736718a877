"""`quarry index [PATH]`: refresh the server's local documents and show the progress.

The folder is indexed by the server (it reads the files), so PATH must be a folder the server
can see. The server indexes CORPUS_DIR and ORCHESTRATOR_CORPUS_ROOTS freely; a folder outside
them is never indexed silently: on a terminal the command asks first, elsewhere it needs
``--allow-outside`` (and the server must allow it: ORCHESTRATOR_CORPUS_ALLOW_OUTSIDE=true,
which `make run` sets).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

import httpx

from quarry_cli.status import EXIT_FAILED, EXIT_OK, EXIT_USAGE, problem_message, refused

BAR_WIDTH = 20
_COUNTS = ("added", "updated", "removed", "unchanged", "skipped", "failed")


def add_parser(sub: Any) -> None:
    """Register ``quarry index`` on the subcommand parsers ``sub``."""
    index = sub.add_parser("index", help="index a folder of documents on the server")
    index.add_argument(
        "path", nargs="?", default=None, help="folder to index (default: the server's CORPUS_DIR)"
    )
    index.add_argument(
        "--allow-outside",
        action="store_true",
        help="index PATH even if it is outside the server's corpus roots, without asking",
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


def _worth_showing(counts: dict[str, Any], shown: int, tty: bool) -> bool:
    """On a terminal every update rewrites one line; in a log, one line per 5 % (and the end)."""
    done, total = int(counts.get("done", 0)), int(counts.get("total", 0))
    if tty or done >= total:
        return done != shown
    return done - shown >= max(1, total // 20)


def _body(args: argparse.Namespace, allow_outside: bool) -> dict[str, Any]:
    if not args.path:
        return {}
    body: dict[str, Any] = {"path": str(Path(args.path).absolute())}
    if allow_outside:
        body["allow_outside"] = True
    return body


def _outside_roots(reply: httpx.Response) -> bool:
    try:
        body = reply.json()
    except ValueError:
        return False
    return (
        reply.status_code == 403 and isinstance(body, dict) and body.get("code") == "outside_roots"
    )


def _confirm(path: str, detail: str, stdin: TextIO) -> bool:
    """Ask on the terminal whether to index a folder outside the roots (default: no)."""
    sys.stderr.write(f"quarry: {detail}\nIndex {path} anyway? [y/N] ")
    sys.stderr.flush()
    answer = stdin.readline().strip().lower()
    return answer in ("y", "yes")


def run_index(
    client: httpx.Client, args: argparse.Namespace, out: TextIO, stdin: TextIO | None = None
) -> int:
    """Call POST /v1/corpus/refresh, render progress on stderr, print the final counts.

    A folder outside the server's roots is sent again with ``allow_outside`` only after the user
    said yes on a terminal, or with ``--allow-outside``.
    """
    stdin = stdin or sys.stdin
    status = _refresh(client, args, out, allow_outside=args.allow_outside)
    if isinstance(status, httpx.Response):
        reply = status
        if _outside_roots(reply) and args.path and not args.allow_outside:
            if stdin.isatty() and _confirm(args.path, problem_message(reply), stdin):
                status = _refresh(client, args, out, allow_outside=True)
            else:
                sys.stderr.write(
                    f"quarry: {problem_message(reply)}\n"
                    "quarry: not indexed; pass --allow-outside to index it anyway\n"
                )
                return EXIT_USAGE
        if isinstance(status, httpx.Response):
            sys.stderr.write(f"quarry: {problem_message(status)}\n")
            return refused(status)
    return status


def _refresh(
    client: httpx.Client, args: argparse.Namespace, out: TextIO, *, allow_outside: bool
) -> int | httpx.Response:
    """One refresh request: its exit status, or the refusing reply (read) for the caller."""
    err = sys.stderr
    tty = err.isatty()
    headers = {"Accept": "application/x-ndjson"}
    result: dict[str, Any] | None = None
    shown = -1
    body = _body(args, allow_outside)
    with client.stream("POST", "/v1/corpus/refresh", json=body, headers=headers) as reply:
        if reply.status_code >= 400:
            reply.read()
            return reply
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


def add_docs_parser(sub: Any) -> None:
    """Register ``quarry docs`` (list the indexed documents, or remove one)."""
    docs = sub.add_parser("docs", help="list the indexed documents, or remove one")
    docs.add_argument("under", nargs="?", default=None, help="only this folder or file")
    docs.add_argument("--remove", metavar="ID", help="remove this document (its id or path)")
    docs.add_argument("--limit", type=int, default=100, help="documents per page (1-100)")
    docs.add_argument("--offset", type=int, default=0, help="skip this many")
    docs.add_argument("--json", action="store_true", help="print the API's JSON")
    docs.add_argument("--timeout", type=float, default=60.0, help="seconds")


def pages_note(pages: list[int]) -> str:
    """`` (p. 3)`` / `` (pp. 2, 5)`` for a local PDF source; empty when not paged."""
    if not pages:
        return ""
    return f" (p. {pages[0]})" if len(pages) == 1 else f" (pp. {', '.join(map(str, pages))})"


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024 or unit == "MB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def run_docs(client: httpx.Client, args: argparse.Namespace, out: TextIO) -> int:
    """GET /v1/corpus/documents as a table (or JSON); ``--remove`` DELETEs one."""
    if args.remove:
        target = (
            args.remove
            if args.remove.startswith("local:")
            else "local:" + str(Path(args.remove).absolute())
        )
        reply = client.delete(f"/v1/corpus/documents/{target}")
        if reply.status_code != 200:
            sys.stderr.write(f"quarry: {problem_message(reply)}\n")
            return refused(reply)
        body = reply.json()
        deleted = " and its file deleted" if body.get("file_deleted") else ""
        out.write(f"removed {body['removed']['path']}{deleted}\n")
        return EXIT_OK
    params: dict[str, Any] = {"limit": args.limit, "offset": args.offset}
    if args.under:
        params["under"] = str(Path(args.under).absolute())
    reply = client.get("/v1/corpus/documents", params=params)
    if reply.status_code != 200:
        sys.stderr.write(f"quarry: {problem_message(reply)}\n")
        return refused(reply)
    page = reply.json()
    if args.json:
        out.write(json.dumps(page, indent=2) + "\n")
        return EXIT_OK
    for d in page["documents"]:
        pages = f", {d['pages']} pages" if d.get("pages") else ""
        when = d.get("indexed_at") or "-"
        out.write(
            f"{d['path']}\n    {d['type']}, {_size(d['size'])}, {d['passages']} passages"
            f"{pages}, indexed {when}{' (uploaded)' if d.get('uploaded') else ''}\n"
        )
    shown = page["offset"] + len(page["documents"])
    out.write(f"{shown} of {page['total']} documents\n")
    return EXIT_OK
