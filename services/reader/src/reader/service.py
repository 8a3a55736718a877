"""ReaderServicer: maps proto messages to the domain modules."""

from __future__ import annotations

import grpc
from quarry.v1 import reader_pb2, reader_pb2_grpc

from reader.config import Settings


class ReaderServicer(reader_pb2_grpc.ReaderServicer):
    """The reader's RPCs (not implemented yet: each answers UNIMPLEMENTED)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    async def Read(
        self,
        request: reader_pb2.ReadRequest,
        context: grpc.aio.ServicerContext[reader_pb2.ReadRequest, reader_pb2.ReadResponse],
    ) -> reader_pb2.ReadResponse:
        """Not implemented yet."""
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Read is not implemented yet")

    async def Extract(
        self,
        request: reader_pb2.ExtractRequest,
        context: grpc.aio.ServicerContext[reader_pb2.ExtractRequest, reader_pb2.ReadResponse],
    ) -> reader_pb2.ReadResponse:
        """Not implemented yet."""
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Extract is not implemented yet")
