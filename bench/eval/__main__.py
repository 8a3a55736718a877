"""`make eval`: the question sets through the real stack, per run mode, kind and doc set.

    python -m bench.eval [--modes speed balanced quality] [--sets sqlite git apache ffmpeg local]
                         [--llm URL|embedded [--llm-model NAME] [--llm-env K=V ...]]
                         [--evidence] [--ids ID ...] [--json FILE]

With no ``--llm``, a scripted LLM decides (deterministic numbers) and the table is passage
recall: whether the answer is in what the model was given, per mode (``options.mode``, as a
client asks) x kind x set, tuning vs held-out sets side by side with the gap; plus off-topic
questions against a local corpus (fall-through: no local passage given to the model).
``--llm URL`` sends every call to a real OpenAI-compatible server instead, ``--llm embedded``
to the embedded model `make run` starts (started here, with `make run`'s settings; default mode
speed), and grades the answers: right / abstained / wrong / confidently wrong per kind, cut-off
answers, ``[n]`` inside words or code, median time, abstention on unanswerable questions.
``--evidence`` runs the older comparison of evidence modes (snippets, chunk/url, passages).
Prints the tables; exits 1 when a run fails outright.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, get_args

from orchestrator.core.ask.modes import Mode

from bench.eval import jsweb
from bench.eval.answers import abstains, cited, cut_off, marker_inside, verdict
from bench.eval.harness import (
    Config,
    evidence_configs,
    mode_configs,
    relay_configs,
    run_configs,
    world,
)
from bench.eval.llm import EMBEDDED, embedded_env, embedded_server
from bench.eval.metrics import Outcome
from bench.eval.questions import Question, interleave, load
from bench.eval.report import report, role
from bench.eval.stored import load_run


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.eval", description=__doc__)
    parser.add_argument(
        "--llm", default="", help=f"base URL of an OpenAI-compatible server, or {EMBEDDED!r}"
    )
    parser.add_argument("--llm-model", default="", help="model name to ask --llm for")
    parser.add_argument(
        "--llm-env",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="extra stack settings, e.g. LLM_SCHEMA_DIALECT=json_object LLM_TIMEOUT_S=600",
    )
    parser.add_argument(
        "--modes", nargs="*", choices=get_args(Mode), help="default: speed balanced (--llm: speed)"
    )
    parser.add_argument("--sets", nargs="*", default=[], help="only these doc sets ('local')")
    parser.add_argument("--evidence", action="store_true", help="compare evidence modes instead")
    parser.add_argument(
        "--baseline",
        nargs="*",
        type=Path,
        default=[],
        help="stored runs (--json files) to print beside this one, as 'base <configuration>'",
    )
    parser.add_argument(
        "--show",
        nargs="*",
        type=Path,
        default=[],
        help="run nothing: print the tables of these stored runs (--json or .partial.jsonl)",
    )
    parser.add_argument("--ids", nargs="*", default=[], help="only these question ids")
    parser.add_argument(
        "--json",
        type=Path,
        help="also write the per-question outcomes as JSON here (and each as it comes to "
        "FILE.partial.jsonl)",
    )
    return parser.parse_args()


@contextmanager
def _llm(args: argparse.Namespace, workdir: Path) -> Iterator[tuple[str, str, dict[str, str]]]:
    """The relay target, its model name and the stack settings for it ('' when scripted)."""
    extra = dict(kv.split("=", 1) for kv in args.llm_env)
    if args.llm != EMBEDDED:
        yield args.llm, args.llm_model or "fake-model", extra
        return
    with embedded_server(workdir) as url:
        yield url, args.llm_model or "qwen", embedded_env() | extra


def _record(o: Outcome) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": o.question.id,
        "set": o.question.set,
        "role": role(o),
        "kind": o.question.kind,
        "config": o.config,
        "status": o.status,
        "error": o.error,
        "page_hit": o.page_hit,
        "passage_hit": o.passage_hit,
        "pages_read": o.pages_read,
        "searched": o.searched,
        "sources": o.cited,
        "local_sources": o.local_sources,
        "timings_ms": o.timings_ms,
        "evidence_chars": o.evidence_chars,
        "duration_ms": o.duration_ms,
    }
    if o.config.startswith("llm"):  # a scripted answer only echoes the evidence: not kept
        row |= {
            "answer": o.answer,
            "support_score": o.support_score,
            # What the support marks and the abstention can be re-derived from offline.
            "sentences": o.sentences,
            "evidence": o.evidence,
            "draft": o.draft,
            "verdict": verdict(o),
            "abstains": abstains(o.answer),
            "cited": cited(o.answer),
            "cut_off": cut_off(o.answer),
            "marker_inside": marker_inside(o.answer),
        }
    return row


def _commit() -> str:
    """The checkout's commit, short, with "+" when files differ from it."""
    git = ["git", "-C", str(Path(__file__).parent)]
    head = subprocess.run(
        [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    dirty = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return head + ("+" if dirty else "")


def _with_baseline(
    paths: list[Path], questions: list[Question], outcomes: list[Outcome], names: list[str]
) -> tuple[list[Outcome], list[str]]:
    """``outcomes`` and ``names`` with the stored runs' beside them (base first, per name);
    a stored configuration this run does not make is left out."""
    wanted = {q.id for q in questions}
    base: list[Outcome] = []
    for path in paths:
        run = load_run(path, load())
        mine = [
            o
            for o in run.outcomes
            if o.question.id in wanted and o.config.removeprefix("base ") in names
        ]
        dropped = f", {run.dropped} of questions no longer in the sets" if run.dropped else ""
        print(f"baseline: {path} (commit {run.commit}, {run.date}; {len(mine)} runs{dropped})")
        base += mine
    stored = {o.config for o in base}
    interleaved = [n for name in names for n in (f"base {name}", name) if n in stored or n == name]
    return base + outcomes, interleaved


def show(paths: list[Path]) -> None:
    """Print the tables of stored runs (their own configuration names)."""
    questions = load()
    for path in paths:
        run = load_run(path, questions, prefix="")
        names = list(dict.fromkeys(o.config for o in run.outcomes))
        answers = any(o.answer for o in run.outcomes)
        print(f"{path}: commit {run.commit}, {run.date}, {len(run.outcomes)} runs")
        print(report(run.outcomes, names, answers=answers))


def _chosen(args: argparse.Namespace) -> tuple[list[Question], list[Config]]:
    """The questions and configurations the arguments ask for."""
    questions = load()
    if args.ids:
        questions = [q for q in questions if q.id in set(args.ids)]
    if args.sets:
        questions = [q for q in questions if q.set in set(args.sets)]
    questions = interleave(questions)
    modes = args.modes or (["speed"] if args.llm else ["speed", "balanced"])
    if args.evidence:
        configs = evidence_configs()
    else:
        configs = relay_configs(modes) if args.llm else mode_configs(modes)
    # A configuration none of the chosen questions is for starts no stack (--sets apache: no
    # local corpus to index).
    return questions, [c for c in configs if any(q.kind in c.kinds for q in questions)]


def _run(
    args: argparse.Namespace, questions: list[Question], configs: list[Config]
) -> tuple[list[Outcome], list[Outcome]]:
    """Every configuration's outcomes, then the JS-only set's (bench/eval/jsweb.py)."""
    partial = args.json.with_suffix(".partial.jsonl") if args.json else None
    if partial:
        partial.write_text("")

    def keep(o: Outcome) -> None:
        if partial:
            with partial.open("a") as out:
                out.write(json.dumps(_record(o)) + "\n")

    with (
        tempfile.TemporaryDirectory(prefix="quarry-eval-") as tmp,
        _llm(args, Path(tmp)) as (relay, model, extra),
        world(Path(tmp)) as w,
    ):
        outcomes = run_configs(
            w,
            questions,
            configs,
            relay=relay,
            model=model,
            extra_env=extra,
            progress=lambda m: print(m, file=sys.stderr),
            on_outcome=keep,
        )
        # The JS-only set: its own site and stacks, render tier on and off.
        js = [q for q in jsweb.questions() if not args.ids or q.id in args.ids]
        if args.evidence or (args.sets and jsweb.SET not in args.sets):
            js = []
        js_outcomes = jsweb.run(Path(tmp), js, relay=relay, model=model, extra_env=extra)
    return outcomes, js_outcomes


def main() -> None:
    """Run the sets and print the tables."""
    args = _args()
    if args.show:
        show(args.show)
        return
    questions, configs = _chosen(args)
    start = time.monotonic()
    commit = _commit()  # of the code that runs (a commit during the run does not count)
    outcomes, js_outcomes = _run(args, questions, configs)
    names = [c.name for c in configs]
    print(f"\n{len(questions)} questions, {len(outcomes)} runs in {time.monotonic() - start:.0f} s")
    shown, shown_names = outcomes, names
    if args.baseline:
        shown, shown_names = _with_baseline(args.baseline, questions, outcomes, names)
    print(report(shown, shown_names, answers=bool(args.llm)))
    if js_outcomes:
        print("\n" + jsweb.table(js_outcomes))
    failed = [o for o in outcomes + js_outcomes if o.status != "answered"]
    for o in failed:
        problem = f"run failed: {o.config} {o.question.id}: status {o.status!r} {o.error}"
        print(problem, file=sys.stderr)
    if args.json:
        run: dict[str, Any] = {
            "commit": commit,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
        run |= {"argv": sys.argv[1:], "outcomes": [_record(o) for o in outcomes]}
        args.json.write_text(json.dumps(run, indent=1))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
