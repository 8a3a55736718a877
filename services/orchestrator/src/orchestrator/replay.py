"""``quarry-replay run.zip`` (or ``python -m orchestrator.replay``): replay a run bundle offline.

The replay re-runs the server's report phase (core/exports/replay.py) with the model's recorded
outputs, so it ships with the server package; the ``quarry`` client's ``quarry replay`` runs
this program (docs/exports.md). Exit 0: the replay gave the run's answer and citations; 1: it
did not; 2: not a bundle (or not readable).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    """``quarry-replay BUNDLE [--json]``."""
    parser = argparse.ArgumentParser(
        prog="quarry-replay",
        description="Replay a run bundle offline (no network, no model) and re-grade it.",
    )
    parser.add_argument("bundle", help="the bundle file")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


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


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    """Replay the bundle (no server: the bundle is all it reads); the exit status."""
    args = build_parser().parse_args(argv)
    stdout = out or sys.stdout
    # Imported here: `--help` and a bad path answer without loading the research machinery.
    from orchestrator.core.exports.replay import BadBundle, replay_file

    try:
        data = Path(args.bundle).read_bytes()
        result = replay_file(data).as_json()
    except OSError as err:
        sys.stderr.write(f"quarry-replay: cannot read {args.bundle}: {err.strerror or err}\n")
        return EXIT_USAGE
    except BadBundle as err:
        sys.stderr.write(f"quarry-replay: {args.bundle}: {err}\n")
        return EXIT_USAGE
    if args.json:
        stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        _print(result, stdout)
    stdout.flush()
    return EXIT_OK if result["ok"] else EXIT_FAILED


def entrypoint() -> None:
    """Console-script entry point."""
    raise SystemExit(main())


if __name__ == "__main__":
    entrypoint()
