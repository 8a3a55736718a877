"""Test doubles for the agent loop: gRPC reader/ranker servicers (real wire format on 127.0.0.1)
and small in-process Brain and Searcher implementations of the loop's protocols."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from orchestrator.adapters.search.searxng import SearxngError
from orchestrator.core.ask.domain import Evidence, SearchHit, SearchResponse
from orchestrator.core.ask.ports import Checked, Decision
from orchestrator.core.llm import LLMError
from orchestrator.core.schemas import Judgement, Plan
from orchestrator.core.sessions import Turn
from quarry.v1 import index_pb2_grpc, ranker_pb2, ranker_pb2_grpc, reader_pb2, reader_pb2_grpc
from quarry_common.grpc_server import GrpcServer

_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


class FakeReader(reader_pb2_grpc.ReaderServicer):
    """Serves ``pages`` (url -> (title, markdown)); other URLs answer HTTP_ERROR."""

    def __init__(self, pages: dict[str, tuple[str, str]], delay: float = 0.0) -> None:
        self.pages = pages
        self.delay = delay
        self.calls: list[str] = []
        self.inflight = 0
        self.cancelled = 0

    async def Read(
        self,
        request: reader_pb2.ReadRequest,
        context: grpc.aio.ServicerContext[reader_pb2.ReadRequest, reader_pb2.ReadResponse],
    ) -> reader_pb2.ReadResponse:
        self.calls.append(request.url)
        self.inflight += 1
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.inflight -= 1
        if request.url not in self.pages:
            return reader_pb2.ReadResponse(
                url=request.url, status=reader_pb2.ReadResponse.HTTP_ERROR, http_status=404
            )
        title, markdown = self.pages[request.url]
        status = reader_pb2.ReadResponse.OK if markdown else reader_pb2.ReadResponse.EMPTY
        return reader_pb2.ReadResponse(
            url=request.url, final_url=request.url, title=title, markdown=markdown, status=status
        )

    async def Extract(
        self,
        request: reader_pb2.ExtractRequest,
        context: grpc.aio.ServicerContext[reader_pb2.ExtractRequest, reader_pb2.ReadResponse],
    ) -> reader_pb2.ReadResponse:
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "not used by the orchestrator")

    async def Domains(
        self,
        request: reader_pb2.DomainsRequest,
        context: grpc.aio.ServicerContext[reader_pb2.DomainsRequest, reader_pb2.DomainsResponse],
    ) -> reader_pb2.DomainsResponse:
        # A debug RPC of the reader's own: a reader without reading memory answers empty.
        return reader_pb2.DomainsResponse()


class FakeRanker(ranker_pb2_grpc.RankerServicer):
    """Ranks by query-word overlap (ties: engine order); one leading chunk per page."""

    async def CheckSupport(self, request: Any, context: Any) -> ranker_pb2.CheckSupportResponse:
        # A ranker without the support model: the same status the real servicer base gives.
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "no support model in this double")
        raise AssertionError("abort returned")

    def __init__(self) -> None:
        self.calls: list[str] = []
        # RankPassages: pages held by (url, content_hash), and per call which pages had text.
        self.known: dict[tuple[str, str], tuple[str, str]] = {}
        self.sent_text: list[list[bool]] = []
        # PreparePassages: per call, which pages had text.
        self.prepared: list[list[bool]] = []

    async def RankResults(
        self,
        request: ranker_pb2.RankResultsRequest,
        context: grpc.aio.ServicerContext[
            ranker_pb2.RankResultsRequest, ranker_pb2.RankResultsResponse
        ],
    ) -> ranker_pb2.RankResultsResponse:
        self.calls.append("RankResults")
        q = _words(request.query)
        results = sorted(
            request.results,
            key=lambda r: (-len(q & _words(r.title + " " + r.snippet)), r.engine_rank),
        )
        if request.top_k:
            results = results[: request.top_k]
        return ranker_pb2.RankResultsResponse(
            results=[ranker_pb2.RankedResult(result=r, rank=i + 1) for i, r in enumerate(results)],
            total=len(request.results),
        )

    async def RankChunks(
        self,
        request: ranker_pb2.RankChunksRequest,
        context: grpc.aio.ServicerContext[
            ranker_pb2.RankChunksRequest, ranker_pb2.RankChunksResponse
        ],
    ) -> ranker_pb2.RankChunksResponse:
        self.calls.append("RankChunks")
        q = _words(request.query)
        pages = sorted(request.pages, key=lambda p: -len(q & _words(p.markdown)))
        top = request.top_k if request.HasField("top_k") else 8
        chunks = [
            ranker_pb2.Chunk(url=p.url, title=p.title, text=p.markdown[:1000], score=1.0)
            for p in pages[:top]
        ]
        return ranker_pb2.RankChunksResponse(chunks=chunks, total_chunks=len(request.pages))

    async def PreparePassages(
        self,
        request: ranker_pb2.PreparePassagesRequest,
        context: grpc.aio.ServicerContext[
            ranker_pb2.PreparePassagesRequest, ranker_pb2.PreparePassagesResponse
        ],
    ) -> ranker_pb2.PreparePassagesResponse:
        self.prepared.append([bool(p.markdown) for p in request.pages])
        for p in request.pages:
            if p.markdown:
                self.known[(p.url, p.content_hash)] = (p.title, p.markdown)
        missing = [p.url for p in request.pages if (p.url, p.content_hash) not in self.known]
        return ranker_pb2.PreparePassagesResponse(
            passages=len(request.pages) - len(missing), missing_urls=missing
        )

    async def RankPassages(
        self,
        request: ranker_pb2.RankPassagesRequest,
        context: grpc.aio.ServicerContext[
            ranker_pb2.RankPassagesRequest, ranker_pb2.RankPassagesResponse
        ],
    ) -> ranker_pb2.RankPassagesResponse:
        self.calls.append("RankPassages")
        self.sent_text.append([bool(p.markdown) for p in request.pages])
        q = _words(" ".join(request.queries))
        for p in request.pages:
            if p.markdown:
                self.known[(p.url, p.content_hash)] = (p.title, p.markdown)
        found = [(p.url, self.known.get((p.url, p.content_hash))) for p in request.pages]
        pages = sorted(
            ((url, tm) for url, tm in found if tm is not None),
            key=lambda x: -len(q & _words(x[1][1])),
        )
        return ranker_pb2.RankPassagesResponse(
            passages=[
                ranker_pb2.Passage(url=url, title=title, text=text[:1000], score=1.0, tokens=250)
                for url, (title, text) in pages
            ],
            missing_urls=[url for url, tm in found if tm is None],
            total_passages=len(pages),
        )


def grpc_server(servicer: FakeReader | FakeRanker) -> GrpcServer:
    """A real grpc.aio server for ``servicer`` on 127.0.0.1, port 0 (call start())."""

    def register(server: grpc.aio.Server) -> None:
        if isinstance(servicer, FakeReader):
            reader_pb2_grpc.add_ReaderServicer_to_server(servicer, server)
        else:
            ranker_pb2_grpc.add_RankerServicer_to_server(servicer, server)
        if isinstance(servicer, index_pb2_grpc.IndexServicer):  # a ranker double with a corpus
            index_pb2_grpc.add_IndexServicer_to_server(servicer, server)

    return GrpcServer(register, host="127.0.0.1", port=0)


@dataclass
class ScriptedBrain:
    """Plays back plans and judgements in order; the answer streams word by word."""

    plans: list[Plan] = field(default_factory=list)
    judgements: list[Judgement] = field(default_factory=list)
    answer_text: str = "Quarry is an answer engine [1]."
    token_delay: float = 0.0
    judge_delay: float = 0.0
    fail: bool = False
    llm_url: str = "http://llm.test:11434"
    invalid: bool = False
    judged: list[list[Evidence]] = field(default_factory=list)
    inflight: int = 0
    conversed: list[str] = field(default_factory=list)
    details: list[str | None] = field(default_factory=list)
    answered: list[list[Evidence]] = field(default_factory=list)

    def _check_up(self) -> None:
        if self.fail:
            raise LLMError("connection refused", self.llm_url)

    async def plan(
        self, question: str, history: Sequence[Turn], *, timeout: float
    ) -> Decision[Plan]:
        self._check_up()
        if self.invalid:
            return Decision(Plan(), used_default=True, attempts=2)
        return Decision(self.plans.pop(0) if self.plans else Plan(optimized_query=question))

    async def judge(
        self,
        question: str,
        evidence: Sequence[Evidence],
        *,
        stage: str,
        timeout: float,
        boundary: str | None = None,
    ) -> Decision[Judgement]:
        self._check_up()
        self.judged.append(list(evidence))
        self.inflight += 1
        try:
            await asyncio.sleep(self.judge_delay)
        finally:
            self.inflight -= 1
        if self.invalid:
            return Decision(Judgement(), used_default=True, attempts=2)
        return Decision(self.judgements.pop(0) if self.judgements else Judgement())

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
        self._check_up()
        self.details.append(detail)
        self.answered.append(list(sources))
        self.inflight += 1
        try:
            for word in self.answer_text.split(" "):
                await asyncio.sleep(self.token_delay)
                yield word + " "
        finally:
            self.inflight -= 1

    def converse(
        self, question: str, history: Sequence[Turn], *, purpose: str, timeout: float
    ) -> AsyncIterator[str]:
        self.conversed.append(purpose)
        return self.answer(question, [], history, timeout=timeout)

    def check(self, answer: str, sources: Sequence[Evidence]) -> Checked:
        numbers = [int(n) for n in re.findall(r"\[(\d+)\]", answer)]
        cited = sorted({n for n in numbers if 1 <= n <= len(sources)})
        removed = sorted({n for n in numbers if not 1 <= n <= len(sources)})
        text = re.sub(
            r"\[(\d+)\]", lambda m: m.group(0) if int(m.group(1)) in cited else "", answer
        )
        return Checked(text.strip(), cited, removed)


@dataclass
class ScriptedSearcher:
    """Answers with the next ``script`` entry, else ``results[query]``, else ``default``."""

    results: dict[str, list[SearchHit]] = field(default_factory=dict)
    script: list[list[SearchHit]] = field(default_factory=list)
    default: list[SearchHit] = field(default_factory=list)
    unresponsive: list[str] = field(default_factory=list)
    down: bool = False
    queries: list[str] = field(default_factory=list)

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
        self.queries.append(query)
        if self.down:
            raise SearxngError(
                "SearXNG at http://searx.test could not be reached", "http://searx.test"
            )
        if self.script:
            return SearchResponse(self.script.pop(0), list(self.unresponsive))
        return SearchResponse(list(self.results.get(query, self.default)), list(self.unresponsive))


def hits(*urls: str, words: str = "") -> list[SearchHit]:
    """Search hits for ``urls`` in engine order."""
    return [
        SearchHit(url=u, title=f"Page {i}", snippet=f"snippet {i} {words}", engine_rank=i + 1)
        for i, u in enumerate(urls)
    ]
