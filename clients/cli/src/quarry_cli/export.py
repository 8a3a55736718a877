"""``quarry export``, ``quarry bundle`` and ``quarry replay`` (docs/exports.md).

``quarry export research ID -o report.pdf`` (or ``session ID``, with ``--turn N`` for one
answer) asks the API for the export; the format comes from ``--format``, else the file's
extension, else Markdown on stdout. ``quarry bundle research ID -o run.zip`` saves a run's
bundle. ``quarry replay run.zip`` replays it here, offline, and re-grades its citations (exit 0:
the replay gave the run's answer and citations; 1: it did not; 2: not a bundle): the replay
re-runs the server's report phase, so it is the server package's ``quarry-replay`` program,
which this command runs when it is installed beside it (as ``git`` runs ``git-foo``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

import httpx

from quarry_cli.status import EXIT_OK, EXIT_USAGE, problem_message, refused

# Kept in step with the server's orchestrator.adapters.exports.render (a test compares them;
# not imported: the client has no server code).
FORMAT_NAMES = ("md", "html", "pdf", "json", "bibtex", "ris")
BY_EXTENSION = {
    "md": "md", "markdown": "md", "txt": "md", "html": "html", "htm": "html", "pdf": "pdf",
    "json": "json", "bib": "bibtex", "bibtex": "bibtex", "ris": "ris",
}  # fmt: skip
_KINDS = {"research": "research", "session": "sessions"}


def format_for(path: str | None, asked: str | None = None) -> str | None:
    """The export format: ``asked``, else the file's extension; None when neither says."""
    if asked:
        return asked
    if not path:
        return None
    return BY_EXTENSION.get(Path(path).suffix.lower().lstrip("."))


def add_parsers(sub: Any) -> None:
    """Add ``export``, ``bundle`` and ``replay`` to the CLI's subcommands."""
    exp = sub.add_parser("export", help="save a research report or a conversation as a file")
    exp.add_argument("kind", choices=tuple(_KINDS), help="what to export")
    exp.add_argument("id", help="the research run's or the session's id")
    exp.add_argument("-o", "--output", help="the file (its extension picks the format)")
    exp.add_argument("--format", choices=FORMAT_NAMES, help="md, html, pdf, json, bibtex, ris")
    exp.add_argument("--turn", type=int, help="a session's one answer (1-based)")
    exp.add_argument("--timeout", type=float, default=120.0, help="seconds")
    bundle = sub.add_parser("bundle", help="save everything a run did as one zip file")
    bundle.add_argument("kind", choices=tuple(_KINDS), help="what to bundle")
    bundle.add_argument("id", help="the research run's or the session's id")
    bundle.add_argument("-o", "--output", required=True, help="the bundle file (.zip)")
    bundle.add_argument("--timeout", type=float, default=120.0, help="seconds")
    replay = sub.add_parser(
        "replay", help="replay a run bundle offline (no network, no model) and re-grade it"
    )
    replay.add_argument("bundle", help="the bundle file")
    replay.add_argument("--json", action="store_true", help="print the result as JSON")


def save(client: httpx.Client, path: str, output: str, out: TextIO | None = None) -> int:
    """GET ``path`` and write the body to ``output`` (stdout for ``-``); the exit status."""
    reply = client.get(path)
    if reply.status_code >= 400:
        sys.stderr.write(f"quarry: {problem_message(reply)}\n")
        return refused(reply)
    if output == "-" and out is not None:
        out.write(reply.text)
        out.flush()
        return EXIT_OK
    Path(output).write_bytes(reply.content)
    sys.stderr.write(f"written to {output} ({len(reply.content)} bytes)\n")
    return EXIT_OK


def run_export(client: httpx.Client, args: argparse.Namespace, out: TextIO) -> int:
    """``quarry export``."""
    fmt = format_for(args.output, args.format)
    if fmt is None and args.output:
        sys.stderr.write(
            f"quarry: cannot tell the format from {args.output!r}; "
            f"give --format ({', '.join(FORMAT_NAMES)})\n"
        )
        return EXIT_USAGE
    params = f"?format={fmt or 'md'}" + (f"&turn={args.turn}" if args.turn else "")
    path = f"/v1/{_KINDS[args.kind]}/{args.id}/export{params}"
    return save(client, path, args.output or "-", out)


def run_bundle(client: httpx.Client, args: argparse.Namespace) -> int:
    """``quarry bundle``."""
    return save(client, f"/v1/{_KINDS[args.kind]}/{args.id}/bundle", args.output)


REPLAY = "quarry-replay"


def replay_program() -> str | None:
    """The server package's replay program: beside this interpreter (a venv's bin/, run without
    activating it), else on PATH; None when the server package is not installed."""
    beside = Path(sys.executable).with_name(REPLAY)
    if beside.is_file():
        return str(beside)
    found = shutil.which(REPLAY)
    return found


def run_replay(args: argparse.Namespace, out: TextIO) -> int:
    """``quarry replay``: run ``quarry-replay`` on the bundle; its output and exit status."""
    program = replay_program()
    if program is None:
        sys.stderr.write(
            f"quarry: replaying needs the Quarry server package ({REPLAY}), which re-runs the "
            "run's report phase offline; it is not installed here (in a checkout: make setup)\n"
        )
        return EXIT_USAGE
    command = [program, args.bundle, *(["--json"] if args.json else [])]
    # stdout through a pipe, so ``main(argv, out)`` callers get it; stderr goes straight through.
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(command, stdout=subprocess.PIPE, env=env, check=False)  # noqa: S603
    out.write(done.stdout.decode("utf-8", errors="replace"))
    out.flush()
    return done.returncode
