"""Wiring only: the grpc.aio server, the Index servicer and health."""

from __future__ import annotations

from quarry.v1 import index_pb2_grpc
from quarry_common.grpc_server import GrpcServer

from index.config import Settings
from index.corpus import Corpus
from index.dense import Embedder
from index.service import IndexServicer

SERVICE_NAME = "quarry.v1.Index"


def build_server(
    settings: Settings, corpus: Corpus | None = None, *, embedder: Embedder | None = None
) -> GrpcServer:
    """Create (not start) the index's gRPC server; ``corpus`` replaces the one built from
    the settings (tests); ``embedder`` None means BM25 only."""
    servicer = IndexServicer(settings, corpus, embedder)
    return GrpcServer(
        lambda server: index_pb2_grpc.add_IndexServicer_to_server(servicer, server),
        host=settings.host,
        port=settings.port,
        service_names=(SERVICE_NAME,),
        warm_up=servicer.warm_up,
    )
