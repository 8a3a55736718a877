"""CheckSupport over gRPC: answer sentences against the passages they cite.

The orchestrator stays model-free: it sends each sentence with the text of its cited
passages and gets a score and a label back (quarry_rerank.support). A sentence citing
several passages takes the verdict of the one that supports it best; one citing nothing is
"unsupported".
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import grpc
from quarry.v1 import ranker_pb2

from ranker.errors import BoundExceededError, InvalidRequestError

logger = logging.getLogger(__name__)

T = TypeVar("T")
InThread = Callable[[Callable[[], T]], Awaitable[T]]
Context = grpc.aio.ServicerContext[Any, Any]

MAX_CLAIMS = 64
MAX_PASSAGES = 8
MAX_SENTENCE_CHARS = 4000
MAX_PASSAGE_CHARS = 40_000


class Checks(Protocol):
    """quarry_rerank.SupportChecker fits."""

    def support_many(self, pairs: list[tuple[str, str]]) -> list[float]:
        """One score in [0, 1] per (sentence, passage)."""
        ...


def _pairs(request: ranker_pb2.CheckSupportRequest) -> list[tuple[str, str]]:
    """Every (sentence, passage) pair of the request, after checking its bounds."""
    if len(request.claims) > MAX_CLAIMS:
        raise BoundExceededError(f"more than {MAX_CLAIMS} claims")
    pairs: list[tuple[str, str]] = []
    for i, claim in enumerate(request.claims):
        if not claim.sentence.strip():
            raise InvalidRequestError(f"claims[{i}].sentence is empty")
        if len(claim.sentence) > MAX_SENTENCE_CHARS:
            raise BoundExceededError(f"claims[{i}].sentence is over {MAX_SENTENCE_CHARS} chars")
        if len(claim.passages) > MAX_PASSAGES:
            raise BoundExceededError(f"claims[{i}] cites more than {MAX_PASSAGES} passages")
        for j, passage in enumerate(claim.passages):
            if len(passage) > MAX_PASSAGE_CHARS:
                raise BoundExceededError(
                    f"claims[{i}].passages[{j}] is over {MAX_PASSAGE_CHARS} chars"
                )
            pairs.append((claim.sentence, passage))
    return pairs


def verdicts(
    request: ranker_pb2.CheckSupportRequest,
    scores: list[float],
    label_for: Callable[[float], str],
) -> ranker_pb2.CheckSupportResponse:
    """The best passage's score and label per claim (scores in pair order)."""
    reply = ranker_pb2.CheckSupportResponse()
    k = 0
    for claim in request.claims:
        own = scores[k : k + len(claim.passages)]
        k += len(claim.passages)
        if not own:
            reply.verdicts.add(score=0.0, label="unsupported", best_passage=-1)
            continue
        best = max(range(len(own)), key=own.__getitem__)
        reply.verdicts.add(score=own[best], label=label_for(own[best]), best_passage=best)
    return reply


async def check_support(
    request: ranker_pb2.CheckSupportRequest,
    context: Context,
    checker: Checks | None,
    label_for: Callable[[float], str],
    in_thread: InThread[Any],
) -> ranker_pb2.CheckSupportResponse:
    """Validate, score in a worker thread; errors become status codes."""
    try:
        pairs = _pairs(request)
    except InvalidRequestError as err:
        logger.info("rejected CheckSupport", extra={"reason": str(err)})
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
    if checker is None:
        await context.abort(grpc.StatusCode.UNAVAILABLE, "the support model is not loaded")
    try:
        scores: list[float] = await in_thread(lambda: checker.support_many(pairs))
    except Exception:
        logger.exception("CheckSupport failed")
        await context.abort(grpc.StatusCode.INTERNAL, "internal error")
    return verdicts(request, scores, label_for)
