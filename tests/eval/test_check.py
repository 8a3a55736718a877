"""The checker, the metrics and the answer grading catch what they must (pure: no web, no
stack)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.eval import docweb
from bench.eval.__main__ import _record
from bench.eval.answers import answer_row, cut_off, marker_inside, verdict
from bench.eval.check import BASE, check_no_answer, check_question, corpus_texts, web_texts
from bench.eval.metrics import Outcome, row
from bench.eval.questions import Kind, Part, Question, interleave, normalise, parse_question
from bench.eval.report import fall_through, recall_table
from bench.eval.scripted import Director
from bench.eval.stored import load_run
from services.orchestrator.tests.fakes.fake_llm import FakeLLM
from services.orchestrator.tests.fakes.llm_script import Call, Say
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


async def test_relay_mode_forwards_each_call_to_the_real_server_and_records_it() -> None:
    async with FakeLLM() as upstream:
        upstream.queue("any", Say("The port is 9418 [1]."))
        director = Director(relay_url=upstream.url, relay_model="real-model")
        director.begin(TWO, "relay")
        source = "<<<BEGIN SOURCE 1 ab12>>>\nTitle: A\nURL: u\n\nport 9418\n<<<END SOURCE 1 ab12>>>"
        prompt = f"Sources, numbered 1 to 1:\n\n{source}\n\nQuestion: {TWO.question}"
        body = {"model": "fake-model", "messages": [{"role": "user", "content": prompt}]}
        reply = await director(Call("openai", body, True, None, "synthesis"))
    assert getattr(reply, "text", None) == "The port is 9418 [1]."
    sent = upstream.calls[0]
    assert sent.body["model"] == "real-model"
    assert sent.body["stream"] is False
    assert director.records[TWO.question].synthesis == ["Title: A\nURL: u\n\nport 9418"]


UN = Question("un", "unanswerable", "What is H3MaxStreams?", (), "apache", ("H3MaxStreams",))
OFF = Question("off", "offtopic", "How tall is Everest?", (), "local", ("Everest",))
DEEP = Question(
    "d", "deep", "Default timeout?", (Part(r"\b300 seconds", ("/apache/a.html",)),), "apache"
)


def test_an_unanswerable_pattern_in_any_page_is_reported() -> None:
    web = [
        Entry(f"{BASE}/apache/a.html", "A", "nothing here"),
        Entry(f"{BASE}/ffmpeg/b.html", "B", ""),
    ]
    assert check_no_answer(UN, web_texts(web), {}) == []
    web.append(Entry(f"{BASE}/ffmpeg/c.html", "H3MaxStreams", "a title is indexed too"))
    problems = check_no_answer(UN, web_texts(web), {})
    assert problems == ["un: /H3MaxStreams/ occurs in /ffmpeg/c.html"]


def test_an_off_topic_pattern_in_the_local_corpus_is_reported() -> None:
    web = web_texts([Entry(f"{BASE}/a.html", "A", "Everest is on the web: not the corpus")])
    assert check_no_answer(OFF, web, corpus_texts({"README.md": "Quarry answers"})) == []
    problems = check_no_answer(OFF, web, corpus_texts({"docs/x.md": "climbing everest"}))
    assert problems == ["off: /Everest/ occurs in docs/x.md"]


def test_a_no_answer_question_needs_its_absent_patterns() -> None:
    raw = {"id": "x", "kind": "unanswerable", "set": "apache", "question": "q?"}
    with pytest.raises(ValueError, match="absent"):
        parse_question(raw)


def _answered(q: Question, answer: str) -> Outcome:
    return Outcome(q, "llm speed", status="answered", answer=answer, duration_ms=1000.0)


def test_answers_are_graded_right_abstained_wrong_and_confidently_wrong() -> None:
    assert verdict(_answered(DEEP, "It is 300 seconds [1].")) == "right"
    assert verdict(_answered(DEEP, "The sources do not say what the timeout is.")) == "abstained"
    assert verdict(_answered(DEEP, "It is 60 seconds [2].")) == "wrong"
    assert verdict(_answered(UN, "The provided sources don't mention H3MaxStreams.")) == "right"
    assert verdict(_answered(UN, "H3MaxStreams defaults to 100 [1].")) == "wrong"
    # A quoted page saying "no default" is not the answer abstaining (embedded model, 2026-11-27).
    quoting = 'It is 1024 [1]. The source states: "If there is no default value, say None." [3]'
    assert verdict(_answered(UN, quoting)) == "wrong"
    assert verdict(_answered(UN, "None of the sources mention H3MaxStreams.")) == "right"
    # The engine's abstention over the model's unsupported answer is not a right answer, even
    # when that answer holds the fact; a right answer may still say what else is missing.
    engine = "The sources don't say. The model's answer, which no source supports: 300 seconds."
    assert verdict(_answered(DEEP, engine)) == "abstained"
    assert verdict(_answered(DEEP, "It is 300 seconds [1]. The sources don't say why.")) == "right"
    outcomes = [
        _answered(DEEP, "It is 300 seconds [1]."),
        _answered(DEEP, "I could not find this in the sources."),
        _answered(DEEP, "It is 60 seconds [2]."),
        _answered(DEEP, "Probably 60 seconds."),
    ]
    r = answer_row("llm speed", "held-out", "deep", outcomes)
    assert (r.right, r.abstained, r.wrong, r.confidently_wrong) == (0.25, 0.25, 0.5, 0.25)
    assert r.p50_s == 1.0


def test_an_answer_is_graded_by_its_says_pattern_where_the_page_pattern_fits_pages_only() -> None:
    raw = {
        "id": "packs",
        "kind": "snippet",
        "question": "What is the default value of gc.autoPackLimit?",
        "answers": ["default value is 50"],
        "says": [r"\b50\b"],
        "gold": ["/git/git-gc.html"],
    }
    q = parse_question(raw)
    answer = "The default value of gc.autoPackLimit is 50 [1]."
    assert not q.answered_by(answer)  # the page pattern, for passage recall
    assert verdict(_answered(q, answer)) == "right"
    assert verdict(_answered(q, "It is 5 [1].")) == "wrong"
    with pytest.raises(ValueError, match="says"):
        parse_question({**raw, "says": ["a", "b"]})


def test_cut_off_answers_and_markers_inside_words_or_code_are_counted() -> None:
    assert not cut_off("The default is 5 seconds [1].")
    assert not cut_off("Set it like this:\n```\nKeepAliveTimeout 5\n```")
    assert cut_off("The default is 5 seconds and the [1]")
    assert cut_off("The default value of the directive is")
    assert marker_inside("Use Keep[1]Alive to turn it on.")
    assert marker_inside("Write `KeepAliveTimeout [2] 5` in the file.")
    assert marker_inside("```\nKeepAliveTimeout 5 [1]\n```")
    assert not marker_inside("Write `KeepAliveTimeout 5` in the file [1].")


def test_the_recall_table_shows_each_set_each_role_and_the_gap() -> None:
    sqlite = Question("s", "deep", "q?", (Part("x", ("/sqlite/a.html",)),), "sqlite")
    apache = Question("a", "deep", "q?", (Part("x", ("/apache/a.html",)),), "apache")
    outcomes = [
        Outcome(sqlite, "speed", evidence="x"),
        Outcome(sqlite, "speed", evidence="x"),
        Outcome(apache, "speed", evidence="x"),
        Outcome(apache, "speed", evidence="nothing"),
    ]
    table = recall_table(outcomes, ["speed"])
    line = next(ln for ln in table.splitlines() if ln.startswith("speed"))
    assert line.split() == ["speed", "deep", "100.0/2", "50.0/2", "100.0/2", "50.0/2", "50.0"]


def test_a_stored_run_reads_back_with_its_hits(tmp_path: Path) -> None:
    hit = Outcome(DEEP, "speed", status="answered", evidence="it is 300 seconds", pages_read=1)
    miss = Outcome(DEEP, "balanced", status="answered", evidence="no", pages_read=1)
    gone = Outcome(Question("gone", "deep", "q?", (Part("x", ("/a",)),), "apache"), "speed")
    path = tmp_path / "run.json"
    run = {"commit": "abc", "date": "d", "outcomes": [_record(o) for o in (hit, miss, gone)]}
    path.write_text(json.dumps(run))
    stored = load_run(path, [DEEP])
    assert stored.dropped == 1
    assert [(o.config, o.passage_hit) for o in stored.outcomes] == [
        ("base speed", True),
        ("base balanced", False),
    ]


def test_excluded_pages_are_neither_served_nor_indexed(tmp_path: Path) -> None:
    folder = tmp_path / "manual"
    folder.mkdir()
    (folder / "ffmpeg.html").write_bytes(b"<p>one</p>")
    (folder / "ffmpeg-all.html").write_bytes(b"<p>all</p>")
    doc_set = docweb.DocSet("ffmpeg", folder, "ffmpeg-doc", "held-out", ("*-all.html",))
    assert [f.name for f in doc_set.files()] == ["ffmpeg.html"]


def test_interleaving_takes_each_set_and_kind_in_turn() -> None:
    def q(qid: str, kind: Kind, where: str) -> Question:
        return Question(qid, kind, "q?", (Part("x", (f"/{where}/a.html",)),), where)

    qs = [q("a1", "deep", "apache"), q("a2", "deep", "apache"), q("a3", "deep", "apache")]
    qs += [q("f1", "deep", "ffmpeg"), q("s1", "snippet", "apache")]
    assert [x.id for x in interleave(qs)] == ["a1", "f1", "s1", "a2", "a3"]


def test_an_off_topic_question_falls_through_only_without_local_sources() -> None:
    answered = Outcome(OFF, "speed local", status="answered", local_sources=2)
    fell = Outcome(OFF, "speed local", status="answered", local_sources=0)
    line = fall_through([answered, fell, answered])
    assert line == (
        "off-topic vs local corpus, speed local: 1/3 fell through (33.3 %); "
        "answered from local docs: 2"
    )
