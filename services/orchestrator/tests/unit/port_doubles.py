"""In-process doubles of the agent's ports (Reader, Ranker, Corpus): no gRPC server needed.

They behave like the gRPC doubles in doubles.py and corpus_doubles.py (which test the
adapters over the real wire) and are as inspectable: calls, reads in flight, cancellations.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

from orchestrator.core.ask.domain import (
    CorpusError,
    LocalPassages,
    PageRead,
    PageText,
    Passage,
    RankerUnavailable,
    ReaderUnavailable,
    SearchHit,
    SupportVerdict,
)

from services.orchestrator.tests.unit.corpus_doubles import CorpusState

_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


class PortReader:
    """Serves ``pages`` (url -> (title, markdown)); other URLs answer HTTP_ERROR."""

    def __init__(
        self, pages: dict[str, tuple[str, str]], *, delay: float = 0.0, up: bool = True
    ) -> None:
        self.pages = pages
        self.delay = delay
        self.up = up
        self.calls: list[str] = []
        self.inflight = 0
        self.cancelled = 0

    async def read(self, url: str, *, timeout: float) -> PageRead:
        if not self.up:
            raise ReaderUnavailable("UNAVAILABLE")
        self.calls.append(url)
        self.inflight += 1
        try:
            async with asyncio.timeout(timeout):
                await asyncio.sleep(self.delay)
        except TimeoutError:
            return PageRead(url, "TIMEOUT")
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.inflight -= 1
        if url not in self.pages:
            return PageRead(url, "HTTP_ERROR")
        title, markdown = self.pages[url]
        status = "OK" if markdown else "EMPTY"
        return PageRead(url, status, title=title, markdown=markdown, final_url=url)


class PortRanker:
    """Ranks by query-word overlap (ties: engine order); one leading passage per page."""

    def __init__(self, *, up: bool = True) -> None:
        self.up = up
        self.calls: list[str] = []
        self.corpus = CorpusState()
        # (queries, budget_tokens) of each rank_passages call.
        self.passage_calls: list[tuple[list[str], int]] = []
        # URLs given to prepare_passages, in call order.
        self.prepared: list[str] = []
        # CheckSupport: the (score, label) verdicts to give (None: the model is not loaded)
        # and the claims of each call.
        self.verdicts: list[tuple[float, str]] | None = None
        self.support_claims: list[list[tuple[str, list[str]]]] = []

    def _check_up(self) -> None:
        if not self.up:
            raise RankerUnavailable("UNAVAILABLE")

    async def rank_results(
        self, query: str, hits: Sequence[SearchHit], *, top_k: int, timeout: float
    ) -> list[SearchHit]:
        self._check_up()
        self.calls.append("RankResults")
        q = _words(query)
        ranked = sorted(
            hits,
            key=lambda h: (-len(q & _words(h.title + " " + h.snippet)), h.engine_rank),
        )
        return ranked[:top_k] if top_k else ranked

    async def prepare_passages(
        self,
        queries: Sequence[str],
        pages: Sequence[PageText],
        *,
        passage_words: int,
        timeout: float,
    ) -> None:
        self._check_up()
        self.prepared.extend(p.url for p in pages)

    async def rank_chunks(
        self, query: str, pages: Sequence[PageText], *, top_k: int, timeout: float
    ) -> list[Passage]:
        self._check_up()
        self.calls.append("RankChunks")
        q = _words(query)
        ordered = sorted(pages, key=lambda p: -len(q & _words(p.markdown)))
        return [Passage(p.url, p.title, p.markdown[:1000], 1.0) for p in ordered[:top_k]]

    async def rank_passages(
        self,
        queries: Sequence[str],
        pages: Sequence[PageText],
        *,
        budget_tokens: int,
        passage_words: int,
        timeout: float,
    ) -> list[Passage]:
        """Each page's opening as one passage, pages by overlap with all the queries."""
        self._check_up()
        self.calls.append("RankPassages")
        self.passage_calls.append((list(queries), budget_tokens))
        q = _words(" ".join(queries))
        ordered = sorted(pages, key=lambda p: -len(q & _words(p.markdown)))
        return [Passage(p.url, p.title, p.markdown[:1000], 1.0) for p in ordered]

    async def check_support(
        self, claims: Sequence[tuple[str, Sequence[str]]], *, timeout: float
    ) -> list[SupportVerdict]:
        """The scripted ``verdicts`` in order; with none, UNAVAILABLE (no model loaded, as a
        ranker without dense vectors answers)."""
        self._check_up()
        self.calls.append("CheckSupport")
        self.support_claims.append([(s, list(p)) for s, p in claims])
        if self.verdicts is None:
            raise RankerUnavailable("UNAVAILABLE")
        return [SupportVerdict(score, label) for score, label in self.verdicts[: len(claims)]]


class PortCorpus:
    """The local documents of ``state`` (committed ones only), as the corpus port: passages
    are a document's paragraphs, ranked by words shared with any query (like the gRPC double)."""

    def __init__(self, state: CorpusState, *, up: bool = True) -> None:
        self.state = state
        self.up = up

    async def search_passages(
        self,
        queries: Sequence[str],
        *,
        top_k: int,
        timeout: float,
        max_per_document: int = 3,
        id_prefix: str = "",
        id_prefixes: Sequence[str] = (),
    ) -> LocalPassages:
        if not self.up:
            raise CorpusError("UNAVAILABLE", "SearchPassages failed: UNAVAILABLE")
        self.state.calls.append("SearchPassages")
        self.state.passage_searches.append(list(queries))
        out = [
            Passage(doc_id, title, text, float(n), i)
            for n, doc_id, i, title, text in self.state.paragraphs(
                queries, max_per_document, id_prefix
            )
            if not id_prefixes or doc_id.startswith(tuple(id_prefixes))
        ]
        return LocalPassages(out[:top_k], "bm25")
