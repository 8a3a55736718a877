"""`make eval`: the question set through the real stack, metrics per kind and configuration.

    python -m bench.eval [--llm URL [--llm-model NAME] [--llm-env K=V ...]] [--ids ID ...]
                         [--json FILE]

With no ``--llm``, a scripted LLM decides (deterministic numbers): snippets only; today's
"BM25, one ~500-word chunk per URL" (ORCHESTRATOR_EVIDENCE=chunk_per_url); the passages mode
(ORCHESTRATOR_EVIDENCE=passages); and for two-page questions each evidence mode again with a
gap-query round. ``--llm URL`` sends every call to a real OpenAI-compatible server instead and
adds answer accuracy (all patterns in the final answer). Prints one table; exits 1 when a run
fails outright.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from orchestrator.config import Settings

from bench.eval.harness import default_configs, llm_configs, run_configs, world
from bench.eval.metrics import format_table, table_rows
from bench.eval.questions import load


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.eval", description=__doc__)
    parser.add_argument("--llm", default="", help="base URL of an OpenAI-compatible server")
    parser.add_argument("--llm-model", default="", help="model name to ask --llm for")
    parser.add_argument(
        "--llm-env",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="extra stack settings, e.g. LLM_SCHEMA_DIALECT=json_object LLM_TIMEOUT_S=600",
    )
    parser.add_argument("--ids", nargs="*", default=[], help="only these question ids")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    return parser.parse_args()


def evidence_note() -> str:
    """Says so when the orchestrator has no ORCHESTRATOR_EVIDENCE setting yet."""
    if "evidence" in Settings.model_fields:
        return ""
    return (
        "note: this orchestrator has no ORCHESTRATOR_EVIDENCE setting yet; every mode runs "
        "today's one chunk per URL, so the passages rows repeat the chunk/url ones.\n"
    )


def main() -> None:
    """Run the set and print the table."""
    args = _args()
    questions = load()
    if args.ids:
        questions = [q for q in questions if q.id in set(args.ids)]
    configs = llm_configs() if args.llm else default_configs()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="quarry-eval-") as tmp, world(Path(tmp)) as w:
        outcomes = run_configs(
            w,
            questions,
            configs,
            relay=args.llm,
            model=args.llm_model or "fake-model",
            extra_env=dict(kv.split("=", 1) for kv in args.llm_env),
            progress=lambda m: print(m, file=sys.stderr),
        )
    rows = table_rows(outcomes, [c.name for c in configs], answers=bool(args.llm))
    print(f"\n{len(questions)} questions, {len(outcomes)} runs in {time.monotonic() - start:.0f} s")
    print(evidence_note() + format_table(rows))
    failed = [o for o in outcomes if o.status != "answered"]
    for o in failed:
        print(
            f"run failed: {o.config} {o.question.id}: status {o.status!r} {o.error}",
            file=sys.stderr,
        )
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
