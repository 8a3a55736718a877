"""RankPassages: the evidence for a question, chosen within a token budget; pure (no I/O).

Pages are split into sentence-aware passages of about ``passage_words`` words
(:func:`quarry_text.chunking.chunk_page`: paragraphs packed greedily, long ones split at sentence
ends, headings kept with their text). Every query (the question, its rewrite, gap queries)
ranks the passages twice: BM25 over the call's passages, and, when vectors are available,
cosine similarity over every passage or, past ``2 * dense_candidates`` passages, over a
shortlist: each query's BM25 top ``dense_candidates`` (embedding costs ~0.5 ms per token on
one idle core, several times that on a busy one, so embedding all ~200 passages of ten
pages would take seconds; vectors are cached by text, so a passage is embedded once across
rounds and questions, and dense reorders and fills in what BM25 half-found). New vectors
are computed for at most ``dense_seconds`` per call. The lists are fused by reciprocal rank
fusion.

Selection walks the fused order: at most ``max_per_page`` passages per page (a dominant page
gives several; a caller that sets no cap gets :func:`default_per_page`, which grows with the
budget), a passage too close to one already chosen (cosine >= ``dup_cosine``, or the
same tokens) is skipped, and a strong passage brings its successor when that one completes
it (the strong one ends mid-thought, or is a heading and a line), until the budget of
estimated tokens is spent.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt
from quarry_embed.batches import batches
from quarry_text.analyzer import Analyzer
from quarry_text.bm25 import scores_from_counts
from quarry_text.chunking import Chunk, Page, chunk_page, dedupe_chunks
from quarry_text.rrf import fuse
from quarry_text.termcounts import term_counts

Vectors = npt.NDArray[np.float32]
CHARS_PER_TOKEN = 4
# Passages this strong (fused-order position) may pull in their successor.
STRONG = 3
# A page's default cap: MIN_PER_PAGE passages, or one per PAGE_SHARE_TOKENS of budget when
# that is more (see default_per_page).
MIN_PER_PAGE = 4
PAGE_SHARE_TOKENS = 400
# Passages embedded per step of the time-bounded dense pass.
DENSE_BATCH = 4
# (texts, fused order) -> the fused order to select from.
Reorder = Callable[[Sequence[str], list[tuple[int, float]]], list[tuple[int, float]]]
_ENDS_THOUGHT = (".", "!", "?", "…", '"', "”", ")", "`")


class Embeds(Protocol):
    """Vectors for texts (quarry_embed.CachedEmbedder fits)."""

    def embed(self, texts: Sequence[str]) -> Vectors:
        """L2-normalised rows, one per text."""
        ...


@dataclass(frozen=True)
class PassageParams:
    """Knobs of one RankPassages call (defaults from the contract)."""

    budget_tokens: int = 3000
    passage_words: int = 120
    max_per_page: int = 4
    dense: bool = True
    dense_candidates: int = 8
    dense_seconds: float = 1.0
    rrf_k: int = 60
    dup_cosine: float = 0.95


@dataclass(frozen=True)
class PreparedPage:
    """A page split into passages (what the ranker caches by url and content hash)."""

    url: str
    title: str
    passages: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Chosen:
    """A passage picked as evidence."""

    url: str
    title: str
    text: str
    score: float
    index: int
    tokens: int


@dataclass(frozen=True)
class Ranked:
    """The outcome of one call."""

    passages: list[Chosen]
    total: int
    dense: bool


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` for budgeting: characters / 4, the usual figure for English."""
    return max(1, -(-len(text) // CHARS_PER_TOKEN))


def default_per_page(budget_tokens: int) -> int:
    """A page's cap on passages when the caller sets none: 4, or one per 400 tokens of budget.

    A fixed 4 fitted a small budget (~900 tokens holds ~5 passages) but not a large one: with
    ~5,000 tokens (~30 passages) a long reference page that held the answer in its fifth-best
    passage (zsh's option list, Postfix's postconf.5) was cut after four, and the budget went
    to other pages' weak passages instead (tuning sets, `balanced`)."""
    return max(MIN_PER_PAGE, budget_tokens // PAGE_SHARE_TOKENS)


def prepare_page(url: str, title: str, markdown: str, passage_words: int) -> PreparedPage:
    """Split a page into passages of about ``passage_words`` words."""
    chunks = chunk_page(Page(url, title, markdown), passage_words)
    return PreparedPage(url, title, tuple(c.text for c in chunks))


def _bm25_lists(
    analyzer: Analyzer, queries: Sequence[str], texts: Sequence[str]
) -> tuple[list[list[int]], list[bytes]]:
    """Per query, the indices of texts matching it, best first; and near-duplicate keys."""
    per_query = [analyzer.query_terms(q) for q in queries]
    vocab = list(dict.fromkeys(t for terms in per_query for t in terms))
    counts, keys = term_counts(analyzer, vocab, texts)
    lists: list[list[int]] = []
    for terms in per_query:
        if not terms:
            lists.append([])
            continue
        cols = [vocab.index(t) for t in dict.fromkeys(terms)] + [len(vocab)]
        scores = scores_from_counts(counts[:, cols])
        order = sorted(range(len(texts)), key=lambda i: -scores[i])
        lists.append([i for i in order if scores[i] > 0])
    return lists, keys


def _dense_lists(
    embedder: Embeds,
    queries: Sequence[str],
    texts: Sequence[str],
    shortlist: list[int],
    seconds: float,
) -> tuple[list[list[int]], dict[int, Vectors]]:
    """Per query, the shortlisted indices by cosine similarity; and their vectors.

    The shortlist is embedded in batches, best candidates first, until ``seconds`` have
    passed (a busy machine must not push the call past its caller's deadline); passages
    left over take part through BM25 only. Cached vectors cost next to nothing.
    """
    if not shortlist:
        return [], {}
    deadline = time.monotonic() + seconds
    q_vectors = embedder.embed(list(queries))
    done = [
        embedder.embed(batch)
        for batch in batches(
            [texts[i] for i in shortlist], DENSE_BATCH, until=deadline, first_free=True
        )
    ]
    p_vectors = np.concatenate(done)
    shortlist = shortlist[: len(p_vectors)]
    sims = q_vectors @ p_vectors.T
    lists = [[shortlist[j] for j in np.argsort(-row, kind="stable")] for row in sims]
    return lists, {i: p_vectors[j] for j, i in enumerate(shortlist)}


def prepare_candidates(
    analyzer: Analyzer, queries: Sequence[str], page: PreparedPage, per_page: int
) -> list[str]:
    """The passages of one page that RankPassages will most likely shortlist for ``queries``:
    each query's BM25 top ``per_page`` on this page (a passage among a query's best over
    all pages is among its best on its own page), best first, deduplicated."""
    lists, _ = _bm25_lists(analyzer, queries, page.passages)
    firsts = [order[:per_page] for order in lists]
    picked: dict[int, None] = {}
    for rank in range(per_page):  # round robin: every query's best before anyone's second
        for order in firsts:
            if rank < len(order):
                picked.setdefault(order[rank], None)
    return [page.passages[i] for i in picked]


def embed_in_batches(
    embedder: Embeds, texts: Sequence[str], *, until: float, stop: Callable[[], bool]
) -> int:
    """Embed ``texts`` (the cache keeps the vectors) in small batches until done, ``until``
    (monotonic) passes or ``stop()`` says so; returns how many were embedded."""
    done = 0
    for batch in batches(texts, DENSE_BATCH, until=until, stop=stop):
        embedder.embed(batch)
        done += len(batch)
    return done


def _completes(strong: str, passage_words: int) -> bool:
    """Whether a strong passage's successor completes it: the passage stops mid-thought
    (a colon, no closing punctuation) or is a heading with a line or two under it."""
    end = strong.rstrip()
    if end.endswith(":") or not end.endswith(_ENDS_THOUGHT):
        return True
    return strong.startswith("#") and len(strong.split()) < passage_words // 3


class _Picker:
    """The budgeted walk over the fused order."""

    def __init__(
        self, chunks: list[Chunk], vectors: dict[int, Vectors], params: PassageParams
    ) -> None:
        self.chunks = chunks
        self.vectors = vectors
        self.params = params
        self.left = params.budget_tokens
        self.per_page: dict[str, int] = {}
        self.chosen: dict[int, float] = {}

    def near_duplicate(self, i: int) -> bool:
        v = self.vectors.get(i)
        if v is None:
            return False
        limit = self.params.dup_cosine
        return any(
            (w := self.vectors.get(j)) is not None and float(v @ w) >= limit for j in self.chosen
        )

    def take(self, i: int, score: float) -> bool:
        chunk = self.chunks[i]
        cost = estimate_tokens(chunk.text)
        if i in self.chosen or cost > self.left:
            return False
        if self.per_page.get(chunk.url, 0) >= self.params.max_per_page:
            return False
        if self.near_duplicate(i):
            return False
        self.chosen[i] = score
        self.left -= cost
        self.per_page[chunk.url] = self.per_page.get(chunk.url, 0) + 1
        return True


def _select(
    chunks: list[Chunk],
    fused: list[tuple[int, float]],
    vectors: dict[int, Vectors],
    params: PassageParams,
) -> dict[int, float]:
    picker = _Picker(chunks, vectors, params)
    # Neighbours are looked up by (url, index), since duplicates were dropped.
    position = {(c.url, c.index): i for i, c in enumerate(chunks)}
    for r, (i, score) in enumerate(fused):
        if picker.left < 16:
            break
        if not picker.take(i, score) or r >= STRONG:
            continue
        c = chunks[i]
        nxt = position.get((c.url, c.index + 1))
        if nxt is not None and _completes(c.text, params.passage_words):
            picker.take(nxt, score * 0.99)
    return picker.chosen


def rank_passages(
    analyzer: Analyzer,
    queries: Sequence[str],
    pages: Sequence[PreparedPage],
    params: PassageParams | None = None,
    embedder: Embeds | None = None,
    reorder: Reorder | None = None,
) -> Ranked:
    """Choose passages of ``pages`` for ``queries`` within the token budget, best first;
    ``reorder`` (the rerank step, ranker.rerank) may reorder the fused list before selection."""
    p = params or PassageParams()
    produced = [
        Chunk(page.url, page.title, text, index)
        for page in pages
        for index, text in enumerate(page.passages)
    ]
    texts = [c.text for c in produced]
    lists, keys = _bm25_lists(analyzer, queries, texts)
    kept = set(dedupe_chunks(produced, keys))
    lists = [[i for i in order if i in kept] for order in lists]
    dense = bool(p.dense and embedder is not None and kept)
    vectors: dict[int, Vectors] = {}
    if dense and embedder is not None:
        shortlist = sorted(kept)
        if len(shortlist) > 2 * p.dense_candidates:
            top = [i for order in lists for i in order[: p.dense_candidates]]
            shortlist = list(dict.fromkeys(top))
        dense_lists, vectors = _dense_lists(embedder, queries, texts, shortlist, p.dense_seconds)
        lists += dense_lists
    fused = fuse(lists, p.rrf_k) if any(lists) else []
    if fused and reorder is not None:
        fused = reorder(texts, fused)
    if not fused:  # nothing matched: the pages' openings, in page order
        fused = [(i, 0.0) for i, c in enumerate(produced) if i in kept]
    chosen = _select(produced, fused, vectors, p)
    out = [
        Chosen(c.url, c.title, c.text, score, c.index, estimate_tokens(c.text))
        for i, score in sorted(chosen.items(), key=lambda kv: -kv[1])
        for c in (produced[i],)
    ]
    return Ranked(out, len(kept), dense)
