"""The checker and the metrics catch what they must (pure: no web, no stack)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.eval.check import BASE, check_question
from bench.eval.metrics import Outcome, row
from bench.eval.questions import Part, Question, normalise
from bench.eval.scripted import Director
from services.orchestrator.tests.fakes.llm_script import Call
from tests.offline.searx import Entry, build_index
from tests.offline.web import directory_route

TWO = Question(
    "two",
    "two_page",
    "What is the port and the timeout?",
    (Part(r"\b9418\b", ("/a.html",), "port"), Part(r"\b900\b", ("/b.html",), "timeout")),
)


def test_markdown_escapes_do_not_hide_an_answer() -> None:
    q = Question("q", "deep", "Which table?", (Part("sqlite_sequence", ("/a.html",)),))
    assert normalise(r"the \`sqlite\_sequence\` table") == "the sqlite_sequence table"
    assert q.answered_by(r"named sqlite\_sequence here")
    assert not q.answered_by("named sqlite sequence here")


def test_a_two_page_question_answered_by_one_page_is_rejected(tmp_path: Path) -> None:
    index = [
        Entry(f"{BASE}/a.html", "A", "listens on 9418 and waits 900 seconds"),
        Entry(f"{BASE}/b.html", "B", "the timeout is 900 seconds"),
    ]
    db = tmp_path / "pages.db"
    build_index(db, index)
    gold = {"/a.html": "listens on 9418", "/b.html": "timeout is 900 seconds"}
    problems = check_question(TWO, gold, index, db)
    assert problems == ["two: one page answers every part: ['/a.html']"]


def test_a_pattern_missing_from_its_gold_page_is_reported(tmp_path: Path) -> None:
    index = [Entry(f"{BASE}/a.html", "A", "port 9418"), Entry(f"{BASE}/b.html", "B", "x")]
    db = tmp_path / "pages.db"
    build_index(db, index)
    problems = check_question(TWO, {"/a.html": "port 9418", "/b.html": "nothing"}, index, db)
    assert problems == ["two: /\\b900\\b/ is not in the reader's text of /b.html"]


def test_recall_counts_all_parts_and_retention_divides() -> None:
    full = Outcome(TWO, "c", page_text="9418 ... 900", evidence="9418 and 900", pages_read=2)
    half = Outcome(TWO, "c", page_text="9418 ... 900", evidence="only 9418", pages_read=2)
    r = row("c", "two_page", [full, half])
    assert (r.page_recall, r.passage_recall, r.retention) == (1.0, 0.5, 0.5)


def _judge_call(question: str, sources: str) -> Call:
    prompt = f"The sources are passages read from web pages.\n\n{sources}\n\nQuestion: {question}"
    body = {"messages": [{"role": "user", "content": prompt}]}
    schema: dict[str, Any] = {"properties": {"sufficiency": {}, "gap_queries": {}}}
    return Call("openai", body, False, schema, "judge")


async def test_the_gap_judge_asks_only_for_the_missing_part() -> None:
    director = Director()
    director.begin(TWO, "gap")
    source = "<<<BEGIN SOURCE 1 ab12>>>\nTitle: A\nURL: u\n\nport 9418\n<<<END SOURCE 1 ab12>>>"
    first = await director(_judge_call(TWO.question, source))
    second = await director(_judge_call(TWO.question, source))
    assert '"partial"' in getattr(first, "text", "")
    assert '["timeout"]' in getattr(first, "text", "")
    assert '"sufficient"' in getattr(second, "text", "")


def test_the_doc_route_serves_top_level_html_only(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.html").write_bytes(b"<p>a</p>")
    (tmp_path / "secret.html").write_bytes(b"no")
    route = directory_route({"d": docs})
    assert route("/d/a.html") == b"<p>a</p>"
    for path in ("/d/../secret.html", "/d/missing.html", "/x/a.html", "/d/", "/d/a.txt"):
        assert route(path) is None, path
