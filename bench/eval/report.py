"""The tables `make eval` prints (pure: no I/O): passage recall per configuration x kind with
each doc set, tuning vs held-out side by side and the gap between them; the detailed table per
role; off-topic fall-through; and, with a real model, the answer table."""

from __future__ import annotations

from collections.abc import Sequence

from bench.eval import docweb
from bench.eval.answers import AnswerRow, answer_row, format_answers
from bench.eval.docweb import ROLES, Role
from bench.eval.metrics import Outcome, format_table, table_rows
from bench.eval.questions import KINDS, LOCAL_SET

ALL = "all"


def role(o: Outcome) -> str:
    """The outcome's question's role: tuning, held-out, or local (off-topic questions)."""
    return "local" if o.question.set == LOCAL_SET else docweb.role_of(o.question.set)


def _recall(outcomes: Sequence[Outcome]) -> str:
    if not outcomes:
        return f"{'-':>9}"
    hits = sum(o.passage_hit for o in outcomes)
    return f"{hits / len(outcomes) * 100:5.1f}/{len(outcomes)}".rjust(9)


def _pct(outcomes: Sequence[Outcome]) -> float | None:
    return sum(o.passage_hit for o in outcomes) / len(outcomes) if outcomes else None


def recall_table(outcomes: Sequence[Outcome], configs: Sequence[str]) -> str:
    """Passage recall (% / n) per configuration and kind: each set, each role, and the gap
    (tuning - held-out, in points)."""
    answerable = [o for o in outcomes if o.question.answerable]
    sets = [s.name for s in docweb.SETS if any(o.question.set == s.name for o in answerable)]
    head = f"{'configuration':16} {'kind':9} " + " ".join(f"{s:>9}" for s in sets)
    head += " " + " ".join(f"{r:>9}" for r in ROLES) + f" {'gap':>6}"
    lines = ["passage recall, % of questions / n (the answer is in what the model was given)"]
    lines += [head, "-" * len(head)]
    for config in configs:
        mine = [o for o in answerable if o.config == config]
        for kind in (*KINDS, ALL):
            of_kind = [o for o in mine if kind in (ALL, o.question.kind)]
            if not of_kind or (kind == ALL and len({o.question.kind for o in mine}) == 1):
                continue
            cells = [_recall([o for o in of_kind if o.question.set == s]) for s in sets]
            by_role = {r: [o for o in of_kind if role(o) == r] for r in ROLES}
            cells += [_recall(by_role[r]) for r in ROLES]
            tuning, held = _pct(by_role["tuning"]), _pct(by_role["held-out"])
            gap = f"{(tuning - held) * 100:6.1f}" if tuning is not None and held is not None else ""
            lines.append(f"{config:16} {kind:9} " + " ".join(cells) + f" {gap:>6}")
    return "\n".join(lines)


def detail_tables(outcomes: Sequence[Outcome], configs: Sequence[str]) -> str:
    """The detailed table (page and passage recall, gold URLs, stage latencies) per role."""
    parts = []
    for r in ROLES:
        mine = [o for o in outcomes if o.question.answerable and role(o) == r]
        if mine:
            names = [c for c in configs if any(o.config == c for o in mine)]
            parts.append(f"{r} sets\n" + format_table(table_rows(mine, names)))
    return "\n\n".join(parts)


def fall_through(outcomes: Sequence[Outcome]) -> str:
    """Off-topic questions against the local corpus: how many fell through (no local passage
    given to the model) per configuration."""
    lines = []
    off = [o for o in outcomes if o.question.kind == "offtopic"]
    for config in dict.fromkeys(o.config for o in off):
        mine = [o for o in off if o.config == config]
        fell = sum(o.fell_through for o in mine)
        lines.append(
            f"off-topic vs local corpus, {config}: {fell}/{len(mine)} fell through "
            f"({fell / len(mine) * 100:.1f} %); answered from local docs: {len(mine) - fell}"
        )
    return "\n".join(lines)


def answer_rows(outcomes: Sequence[Outcome], configs: Sequence[str]) -> list[AnswerRow]:
    """Answer rows per configuration, role and kind (answerable kinds, then all of them)."""
    rows = []
    for config in configs:
        mine = [o for o in outcomes if o.config == config]
        groups: list[tuple[str, list[Outcome]]] = [
            (r, [o for o in mine if role(o) == r]) for r in (*ROLES, "local")
        ]
        for group, of_group in groups:
            for kind in (*KINDS, "answerable", "unanswerable", "offtopic"):
                pick = [
                    o
                    for o in of_group
                    if o.question.kind == kind or (kind == "answerable" and o.question.answerable)
                ]
                if pick:
                    rows.append(answer_row(config, group, kind, pick))
    return rows


def report(outcomes: Sequence[Outcome], configs: Sequence[str], *, answers: bool) -> str:
    """Every table of one run."""
    parts = [recall_table(outcomes, configs), detail_tables(outcomes, configs)]
    if answers:
        parts.append(format_answers(answer_rows(outcomes, configs)))
    parts.append(fall_through(outcomes))
    return "\n\n".join(p for p in parts if p)


__all__ = ["Role", "answer_rows", "fall_through", "recall_table", "report"]
