"""Proves the question set against the doc web (run by `make test` and `make eval`).

For every question: every answer pattern occurs in each of its gold pages as the reader service
extracts them (its own Trafilatura code, reader.extract); `snippet` questions show their answer
in the search engine's snippet of a gold page for the question itself, `deep` ones do not; and
no single page of the web holds every part of a `two_page` question (checked on the indexed
whole-page text of all pages, a superset of what the reader extracts, and on the reader's text
of the gold pages). Questions without an answer are proven absent: no `absent` pattern of an
unanswerable question occurs in any page of the web (the indexed whole-page text), and none of
an off-topic one in the local corpus (Quarry's README.md and docs/, as `make run` stages them).

    python -m bench.eval.check
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from reader.extract import Job, extract
from reader.model import Kind

from bench.eval import docweb
from bench.eval.questions import KINDS, NO_ANSWER, Question, load, normalise
from tests.offline.searx import Entry, build_index, search_index

# Stands in for the served web's address: the checks look at paths only.
BASE = "http://127.0.0.1:1"


def reader_text(file: Path) -> str:
    """A page's main text as the reader service extracts it."""
    job = Job(file.read_bytes(), Kind.HTML, url=BASE + "/" + file.name)
    return extract(job).markdown


def reader_texts(paths: Sequence[str], workers: int = 2) -> dict[str, str]:
    """The reader's text of each page path (CPU-bound: spread over worker processes)."""
    files = {p.path: p.file for p in docweb.pages()}
    wanted = [p for p in dict.fromkeys(paths) if p in files]
    with ProcessPoolExecutor(workers) as pool:
        texts = pool.map(reader_text, [files[p] for p in wanted])
        return dict(zip(wanted, texts, strict=True))


def corpus_texts(texts: Mapping[str, str]) -> dict[str, str]:
    """``texts`` normalised once, for checking many no-answer questions against them."""
    return {path: normalise(text) for path, text in texts.items()}


def web_texts(web: Sequence[Entry]) -> dict[str, str]:
    """Each indexed page's title and whole text by path, normalised."""
    return corpus_texts({e.url.removeprefix(BASE): f"{e.title}\n{e.body}" for e in web})


def check_no_answer(q: Question, web: Mapping[str, str], local: Mapping[str, str]) -> list[str]:
    """What is wrong with an unanswerable or off-topic question: an ``absent`` pattern that
    occurs in its corpus (the doc web, or the local corpus for off-topic ones; both by path,
    normalised: web_texts, corpus_texts)."""
    problems = []
    if q.kind == "unanswerable" and q.set not in docweb.BY_NAME:
        problems.append(f"set {q.set!r} is not a doc set")
    texts = web if q.kind == "unanswerable" else local
    for path, text in texts.items():
        problems += [f"/{a}/ occurs in {path}" for a in q.present_in(text, normalised=True)]
    return [f"{q.id}: {p}" for p in problems]


def check_question(
    q: Question, gold_text: Mapping[str, str], index: Sequence[Entry], db: Path
) -> list[str]:
    """What is wrong with an answerable ``q`` (empty when it holds)."""
    problems = []
    for part in q.parts:
        for path in part.gold:
            if path not in gold_text:
                problems.append(f"gold page {path} is not in the web")
            elif not part.found_in(gold_text[path]):
                problems.append(f"/{part.answer}/ is not in the reader's text of {path}")
    shown = [h for h in search_index(db, q.question) if h.url.removeprefix(BASE) in q.gold]
    in_snippet = any(q.answered_by(h.content) for h in shown)
    if q.kind == "snippet" and not in_snippet:
        problems.append("no gold page's snippet for the question shows the answer")
    if q.kind == "deep" and in_snippet:
        problems.append("a gold page's snippet shows the answer: kind should be snippet")
    if q.kind == "two_page":
        if len(q.parts) < 2:
            problems.append("a two_page question needs two parts")
        whole = [e.url.removeprefix(BASE) for e in index if q.answered_by(e.body)]
        whole += [p for p, text in gold_text.items() if p in q.gold and q.answered_by(text)]
        if whole:
            problems.append(f"one page answers every part: {sorted(set(whole))}")
        if any(not p.gap_query for p in q.parts):
            problems.append("every part of a two_page question needs a gap_query")
    return [f"{q.id}: {p}" for p in problems]


def check_all(questions: Sequence[Question]) -> list[str]:
    """Every problem of the question set, in question order."""
    index = docweb.entries(BASE)
    gold_text = reader_texts([g for q in questions for g in q.gold])
    no_answer = [q for q in questions if not q.answerable]
    web = web_texts(index) if no_answer else {}
    local = corpus_texts(docweb.local_corpus()) if no_answer else {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "pages.db"
        build_index(db, index)
        return [
            p
            for q in questions
            for p in (
                check_question(q, gold_text, index, db)
                if q.answerable
                else check_no_answer(q, web, local)
            )
        ]


def main() -> None:
    """Check the whole set; exit 1 listing the problems."""
    reason = docweb.docs_available()
    if reason:
        sys.exit(reason)
    questions = load()
    problems = check_all(questions)
    for problem in problems:
        print(problem)
    kinds = {k: sum(q.kind == k for q in questions) for k in (*KINDS, *NO_ANSWER)}
    print(f"{len(questions)} questions {kinds}: {len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
