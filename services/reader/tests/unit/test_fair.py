"""Fair sharing of extraction workers: the bookkeeping alone, then a real pool of processes."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from reader.fair import FairQueue
from reader.pool import ExtractorPool

from services.reader.tests.stuck import wait_for_file


async def test_the_key_with_fewest_running_goes_first() -> None:
    loop = asyncio.get_running_loop()
    queue = FairQueue(heavy_cap=1)
    a1 = queue.push("a", False, loop.create_future())
    a2 = queue.push("a", False, loop.create_future())
    b1 = queue.push("b", False, loop.create_future())
    assert queue.pop() is a1
    queue.started("a", heavy=False)
    assert queue.pop() is b1  # a has one running, b none: b's later job goes first
    queue.started("b", heavy=False)
    assert queue.pop() is a2
    assert queue.pop() is None


async def test_heavy_jobs_never_exceed_their_cap_and_light_jobs_pass_them() -> None:
    loop = asyncio.get_running_loop()
    queue = FairQueue(heavy_cap=1)
    pdf1 = queue.push("a", True, loop.create_future())
    pdf2 = queue.push("b", True, loop.create_future())
    page = queue.push("c", False, loop.create_future())
    assert queue.pop() is pdf1
    queue.started("a", heavy=True)
    assert queue.pop() is page  # pdf2 waits: one heavy job already runs
    queue.started("c", heavy=False)
    assert queue.pop() is None
    queue.finished("a", heavy=True)
    assert queue.pop() is pdf2


async def test_a_cancelled_waiter_is_skipped_and_failing_wakes_the_rest() -> None:
    loop = asyncio.get_running_loop()
    queue = FairQueue(heavy_cap=1)
    gone = queue.push("a", False, loop.create_future())
    left = queue.push("b", False, loop.create_future())
    gone.future.cancel()
    assert queue.pop() is left
    waiting = queue.push("c", False, loop.create_future())
    queue.fail_all(RuntimeError("closing"))
    assert isinstance(waiting.future.exception(), RuntimeError)
    assert queue.waiting == 0


async def test_pool_serves_a_second_question_before_the_firsts_backlog(tmp_path: Path) -> None:
    # Jobs are paths a worker waits for (the test ends them): a0 and a1 end on "release", a2
    # and a3 never do, b0 at once. Nothing here depends on how long anything takes.
    release, never = tmp_path / "release", tmp_path / "never"
    pool = ExtractorPool(wait_for_file, workers=2, timeout_s=60, queue_size=8, warm_job="/")
    await pool.start()
    a_jobs = [release, release, never, never]
    a = [asyncio.create_task(pool.run(str(path), key="a")) for path in a_jobs]
    try:
        while pool.pending < 4:  # noqa: ASYNC110 - the pool offers no event to await
            await asyncio.sleep(0.01)
        b0 = asyncio.create_task(pool.run("/", key="b"))
        while pool.pending < 5:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        release.touch()
        # b0 came last but gets the first free worker, before a's backlog: in arrival order it
        # would wait behind a2 and a3, which only end at the pool's 60 s limit.
        await b0
        await asyncio.gather(*a[:2])
        assert not a[2].done()
        assert not a[3].done()
    finally:
        for task in a:
            task.cancel()
        await asyncio.gather(*a, return_exceptions=True)
        await pool.close()


async def test_a_worker_left_big_by_a_page_is_replaced() -> None:
    # Every process is above 1 MiB: each job's worker is recycled; warm ones (limit 0) are kept.
    pool = ExtractorPool(time.sleep, workers=1, timeout_s=5, queue_size=1, warm_job=0,
                         recycle_rss_mb=1)  # fmt: skip
    await pool.start()
    try:
        (first,) = pool._all
        assert await pool.run(0) is None
        assert first not in pool._all  # retired, a replacement is starting
        assert await pool.run(0) is None  # served by the replacement
    finally:
        await pool.close()
