"""Passage recall of RankPassages with and without the rerank step, offline and in seconds.

For each single-page question of the tuning set (bench/eval/questions.yaml: SQLite and Git
only -- held-out sets are never read here), the pages are what the offline search engine
returns for the question (top ``--pages``) plus its gold pages, as the reader extracts them;
RankPassages' pure core picks passages within the default budget. A question counts when a
chosen passage holds every answer pattern. Prints recall per kind, off vs on, and the mean
position of the first answering passage.

    python bench/rerank/tune_rerank.py [--pages 8] [--candidates 20] [--weight 2] [--k 10]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from quarry_embed import CachedEmbedder, Embedder  # noqa: E402
from quarry_rerank import Reranker  # noqa: E402
from quarry_text.analyzer import Analyzer, AnalyzerConfig  # noqa: E402
from ranker.passages import PassageParams, PreparedPage, prepare_page, rank_passages  # noqa: E402
from ranker.rerank import RerankParams, rerank  # noqa: E402

from bench.eval import docweb  # noqa: E402
from bench.eval.check import BASE, reader_texts  # noqa: E402
from bench.eval.questions import Question, load, normalise  # noqa: E402
from tests.offline.searx import build_index, search_index  # noqa: E402


def _answers(q: Question, text: str) -> bool:
    return all(re.search(p.answer, normalise(text), re.IGNORECASE) for p in q.parts)


def _setup(n_pages: int) -> tuple[list[Question], dict[str, list[str]], dict[str, str]]:
    questions = [q for q in load() if q.kind in ("snippet", "deep")]
    index = docweb.entries(BASE)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "pages.db"
        build_index(db, index)
        read = {
            q.id: list(
                dict.fromkeys(
                    [h.url.removeprefix(BASE) for h in search_index(db, q.question)][:n_pages]
                    + list(q.gold)
                )
            )
            for q in questions
        }
    cache = Path(tempfile.gettempdir()) / "quarry-tune-rerank-texts.json"
    texts: dict[str, str] = json.loads(cache.read_text()) if cache.exists() else {}
    todo = [p for paths in read.values() for p in paths if p not in texts]
    if todo:  # the reader's extraction is the slow part: keep it between runs
        texts |= reader_texts(todo)
        cache.write_text(json.dumps(texts))
    return questions, read, texts


def main() -> None:
    """Run both orders over the tuning questions and print the comparison."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=8)
    ap.add_argument("--candidates", type=int, default=20)
    ap.add_argument("--weight", type=float, default=2.0)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--passage-weight", type=float, default=0.3)
    ap.add_argument("--budget", type=int, default=3000)
    ap.add_argument(
        "--variants",
        default="",
        help="extra on-variants as weight/k/passage_weight triples, e.g. 1000/10/0,2/10/0",
    )
    args = ap.parse_args()
    questions, read, texts = _setup(args.pages)
    analyzer = Analyzer(AnalyzerConfig())
    embedder = CachedEmbedder(Embedder.load(threads=1, batch_size=4))
    variants = {"on": (args.weight, args.k, args.passage_weight)}
    for v in filter(None, args.variants.split(",")):
        w, k, pw = v.split("/")
        variants[v] = (float(w), int(k), float(pw))
    params = PassageParams(dense_seconds=600, budget_tokens=args.budget)
    results: dict[str, dict[str, list[float]]] = {name: {} for name in ["off", *variants]}
    for q in questions:
        pages = [
            prepare_page(BASE + p, p, texts[p], params.passage_words)
            for p in read[q.id]
            if p in texts
        ]
        reorders: dict[str, Callable[..., list[tuple[int, float]]] | None] = {"off": None}
        for name, (w, k, pw) in variants.items():
            rp = RerankParams(candidates=args.candidates, seconds=600, weight=w, rrf_k=k)
            scorer = Reranker(embedder, passage_weight=pw)
            reorders[name] = lambda t, f, q=q, s=scorer, rp=rp: (
                rerank(s, [q.question], t, f, rp).fused
            )
        for name, reorder in reorders.items():
            ranked = rank_passages(analyzer, [q.question], _pp(pages), params, embedder, reorder)
            hits = [i for i, c in enumerate(ranked.passages) if _answers(q, c.text)]
            results[name].setdefault(q.kind, []).append(float(hits[0]) if hits else -1.0)
    for kind in ("snippet", "deep"):
        for name in results:
            pos = results[name].get(kind, [])
            found = [p for p in pos if p >= 0]
            print(
                f"{kind:8} {name:12} recall {len(found)}/{len(pos)} = {len(found) / len(pos):.2f}"
                f"  mean first position {statistics.mean(found) if found else -1:.2f}"
                f"  top-1 {sum(p < 1 for p in found)}  top-3 {sum(p < 3 for p in found)}"
            )


def _pp(pages: list[PreparedPage]) -> list[PreparedPage]:
    return pages


if __name__ == "__main__":
    main()
