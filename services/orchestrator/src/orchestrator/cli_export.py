"""``quarry export``, ``quarry bundle`` and ``quarry replay`` (docs/exports.md).

``quarry export research ID -o report.pdf`` (or ``session ID``, with ``--turn N`` for one
answer) asks the API for the export; the format comes from ``--format``, else the file's
extension, else Markdown on stdout. ``quarry bundle research ID -o run.zip`` saves a run's
bundle; ``quarry replay run.zip`` replays it here, offline, and re-grades its citations (exit 0:
the replay gave the run's answer and citations; 1: it did not; 2: not a bundle).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

import httpx

from orchestrator.cli_index import problem_message

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
# Kept in step with orchestrator.adapters.exports.render (not imported: `quarry ask` stays light).
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
        return EXIT_USAGE if reply.status_code < 500 else EXIT_FAILED
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


def _print(result: dict[str, Any], out: TextIO) -> None:
    grades = result["grades"]
    if result["replayed"]:
        out.write(f"answer: {'same as' if result['same_answer'] else 'DIFFERS from'} the run's\n")
        out.write(
            f"citations: {'same' if result['same_citations'] else 'DIFFER'} "
            f"(replayed {result['cited']}, recorded {result['recorded_cited']})\n"
        )
        prompts = result["prompts"]
        out.write(f"prompts: {prompts['matched']} as recorded, {prompts['differ']} differ\n")
    out.write(
        f"cited sentences: {grades['supported']} supported, {grades['partly']} partly, "
        f"{grades['unsupported']} unsupported by their passages\n"
    )
    for s in result["sentences"]:
        if s["support"] != "supported":
            out.write(f"  {s['support'] or 'no claim'} {s['citations']}: {s['text'][:160]}\n")
    for note in result["notes"]:
        out.write(f"note: {note}\n")


def run_replay(args: argparse.Namespace, out: TextIO) -> int:
    """``quarry replay`` (no server: the bundle is all it reads)."""
    # Imported here: the replay loads the research machinery, which `quarry ask` never needs.
    from orchestrator.core.exports.replay import BadBundle, replay_file

    try:
        data = Path(args.bundle).read_bytes()
        result = replay_file(data).as_json()
    except OSError as err:
        sys.stderr.write(f"quarry: cannot read {args.bundle}: {err.strerror or err}\n")
        return EXIT_USAGE
    except BadBundle as err:
        sys.stderr.write(f"quarry: {args.bundle}: {err}\n")
        return EXIT_USAGE
    if args.json:
        out.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        _print(result, out)
    return EXIT_OK if result["ok"] else EXIT_FAILED
