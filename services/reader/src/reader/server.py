"""Wiring only: the extraction pool, the Reader servicer, the grpc.aio server and health."""

from __future__ import annotations

from quarry.v1 import reader_pb2_grpc
from quarry_common.grpc_server import GrpcServer

from reader.config import Settings
from reader.core import Reader
from reader.extract import Job, extract
from reader.fetch import Fetcher, Resolver, system_resolver
from reader.model import Kind
from reader.policy import AddressPolicy
from reader.pool import ExtractorPool
from reader.service import ReaderServicer

SERVICE_NAME = "quarry.v1.Reader"

# Run once in every new worker so trafilatura's lazy imports are paid before real traffic.
WARM_JOB = Job(
    b"<html><head><title>warm</title></head><body><article><h1>Warm</h1>"
    + b"<p>Warming up the extraction worker with a short paragraph of text.</p>" * 8
    + b"</article></body></html>",
    Kind.HTML,
)
# Recycle a worker after this many pages: lxml/trafilatura memory is not returned to the OS.
WORKER_MAX_JOBS = 500


class ReaderServer(GrpcServer):
    """The gRPC server plus the extraction pool it owns (NOT_SERVING until warm)."""

    def __init__(self, settings: Settings, pool: ExtractorPool, resolver: Resolver) -> None:
        policy = AddressPolicy(
            allow_private=settings.allow_private_networks, allowed=settings.allowed_cidrs
        )
        servicer = ReaderServicer(Reader(settings, pool, Fetcher(policy, resolver)))
        super().__init__(
            lambda server: reader_pb2_grpc.add_ReaderServicer_to_server(servicer, server),
            host=settings.host,
            port=settings.port,
            service_names=(SERVICE_NAME,),
            warm_up=pool.start,
        )
        self.pool = pool

    async def stop(self, grace: float) -> None:
        """Stop serving, then stop the extraction workers."""
        try:
            await super().stop(grace)
        finally:
            await self.pool.close()


def build_server(
    settings: Settings, *, pool: ExtractorPool | None = None, resolver: Resolver = system_resolver
) -> ReaderServer:
    """Create (not start) the reader's gRPC server; tests may pass their own pool/resolver."""
    if pool is None:
        pool = ExtractorPool(
            extract,
            workers=settings.worker_count,
            timeout_s=settings.extract_timeout_s,
            queue_size=settings.queue_size,
            warm_job=WARM_JOB,
            max_jobs=WORKER_MAX_JOBS,
            recycle_rss_mb=settings.recycle_rss_mb,
        )
    return ReaderServer(settings, pool, resolver)
