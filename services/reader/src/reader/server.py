"""Wiring only: the extraction pool, the Reader servicer, the grpc.aio server and health."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import sqlite3

from quarry.v1 import reader_pb2_grpc
from quarry_common.grpc_server import GrpcServer

from reader.config import Settings
from reader.core import Reader
from reader.extract import Job, extract
from reader.fetch import Fetcher, Resolver, system_resolver
from reader.memory import DomainMemory
from reader.model import Kind
from reader.policy import AddressPolicy
from reader.pool import ExtractorPool
from reader.render import Renderer
from reader.service import ReaderServicer
from reader.tiers import RenderTier

logger = logging.getLogger(__name__)

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
# How often the per-domain reading memory is written to its file.
MEMORY_SAVE_EVERY_S = 30.0


def chromium_executable(configured: str) -> str:
    """The browser to render with: the setting, else Debian's ``chromium`` on PATH ("": none)."""
    found = configured or shutil.which("chromium") or shutil.which("chromium-browser") or ""
    if not found:
        logger.warning("no Chromium found: the render tier is off (apt-get install chromium)")
    return found


class ReaderServer(GrpcServer):
    """The gRPC server plus the extraction pool it owns (NOT_SERVING until warm)."""

    def __init__(self, settings: Settings, pool: ExtractorPool, resolver: Resolver) -> None:
        policy = AddressPolicy(
            allow_private=settings.allow_private_networks, allowed=settings.allowed_cidrs
        )
        fetcher = Fetcher(policy, resolver)
        path = settings.data_dir / "domains.sqlite" if settings.data_dir else None
        self.memory = DomainMemory(settings.domain_memory_size, path)
        browser = "" if settings.render == "off" else chromium_executable(settings.chromium_path)
        self.renderer = (
            None
            if not browser
            else Renderer(
                fetcher,
                executable=browser,
                concurrency=settings.render_concurrency,
                recycle_pages=settings.render_recycle_pages,
                max_rss_mb=settings.render_max_rss_mb,
                heap_mb=settings.render_heap_mb,
            )
        )
        tier = (
            RenderTier(settings, self.renderer, self.memory) if self.renderer is not None else None
        )
        reader = Reader(settings, pool, fetcher, render=tier, memory=self.memory)
        servicer = ReaderServicer(reader, self.memory)
        self._saver: asyncio.Task[None] | None = None
        super().__init__(
            lambda server: reader_pb2_grpc.add_ReaderServicer_to_server(servicer, server),
            host=settings.host,
            port=settings.port,
            service_names=(SERVICE_NAME,),
            warm_up=self._warm_up_all,
        )
        self.pool = pool

    async def _warm_up_all(self) -> None:
        await self.pool.start()
        await asyncio.to_thread(self.memory.load)
        self._saver = asyncio.create_task(self._save_memory())

    async def _save_memory(self) -> None:
        """Write the domain memory every so often (a crash loses at most that much)."""
        while True:
            await asyncio.sleep(MEMORY_SAVE_EVERY_S)
            try:
                await asyncio.to_thread(self.memory.save)
            except (OSError, sqlite3.Error) as err:  # disk trouble: keep serving
                logger.warning("domain memory not saved", extra={"error": type(err).__name__})

    async def stop(self, grace: float) -> None:
        """Stop serving, then stop the browser, the extraction workers, and save the memory."""
        try:
            await super().stop(grace)
        finally:
            if self._saver is not None:
                self._saver.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._saver
            if self.renderer is not None:
                await self.renderer.close()
            await self.pool.close()
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.memory.save)


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
