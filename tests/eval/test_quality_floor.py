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

SUBSET = (
    "sqlite-max-variable",
    "sqlite-wal-checkpoint",
    "git-credential-cache-timeout",
    "git-notes-ref",
    "sqlite-max-attached",
    "git-gc-auto",
    "sqlite-julianday-epoch",
    "git-cherry-pick-x",
    "two-fts5-rtree",
    "two-credential-cache-store",
    "two-bisect-noverify",
    "two-git-sqlite-gc-wal",
    "two-daemon-credential",
)
CONFIGS = (
    Config("default", None, "one_round"),
    Config("default +gap", None, "gap", ("two_page",)),
)
# (configuration, kind) -> least page recall, passage recall, gold-URL recall (search), in %.
FLOORS = {
    ("default", "snippet"): (100, 100, 100),
    ("default", "deep"): (100, 50, 100),
    ("default", "two_page"): (100, 40, 100),
    ("default +gap", "two_page"): (100, 40, 100),
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
