"""The pipeline bench's simulated dependencies, with fixed latencies (bench_pipeline.py's
docstring lists them): a reader, a ranker, SearXNG and the LLM's script. ``SIM`` scales every
wait; the bench turns it down to zero and back."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from typing import Any

import grpc
from quarry.v1 import ranker_pb2, ranker_pb2_grpc, reader_pb2, reader_pb2_grpc

from services.orchestrator.tests.fakes._http import Request, Response, StreamResponse
from services.orchestrator.tests.fakes.fake_llm import Call, Say
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng, searx_result

SEARCH_S = 0.3
PAGE_MIN_S, PAGE_MAX_S = 0.2, 0.8
JUDGE_S = 1.5
# The simulated latencies leave the planner out; a real planner call adds the same
# constant to both sides of the prefetch comparison (the derived row shows its effect).
PLAN_S = 0.0
PLAN_REAL_S = 0.5
TOKENS_PER_S = 50.0
ANSWER = " ".join(["Quarry answers questions [1]."] * 10)


@dataclass
class Sim:
    """Simulated latencies; ``scale`` 0 turns every wait off."""

    scale: float = 1.0
    fixed_page_s: float | None = None

    def page_s(self, url: str) -> float:
        """A page's latency: fixed, or spread over 200-800 ms by a hash of its URL."""
        if self.fixed_page_s is not None:
            return self.fixed_page_s * self.scale
        h = int(hashlib.sha256(url.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        return (PAGE_MIN_S + h * (PAGE_MAX_S - PAGE_MIN_S)) * self.scale


SIM = Sim()
TEXT = (
    "Quarry is a private, self-hosted answer engine. It plans a search, reads the best pages "
    "and writes an answer with numbered citations. "
) * 40


class SimReader(reader_pb2_grpc.ReaderServicer):
    """Every URL is a page of ~800 words after its simulated latency."""

    async def Read(self, request: Any, context: Any) -> reader_pb2.ReadResponse:
        await asyncio.sleep(SIM.page_s(request.url))
        return reader_pb2.ReadResponse(
            url=request.url,
            final_url=request.url,
            title="Quarry page",
            markdown=TEXT,
            status=reader_pb2.ReadResponse.OK,
        )

    async def Extract(self, request: Any, context: Any) -> reader_pb2.ReadResponse:
        return reader_pb2.ReadResponse(status=reader_pb2.ReadResponse.UNSUPPORTED)

    async def Domains(self, request: Any, context: Any) -> reader_pb2.DomainsResponse:
        return reader_pb2.DomainsResponse()


class SimRanker(ranker_pb2_grpc.RankerServicer):
    """Keeps the engine order; one leading chunk per page (ranking cost is the ranker's bench)."""

    async def RankResults(self, request: Any, context: Any) -> ranker_pb2.RankResultsResponse:
        kept = list(request.results)[: request.top_k or None]
        return ranker_pb2.RankResultsResponse(
            results=[ranker_pb2.RankedResult(result=r, rank=i + 1) for i, r in enumerate(kept)],
            total=len(request.results),
        )

    async def RankChunks(self, request: Any, context: Any) -> ranker_pb2.RankChunksResponse:
        top = request.top_k if request.HasField("top_k") else 8
        return ranker_pb2.RankChunksResponse(
            chunks=[
                ranker_pb2.Chunk(url=p.url, title=p.title, text=p.markdown[:3000], score=1.0)
                for p in list(request.pages)[:top]
            ],
            total_chunks=len(request.pages),
        )

    async def RankPassages(self, request: Any, context: Any) -> ranker_pb2.RankPassagesResponse:
        # Pages referred to by hash only are reported missing: the orchestrator resends them.
        missing = [p.url for p in request.pages if not p.markdown]
        return ranker_pb2.RankPassagesResponse(
            passages=[
                ranker_pb2.Passage(url=p.url, title=p.title, text=p.markdown[:2000], score=1.0)
                for p in request.pages
                if p.markdown
            ][:8],
            missing_urls=missing,
            total_passages=len(request.pages),
        )

    async def PreparePassages(
        self, request: Any, context: Any
    ) -> ranker_pb2.PreparePassagesResponse:
        # Nothing is kept: every page is reported missing, so RankPassages gets its text.
        return ranker_pb2.PreparePassagesResponse(missing_urls=[p.url for p in request.pages])

    # The pipeline bench searches the web only: the corpus is the subject of bench/corpus.
    async def _no_corpus(self, request: Any, context: Any) -> Any:
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "no corpus in the pipeline bench")

    ListDocuments = IndexDocuments = CommitCorpus = SearchCorpus = GetDocument = CheckSupport = (
        _no_corpus
    )


class SlowSearxng(FakeSearxng):
    """The fake SearXNG, answering after the simulated search latency."""

    async def _handle(self, request: Request) -> Response | StreamResponse:
        await asyncio.sleep(SEARCH_S * SIM.scale)
        return await super()._handle(request)


def results(query: str) -> list[dict[str, Any]]:
    """Twelve distinct results per query."""
    slug = hashlib.sha256(query.encode()).hexdigest()[:8]
    return [
        searx_result(f"https://site{i}.test/{slug}", f"Quarry {i}", f"Quarry answers {i}.")
        for i in range(12)
    ]


async def llm_script(call: Call) -> Say | None:
    """Plan proceeds; the snippet judge says insufficient, the chunk judge sufficient."""
    if call.kind == "plan":
        await asyncio.sleep(PLAN_S * SIM.scale)
        return None  # the fake's default plan: proceed with the question
    if call.kind == "judge":
        await asyncio.sleep(JUDGE_S * SIM.scale)
        # Chunks carry the page text; snippets do not: only the chunk judge is satisfied.
        verdict = "sufficient" if "self-hosted" in call.prompt else "insufficient"
        return Say.json({"reasoning": "r", "sufficiency": verdict, "gap_queries": []})
    if call.kind == "synthesis":
        return Say(ANSWER)
    return None
