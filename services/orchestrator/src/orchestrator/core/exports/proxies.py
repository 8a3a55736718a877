"""The recording proxies: a research run's collaborators (the research LLM calls, the Brain,
the searcher, reader, ranker and corpus), each call recorded in the run's ``Recorder``
(``recorder.py``) and passed on unchanged. Nothing here sees a header, a key or a token."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from orchestrator.core.ask.domain import (
    Evidence,
    LocalPassages,
    PageRead,
    PageText,
    Passage,
    SearchHit,
    SearchResponse,
    SupportVerdict,
)
from orchestrator.core.ask.ports import Brain, Checked, Corpus, Decision, Ranker, Reader, Searcher
from orchestrator.core.ask.state import Deps
from orchestrator.core.exports.recorder import Recorder, sha256
from orchestrator.core.llm import Message
from orchestrator.core.research.context import ResearchLLM
from orchestrator.core.schemas import Judgement, Plan
from orchestrator.core.sessions import Turn

M = TypeVar("M", bound=BaseModel)
# A page's extracted text is kept up to this much (the reader caps pages at 2 MiB).
PAGE_CHARS = 100_000


def _hit(h: SearchHit) -> dict[str, Any]:
    return dataclasses.asdict(h)


def _passage(p: Passage) -> dict[str, Any]:
    return {"url": p.url, "title": p.title, "index": p.index, "score": p.score, "text": p.text}


def _evidence(e: Evidence) -> dict[str, Any]:
    return {"url": e.url, "title": e.title, "kind": e.kind, "passages": list(e.parts)}


class RecordingLLM:
    """The research LLM calls (scope, compress, evaluate, report sections), recorded."""

    def __init__(self, inner: ResearchLLM, rec: Recorder) -> None:
        self._inner = inner
        self._rec = rec

    async def structured(
        self, messages: list[Message], model_cls: type[M], default: M, *, timeout: float
    ) -> Decision[M]:
        """See ResearchLLM.structured."""
        try:
            decision = await self._inner.structured(messages, model_cls, default, timeout=timeout)
        except Exception as err:
            self._rec.add("llm.structured", schema=model_cls.__name__, messages=messages,
                          error=str(err))  # fmt: skip
            raise
        self._rec.add(
            "llm.structured",
            schema=model_cls.__name__,
            messages=messages,
            output=decision.value.model_dump(mode="json"),
            used_default=decision.used_default,
            attempts=decision.attempts,
        )
        return decision

    async def stream(self, messages: list[Message], *, timeout: float) -> AsyncIterator[str]:
        """See ResearchLLM.stream (the whole output recorded when the stream ends)."""
        parts: list[str] = []
        error: str | None = None
        stream = self._inner.stream(messages, timeout=timeout)
        try:
            async for delta in stream:
                parts.append(delta)
                yield delta
        except Exception as err:
            error = str(err)
            raise
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
            extra = {} if error is None else {"error": error}
            self._rec.add("llm.stream", messages=messages, output="".join(parts), **extra)


class RecordingBrain:
    """The agent steps' Brain calls a research run makes (judge, plan, answer), recorded."""

    def __init__(self, inner: Brain, rec: Recorder) -> None:
        self._inner = inner
        self._rec = rec

    @property
    def llm_url(self) -> str:
        """See Brain.llm_url."""
        return self._inner.llm_url

    async def plan(
        self, question: str, history: Sequence[Turn], *, timeout: float
    ) -> Decision[Plan]:
        """See Brain.plan."""
        decision = await self._inner.plan(question, history, timeout=timeout)
        self._rec.add("plan", question=question, output=decision.value.model_dump(mode="json"))
        return decision

    async def judge(
        self,
        question: str,
        evidence: Sequence[Evidence],
        *,
        stage: Literal["snippets", "chunks"],
        timeout: float,
        boundary: str | None = None,
    ) -> Decision[Judgement]:
        """See Brain.judge (the evidence judged and the verdict recorded)."""
        decision = await self._inner.judge(
            question, evidence, stage=stage, timeout=timeout, boundary=boundary
        )
        self._rec.add(
            "judge",
            question=question,
            stage=stage,
            evidence=[_evidence(e) for e in evidence],
            verdict=decision.value.model_dump(mode="json"),
            used_default=decision.used_default,
        )
        return decision

    async def answer(
        self,
        question: str,
        sources: Sequence[Evidence],
        history: Sequence[Turn],
        *,
        timeout: float,
        boundary: str | None = None,
        detail: str | None = None,
    ) -> AsyncIterator[str]:
        """See Brain.answer."""
        parts: list[str] = []
        try:
            async for delta in self._inner.answer(
                question, sources, history, timeout=timeout, boundary=boundary, detail=detail
            ):
                parts.append(str(delta))
                yield delta
        finally:
            self._rec.add("answer", question=question, output="".join(parts),
                          sources=[_evidence(e) for e in sources])  # fmt: skip

    def converse(
        self,
        question: str,
        history: Sequence[Turn],
        *,
        purpose: Literal["unsourced", "conversation"],
        timeout: float,
    ) -> AsyncIterator[str]:
        """See Brain.converse (not recorded: research never converses)."""
        return self._inner.converse(question, history, purpose=purpose, timeout=timeout)

    def check(self, answer: str, sources: Sequence[Evidence]) -> Checked:
        """See Brain.check."""
        return self._inner.check(answer, sources)


class RecordingSearcher:
    """Searches and their results, recorded."""

    def __init__(self, inner: Searcher, rec: Recorder) -> None:
        self._inner = inner
        self._rec = rec

    async def search(
        self,
        query: str,
        *,
        categories: str | None = None,
        language: str | None = None,
        time_range: str | None = None,
        engines: Sequence[str] | None = None,
        pageno: int = 1,
        cache: bool = True,
    ) -> SearchResponse:
        """See Searcher.search."""
        params: dict[str, Any] = {
            "categories": categories,
            "language": language,
            "time_range": time_range,
            "engines": list(engines) if engines is not None else None,
            "pageno": pageno,
        }
        try:
            reply = await self._inner.search(
                query,
                categories=categories,
                language=language,
                time_range=time_range,
                engines=engines,
                pageno=pageno,
                cache=cache,
            )
        except Exception as err:
            self._rec.add("search", query=query, params=params, error=str(err))
            raise
        self._rec.add(
            "search",
            query=query,
            params=params,
            backend=reply.backend,
            cached=reply.cached,
            results=[_hit(h) for h in reply.hits],
        )
        return reply


class RecordingReader:
    """Pages read: URL, final URL, status, content hash and extracted text, recorded."""

    def __init__(self, inner: Reader, rec: Recorder) -> None:
        self._inner = inner
        self._rec = rec

    async def read(self, url: str, *, timeout: float) -> PageRead:
        """See Reader.read."""
        page = await self._inner.read(url, timeout=timeout)
        self._rec.add(
            "read",
            url=url,
            final_url=page.final_url or url,
            status=page.status,
            title=page.title,
            sha256=sha256(page.markdown),
            chars=len(page.markdown),
            text=page.markdown[:PAGE_CHARS],
            cached=page.cached,
            error=page.error,
        )
        return page


class RecordingRanker:
    """Rankings (result order, passages chosen and their scores), recorded."""

    def __init__(self, inner: Ranker, rec: Recorder) -> None:
        self._inner = inner
        self._rec = rec

    async def rank_results(
        self, query: str, hits: Sequence[SearchHit], *, top_k: int, timeout: float
    ) -> list[SearchHit]:
        """See Ranker.rank_results."""
        ranked = await self._inner.rank_results(query, hits, top_k=top_k, timeout=timeout)
        self._rec.add("rank.results", query=query, urls=[h.url for h in ranked])
        return ranked

    async def rank_passages(
        self,
        queries: Sequence[str],
        pages: Sequence[PageText],
        *,
        budget_tokens: int,
        passage_words: int,
        timeout: float,
    ) -> list[Passage]:
        """See Ranker.rank_passages."""
        out = await self._inner.rank_passages(
            queries, pages, budget_tokens=budget_tokens, passage_words=passage_words,
            timeout=timeout,
        )  # fmt: skip
        self._rec.add("rank.passages", queries=list(queries), passages=[_passage(p) for p in out])
        return out

    async def prepare_passages(
        self,
        queries: Sequence[str],
        pages: Sequence[PageText],
        *,
        passage_words: int,
        timeout: float,
    ) -> None:
        """See Ranker.prepare_passages (nothing to record: it only warms a cache)."""
        await self._inner.prepare_passages(
            queries, pages, passage_words=passage_words, timeout=timeout
        )

    async def rank_chunks(
        self, query: str, pages: Sequence[PageText], *, top_k: int, timeout: float
    ) -> list[Passage]:
        """See Ranker.rank_chunks."""
        out = await self._inner.rank_chunks(query, pages, top_k=top_k, timeout=timeout)
        self._rec.add("rank.chunks", queries=[query], passages=[_passage(p) for p in out])
        return out

    async def check_support(
        self, claims: Sequence[tuple[str, Sequence[str]]], *, timeout: float
    ) -> list[SupportVerdict]:
        """See Ranker.check_support."""
        out = await self._inner.check_support(claims, timeout=timeout)
        self._rec.add(
            "support.check",
            sentences=[c[0] for c in claims],
            verdicts=[{"score": round(v.score, 3), "label": v.label} for v in out],
        )
        return out


class RecordingCorpus:
    """Local-document passages found, recorded."""

    def __init__(self, inner: Corpus, rec: Recorder) -> None:
        self._inner = inner
        self._rec = rec

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
        """See Corpus.search_passages."""
        out = await self._inner.search_passages(
            queries, top_k=top_k, timeout=timeout, max_per_document=max_per_document,
            id_prefix=id_prefix, id_prefixes=id_prefixes,
        )  # fmt: skip
        self._rec.add("corpus.search", queries=list(queries), retrieval=out.retrieval,
                      passages=[_passage(p) for p in out.passages])  # fmt: skip
        return out


def recording(deps: Deps, llm: ResearchLLM, rec: Recorder) -> tuple[Deps, ResearchLLM]:
    """``deps`` and ``llm`` with every call recorded in ``rec`` (unchanged when it records
    nothing)."""
    if rec.max_bytes <= 0:
        return deps, llm
    corpus = RecordingCorpus(deps.corpus, rec) if deps.corpus is not None else None
    wrapped = dataclasses.replace(
        deps,
        brain=RecordingBrain(deps.brain, rec),
        searcher=RecordingSearcher(deps.searcher, rec),
        reader=RecordingReader(deps.reader, rec),
        ranker=RecordingRanker(deps.ranker, rec),
        corpus=corpus,
    )
    return wrapped, RecordingLLM(llm, rec)
