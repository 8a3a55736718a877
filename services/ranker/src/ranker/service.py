"""RankerServicer: maps proto messages to the domain modules."""

from __future__ import annotations

import grpc
from quarry.v1 import ranker_pb2, ranker_pb2_grpc

from ranker.config import Settings


class RankerServicer(ranker_pb2_grpc.RankerServicer):
    """The ranker's RPCs (not implemented yet: each answers UNIMPLEMENTED)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    async def RankResults(
        self,
        request: ranker_pb2.RankResultsRequest,
        context: grpc.aio.ServicerContext[
            ranker_pb2.RankResultsRequest, ranker_pb2.RankResultsResponse
        ],
    ) -> ranker_pb2.RankResultsResponse:
        """Not implemented yet."""
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "RankResults is not implemented yet")

    async def RankChunks(
        self,
        request: ranker_pb2.RankChunksRequest,
        context: grpc.aio.ServicerContext[
            ranker_pb2.RankChunksRequest, ranker_pb2.RankChunksResponse
        ],
    ) -> ranker_pb2.RankChunksResponse:
        """Not implemented yet."""
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "RankChunks is not implemented yet")
