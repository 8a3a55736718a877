"""Wiring only: the grpc.aio server, the Reader servicer and health."""

from __future__ import annotations

from quarry.v1 import reader_pb2_grpc
from quarry_common.grpc_server import GrpcServer

from reader.config import Settings
from reader.service import ReaderServicer

SERVICE_NAME = "quarry.v1.Reader"


def build_server(settings: Settings) -> GrpcServer:
    """Create (not start) the reader's gRPC server."""
    servicer = ReaderServicer(settings)
    return GrpcServer(
        lambda server: reader_pb2_grpc.add_ReaderServicer_to_server(servicer, server),
        host=settings.host,
        port=settings.port,
        service_names=(SERVICE_NAME,),
    )
