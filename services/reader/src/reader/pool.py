"""A process pool for CPU-bound extraction that survives pathological pages.

Unlike ``ProcessPoolExecutor``, each job has a time limit after which its worker process is
killed and replaced; the rest of the pool keeps serving. Admission is bounded: beyond
``workers + queue_size`` jobs in flight, :meth:`ExtractorPool.run` fails fast.

One hostile page must not starve everyone (measured: two PDF bombs in flight made every other
question's reads wait ~8 s on a pool of 2). So a free worker goes to the waiting job whose
``key`` (one question) has the fewest jobs running, not to the oldest job; "heavy" jobs (PDFs)
may hold at most ``workers - 1`` workers, so light pages always find one; and a worker whose
resident memory grew past ``recycle_rss_mb`` is replaced after its job, because lxml and pypdf
keep the memory of a hostile page (~300 MB after one 2 MB page; ~60 MB when warm).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from tenacity import (
    AsyncRetrying,
    before_sleep_log,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from reader.errors import ExtractionFailed, ExtractionTimeout, Overloaded, PoolClosed, WorkerCrashed
from reader.fair import FairQueue

logger = logging.getLogger(__name__)

# Spawned, not forked: the parent runs gRPC threads, and forking those is unsafe.
_CTX = multiprocessing.get_context("spawn")
# A fresh worker imports trafilatura and runs its warm-up job within this many seconds.
WARM_UP_TIMEOUT_S = 60.0
# Tries to start a replacement worker before the pool runs short, with pauses of
# _REPLACE_WAIT_S, doubling (1, 2, 4, 8 s).
_REPLACE_ATTEMPTS = 5
_REPLACE_WAIT_S = 1.0
# Memory page size, for reading a worker's resident set from /proc.
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
# How long a retiring worker may take to exit before it is killed.
_EXIT_GRACE_S = 1.0


def _worker_main(conn: Connection, fn: Callable[[Any], Any]) -> None:
    """Worker loop: on ("job", x) reply ("ok", fn(x)) or ("err", name); exit on ("stop",)."""
    # Ctrl-C reaches the whole process group; the parent decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message[0] != "job":
            return
        try:
            reply: tuple[str, Any] = ("ok", fn(message[1]))
        except Exception as err:  # noqa: BLE001 -- any failure of one page is reported, not fatal
            reply = ("err", type(err).__name__)
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return


@dataclass(eq=False)  # identity semantics: workers live in a set
class _Worker:
    process: BaseProcess
    conn: Connection
    jobs: int = field(default=0)
    # The job it runs now: whose (fairness key) and whether heavy.
    key: str = ""
    heavy: bool = False

    def roundtrip(self, job: Any) -> tuple[str, Any]:
        """Send one job and block until its reply (runs in a thread)."""
        self.conn.send(("job", job))
        reply: tuple[str, Any] = self.conn.recv()
        return reply

    def kill(self) -> None:
        """Kill the process and close the pipe (safe to call twice)."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(_EXIT_GRACE_S)
        self.conn.close()

    def retire(self) -> None:
        """Ask the process to exit, kill it if it does not."""
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(("stop",))
        self.process.join(_EXIT_GRACE_S)
        self.kill()


def rss_mb(worker: _Worker) -> int:
    """The worker's resident memory in MiB (0 where /proc cannot tell)."""
    try:
        pages = int(Path(f"/proc/{worker.process.pid}/statm").read_bytes().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * _PAGE_BYTES // (1024 * 1024)


class ExtractorPool:
    """``workers`` processes running ``fn``; each job limited to ``timeout_s``.

    Args:
        fn: a picklable top-level function applied to each job in a worker.
        workers: number of worker processes.
        timeout_s: per-job limit; a worker over it is killed and replaced.
        queue_size: jobs allowed to wait for a worker; more raise :class:`Overloaded`.
        warm_job: a job run once in each new worker before it takes real work.
        max_jobs: recycle a worker after this many jobs (0: never); bounds memory growth.
        recycle_rss_mb: recycle a worker whose resident memory is above this after a job
            (0: never; Linux only, read from /proc).
    """

    def __init__(
        self,
        fn: Callable[[Any], Any],
        *,
        workers: int,
        timeout_s: float,
        queue_size: int,
        warm_job: Any = None,
        max_jobs: int = 0,
        recycle_rss_mb: int = 0,
    ) -> None:
        self._fn = fn
        self._size = workers
        self._timeout_s = timeout_s
        self._capacity = workers + queue_size
        self._warm_job = warm_job
        self._max_jobs = max_jobs
        self._recycle_rss_mb = recycle_rss_mb
        self._idle: list[_Worker] = []
        self._fair = FairQueue(heavy_cap=max(1, workers - 1))
        self._all: set[_Worker] = set()
        self._pending = 0
        self._closed = False
        self._background: set[asyncio.Task[None]] = set()

    @property
    def pending(self) -> int:
        """Jobs admitted and not yet finished (running or waiting)."""
        return self._pending

    @property
    def saturated(self) -> bool:
        """True when a new job would be refused right now."""
        return self._closed or self._pending >= self._capacity

    async def start(self) -> None:
        """Start every worker and wait until each has run its warm-up job."""
        async with asyncio.TaskGroup() as tg:
            for _ in range(self._size):
                tg.create_task(self._add_worker())

    async def _add_worker(self) -> None:
        parent, child = _CTX.Pipe()
        process = _CTX.Process(target=_worker_main, args=(child, self._fn), daemon=True)
        await asyncio.to_thread(process.start)
        child.close()
        worker = _Worker(process, parent)
        self._all.add(worker)
        try:
            async with asyncio.timeout(WARM_UP_TIMEOUT_S):
                status, value = await asyncio.to_thread(worker.roundtrip, self._warm_job)
        except BaseException:
            self._discard(worker)
            raise
        if status != "ok":
            # A worker that cannot extract the warm-up page cannot extract anything.
            self._discard(worker)
            raise RuntimeError(f"extraction worker failed its warm-up job: {value}")
        if self._closed:
            self._discard(worker)
            return
        self._idle.append(worker)
        self._dispatch()

    async def _add_worker_unless_closed(self) -> None:
        if not self._closed:
            await self._add_worker()

    def _dispatch(self) -> None:
        """Hand idle workers to the waiting jobs the fair queue picks."""
        while self._idle:
            waiter = self._fair.pop()
            if waiter is None:
                return
            worker = self._idle.pop()
            worker.key, worker.heavy = waiter.key, waiter.heavy
            self._fair.started(waiter.key, heavy=waiter.heavy)
            waiter.future.set_result(worker)

    def _discard(self, worker: _Worker) -> None:
        self._all.discard(worker)
        worker.kill()

    def _replace(self, worker: _Worker, *, kill: bool) -> None:
        """Retire or kill ``worker`` and start a replacement in the background."""
        self._all.discard(worker)
        if kill:
            worker.process.kill()  # at once (SIGKILL does not block): frees the waiting thread

        async def replace() -> None:
            await asyncio.to_thread(worker.kill if kill else worker.retire)
            retrying = AsyncRetrying(
                stop=stop_after_attempt(_REPLACE_ATTEMPTS),
                wait=wait_exponential(multiplier=_REPLACE_WAIT_S),
                retry=retry_if_exception_type(Exception),  # not a cancellation (at close)
                before_sleep=before_sleep_log(logger, logging.WARNING, exc_info=True),
                reraise=True,
            )
            try:
                await retrying(self._add_worker_unless_closed)
            except Exception:
                logger.exception("could not start a replacement extraction worker; giving up")

        task = asyncio.get_running_loop().create_task(replace())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def run(
        self, job: Any, timeout_s: float | None = None, *, key: str = "", heavy: bool = False
    ) -> Any:
        """Run ``job`` in a worker within ``min(timeout_s, the pool's limit)`` seconds.

        ``key`` names who asked (one question): workers are shared fairly between keys.
        ``heavy`` jobs (PDFs) never hold every worker at once.

        Raises:
            Overloaded: too many jobs in flight.
            ExtractionTimeout: the job ran out of time; its worker was killed and replaced.
            WorkerCrashed: the worker died; it was replaced.
            ExtractionFailed: the extractor raised (the worker is kept).
        """
        if self._closed:
            raise PoolClosed
        if self._pending >= self._capacity:
            raise Overloaded
        self._pending += 1
        try:
            worker = await self._acquire(key, heavy)
            return await self._run_on(worker, job, timeout_s)
        finally:
            self._pending -= 1

    async def _acquire(self, key: str, heavy: bool) -> _Worker:
        waiter = self._fair.push(key, heavy, asyncio.get_running_loop().create_future())
        self._dispatch()
        try:
            worker: _Worker = await waiter.future
        except asyncio.CancelledError:
            if waiter.future.done() and not waiter.future.cancelled():
                self._release(waiter.future.result(), healthy=True, counted=False)
            else:
                self._fair.discard(waiter)
            raise
        return worker

    async def _run_on(self, worker: _Worker, job: Any, timeout_s: float | None) -> Any:
        limit = max(self._timeout_s if timeout_s is None else min(timeout_s, self._timeout_s), 0)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        call = asyncio.ensure_future(asyncio.to_thread(worker.roundtrip, job))
        # A killed worker makes the call fail later; nobody may be left to read that error.
        call.add_done_callback(lambda f: f.cancelled() or f.exception())
        try:
            async with asyncio.timeout_at(deadline):
                status, value = await asyncio.shield(call)
        except TimeoutError:
            logger.warning("extraction over its time limit; replacing the worker",
                           extra={"limit_s": round(limit, 3)})  # fmt: skip
            self._release(worker, healthy=False)
            raise ExtractionTimeout from None
        except (EOFError, OSError):
            logger.error("extraction worker died; replacing it")  # noqa: TRY400 -- no useful trace
            self._release(worker, healthy=False)
            raise WorkerCrashed from None
        except asyncio.CancelledError:
            # The caller gave up, not the page: let the job finish within its limit and keep
            # the (warm) worker, instead of killing it.
            self._adopt(worker, call, deadline)
            raise
        except Exception:
            self._release(worker, healthy=False)
            raise
        self._release(worker, healthy=True)
        if status != "ok":
            raise ExtractionFailed(str(value))
        return value

    def _release(self, worker: _Worker, *, healthy: bool, counted: bool = True) -> None:
        """Return a worker after a job: back to idle, recycled, or killed and replaced."""
        self._fair.finished(worker.key, heavy=worker.heavy)
        worker.jobs += counted
        if not healthy or self._closed:
            self._replace(worker, kill=True)
        elif self._max_jobs and worker.jobs >= self._max_jobs:
            self._replace(worker, kill=False)
        elif counted and self._recycle_rss_mb and (rss := rss_mb(worker)) > self._recycle_rss_mb:
            logger.info("recycling an extraction worker after a heavy page",
                        extra={"rss_mb": rss})  # fmt: skip
            self._replace(worker, kill=False)
        else:
            self._idle.append(worker)
            self._dispatch()

    def _adopt(self, worker: _Worker, call: asyncio.Future[Any], deadline: float) -> None:
        """Wait in the background for an abandoned job, then release its worker."""

        async def wait() -> None:
            healthy = False
            try:
                async with asyncio.timeout_at(deadline):
                    await call
                healthy = True
            except (TimeoutError, EOFError, OSError):
                pass
            finally:
                self._release(worker, healthy=healthy)

        task = asyncio.get_running_loop().create_task(wait())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def close(self) -> None:
        """Stop taking work, cancel replacements and stop every worker."""
        self._closed = True
        self._fair.fail_all(PoolClosed())
        # Cancelling a task may start another (a release replaces its worker): drain them all.
        while self._background:
            tasks = list(self._background)
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(BaseException):
                    await task
                self._background.discard(task)
        workers = list(self._all)
        self._all.clear()
        await asyncio.gather(*(asyncio.to_thread(w.retire) for w in workers))
