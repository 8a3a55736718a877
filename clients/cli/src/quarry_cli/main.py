"""The `quarry` command line: ask questions, research, index documents through the HTTP API.

A client only: every command talks to a running Quarry over HTTP (``--url``), and ``quarry
mcp`` bridges an assistant's stdio to the server's ``/mcp``; no server code is imported here.
Progress goes to stderr, answers and reports to stdout. Exit status: 0 answered (or indexed, or
researched), 1 the run failed (an `error` event or a server error), 2 bad usage, 3 the engine
asked a clarifying question (printed on stdout), 4 the API could not be reached, 5 a research
run was cancelled (`quarry research`).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

import httpx

from quarry_cli import ask, export, index, research, schedule
from quarry_cli.status import (
    EXIT_CANCELLED,
    EXIT_CLARIFY,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
)

__all__ = [
    "EXIT_CANCELLED",
    "EXIT_CLARIFY",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "build_parser",
    "entrypoint",
    "main",
]

DEFAULT_URL = "http://127.0.0.1:8080"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``quarry ask …``, ``quarry index …``, …)."""
    parser = argparse.ArgumentParser(
        prog="quarry", description="Ask Quarry questions; research; index local documents."
    )
    parser.add_argument(
        "--url",
        default=os.environ.get("QUARRY_URL", DEFAULT_URL),
        help="orchestrator base URL (env QUARRY_URL; default %(default)s)",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("QUARRY_API_TOKEN", ""),
        help="bearer token for a server with ORCHESTRATOR_API_TOKENS set (env QUARRY_API_TOKEN)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    ask.add_parser(sub)
    index.add_parser(sub)
    index.add_docs_parser(sub)
    research.add_parser(sub)
    export.add_parsers(sub)
    schedule.add_parser(sub)
    sub.add_parser(
        "mcp",
        help="serve Quarry's MCP tools over stdio (for assistants that launch it): a bridge to "
        "the server's /mcp at --url, with the token in QUARRY_API_TOKEN",
    )
    return parser


def _call_api(args: argparse.Namespace, out: TextIO) -> int:
    """The commands that call the HTTP API, with one client for the command's run."""
    timeout = httpx.Timeout(args.timeout, connect=5.0)
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    with httpx.Client(base_url=args.url, timeout=timeout, headers=headers) as client:
        if args.command == "index":
            return index.run_index(client, args, out)
        if args.command == "docs":
            return index.run_docs(client, args, out)
        if args.command == "research":
            return research.run_research(client, args, out)
        if args.command == "export":
            return export.run_export(client, args, out)
        if args.command == "bundle":
            return export.run_bundle(client, args)
        if args.command == "schedule":
            return schedule.run_schedule(client, args, out)
        return ask.run_ask(client, args, out)


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    """Run the CLI; returns (and, as a script, exits with) the exit status."""
    args = build_parser().parse_args(argv)
    stdout = out or sys.stdout
    if args.command == "ask" and (problem := ask.usage(args)):
        sys.stderr.write(f"quarry: {problem}\n")
        return EXIT_USAGE
    if args.command == "mcp":
        # Imported here: `quarry ask` should not pay for loading the MCP SDK.
        from quarry_cli.mcp_bridge import run_bridge

        return run_bridge(args.url, args.token)
    try:
        if args.command == "replay":
            return export.run_replay(args, stdout)
        return _call_api(args, stdout)
    except (httpx.ConnectError, httpx.ConnectTimeout) as err:
        sys.stderr.write(f"quarry: cannot reach the Quarry API at {args.url} ({err})\n")
        return EXIT_UNREACHABLE
    except httpx.TransportError as err:
        sys.stderr.write(f"quarry: lost the connection to {args.url} ({err!r})\n")
        return EXIT_FAILED
    except KeyboardInterrupt:
        sys.stderr.write("\nquarry: interrupted\n")
        return 130


def entrypoint() -> None:
    """Console-script entry point."""
    raise SystemExit(main())
