"""`make eval`'s passages rows with the rerank step off and on, in one run.

    python -m bench.rerank.eval_rerank [--ids ID ...]

The same world (doc web, searx, scripted LLM) and question set as `make eval`
(bench/eval/questions.yaml -- the tuning sets); the passages configurations (one round, and
the gap round for two-page questions) run on one stack with RANKER_RERANK=off, then on one
with RANKER_RERANK=on (its time cap lifted like the others, bench.eval.harness.NO_CAPS).
Prints `make eval`'s table for both.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from bench.eval.harness import Config, run_configs, world
from bench.eval.metrics import format_table, table_rows
from bench.eval.questions import load


def main() -> None:
    """Run both settings and print the table."""
    parser = argparse.ArgumentParser(prog="python -m bench.rerank.eval_rerank")
    parser.add_argument("--ids", nargs="*", default=[], help="only these question ids")
    args = parser.parse_args()
    questions = [q for q in load() if not args.ids or q.id in set(args.ids)]
    outcomes = []
    names = []
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="quarry-eval-rerank-") as tmp, world(Path(tmp)) as w:
        for setting in ("off", "on"):
            configs = [
                Config(f"passages rerank={setting}", "passages", "one_round"),
                Config(f"passages +gap rerank={setting}", "passages", "gap", ("two_page",)),
            ]
            names += [c.name for c in configs]
            env = {"RANKER_RERANK": setting, "RANKER_RERANK_SECONDS": "60"}
            outcomes += run_configs(
                w, questions, configs, extra_env=env, progress=lambda m: print(m, file=sys.stderr)
            )
    print(f"\n{len(questions)} questions, {len(outcomes)} runs in {time.monotonic() - start:.0f} s")
    print(format_table(table_rows(outcomes, names)))


if __name__ == "__main__":
    main()
