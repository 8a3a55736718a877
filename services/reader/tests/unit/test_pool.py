"""The extraction pool: time limits kill and replace workers; admission is bounded."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from reader import pool as pool_module
from reader.errors import ExtractionFailed, ExtractionTimeout, Overloaded, PoolClosed, WorkerCrashed
from reader.pool import ExtractorPool

# Jobs are seconds to sleep: time.sleep is a picklable builtin, so the worker needs no test code.
SLOW = 30.0


@pytest_asyncio.fixture
async def pool() -> AsyncIterator[ExtractorPool]:
    p = ExtractorPool(time.sleep, workers=1, timeout_s=0.5, queue_size=1, warm_job=0)
    await p.start()
    yield p
    await p.close()


async def test_result_comes_back(pool: ExtractorPool) -> None:
    assert await pool.run(0) is None
    assert pool.pending == 0


async def test_hung_job_kills_and_replaces_its_worker(pool: ExtractorPool) -> None:
    (first,) = pool._all
    with pytest.raises(ExtractionTimeout):
        await pool.run(SLOW)
    # The next job waits for the replacement and succeeds on a different process.
    assert await pool.run(0) is None
    (second,) = pool._all
    assert second is not first
    assert not first.process.is_alive()


async def test_per_call_limit_is_capped_by_the_pool_limit(pool: ExtractorPool) -> None:
    with pytest.raises(ExtractionTimeout):
        await pool.run(SLOW, timeout_s=100.0)


async def test_full_queue_fails_fast(pool: ExtractorPool) -> None:
    running = asyncio.create_task(pool.run(0))
    waiting = asyncio.create_task(pool.run(0))
    # One loop turn: both are admitted (pending is counted at once), neither can have finished
    # (a worker's reply needs more turns), so the third is refused whatever the machine's speed.
    await asyncio.sleep(0)
    with pytest.raises(Overloaded):
        await pool.run(0)
    assert await running is None
    assert await waiting is None


async def test_crashed_worker_is_replaced() -> None:
    # raise_signal is a picklable builtin: job SIGKILL kills the worker outright.
    p = ExtractorPool(signal.raise_signal, workers=1, timeout_s=5, queue_size=0, warm_job=0)
    await p.start()
    try:
        (first,) = p._all
        with pytest.raises(WorkerCrashed):
            await p.run(signal.SIGKILL)
        # Signal 0 is a no-op: the replacement answers normally.
        assert await p.run(0) is None
        assert first not in p._all
    finally:
        await p.close()


async def test_extractor_exception_keeps_the_worker() -> None:
    p = ExtractorPool(int, workers=1, timeout_s=5, queue_size=0, warm_job="1")
    await p.start()
    try:
        (worker,) = p._all
        with pytest.raises(ExtractionFailed) as err:
            await p.run("not a number")
        assert str(err.value) == "ValueError"
        assert await p.run("7") == 7
        assert p._all == {worker}
    finally:
        await p.close()


async def test_workers_are_recycled_after_max_jobs() -> None:
    p = ExtractorPool(abs, workers=1, timeout_s=5, queue_size=0, warm_job=0, max_jobs=2)
    await p.start()
    try:
        (first,) = p._all
        assert [await p.run(-i) for i in range(4)] == [0, 1, 2, 3]
        assert first not in p._all
    finally:
        await p.close()


async def test_closed_pool_refuses_work(pool: ExtractorPool) -> None:
    workers = list(pool._all)
    await pool.close()
    with pytest.raises(PoolClosed):
        await pool.run(0)
    assert not any(w.process.is_alive() for w in workers)


async def test_cancelled_caller_does_not_cost_the_worker() -> None:
    # A limit far above the job (0.2 s): the abandoned job ends within it on any machine.
    pool = ExtractorPool(time.sleep, workers=1, timeout_s=60, queue_size=1, warm_job=0)
    await pool.start()
    try:
        (worker,) = pool._all
        task = asyncio.create_task(pool.run(0.2))
        await asyncio.sleep(0)  # one loop turn: the job is on the worker, far from done
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The job finishes in the background; the same warm worker then takes the next one.
        assert await pool.run(0) is None
        assert pool._all == {worker}
        assert worker.process.is_alive()
    finally:
        await pool.close()


async def test_cancelled_hung_job_still_loses_its_worker_at_the_limit(pool: ExtractorPool) -> None:
    (worker,) = pool._all
    task = asyncio.create_task(pool.run(SLOW))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await pool.run(0) is None  # served by the replacement after the 0.5 s limit
    assert worker not in pool._all


async def test_failed_warm_up_stops_the_start() -> None:
    # int("x") raises in the worker: the pool must not report itself ready.
    p = ExtractorPool(int, workers=1, timeout_s=5, queue_size=0, warm_job="x")
    with pytest.raises(ExceptionGroup) as err:
        await p.start()
    assert err.group_contains(RuntimeError)
    assert not p._all
    await p.close()


@pytest.mark.parametrize(("failures", "starts"), [(2, 3), (99, 5)])
async def test_a_replacement_that_fails_to_start_is_retried_within_bounds(
    monkeypatch: pytest.MonkeyPatch, failures: int, starts: int
) -> None:
    # Tenacity's back-off (pool._REPLACE_ATTEMPTS tries, doubling pauses): two failed starts
    # and the third serves; a worker that never starts is given up after the fifth try.
    monkeypatch.setattr(pool_module, "_REPLACE_WAIT_S", 0.01)
    p = ExtractorPool(signal.raise_signal, workers=1, timeout_s=5, queue_size=0, warm_job=0)
    await p.start()
    real, tries = p._add_worker, []

    async def flaky() -> None:
        tries.append(1)
        if len(tries) <= failures:
            raise RuntimeError("extraction worker failed its warm-up job")
        await real()

    monkeypatch.setattr(p, "_add_worker", flaky)
    try:
        with pytest.raises(WorkerCrashed):
            await p.run(signal.SIGKILL)
        if failures < starts:
            assert await p.run(0) is None  # served by the third start
        else:
            await asyncio.wait(set(p._background), timeout=30)  # the replacing task ends
            assert not p._all  # gave up: no worker left
        assert len(tries) == starts
    finally:
        await p.close()
