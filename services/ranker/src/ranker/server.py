"""Wiring only: the grpc.aio server, the Ranker servicer and health."""

from __future__ import annotations

from quarry.v1 import ranker_pb2_grpc
from quarry_common.grpc_server import GrpcServer

from ranker.config import Settings
from ranker.service import RankerServicer

SERVICE_NAME = "quarry.v1.Ranker"


def build_server(settings: Settings) -> GrpcServer:
    """Create (not start) the ranker's gRPC server."""
    servicer = RankerServicer(settings)
    return GrpcServer(
        lambda server: ranker_pb2_grpc.add_RankerServicer_to_server(servicer, server),
        host=settings.host,
        port=settings.port,
        service_names=(SERVICE_NAME,),
        warm_up=servicer.warm_up,
    )
