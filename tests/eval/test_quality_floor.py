"""A fast subset of `make eval` (bench/eval) in `make test`: the real stack over the doc web with
the scripted LLM, in the orchestrator's default evidence mode, must keep at least the recall
measured when each floor was set.

Floors only move up: when retrieval gets better, raise them to the new numbers (`make eval`
prints the full table; this test prints the subset's).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.eval.harness import Config, run_configs, world
from bench.eval.metrics import format_table, table_rows
from bench.eval.questions import load

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("doc_sets", "searx_installed")]

# Mostly questions that one chunk per URL loses and the passages keep (make eval, 2026-11-24).
SUBSET = (
    "sqlite-max-variable",
    "sqlite-julianday-epoch",
    "git-merge-recursive-default",
    "git-credential-cache-timeout",
    "sqlite-max-attached",
    "git-diff-context",
    "sqlite-wal-isolation",
    "git-cherry-pick-x",
    # A deep answer in a page's later passages: lost (with sqlite-max-attached) when every
    # source was cut to 2,000 characters after the ranker had fitted passages to the budget.
    "sqlite-compound-select",
    "two-fts5-rtree",
    "two-compound-tokenizer",
    "two-like-header",
    "two-daemon-stash",
    "two-credential-cache-store",
)
CONFIGS = (
    Config("default", None, "one_round"),
    Config("default +gap", None, "gap", ("two_page",)),
    # The mode every `make run` user gets (issue 23): one round, ~4 pages, 900 tokens.
    Config("speed", None, "one_round", mode="speed"),
)
# (configuration, kind) -> least page recall, passage recall, gold-URL recall (search), in %.
# Set from the default evidence mode (hybrid passages) on 2026-11-24, which scored 100/100/100
# (snippet), 100/100/75 (deep), 60/60/60 (two_page, one round) and 100/100/100 (gap round);
# today's one chunk per URL keeps the answer for only 2 of the 8 single-page ones. Each floor
# leaves one question of slack (4-5 per kind) for a busy machine. Deep raised to 80 when
# sqlite-compound-select joined (5 deep questions, all kept; 2026-11-24).
FLOORS = {
    ("default", "snippet"): (75, 75, 75),
    ("default", "deep"): (80, 80, 50),
    # Raised from (40, 40, 40) on 2026-11-27: both make eval runs that day (before and after the
    # support-check work) kept 4 of the 5 in balanced (the default here); one of slack.
    ("default", "two_page"): (60, 60, 40),
    ("default +gap", "two_page"): (80, 80, 80),
    # Set from `make eval --modes speed` on 2026-11-27, where this subset scored 100/100/100
    # (snippet), 100/80/80 (deep) and 60/0/60 (two_page: both pages seldom among four read);
    # before evidence went to the model best-first, structural passages and compound terms
    # it kept 3 of the 5 deep answers. One question of slack per kind, as above.
    ("speed", "snippet"): (75, 75, 75),
    ("speed", "deep"): (80, 60, 60),
    ("speed", "two_page"): (40, 0, 40),
}


@pytest.mark.timeout(600)
def test_recall_on_the_subset_stays_above_its_floors(tmp_path: Path) -> None:
    questions = [q for q in load() if q.id in SUBSET]
    assert len(questions) == len(SUBSET)
    with world(tmp_path) as w:
        outcomes = run_configs(w, questions, CONFIGS)
    assert [o for o in outcomes if o.status != "answered"] == []
    rows = table_rows(outcomes, [c.name for c in CONFIGS])
    table = format_table(rows)
    got = {(r.config, r.kind): r for r in rows}
    for key, (page, passage, gold) in FLOORS.items():
        r = got[key]
        assert r.page_recall is not None, table
        assert r.page_recall * 100 >= page, f"{key} page recall\n{table}"
        assert r.passage_recall * 100 >= passage, f"{key} passage recall\n{table}"
        assert r.gold_search * 100 >= gold, f"{key} gold-URL recall\n{table}"
