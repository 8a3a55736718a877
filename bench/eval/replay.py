"""Replay the engine's answer checks over a stored `make eval --llm` run, with today's code.

A real model's answer costs ~25 s on 2 cores; what the engine does with it (citation check,
support marks, the support model, "the sources don't say") costs milliseconds. A run's rows keep
the model's raw draft and the evidence it was given (bench/eval/__main__.py), so a change to
those checks can be measured over every stored answer at once, beside the answers as they were
graded when the run was made::

    python -m bench.eval.replay RUN.json [RUN2.partial.jsonl ...] [--roles tuning]

The support model runs in this process (libs/rerank over the shipped embedder), as the ranker
runs it. What a replay cannot see: an answer cut off by the deadline (its half sentence is
trimmed only by the rules that hold without one), and a support-model call that timed out in
the run (the replay always has the model).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from orchestrator.core.ask.brain import check_answer
from orchestrator.core.ask.domain import Evidence
from orchestrator.core.ask.expand import sub_questions
from orchestrator.core.ask.synthesise import SentenceChecker, kept_rest
from orchestrator.core.ending import conclude
from orchestrator.core.support import SentenceStream, model_claims, with_model_marks

from bench.eval.answers import answer_row, cited, format_answers, verdict
from bench.eval.metrics import Outcome
from bench.eval.questions import Question, load
from bench.eval.report import role

Scores = Callable[[list[tuple[str, str]]], list[float]]
_HEAD = re.compile(r"Title: (?P<title>[^\n]*)\n(?:URL: (?P<url>[^\n]*)\n)?\n?")


def rows(paths: Sequence[Path]) -> Iterator[dict[str, Any]]:
    """The --llm rows of stored runs (--json files or their .partial.jsonl) that kept a draft."""
    for path in paths:
        text = path.read_text("utf-8")
        if path.suffix == ".jsonl":
            found = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            found = json.loads(text)["outcomes"]
        yield from (r for r in found if str(r.get("config", "")).startswith("llm") and r["draft"])


def sources_of(evidence: str) -> list[Evidence]:
    """The numbered sources of a synthesis prompt's evidence (bench/eval/scripted.py joins
    each fenced source, "Title: …\\n\\ntext", with a blank line; runs stored before the
    eighth session also have a "URL: …" line, which the prompt no longer carries)."""
    starts = [m.start() for m in re.finditer(r"(?:^|(?<=\n\n))Title: ", evidence)]
    out = []
    for a, b in zip(starts, [*starts[1:], len(evidence)], strict=True):
        block = evidence[a:b]
        head = _HEAD.match(block)
        if head is None:
            continue
        body = block[head.end() :].rstrip("\n")
        out.append(Evidence(head["url"] or "", head["title"], body))
    return out


def replay(question: str, draft: str, sources: Sequence[Evidence], scores: Scores) -> str:
    """The answer the engine shows for ``draft`` over ``sources`` (core/ask/synthesise.py's
    order: citation check and lexical marks per sentence, the support model, the ending)."""
    checker = SentenceChecker(check_answer, sources)
    cutter = SentenceStream()
    done = cutter.feed(draft)
    rest = kept_rest(cutter.flush(), draft, timed_out=False, after=bool(done))
    marks = [checker.mark(s) for s in [*done, *rest]]
    claims = model_claims(marks, checker.numbered)
    if claims:
        pairs = [(sentence, p) for _, sentence, passages in claims for p in passages]
        flat = scores(pairs)
        verdicts, k = [], 0
        for _, _, passages in claims:
            best = max(flat[k : k + len(passages)])
            k += len(passages)
            verdicts.append((best, _label(best)))
        marks = with_model_marks(marks, claims, verdicts)
    ending = conclude(question, marks, checker.numbered, sub_questions(question))
    return checker.checked(ending.report).text


def _label(score: float) -> str:
    from quarry_rerank.support import label_for

    return label_for(score)


def support_model() -> Scores:
    """libs/rerank's support checker over the shipped embedder, as the ranker loads it."""
    from quarry_embed import load_or_none
    from quarry_embed.cache import CachedEmbedder
    from quarry_rerank.support import SupportChecker

    model = load_or_none()
    if model is None:
        raise SystemExit("the embedding model is not installed: run `make setup`")
    checker = SupportChecker(CachedEmbedder(model, max_entries=4096))
    return checker.support_many


def _outcome(q: Question, row: dict[str, Any], answer: str, prefix: str) -> Outcome:
    return Outcome(
        q, prefix + row["config"], status=row["status"], answer=answer,
        duration_ms=float(row["duration_ms"]),
    )  # fmt: skip


def main() -> None:
    """Print the stored answers' table beside the replayed one."""
    parser = argparse.ArgumentParser(prog="python -m bench.eval.replay", description=__doc__)
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--roles", nargs="*", default=[], help="only these (tuning, held-out)")
    parser.add_argument("--show", action="store_true", help="print each answer that changed")
    parser.add_argument(
        "--wrong", action="store_true", help="print each replayed answer that is wrong and cited"
    )
    args = parser.parse_args()
    questions = {q.id: q for q in load()}
    scores = support_model()
    stored: list[Outcome] = []
    replayed: list[Outcome] = []
    for row in rows(args.runs):
        q = questions.get(row["id"])
        if q is None:
            continue
        sources = sources_of(row["evidence"])
        before = _outcome(q, row, row["answer"], "as run ")
        after = _outcome(q, row, replay(q.question, row["draft"], sources, scores), "replay ")
        if args.roles and role(before) not in args.roles:
            continue
        stored.append(before)
        replayed.append(after)
        if args.show and before.answer != after.answer:
            print(f"--- {q.id}\n  was: {before.answer[:300]!r}\n  now: {after.answer[:300]!r}")
        if args.wrong and verdict(after) == "wrong" and cited(after.answer):
            print(f"--- {q.id} ({q.kind}): {q.question}\n  {after.answer[:400]!r}")
    print(format_answers(_table(stored) + _table(replayed)))


def _table(outcomes: Sequence[Outcome]) -> list[Any]:
    groups: dict[tuple[str, str, str], list[Outcome]] = {}
    for o in outcomes:
        kind = o.question.kind if o.question.kind == "unanswerable" else "answerable"
        groups.setdefault((o.config, role(o), kind), []).append(o)
    return [answer_row(c, g, k, os) for (c, g, k), os in sorted(groups.items())]


if __name__ == "__main__":
    main()
